import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { positiveOnly, smooth } from '../../../../extension/src/monitor/smoothing';

test('weight 0 leaves the curve as it is; a constant stays constant (debiased from the first point)', () => {
  assert.deepEqual(smooth([1, 2, 3], 0), [1, 2, 3]);
  const s = smooth([5, 5, 5, 5], 0.9) as number[];
  for (const v of s) {
    assert.ok(Math.abs(v - 5) < 1e-12);
  }
});

test('smoothing damps noise: the smoothed curve moves less than the raw one', () => {
  const raw = Array.from({ length: 200 }, (_, i) => 1 + (i % 2 ? 0.5 : -0.5));
  const s = smooth(raw, 0.8) as number[];
  const spread = (xs: number[]) => Math.max(...xs.slice(50)) - Math.min(...xs.slice(50));
  assert.ok(spread(s) < spread(raw) / 3);
});

test('gaps stay gaps and do not move the average', () => {
  const s = smooth([1, null, 1, Number.NaN], 0.5);
  assert.equal(s[1], null);
  assert.equal(s[3], null);
  assert.ok(Math.abs((s[2] as number) - 1) < 1e-12);
});

test('a log axis gets no zeros or negatives', () => {
  assert.deepEqual(positiveOnly([1, 0, -2, null, 3]), [1, null, null, null, 3]);
});
