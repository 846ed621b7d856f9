import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { statusView } from '../../../../extension/src/backend/statusView';

const healthy = { lines: ['Python 3.11.7 at `/v/bin/python`', 'torch 2.13.0 · CPU build (no CUDA)'] };
const noTorch = { warning: 'torch is not installed in /usr/bin/python3 (Python 3.11.2): …', lines: ['torch: **not installed**'] };

test('the backend states keep their icons, labels and the log on click', () => {
  const expected: [Parameters<typeof statusView>[0], string, string | undefined][] = [
    ['starting', '$(loading~spin) Torch Doctor', undefined],
    ['ready', '$(pulse) Torch Doctor', undefined],
    ['restarting', '$(loading~spin) Torch Doctor', undefined],
    ['error', '$(error) Torch Doctor', 'error'],
    ['stopped', '$(circle-slash) Torch Doctor', undefined],
  ];
  for (const [state, text, background] of expected) {
    const v = statusView(state, 'detail', healthy);
    assert.equal(v.state, state);
    assert.equal(v.text, text);
    assert.equal(v.label, `Torch Doctor: ${state}`);
    assert.equal(v.background, background);
    assert.equal(v.command, 'torchDoctor.showLog');
  }
});

test('ready without torch is a yellow warning whose click is the interpreter picker', () => {
  const v = statusView('ready', 'Backend version 0.1.0, pid 1.', noTorch);
  assert.equal(v.state, 'warning');
  assert.equal(v.text, '$(warning) Torch Doctor');
  assert.equal(v.label, 'Torch Doctor: warning');
  assert.equal(v.background, 'warning');
  assert.equal(v.command, 'torchDoctor.selectInterpreter');
  assert.match(v.tooltip, /\*\*Torch Doctor: warning\*\*/);
  assert.match(v.tooltip, /\$\(warning\) torch is not installed in \/usr\/bin\/python3/);
  assert.match(v.tooltip, /\[\$\(gear\) Select Interpreter\]\(command:torchDoctor\.selectInterpreter\)/);
});

test('an error stays an error even when torch is missing too', () => {
  const v = statusView('error', 'cannot start', noTorch);
  assert.equal(v.state, 'error');
  assert.equal(v.background, 'error');
});

test('the tooltip lists the interpreter facts, or says they are being checked', () => {
  assert.match(statusView('ready', 'd', healthy).tooltip, /\n- Python 3\.11\.7 at `\/v\/bin\/python`\n- torch 2\.13\.0/);
  assert.match(statusView('starting', 'd').tooltip, /Checking the interpreter/);
  assert.equal(statusView('ready', 'd').state, 'ready'); // no answer yet: no warning
});
