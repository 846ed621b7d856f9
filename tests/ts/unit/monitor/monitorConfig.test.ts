import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { MONITOR_ENV, monitorEnv, normalizeMonitor } from '../../../../extension/src/monitor/monitorConfig';

const on = { enable: true, every: 10, thresholds: {} };

test('absent follows the setting; true is on; false is off', () => {
  assert.deepEqual(normalizeMonitor(undefined, on), { every: 10 });
  assert.equal(normalizeMonitor(undefined, { ...on, enable: false }), undefined);
  assert.deepEqual(normalizeMonitor(true, { ...on, enable: false }), { every: 10 });
  assert.equal(normalizeMonitor(false, on), undefined);
});

test('an object overrides the settings; thresholds merge', () => {
  const s = normalizeMonitor({ every: 5, tensorboard: 'runs/x', thresholds: { inputBound: 0.6 } }, { ...on, thresholds: { a: 1 } });
  assert.deepEqual(s, { every: 5, tensorboard: 'runs/x', thresholds: { a: 1, inputBound: 0.6 } });
});

test('typos are errors that name the attribute', () => {
  assert.throws(() => normalizeMonitor('yes', on), /"monitor" must be true, false or an object/);
  assert.throws(() => normalizeMonitor({ evry: 5 }, on), /unknown: evry/);
  assert.throws(() => normalizeMonitor({ every: 0 }, on), /"monitor.every"/);
  assert.throws(() => normalizeMonitor({ tensorboard: 3 }, on), /"monitor.tensorboard"/);
  assert.throws(() => normalizeMonitor({ thresholds: { x: '1' } }, on), /not a number: x/);
});

test('the env carries the settings and the channel', () => {
  const env = monitorEnv({ every: 10 }, { host: '127.0.0.1', port: 5000, token: 'f'.repeat(32) });
  assert.deepEqual(JSON.parse(env[MONITOR_ENV]), {
    every: 10,
    tensorboard: null,
    channel: { host: '127.0.0.1', port: 5000, token: 'f'.repeat(32) },
  });
});
