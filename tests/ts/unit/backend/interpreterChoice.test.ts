import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { chooseInterpreter, DEFAULT_PYTHON, describeSource } from '../../../../extension/src/backend/interpreterChoice';

test('the setting wins over the Python extension', () => {
  assert.deepEqual(chooseInterpreter(' /opt/py/bin/python ', '/venv/bin/python'), {
    command: '/opt/py/bin/python',
    source: 'setting',
  });
});

test("the Python extension's interpreter is used when the setting is empty", () => {
  assert.deepEqual(chooseInterpreter('', '/venv/bin/python'), { command: '/venv/bin/python', source: 'python-extension' });
});

test('python3 on PATH is the last resort', () => {
  assert.deepEqual(chooseInterpreter('   ', undefined), { command: DEFAULT_PYTHON, source: 'default' });
  assert.deepEqual(chooseInterpreter('', '  '), { command: DEFAULT_PYTHON, source: 'default' });
});

test('every source has a sentence for the log', () => {
  for (const s of ['setting', 'python-extension', 'default'] as const) {
    assert.ok(describeSource(s).length > 10);
  }
});
