import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { PingEvent, PingMonitor } from '../../../../extension/src/backend/pingMonitor';

const FAST = { intervalMs: 1_000_000, timeoutMs: 20, hungAfter: 3 };
const never = () => new Promise<unknown>(() => undefined);
const answer = () => Promise.resolve({ pid: 1 });

function monitor(ping: () => Promise<unknown>) {
  const events: [PingEvent, number][] = [];
  return { m: new PingMonitor(() => ping(), (e, n) => events.push([e, n]), FAST), events };
}

test('an answering backend raises nothing', async () => {
  const { m, events } = monitor(answer);
  assert.equal(await m.tick(), true);
  assert.equal(await m.tick(), true);
  assert.deepEqual(events, []);
});

test('a backend that stops answering is unresponsive, then hung after three misses', async () => {
  const { m, events } = monitor(never);
  for (let i = 0; i < 3; i++) {
    assert.equal(await m.tick(), false);
  }
  assert.deepEqual(events, [
    ['unresponsive', 1],
    ['unresponsive', 2],
    ['hung', 3],
  ]);
});

test('an answer after a miss is a recovery, and an error answer still counts as an answer', async () => {
  let ping: () => Promise<unknown> = never;
  const { m, events } = monitor(() => ping());
  await m.tick();
  ping = () => Promise.reject(new Error('MethodNotFound'));
  assert.equal(await m.tick(), true);
  assert.deepEqual(events, [
    ['unresponsive', 1],
    ['recovered', 1],
  ]);
});

test('a ping still waiting is not doubled', async () => {
  let calls = 0;
  const { m } = monitor(() => {
    calls += 1;
    return never();
  });
  const first = m.tick();
  assert.equal(await m.tick(), false);
  await first;
  assert.equal(calls, 1);
});
