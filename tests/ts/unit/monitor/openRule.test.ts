// When the Training view opens by itself: once a run has a curve (an optimizer stepped, or two
// backward() calls of a script without one), on stores fed batches as the recorder sends them.
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { JobStore } from '../../../../extension/src/monitor/jobStore';
import { hasCurve, jobHasCurve } from '../../../../extension/src/monitor/openRule';
import { RunStore } from '../../../../extension/src/monitor/runStore';
import { Batch, Hello, Step } from '../../../../extension/src/monitor/wire';
import { step } from './synthetic';

const batch = (steps: Step[]): Batch => ({ steps, evals: [], user: [], findings: [], dropped: 0 });
const hello = (rank: number): Hello => ({ pid: 100 + rank, rank, world_size: 2, script: '/ws/ddp.py', version: 1 });
/** A step of a script without an optimizer: the recorder numbers them by backward() calls from 1, no lr. */
const backward = (i: number): Step => step(i, { series: 'backward', lr: [], grad_norm: null, update_ratio: null });
const stores = (job: JobStore) => job.ranks.map((r) => job.store(r));

test('one backward() and no optimizer (inspect_tensors.py): a step, but no curve to open the view for', () => {
  const store = new RunStore('Debug current file', 0);
  store.addBatch(batch([backward(1)]));
  assert.equal(store.lastStep, 1); // the extension saw a step: the old rule opened the view here
  assert.equal(hasCurve(store), false);
});

test('a second backward() without an optimizer is a curve', () => {
  const store = new RunStore('Debug current file', 0);
  store.addBatch(batch([backward(1)]));
  store.addBatch(batch([backward(2)]));
  assert.equal(hasCurve(store), true);
});

test("an optimizer's first step is training: a curve from that step on", () => {
  const store = new RunStore('Debug current file', 0);
  store.addBatch(batch([step(1, { series: 'opt0' })]));
  assert.equal(hasCurve(store), true);
  const second = new RunStore('Debug GAN', 0);
  second.addBatch(batch([step(1, { series: 'opt1' })])); // any optimizer, not only the first
  assert.equal(hasCurve(second), true);
});

test('a run with no step yet has no curve', () => {
  assert.equal(hasCurve(new RunStore('Debug current file', 0)), false);
});

test('a torchrun job has a curve when any rank has one, not from one backward per rank', () => {
  const job = new JobStore('Debug with torchrun (2 processes)', 0);
  job.open(hello(0));
  job.open(hello(1));
  job.addBatch(0, batch([backward(1)]));
  job.addBatch(1, batch([backward(1)]));
  assert.equal(jobHasCurve(stores(job)), false); // two ranks' single backward are not two steps
  job.addBatch(1, batch([backward(2)]));
  assert.equal(jobHasCurve(stores(job)), true);
});
