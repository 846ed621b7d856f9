import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { RunStore } from '../../../../extension/src/monitor/runStore';
import { Batch } from '../../../../extension/src/monitor/wire';
import { step } from './synthetic';

function batch(from: number, n: number): Batch {
  const steps = Array.from({ length: n }, (_, i) => step(from + i));
  return { steps, evals: [], user: [], findings: [], dropped: 0 };
}

test('the debugger stops before the first batch arrives: the run is paused once the steps come, not running', () => {
  // The sender sends every 0.25 s; a fast first epoch reaches its breakpoint sooner (a clean-clone
  // CI run showed "Running, 16 steps" while the program was paused).
  const store = new RunStore('Debug current file', 0);
  assert.equal(store.debuggerMoved('paused', 1), false);
  assert.equal(store.info.state, 'waiting');
  store.addBatch(batch(0, 16));
  assert.equal(store.info.state, 'paused');
  assert.equal(store.debuggerMoved('running', 2), true);
  assert.equal(store.info.state, 'running');
});

test('stopped then resumed before any data: the first batch finds the run running', () => {
  const store = new RunStore('Debug current file', 0);
  store.debuggerMoved('paused', 1);
  store.debuggerMoved('running', 2);
  store.addBatch(batch(0, 4));
  assert.equal(store.info.state, 'running');
});

test('pause and resume after data change the state once each; an ended run stays ended', () => {
  const store = new RunStore('Debug current file', 0);
  store.addBatch(batch(0, 4));
  assert.equal(store.info.state, 'running');
  assert.equal(store.debuggerMoved('paused', 1), true);
  assert.equal(store.debuggerMoved('paused', 2), false);
  store.setState('ended', 3);
  assert.equal(store.debuggerMoved('running', 4), false);
  assert.equal(store.info.state, 'ended');
  assert.equal(store.info.ended, 3);
});
