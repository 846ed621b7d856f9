import { strict as assert } from 'node:assert';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  HEALTH_SCRIPT,
  lastJson,
  parseHealth,
  probeHealth,
  summarizeHealth,
} from '../../../../extension/src/backend/interpreterHealth';

const report = (over: Record<string, unknown> = {}) =>
  JSON.stringify({
    version: [3, 11, 7],
    executable: '/ws/.venv/bin/python',
    torch: { version: '2.13.0+cpu', cuda: { available: false, version: null, devices: 0 } },
    numpy: { version: '2.3.1' },
    debugpy: { version: '1.8.22' },
    ...over,
  });

test('an interpreter with torch: versions in the tooltip lines, no warning', () => {
  const h = parseHealth('python3', { exitCode: 0, stdout: report(), stderr: '' });
  assert.equal(h.kind, 'report');
  const s = summarizeHealth(h);
  assert.equal(s.warning, undefined);
  assert.deepEqual(s.lines, [
    'Python 3.11.7 at `/ws/.venv/bin/python`',
    'torch 2.13.0+cpu · CPU build (no CUDA)',
    'numpy 2.3.1',
    'debugpy 1.8.22',
  ]);
});

test('CUDA is described by what torch sees', () => {
  const gpu = (cuda: object) =>
    summarizeHealth(parseHealth('p', { stdout: report({ torch: { version: '2.5.1', cuda } }), stderr: '' })).lines[1];
  assert.equal(gpu({ available: true, version: '12.4', devices: 1 }), 'torch 2.5.1 · CUDA 12.4: 1 GPU');
  assert.equal(gpu({ available: true, version: '12.4', devices: 8 }), 'torch 2.5.1 · CUDA 12.4: 8 GPUs');
  assert.equal(gpu({ available: false, version: '12.4', devices: 0 }), 'torch 2.5.1 · CUDA 12.4 build, no GPU visible');
  assert.match(gpu({ available: false, error: 'RuntimeError: driver too old' }), /CUDA: error \(RuntimeError: driver too old\)/);
});

test('no torch is a warning that names the interpreter and what needs torch', () => {
  const stdout = report({ torch: { error: "ModuleNotFoundError: No module named 'torch'" }, numpy: { error: 'x' }, debugpy: { error: 'y' } });
  const s = summarizeHealth(parseHealth('/usr/bin/python3', { exitCode: 0, stdout, stderr: '' }));
  assert.match(s.warning ?? '', /^torch is not installed in \/ws\/\.venv\/bin\/python \(Python 3\.11\.7\): the model checks/);
  assert.ok(s.lines.includes("torch: **not installed** (ModuleNotFoundError: No module named 'torch')"));
  assert.ok(s.lines.includes('numpy: not installed'));
  assert.ok(s.lines.some((l) => l.startsWith('debugpy: not installed')));
});

test('Python 3.9 works for the backend but the tooltip says debugging needs 3.10', () => {
  const s = summarizeHealth(parseHealth('p', { stdout: report({ version: [3, 9, 18] }), stderr: '' }));
  assert.ok(s.lines.includes('Debugging needs Python 3.10 or newer.'));
});

test('no answer is not a warning: the reason goes into the tooltip', () => {
  const cases: [Parameters<typeof parseHealth>[1], RegExp][] = [
    [{ spawnError: 'ENOENT', stdout: '', stderr: '' }, /could not be started \(ENOENT\)/],
    [{ timedOut: true, exitCode: null, stdout: '', stderr: '' }, /did not answer within 10 s/],
    [{ exitCode: 1, stdout: '', stderr: 'Traceback...\nSyntaxError: invalid syntax\n' }, /SyntaxError: invalid syntax/],
  ];
  for (const [outcome, why] of cases) {
    const h = parseHealth('py', outcome);
    assert.equal(h.kind, 'unavailable');
    const s = summarizeHealth(h);
    assert.equal(s.warning, undefined);
    assert.match(s.lines[0], why);
  }
});

test('a slow import torch still gives the versions from the metadata, CUDA unchecked', () => {
  const metadataLine = report({ stage: 'metadata', torch: { version: '2.13.0' } });
  const h = parseHealth('p', { timedOut: true, exitCode: null, stdout: `\n${metadataLine}\n`, stderr: '' });
  assert.equal(h.kind, 'report');
  const s = summarizeHealth(h);
  assert.equal(s.warning, undefined);
  assert.equal(s.lines[1], 'torch 2.13.0 · CUDA not checked (`import torch` did not finish)');
  // The metadata says torch is missing: that is enough for the warning.
  const none = report({ stage: 'metadata', torch: { error: "No module named 'torch'" } });
  assert.match(summarizeHealth(parseHealth('p', { timedOut: true, stdout: none, stderr: '' })).warning ?? '', /torch is not installed/);
  // The full report (second line) wins over the first.
  const both = `${metadataLine}\n${report({ stage: 'imported' })}\n`;
  assert.equal(summarizeHealth(parseHealth('p', { exitCode: 0, stdout: both, stderr: '' })).lines[1], 'torch 2.13.0+cpu · CPU build (no CUDA)');
});

test('a line printed before the report (a sitecustomize) is skipped', () => {
  assert.deepEqual(lastJson(`hello\n${report()}\n`), JSON.parse(report()));
  assert.equal(parseHealth('p', { stdout: 'hello\n{"version": 1}\n', stderr: '' }).kind, 'unavailable');
});

test('paths with Markdown characters stay literal (inline code)', () => {
  const s = summarizeHealth(parseHealth('p', { stdout: report({ executable: '/my_envs/*ml*/bin/python' }), stderr: '' }));
  assert.equal(s.lines[0], 'Python 3.11.7 at `/my_envs/*ml*/bin/python`');
});

test('the script really runs under python3 (no torch needed) and under an old pyenv Python', async () => {
  const h = await probeHealth('python3', { timeoutMs: 60_000 });
  assert.equal(h.kind, 'report', JSON.stringify(h));
  assert.equal(h.kind === 'report' && h.report.stage, 'imported');
  const old = join(homedir(), '.pyenv', 'versions', '2.7.18', 'bin', 'python');
  if (existsSync(old)) {
    const o = await probeHealth(old, { timeoutMs: 60_000 });
    assert.equal(o.kind, 'report', JSON.stringify(o)); // parses on 2.7: a sentence, not a SyntaxError
    if (o.kind === 'report') {
      assert.equal(o.report.version[0], 2);
    }
  }
  assert.ok(HEALTH_SCRIPT.includes('is_available'));
});

test('a missing interpreter and a slow one come back quickly with a reason', async () => {
  const missing = await probeHealth('/nonexistent/python3');
  assert.deepEqual(missing.kind === 'unavailable' && missing.reason, 'it could not be started (ENOENT)');
  const dir = mkdtempSync(join(tmpdir(), 'td-health-'));
  const hanging = join(dir, 'python');
  writeFileSync(hanging, '#!/bin/sh\nexec sleep 30\n', { mode: 0o755 });
  const t0 = Date.now();
  const slow = await probeHealth(hanging, { timeoutMs: 300 });
  assert.deepEqual(slow.kind === 'unavailable' && slow.reason, 'it did not answer within 0 s');
  assert.ok(Date.now() - t0 < 5000, 'the time limit was not applied');
  rmSync(dir, { recursive: true, force: true });
});
