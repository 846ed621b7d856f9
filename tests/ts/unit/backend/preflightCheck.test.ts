import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { interpretPreflight, isProblem, PREFLIGHT_SCRIPT } from '../../../../extension/src/backend/preflightCheck';

const libs = '/ext/extension/bundled/libs';
const report = (version: number[], lib = 'ok') =>
  JSON.stringify({ version, executable: '/usr/bin/python3', libs: lib });

test('a missing interpreter names the setting to fix', () => {
  const r = interpretPreflight('pyhton3', { spawnError: 'ENOENT', stdout: '', stderr: '' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /could not run the Python interpreter "pyhton3" \(ENOENT\)/);
  assert.equal(r.setting, 'torchDoctor.python');
});

test('Python 3.8 is refused with its version in the message', () => {
  const r = interpretPreflight('python3.8', { exitCode: 0, stdout: report([3, 8, 10]), stderr: '' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /Python 3\.8\.10; the Torch Doctor backend needs Python 3\.9 or newer/);
});

test('missing bundled libraries say where they were looked for', () => {
  const r = interpretPreflight('python3', { exitCode: 0, stdout: report([3, 11, 2], "ModuleNotFoundError: No module named 'pygls'"), stderr: '' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /bundled libraries from \/ext\/extension\/bundled\/libs \(ModuleNotFoundError/);
  assert.match(r.fix, /Reinstall/);
});

test('a module missing from the bundle is named, with its importer and the Python version', () => {
  const out = JSON.stringify({
    version: [3, 10, 13],
    executable: '/usr/bin/python3.10',
    libs: "ModuleNotFoundError: No module named 'exceptiongroup'",
    missing: 'exceptiongroup',
    neededBy: 'cattrs._compat',
  });
  const r = interpretPreflight('python3.10', { exitCode: 0, stdout: out, stderr: '' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /cannot start on Python 3\.10\.13: the module "exceptiongroup" \(needed by cattrs\._compat\) is missing/);
  assert.match(r.message, /bundled libraries at \/ext\/extension\/bundled\/libs/);
  assert.match(r.fix, /Reinstall the extension.*make build/);
});

test('the preflight script itself is not named as the importer', () => {
  const out = JSON.stringify({ version: [3, 12, 1], executable: '/usr/bin/python3', libs: "ModuleNotFoundError: No module named 'torchdoctor'", missing: 'torchdoctor', neededBy: '__main__' });
  const r = interpretPreflight('python3', { exitCode: 0, stdout: out, stderr: '' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /the module "torchdoctor" is missing/);
});

test('something that is not Python 3 (e.g. Python 2 syntax error) is explained', () => {
  const r = interpretPreflight('python2', { exitCode: 1, stdout: '', stderr: 'SyntaxError: invalid syntax\n' }, libs);
  assert.ok(isProblem(r));
  assert.match(r.message, /did not answer as a Python 3 interpreter \(SyntaxError: invalid syntax\)/);
});

test('a good interpreter passes, stray output before the report is ignored', () => {
  const r = interpretPreflight('python3', { exitCode: 0, stdout: `hello from sitecustomize\n${report([3, 12, 1])}\n`, stderr: '' }, libs);
  assert.ok(!isProblem(r));
  assert.equal(r.version, '3.12.1');
});

test('the preflight script really runs under python3 and reports its version', () => {
  // Real interpreter, no mock: the script must parse and answer (libs may be missing here).
  const out = execFileSync('python3', ['-c', PREFLIGHT_SCRIPT], { encoding: 'utf8' });
  const r = JSON.parse(out.trim());
  assert.equal(r.version.length, 3);
  assert.equal(typeof r.libs, 'string');
});

test('the preflight script imports what the server entry point imports', () => {
  // The inlined text is extension/src/backend/preflight.py (esbuild's text loader), not a copy.
  // The exact list is checked against __main__.py by tests/python/unit/test_bundled_requirements.py.
  assert.match(PREFLIGHT_SCRIPT, /SERVER_MODULES = \([^)]*"torchdoctor\.server\.app"[^)]*\)/);
});
