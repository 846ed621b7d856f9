// The per-channel value histograms of the data page (extension/src/data/dataHistograms.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { DataCheckResult, DataSplitSummary } from '../../../../extension/src/data/dataProtocol';
import { binRange, channelHistogram, splitHistograms, splitHistogramsAll } from '../../../../extension/src/data/dataHistograms';
import { buildDataView } from '../../../../extension/src/data/dataView';
import { readFixture } from '../support/fixtures';

function fixture(name: string): DataCheckResult {
  return readFixture<DataCheckResult>(`data-${name}.json`);
}

test('a real result: one histogram a channel of every image split, bars relative to the tallest (square root)', () => {
  const r = fixture('healthy');
  const all = splitHistogramsAll(r.splits);
  assert.deepEqual(all.map((h) => h.split), r.splits.map((s) => s.name));
  for (const [k, h] of all.entries()) {
    const raw = r.splits[k].gallery!.histograms!;
    assert.equal(h.channels.length, raw.channels.length);
    assert.deepEqual(h.channels.map((c) => c.tint), ['red', 'green', 'blue']); // the grid draws 3 channels as RGB
    for (const [ch, c] of h.channels.entries()) {
      assert.equal(c.channel, `channel ${ch}`);
      assert.deepEqual(c.counts, raw.channels[ch].counts);
      assert.equal(Math.max(...c.heights), 1);
      const top = Math.max(...c.counts);
      c.heights.forEach((v, k) => assert.ok(Math.abs(v - Math.sqrt(c.counts[k] / top)) < 1e-12));
      assert.ok(c.heights.every((v) => v >= 0 && v <= 1));
      assert.equal(c.titles.length, raw.bins);
      assert.match(c.summary, /values$/);
    }
    assert.match(h.caption, new RegExp(`first ${raw.samples} samples drawn`));
  }
  assert.deepEqual(buildDataView(r).histograms, all);
});

test('one-channel images are not tinted; tabular data has no histograms', () => {
  const r = fixture('blank-augmentation');
  const h = splitHistograms(r.splits[0])!;
  assert.equal(h.channels.length, 1);
  assert.equal(h.channels[0].tint, '');
  assert.equal(splitHistogramsAll(fixture('tabular-strings').splits).length, 0);
});

test('malformed counts are not drawn; NaN/Inf are said', () => {
  const good = { low: 0, high: 1, counts: [1, 3], values: 4, nonfinite: 2 };
  const c = channelHistogram(good, 0, 1)!;
  assert.deepEqual(c.heights, [Math.sqrt(1 / 3), 1]); // square root: small bins next to a full one show
  assert.deepEqual(c.titles, ['[0, 0.5): 1', '[0.5, 1]: 3']);
  assert.equal(c.summary, '4 values; 2 NaN/Inf left out');
  assert.equal(channelHistogram({ ...good, counts: [1, -3] }, 0, 1), null);
  assert.equal(channelHistogram({ ...good, counts: [1.5, 3] }, 0, 1), null);
  assert.equal(channelHistogram({ ...good, values: 5 }, 0, 1), null); // the counts must add up
  assert.equal(channelHistogram({ ...good, low: 2 }, 0, 1), null);
  assert.equal(channelHistogram({ ...good, low: null }, 0, 1), null);
  assert.equal(channelHistogram({ ...good, counts: [0, 0], values: 0 }, 0, 1), null);
  const split = fixture('healthy').splits[0];
  const broken: DataSplitSummary = { ...split, gallery: { ...split.gallery!, histograms: { bins: 2, samples: 3, channels: [{ ...good, counts: [] }] } } };
  assert.equal(splitHistograms(broken), null);
  assert.equal(splitHistograms({ ...split, gallery: { ...split.gallery!, histograms: null } }), null);
});

test('bin ranges: equal widths from low to high, the last one closed', () => {
  assert.equal(binRange(0, 255, 0, 32), '[0, 7.969)');
  assert.equal(binRange(0, 255, 31, 32), '[247, 255]');
  assert.equal(binRange(1, 1, 0, 2), '[1, 1.5)'); // one value: the backend's range is [v, v + 1]
});
