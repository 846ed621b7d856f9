// The gradient-flow log axis and its bars (extension/src/views/logAxis.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { barView, logAxis, logFraction } from '../../../../extension/src/views/logAxis';

test('logAxis spans 1e-9..1e3 by default and grows by whole decades to fit the data', () => {
  const d = logAxis([1e-3, 5e-2, null, 0, NaN, Infinity]);
  assert.deepEqual([d.lo, d.hi], [-9, 3]);
  assert.equal(d.ticks.length, 13);
  assert.deepEqual(d.ticks[0], { exp: -9, label: '1e-9', fraction: 0 });
  assert.equal(d.ticks[9].label, '1');
  assert.equal(d.ticks[12].fraction, 1);
  const wide = logAxis([3e-12, 4.2e5]);
  assert.deepEqual([wide.lo, wide.hi], [-12, 6]);
  const exact = logAxis([1e-10, 1e4]);
  assert.deepEqual([exact.lo, exact.hi], [-10, 4], 'a power of ten is its own decade');
  const extreme = logAxis([1e-300, 1e300]);
  assert.deepEqual([extreme.lo, extreme.hi], [-45, 39], 'clamped to float range');
});

test('logFraction and barView: log positions, zero, no gradient, NaN, Inf, off-axis values', () => {
  const axis = logAxis([]);
  assert.equal(logFraction(1e-9, axis), 0);
  assert.equal(logFraction(1e3, axis), 1);
  assert.ok(Math.abs(logFraction(1e-3, axis) - 0.5) < 1e-12);
  assert.deepEqual(barView(1e-3, axis, false, false), { kind: 'value', fraction: logFraction(1e-3, axis), text: '0.001' });
  assert.deepEqual(barView(-1e-3, axis, false, false).kind, 'value', 'a magnitude');
  assert.deepEqual(barView(0, axis, false, false), { kind: 'zero', fraction: 0, text: '0' });
  assert.deepEqual(barView(null, axis, false, false), { kind: 'none', fraction: 0, text: '—' });
  assert.equal(barView(null, axis, true, false).kind, 'nan');
  assert.equal(barView(null, axis, false, true).kind, 'inf');
  assert.equal(barView(NaN, axis, false, false).kind, 'nan');
  assert.deepEqual(barView(Infinity, axis, false, false), { kind: 'inf', fraction: 1, text: 'Inf' });
  const below = barView(1e-12, axis, false, false);
  assert.equal(below.kind, 'below');
  assert.ok(below.fraction > 0 && below.fraction < 0.01);
  assert.equal(barView(1e5, axis, false, false).kind, 'above');
  assert.ok(barView(1.0001e-9, axis, false, false).fraction > 0, 'a value at the axis start still shows a sliver');
});
