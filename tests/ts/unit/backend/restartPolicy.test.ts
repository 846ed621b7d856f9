import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { RestartPolicy } from '../../../../extension/src/backend/restartPolicy';

test('allows up to max restarts within the window, then refuses', () => {
  const t = 0;
  const policy = new RestartPolicy(3, 1000, () => t);
  assert.equal(policy.recordCrash(), true);
  assert.equal(policy.recordCrash(), true);
  assert.equal(policy.recordCrash(), true);
  assert.equal(policy.recordCrash(), false);
  assert.equal(policy.recentCrashes, 4);
});

test('crashes older than the window are forgotten', () => {
  let t = 0;
  const policy = new RestartPolicy(1, 1000, () => t);
  assert.equal(policy.recordCrash(), true);
  t = 1500;
  assert.equal(policy.recordCrash(), true);
  assert.equal(policy.recentCrashes, 1);
});

test('zero restarts allowed means the first crash is final', () => {
  const policy = new RestartPolicy(0, 1000, () => 0);
  assert.equal(policy.recordCrash(), false);
});

test('reset forgets every crash', () => {
  const policy = new RestartPolicy(1, 1000, () => 0);
  policy.recordCrash();
  policy.reset();
  assert.equal(policy.recentCrashes, 0);
  assert.equal(policy.recordCrash(), true);
});
