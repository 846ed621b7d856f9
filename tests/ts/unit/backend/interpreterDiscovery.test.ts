import { strict as assert } from 'node:assert';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, test } from 'node:test';
import {
  compareVersionsDescending,
  describeProbe,
  discoverInterpreters,
  parseQuickProbe,
  quickProbe,
  rankProbe,
} from '../../../../extension/src/backend/interpreterDiscovery';

const root = mkdtempSync(join(tmpdir(), 'td-discovery-'));
after(() => rmSync(root, { recursive: true, force: true }));

function touch(rel: string): string {
  const p = join(root, rel);
  mkdirSync(dirname(p), { recursive: true });
  writeFileSync(p, '');
  chmodSync(p, 0o755);
  return p;
}

// A machine: a workspace with .venv and a venv named "tools" (pyvenv.cfg), a folder that only
// looks like one (no pyvenv.cfg), conda with one env, pyenv with three versions, PATH with
// python3 twice (a link to a pyenv version, and /usr/bin's) and a dangling link.
const ws = join(root, 'ws');
touch('ws/.venv/bin/python');
touch('ws/tools/bin/python');
touch('ws/tools/pyvenv.cfg');
touch('ws/src/bin/python');
// A second folder whose venv's python is a link to a pyenv interpreter (as `python -m venv` makes).
touch('ws2/.venv/pyvenv.cfg');
mkdirSync(join(root, 'ws2/.venv/bin'), { recursive: true });
symlinkSync(join(root, 'home/.pyenv/versions/3.10.13/bin/python'), join(root, 'ws2/.venv/bin/python'));
touch('home/miniconda3/bin/python');
touch('home/miniconda3/envs/ml/bin/python');
touch('home/.pyenv/versions/3.9.18/bin/python');
touch('home/.pyenv/versions/3.12.1/bin/python');
touch('home/.pyenv/versions/3.10.13/bin/python');
mkdirSync(join(root, 'usr/local/bin'), { recursive: true });
symlinkSync(join(root, 'home/.pyenv/versions/3.12.1/bin/python'), join(root, 'usr/local/bin/python3'));
symlinkSync(join(root, 'nowhere/python'), join(root, 'usr/local/bin/python'));
touch('usr/bin/python3');

test('workspace venvs (told apart from their base interpreter), conda, pyenv (newest first) and PATH, each real file once', () => {
  const found = discoverInterpreters({
    workspaceFolders: [ws, join(root, 'ws2')],
    home: join(root, 'home'),
    pathEnv: [join(root, 'usr/local/bin'), join(root, 'usr/bin'), join(root, 'missing')].join(':'),
    platform: 'linux',
  });
  assert.deepEqual(
    found.map((c) => [c.source, c.where, c.path.slice(root.length)]),
    [
      ['workspace', '.venv in ws', '/ws/.venv/bin/python'],
      ['workspace', 'tools in ws', '/ws/tools/bin/python'],
      // a venv is its own environment even though its python is the pyenv 3.10.13 file
      ['workspace', '.venv in ws2', '/ws2/.venv/bin/python'],
      ['conda', 'conda base (miniconda3)', '/home/miniconda3/bin/python'],
      ['conda', 'conda env ml', '/home/miniconda3/envs/ml/bin/python'],
      ['pyenv', 'pyenv 3.12.1', '/home/.pyenv/versions/3.12.1/bin/python'],
      ['pyenv', 'pyenv 3.10.13', '/home/.pyenv/versions/3.10.13/bin/python'],
      ['pyenv', 'pyenv 3.9.18', '/home/.pyenv/versions/3.9.18/bin/python'],
      // usr/local/bin/python3 is the pyenv 3.12.1 file again; usr/local/bin/python dangles.
      ['path', 'python3 on PATH', '/usr/bin/python3'],
    ],
  );
});

test('PYENV_ROOT is honoured, and nothing found is an empty list', () => {
  const found = discoverInterpreters({ workspaceFolders: [], home: join(root, 'nohome'), pathEnv: '', pyenvRoot: join(root, 'home/.pyenv') });
  assert.deepEqual(found.map((c) => c.where), ['pyenv 3.12.1', 'pyenv 3.10.13', 'pyenv 3.9.18']);
  assert.deepEqual(discoverInterpreters({ workspaceFolders: [join(root, 'none')], home: join(root, 'none'), pathEnv: '' }), []);
});

test('version folders sort newest first, other names last', () => {
  assert.deepEqual(['3.9.18', 'miniforge3-latest', '3.12.1', '2.7.18', '3.10.13'].sort(compareVersionsDescending), [
    '3.12.1',
    '3.10.13',
    '3.9.18',
    '2.7.18',
    'miniforge3-latest',
  ]);
});

test('the quick probe: torch version, none, or unknown; the row says what it can do', () => {
  assert.deepEqual(parseQuickProbe('{"version": [3, 11, 7], "torch": "2.13.0"}\n'), { python: '3.11.7', torch: '2.13.0' });
  assert.deepEqual(parseQuickProbe('noise\n{"version": [3, 12, 1], "torch": null}\n'), { python: '3.12.1', torch: null });
  assert.deepEqual(parseQuickProbe(''), {});
  assert.equal(describeProbe({ python: '3.11.7', torch: '2.13.0' }), 'Python 3.11.7 · torch 2.13.0');
  assert.match(describeProbe({ python: '3.12.1', torch: null }), /no torch/);
  assert.match(describeProbe({ python: '3.8.18', torch: null }), /too old/);
  assert.equal(describeProbe({}), 'did not answer');
  assert.deepEqual(
    [{}, { python: '3.8.1', torch: '1.0' }, { python: '3.12.1', torch: null }, { python: '3.11.7', torch: '2.13.0' }].map(rankProbe),
    [3, 2, 1, 0],
  );
});

test('the quick probe really runs under python3 without importing torch', async () => {
  const p = await quickProbe('python3');
  assert.match(p.python ?? '', /^3\.\d+\.\d+$/);
  assert.ok(p.torch === null || typeof p.torch === 'string');
  assert.deepEqual(await quickProbe(join(root, 'nowhere/python')), {});
});
