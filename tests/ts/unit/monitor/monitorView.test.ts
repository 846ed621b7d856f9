import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { buildView, POINTS, UPDATE_RATIO_TARGET } from '../../../../extension/src/monitor/monitorView';
import { run, step } from './synthetic';

const ids = (v: ReturnType<typeof buildView>) => v.charts.map((c) => c.id);

test('a healthy run has every chart the recorder measured, no more', () => {
  const v = buildView(run(300));
  assert.deepEqual(ids(v), ['loss', 'lr', 'grad_norm', 'update_ratio', 'step_time', 'samples', 'memory']);
  const loss = v.charts[0];
  assert.deepEqual(
    loss.series.map((s) => s.label),
    ['train', 'validation'],
  );
  assert.equal(loss.x.length, 300, 'all steps exact at this length');
  assert.equal(loss.series[1].values.filter((x) => x !== null).length, 3, 'three evaluations, at their steps');
  assert.equal(v.steps, 300);
  assert.equal(v.lastStep, 299);
  // No CUDA: only the process RSS in the memory chart; no clipping: only "before".
  assert.deepEqual(v.charts.find((c) => c.id === 'memory')!.series.map((s) => s.label), ['process RSS']);
  assert.deepEqual(v.charts.find((c) => c.id === 'grad_norm')!.series.map((s) => s.label), ['before clipping']);
});

test('learning rate and update ratio: one series per parameter group; the ratio has the 1e-3 reference on a log axis', () => {
  const v = buildView(run(50));
  assert.deepEqual(v.charts.find((c) => c.id === 'lr')!.series.map((s) => s.label), ['group 0', 'group 1']);
  const ratio = v.charts.find((c) => c.id === 'update_ratio')!;
  assert.equal(ratio.log, true);
  assert.deepEqual(ratio.series.map((s) => s.label), ['group 0', 'group 1', '~1e-3 (healthy)']);
  assert.ok(ratio.series[2].values.every((x) => x === UPDATE_RATIO_TARGET));
  // Measured every 10 steps: the other steps are gaps, not zeros.
  assert.equal(ratio.series[0].values.filter((x) => x !== null).length, 5);
});

test('step time is stacked: each series is the running sum, its part kept for the legend', () => {
  const c = buildView(run(10)).charts.find((c) => c.id === 'step_time')!;
  assert.equal(c.stacked, true);
  assert.deepEqual(c.series.map((s) => s.label), ['data', 'forward', 'backward', 'optimizer', 'other']);
  const top = c.series[4].values[0]!;
  assert.ok(Math.abs(top - 0.0135) < 1e-12);
  assert.ok(Math.abs(c.series[1].part![0]! - 0.004) < 1e-12);
});

test('a GAN: two series, each named, on one loss chart', () => {
  const v = buildView(run(100, ['opt0', 'opt1']));
  assert.deepEqual(v.charts[0].series.map((s) => s.label), ['train · opt0', 'train · opt1', 'validation']);
});

test('findings: one per kind (the latest), errors first', () => {
  const store = run(10);
  const f = (kind: string, severity: 'info' | 'warning' | 'error', sentence: string, series = 'opt0') => ({
    kind,
    severity,
    step: 5,
    sentence,
    where: null,
    series,
  });
  store.addBatch({ steps: [], evals: [], user: [], findings: [f('input_bound', 'warning', 'old'), f('loss_nan', 'error', 'NaN')], dropped: 0 });
  store.addBatch({ steps: [], evals: [], user: [], findings: [f('input_bound', 'warning', 'new'), f('input_bound', 'warning', 'D', 'opt1')], dropped: 2 });
  const v = buildView(store);
  assert.deepEqual(v.findings.map((x) => [x.kind, x.sentence]), [['loss_nan', 'NaN'], ['input_bound', 'new'], ['input_bound', 'D']]);
  assert.equal(v.dropped, 2);
});

test('user series get a chart each', () => {
  const store = run(20);
  store.addBatch({ steps: [], evals: [], user: [{ name: 'accuracy', step: 3, value: 0.5 }, { name: 'accuracy', step: 9, value: 0.7 }], findings: [], dropped: 0 });
  const c = buildView(store).charts.find((c) => c.title === 'accuracy')!;
  assert.deepEqual(c.series[0].values.filter((x) => x !== null), [0.5, 0.7]);
});

/** A 1M-step run fed as fast as the store takes it (one step object, changed in place). */
function longRun(n: number) {
  const store = run(0);
  const s = step(0, { lr: [0.01], update_ratio: null });
  for (let i = 0; i < n; i++) {
    s.step = i;
    s.loss = i === Math.floor(n * 0.4) ? 1e3 : 1 + (i % 7) * 0.01;
    store.addStep(s);
  }
  return store;
}

const million = longRun(1_000_000);

test('a bucketed 1M-step run: at most POINTS per chart, the spike at step 400000 still on the chart, the first and last step there', () => {
  const v = buildView(million);
  const loss = v.charts[0];
  assert.ok(loss.x.length <= POINTS + 1, `${loss.x.length} points`);
  assert.ok(v.bucketWidth > 1);
  assert.equal(Math.max(...(loss.series[0].hi as number[])), 1e3);
  assert.ok(loss.x[0] < 2000 && loss.x[loss.x.length - 1] === 999_999);
  assert.equal(v.steps, 1_000_000);
  // The message posted to the page stays small: bounded by POINTS, not by the steps.
  assert.ok(JSON.stringify(v).length < 1_500_000, `${JSON.stringify(v).length} bytes`);
});

function medianMs(f: () => void, times = 15): number {
  f(); // compiled once before timing
  const ts = Array.from({ length: times }, () => {
    const t0 = performance.now();
    f();
    return performance.now() - t0;
  }).sort((a, b) => a - b);
  return ts[Math.floor(times / 2)];
}

test('the view of a 1M-step run costs about what a 20k-step one does: the cost follows the stored rows, not the steps', () => {
  const small = longRun(20_000);
  // Interleaved, so a busy machine slows both alike.
  const a: number[] = [];
  const b: number[] = [];
  for (let k = 0; k < 3; k++) {
    a.push(medianMs(() => buildView(million)));
    b.push(medianMs(() => buildView(small)));
  }
  const big = Math.min(...a);
  const ref = Math.min(...b);
  console.log(`buildView: 1M steps ${big.toFixed(1)} ms, 20k steps ${ref.toFixed(1)} ms (ratio ${(big / ref).toFixed(2)})`);
  assert.ok(big < 3 * ref + 2, `1M steps ${big.toFixed(1)} ms vs 20k steps ${ref.toFixed(1)} ms`);
});
