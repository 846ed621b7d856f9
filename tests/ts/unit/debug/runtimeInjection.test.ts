import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { CHILD_PROCESS_ENV, injectRuntime, isInjected, RUNTIME_MARKER_ENV } from '../../../../extension/src/debug/runtimeInjection';

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

test('followed child processes get frozen modules off and no validation note, unless the configuration says', () => {
  const env = injectRuntime({}, RT, undefined, ':');
  assert.equal(env.PYTHON_FROZEN_MODULES, 'off');
  assert.equal(env.PYDEVD_DISABLE_FILE_VALIDATION, '1');
  const own = injectRuntime({ PYDEVD_DISABLE_FILE_VALIDATION: '0', PYTHON_FROZEN_MODULES: null }, RT, undefined, ':');
  assert.equal(own.PYDEVD_DISABLE_FILE_VALIDATION, '0');
  assert.equal(own.PYTHON_FROZEN_MODULES, null); // null unsets a variable in a launch configuration: kept
  assert.deepEqual(Object.keys(CHILD_PROCESS_ENV).sort(), ['PYDEVD_DISABLE_FILE_VALIDATION', 'PYTHON_FROZEN_MODULES']);
});
