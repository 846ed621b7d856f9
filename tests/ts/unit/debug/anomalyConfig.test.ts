import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { ANOMALY_ENV, anomalyEnv, anomalySentence, normalizeAnomaly } from '../../../../extension/src/debug/anomalyConfig';
import { anomalyCondition, CONDITIONS_MODULE } from '../../../../extension/src/debug/anomalyConditions';

test('true, "break" and an object all turn the watch on', () => {
  assert.deepEqual(normalizeAnomaly(true), { mode: 'break' });
  assert.deepEqual(normalizeAnomaly('log'), { mode: 'log' });
  assert.deepEqual(normalizeAnomaly({ threshold: 100 }), { mode: 'break', threshold: 100 });
});

test('absent, false or "off" means no environment variable', () => {
  assert.deepEqual(anomalyEnv(undefined), {});
  assert.deepEqual(anomalyEnv(false), {});
  assert.deepEqual(anomalyEnv('off'), {});
});

test('the env carries the JSON the runtime parses', () => {
  const env = anomalyEnv({ mode: 'break', skipSteps: 5, checks: ['forward', 'loss'] });
  assert.deepEqual(JSON.parse(env[ANOMALY_ENV]), { mode: 'break', skipSteps: 5, checks: ['forward', 'loss'] });
});

test('typos are errors that name the attribute, never a silently disabled watch', () => {
  assert.throws(() => normalizeAnomaly('brake'), /"anomaly" must be one of break, log, off/);
  assert.throws(() => normalizeAnomaly({ mode: 'pause' }), /"anomaly.mode"/);
  assert.throws(() => normalizeAnomaly({ threshold: '1e4' }), /"anomaly.threshold" must be a non-negative number/);
  assert.throws(() => normalizeAnomaly({ deadSteps: -1 }), /"anomaly.deadSteps" must be a non-negative number/);
  assert.deepEqual(normalizeAnomaly({ deadSteps: 0 }), { mode: 'break', deadSteps: 0 });
  assert.throws(() => normalizeAnomaly({ checks: ['forwards'] }), /unknown: forwards/);
  assert.throws(() => normalizeAnomaly(42), /must be true/);
});

test('the anomaly line is found in a chunk of output', () => {
  const out = 'epoch 3\n[torchdoctor] anomaly: NaN in the output of `fc2` (Linear) at step 12\nmore';
  assert.equal(anomalySentence(out), 'NaN in the output of `fc2` (Linear) at step 12');
  assert.equal(anomalySentence('loss 0.3\n'), undefined);
});

test('each breakpoint kind gives a one-line Python condition calling the runtime helper', () => {
  assert.equal(anomalyCondition('nonfinite', {}), `${CONDITIONS_MODULE}.any_nonfinite()`);
  assert.equal(anomalyCondition('exceeds', { expression: 'loss', threshold: '100' }), `${CONDITIONS_MODULE}.exceeds(loss, 100)`);
  assert.equal(anomalyCondition('lossSpike', { loss: 'loss', factor: '10' }), `${CONDITIONS_MODULE}.loss_spiked(loss, 10)`);
  assert.equal(anomalyCondition('gradNorm', { model: 'model', maxNorm: '1e3' }), `${CONDITIONS_MODULE}.grad_norm_exceeds(model, 1000)`);
});

test('a condition refuses a non-number threshold and a multi-line expression', () => {
  assert.throws(() => anomalyCondition('exceeds', { expression: 'loss', threshold: '1; import os' }), /not a number/);
  assert.throws(() => anomalyCondition('exceeds', { expression: 'a\nb', threshold: '1' }), /one line/);
});
