// The check-result chart (extension/src/checks/curveView.ts): axes, ticks, spikes, gaps.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { curveView, formatPow10, linearAxis, logAxis, robustTop } from '../../../../extension/src/checks/curveView';

test('axes: nice linear ticks, decade log ticks with readable labels', () => {
  const y = linearAxis('loss', 0, 1.5638, 5, true);
  assert.equal(y.min, 0);
  assert.equal(y.max, 2);
  assert.deepEqual(
    y.ticks.map((t) => t.label),
    ['0', '0.5', '1', '1.5', '2'],
  );
  const x = linearAxis('step', 0, 126, 6, false);
  assert.equal(x.max, 126, 'an x axis keeps the data range');
  assert.deepEqual(
    x.ticks.map((t) => t.label),
    ['0', '25', '50', '75', '100', '125'],
  );
  const tiny = linearAxis('d', 1e-4, 5e-4, 4, true);
  assert.deepEqual(
    tiny.ticks.map((t) => t.label),
    ['1e-4', '2e-4', '3e-4', '4e-4', '5e-4'],
  );
  const flat = linearAxis('loss', 2, 2, 5, true);
  assert.ok(flat.min < 2 && flat.max > 2, 'a flat line gets a range around it');
  const lx = logAxis('lr', 3e-6, 0.2);
  assert.deepEqual(
    lx.ticks.map((t) => t.label),
    ['1e-6', '1e-5', '1e-4', '1e-3', '1e-2', '0.1', '1'],
  );
  assert.equal(formatPow10(2), '100');
  assert.equal(formatPow10(3), '1e3');
  const wide = logAxis('lr', 1e-12, 1e12);
  assert.ok(wide.ticks.length <= 13, 'many decades: every other one labelled');
});

test('a spike does not flatten the curve: the top is cut and the note says how many values', () => {
  const values = Array.from({ length: 50 }, (_, i) => 1 - i / 100);
  values.push(1e6);
  assert.deepEqual(robustTop([1, 2, 3]), { top: 3, clipped: false });
  const top = robustTop(values);
  assert.equal(top.clipped, true);
  assert.ok(top.top < 2);
  const c = curveView({
    xLabel: 'learning rate',
    yLabel: 'loss',
    xScale: 'log',
    series: [{ name: 'loss', points: values.map((y, i) => [10 ** (-7 + i / 8), y] as [number, number]) }],
    marks: [],
  })!;
  assert.equal(c.series[0].clipped, 1);
  assert.match(c.note, /^1 value above .* is cut off at the top/);
});

test('a log axis drops x <= 0 and counts it as not drawn', () => {
  const c = curveView({
    xLabel: 'lr',
    yLabel: 'loss',
    xScale: 'log',
    series: [{ name: 'loss', points: [[0, 1], [1e-3, 0.5], [1e-2, 0.4]] }],
    marks: [{ x: 0, label: 'bad' }],
  })!;
  assert.equal(c.series[0].points.length, 2);
  assert.equal(c.series[0].missing, 1);
  assert.deepEqual(c.marks, []);
});
