// Synthetic runs for the monitor's tests: steps as the recorder sends them (docs/monitor.md).
import { RunStore } from '../../../../extension/src/monitor/runStore';
import { Step } from '../../../../extension/src/monitor/wire';

export function step(i: number, over: Partial<Step> = {}): Step {
  return {
    step: i,
    series: 'opt0',
    t: 1_700_000_000 + i * 0.01,
    loss: 2 * Math.exp(-i / 500) + 0.05 + 0.01 * Math.sin(i),
    lr: [0.01, 0.001],
    grad_norm: 1 / (1 + i / 100),
    grad_norm_clipped: null,
    update_ratio: i % 10 === 0 ? [1e-3, 2e-3] : null,
    time: { data: 0.002, forward: 0.004, backward: 0.006, optimizer: 0.001, other: 0.0005 },
    samples_per_s: 5000,
    rss: 2e8 + i * 16,
    cuda: null,
    ...over,
  };
}

/** A run of `n` steps fed straight into a store, with an evaluation every 100 steps. */
export function run(n: number, series = ['opt0']): RunStore {
  const store = new RunStore('Debug training script', Date.UTC(2026, 11, 1, 12));
  for (let i = 0; i < n; i++) {
    for (const s of series) {
      store.addStep(step(i, { series: s }));
    }
    if (i % 100 === 99) {
      store.evals.push(i, [1 + i / 1e5]);
    }
  }
  return store;
}
