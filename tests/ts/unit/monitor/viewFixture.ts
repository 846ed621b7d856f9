// Writes the MonitorView of a synthetic run of N steps as JSON, for the E2E render check
// (tests/e2e/test_monitor.py bundles this file with esbuild and runs it with node):
//   node view-fixture.js N OUT.json
// Not a test itself, and imported by none (it runs on load).
import { writeFileSync } from 'node:fs';
import { buildView } from '../../../../extension/src/monitor/monitorView';
import { run, step } from './synthetic';

const n = Number(process.argv[2]);
const out = process.argv[3];
const store = run(0);
const s = step(0);
for (let i = 0; i < n; i++) {
  s.step = i;
  s.loss = 2 * Math.exp(-i / (n / 5)) + 0.05 + 0.02 * Math.sin(i * 0.7);
  s.grad_norm = 1 / (1 + i / (n / 50));
  s.update_ratio = i % 10 === 0 ? [1e-3 * (1 + 0.2 * Math.sin(i)), 2e-3] : null;
  s.rss = 2e8 + i * 16;
  store.addStep(s);
  if (i % Math.max(1, Math.floor(n / 50)) === 0) {
    store.evals.push(i, [2.1 * Math.exp(-i / (n / 4)) + 0.1]);
  }
}
store.setState('running', Date.now());
// The first build runs cold; a live view redraws twice a second, so the code is soon compiled:
// the median of the last five of 30 builds.
let t0 = performance.now();
const view = buildView(store);
const coldMs = performance.now() - t0;
const times: number[] = [];
for (let k = 0; k < 30; k++) {
  t0 = performance.now();
  buildView(store);
  times.push(performance.now() - t0);
}
const warm = times.slice(-5).sort((a, b) => a - b);
writeFileSync(out, JSON.stringify({ view, buildMs: warm[2], coldBuildMs: coldMs }));
