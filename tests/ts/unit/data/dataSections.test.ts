// The image grid, label charts and split table of the data page (extension/src/data/dataSections.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import type { DataCheckResult, DataSplitSummary } from '../../../../extension/src/data/dataProtocol';
import { galleryPages, galleryView, galleryViews, labelChart, MAX_BARS, PAGE_SIZE, scaleNote, splitTable } from '../../../../extension/src/data/dataSections';
import { readFixture } from '../support/fixtures';

function fixture(name: string): DataCheckResult {
  return readFixture<DataCheckResult>(`data-${name}.json`);
}

test('the blank augmentation grid: every image drawable, blank ones marked, labels under them', () => {
  const r = fixture('blank-augmentation');
  const g = galleryView(r.splits[0], r.findings)!;
  const raw = r.splits[0].gallery!;
  assert.equal(g.images.length, raw.images.length);
  assert.deepEqual([g.width, g.height, g.channels], [28, 28, 1]);
  assert.equal(g.blank, raw.images.filter((im) => im.blank).length);
  assert.ok(g.blank > 0 && g.blank < g.images.length);
  for (const [k, im] of g.images.entries()) {
    assert.equal(Buffer.from(im.pixels, 'base64').length, 28 * 28);
    assert.equal(im.caption, `#${raw.images[k].index} · ${raw.images[k].label}`);
  }
  const flagged = new Set(r.findings[0].indices.map(String));
  assert.deepEqual(g.images.filter((im) => im.flagged).map((im) => String(im.index)), g.images.map((im) => String(im.index)).filter((i) => flagged.has(i)));
  assert.match(g.caption, /blank, outlined/);
  assert.match(g.scaleNote, /^Denormalised for display/);
});

test('malformed images are dropped, a malformed gallery is none, non-image data has none', () => {
  const r = fixture('healthy');
  const split = r.splits[0];
  const g0 = split.gallery!;
  const bad: DataSplitSummary = {
    ...split,
    gallery: { ...g0, images: [{ ...g0.images[0], pixels: g0.images[0].pixels.slice(4) }, { ...g0.images[1], pixels: '!'.repeat(g0.images[1].pixels.length) }, g0.images[2]] },
  };
  const g = galleryView(bad, [])!;
  assert.equal(g.images.length, 1);
  assert.equal(g.dropped, 2);
  assert.equal(galleryView({ ...split, gallery: { ...g0, width: 10_000 } }, []), null);
  assert.equal(galleryView({ ...split, gallery: { ...g0, channels: 4 } }, []), null);
  assert.equal(galleryViews(fixture('tabular-strings').splits, []).length, 0);
  assert.equal(galleryViews(r.splits, []).length, 3); // train, val, test
  assert.equal(scaleNote({ kind: 'uint8', low: [0], high: [255] }), 'Pixel values as stored (0–255).');
});

test('label charts: one bar per class, widths relative to the largest, shares of the total', () => {
  const r = fixture('healthy');
  const c = labelChart(r.splits[0])!;
  const counts = Object.values(r.splits[0].labels!);
  assert.equal(c.total, counts.reduce((a, b) => a + b, 0));
  assert.equal(c.bars.length, counts.length);
  assert.equal(Math.max(...c.bars.map((b) => b.width)), 1);
  assert.ok(Math.abs(c.bars.reduce((n, b) => n + b.share, 0) - 1) < 1e-9);
  const many = Object.fromEntries(Array.from({ length: MAX_BARS + 5 }, (_, i) => [String(i), i + 1]));
  const m = labelChart({ ...r.splits[0], labels: many })!;
  assert.equal(m.bars.length, MAX_BARS);
  assert.equal(m.more, 5);
  assert.equal(labelChart({ ...r.splits[0], labels: null }), null);
});

test('the split table: a row per split, findings counted, the source linked', () => {
  const r = fixture('channels-last');
  const t = splitTable(r.splits, r.findings)!;
  assert.equal(t.rows.length, r.splits.length);
  assert.equal(t.columns.length, t.rows[0].cells.length);
  assert.deepEqual(t.rows.map((row) => row.cells[0]), r.splits.map((s) => s.name));
  const findingsColumn = t.columns.indexOf('Findings');
  assert.deepEqual(t.rows.map((row) => row.cells[findingsColumn]), ['1', '1']);
  assert.ok(t.rows.every((row) => row.flagged));
  assert.equal(t.rows[0].source?.label, 'channels_last.py:32');
  assert.match(t.rows[0].cells[t.columns.indexOf('Sample')], /^\(32, 32, 3\)/);
  assert.equal(splitTable([], []), null);
  const tab = splitTable(fixture('tabular-strings').splits, [])!;
  assert.match(tab.rows[0].cells[t.columns.indexOf('Sample')], /columns$/);
});

test('the grid pages through its images, PAGE_SIZE at a time', () => {
  assert.equal(PAGE_SIZE, 32);
  assert.deepEqual(galleryPages(70), [
    { start: 0, end: 32, label: '1–32 of 70' },
    { start: 32, end: 64, label: '33–64 of 70' },
    { start: 64, end: 70, label: '65–70 of 70' },
  ]);
  assert.deepEqual(galleryPages(32), [{ start: 0, end: 32, label: '1–32 of 32' }]);
  assert.deepEqual(galleryPages(0), [{ start: 0, end: 0, label: '0 of 0' }]);
  const r = fixture('healthy');
  const split = r.splits[0];
  const g0 = split.gallery!;
  const many = Array.from({ length: 100 }, (_, i) => ({ ...g0.images[i % g0.images.length], index: i }));
  const g = galleryView({ ...split, gallery: { ...g0, images: many } }, [])!;
  assert.equal(g.images.length, 100);
  assert.deepEqual(g.pages.map((p) => p.label), ['1–32 of 100', '33–64 of 100', '65–96 of 100', '97–100 of 100']);
  assert.equal(galleryView(split, [])!.pages.length, 1);
});

test("a paused program's tensor is captioned as the variable holds it, not as transformed", () => {
  const r = fixture('blank-augmentation');
  const drawn = galleryView(r.splits[0], r.findings)!;
  assert.match(drawn.caption, /as the model gets them \(after the dataset's transforms\)/);
  const held = galleryView(r.splits[0], r.findings, true)!;
  assert.match(held.caption, new RegExp(`^${held.images.length} of the \\d+ images in ${r.splits[0].name}`));
  assert.match(held.caption, /as the variable holds them/);
  assert.doesNotMatch(held.caption, /transforms/);
  assert.deepEqual(galleryViews(r.splits, r.findings, true).map((g) => g.caption), [held.caption]);
});
