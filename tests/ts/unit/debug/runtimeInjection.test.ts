import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { injectRuntime, isInjected, RUNTIME_MARKER_ENV } from '../../../../extension/src/debug/runtimeInjection';

const RT = '/ext/pybackend';

test('the runtime goes first, the inherited PYTHONPATH is kept after it', () => {
  const env = injectRuntime(undefined, RT, '/home/me/src:/opt/lib', ':');
  assert.equal(env.PYTHONPATH, '/ext/pybackend:/home/me/src:/opt/lib');
  assert.equal(env[RUNTIME_MARKER_ENV], '1');
});

test("the configuration's own PYTHONPATH wins over the inherited one", () => {
  const env = injectRuntime({ PYTHONPATH: '/proj', FOO: 'bar' }, RT, '/inherited', ':');
  assert.equal(env.PYTHONPATH, '/ext/pybackend:/proj');
  assert.equal(env.FOO, 'bar');
});

test('injecting twice does not duplicate the runtime directory', () => {
  const once = injectRuntime({}, RT, undefined, ':');
  const twice = injectRuntime(once, RT, undefined, ':');
  assert.equal(twice.PYTHONPATH, RT);
  assert.ok(isInjected(twice, RT, ':'));
  assert.ok(!isInjected({ PYTHONPATH: '/proj' }, RT, ':'));
});

test('the input env is not mutated', () => {
  const input = { PYTHONPATH: '/proj' };
  injectRuntime(input, RT, undefined, ':');
  assert.deepEqual(input, { PYTHONPATH: '/proj' });
});
