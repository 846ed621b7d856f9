/**
 * Interpreters found on this machine, for "Torch Doctor: Select Interpreter": virtual
 * environments in the workspace folders, pyenv versions, conda environments, and python3 /
 * python on PATH, in that order, each path once. A cheap probe per candidate reads its Python
 * version and its torch version from the package metadata, without importing torch.
 * No `vscode` import: unit-tested against real folders.
 */
import * as fs from 'fs';
import * as path from 'path';
import { lastJson, runScript } from './interpreterHealth';

export type CandidateSource = 'setting' | 'workspace' | 'conda' | 'pyenv' | 'path';

export interface Candidate {
  /** The interpreter's path as found (what goes into torchDoctor.python). */
  path: string;
  source: CandidateSource;
  /** Where it was found, in words: ".venv in sample_workspace", "pyenv 3.11.7", "conda env ml". */
  where: string;
}

export interface DiscoveryPlaces {
  workspaceFolders: string[];
  home: string;
  /** The PATH variable. */
  pathEnv: string;
  /** PYENV_ROOT when set; default ~/.pyenv. */
  pyenvRoot?: string;
  platform?: NodeJS.Platform;
}

/** Virtual-environment folder names looked for first in each workspace folder. */
export const WORKSPACE_ENV_NAMES = ['.venv', 'venv', 'env'];
/** Conda installations looked for in the home folder. */
export const CONDA_ROOTS = ['miniconda3', 'anaconda3', 'miniforge3', 'mambaforge'];

export function discoverInterpreters(places: DiscoveryPlaces): Candidate[] {
  const win = (places.platform ?? process.platform) === 'win32';
  const envPython = (envDir: string) => path.join(envDir, win ? 'Scripts' : 'bin', win ? 'python.exe' : 'python');
  const found: Candidate[] = [];

  for (const folder of places.workspaceFolders) {
    // .venv, venv, env first; then any other direct subfolder that is a venv (has pyvenv.cfg).
    const others = subdirs(folder).filter(
      (d) => !WORKSPACE_ENV_NAMES.includes(d) && isFile(path.join(folder, d, 'pyvenv.cfg')),
    );
    for (const name of [...WORKSPACE_ENV_NAMES, ...others]) {
      found.push({ path: envPython(path.join(folder, name)), source: 'workspace', where: `${name} in ${path.basename(folder)}` });
    }
  }
  for (const root of CONDA_ROOTS) {
    const base = path.join(places.home, root);
    found.push({ path: envPython(base), source: 'conda', where: `conda base (${root})` });
    for (const env of subdirs(path.join(base, 'envs'))) {
      found.push({ path: envPython(path.join(base, 'envs', env)), source: 'conda', where: `conda env ${env}` });
    }
  }
  const pyenvVersions = path.join(places.pyenvRoot || path.join(places.home, '.pyenv'), 'versions');
  for (const v of subdirs(pyenvVersions).sort(compareVersionsDescending)) {
    found.push({ path: envPython(path.join(pyenvVersions, v)), source: 'pyenv', where: `pyenv ${v}` });
  }
  const names = win ? ['python.exe', 'python3.exe'] : ['python3', 'python'];
  for (const dir of places.pathEnv.split(path.delimiter).filter(Boolean)) {
    for (const name of names) {
      found.push({ path: path.join(dir, name), source: 'path', where: `${name} on PATH` });
    }
  }
  return uniqueExisting(found);
}

/**
 * Keep candidates that exist, each environment once (the first place it was found wins). A
 * virtual environment's python is a link to its base interpreter but is another environment:
 * venvs are told apart by their folder (the one with pyvenv.cfg), other interpreters by the
 * real file.
 */
function uniqueExisting(candidates: Candidate[]): Candidate[] {
  const seen = new Set<string>();
  const out: Candidate[] = [];
  for (const c of candidates) {
    const key = environmentKey(c.path);
    if (key && !seen.has(key)) {
      seen.add(key);
      out.push(c);
    }
  }
  return out;
}

/** What makes two interpreter paths the same environment; undefined when the path is no file. */
export function environmentKey(python: string): string | undefined {
  try {
    const real = fs.realpathSync(python);
    if (!fs.statSync(real).isFile()) {
      return undefined;
    }
    const prefix = path.dirname(path.dirname(python));
    return isFile(path.join(prefix, 'pyvenv.cfg')) ? `venv:${fs.realpathSync(prefix)}` : real;
  } catch {
    return undefined; // missing, or a dangling link
  }
}

function subdirs(dir: string): string[] {
  try {
    return fs
      .readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() || e.isSymbolicLink())
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** "3.12.1" before "3.9.18" before "2.7.18"; names that are not versions last, by name. */
export function compareVersionsDescending(a: string, b: string): number {
  const pa = a.match(/^\d+(\.\d+)*/)?.[0].split('.').map(Number);
  const pb = b.match(/^\d+(\.\d+)*/)?.[0].split('.').map(Number);
  if (!pa || !pb) {
    return pa ? -1 : pb ? 1 : a.localeCompare(b);
  }
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pb[i] ?? 0) - (pa[i] ?? 0);
    if (d !== 0) {
      return d;
    }
  }
  return a.localeCompare(b);
}

/**
 * The cheap probe: Python version and torch's installed version from its metadata
 * (importlib.metadata, no `import torch`); parses on Python 2.7 too.
 */
export const QUICK_PROBE_SCRIPT = [
  'import sys, json',
  'r = {"version": list(sys.version_info[:3]), "torch": None}',
  'try:',
  '    from importlib.metadata import version',
  '    r["torch"] = version("torch")',
  'except Exception:',
  '    try:',
  '        import importlib.util',
  '        if importlib.util.find_spec("torch") is not None:',
  '            r["torch"] = "installed"',
  '    except Exception:',
  '        pass',
  'sys.stdout.write("\\n" + json.dumps(r) + "\\n")',
].join('\n');

export const QUICK_PROBE_TIMEOUT_MS = 5_000;

export interface QuickProbe {
  /** "3.11.7", or undefined when the interpreter did not answer. */
  python?: string;
  /** torch's version, null when it is not installed, undefined when unknown. */
  torch?: string | null;
}

export function parseQuickProbe(stdout: string): QuickProbe {
  const r = lastJson(stdout) as { version?: unknown; torch?: unknown } | undefined;
  if (!r || !Array.isArray(r.version)) {
    return {};
  }
  return { python: r.version.slice(0, 3).join('.'), torch: typeof r.torch === 'string' ? r.torch : null };
}

export async function quickProbe(python: string, timeoutMs = QUICK_PROBE_TIMEOUT_MS): Promise<QuickProbe> {
  const outcome = await runScript(python, QUICK_PROBE_SCRIPT, timeoutMs);
  return parseQuickProbe(outcome.stdout);
}

/** The second line of a picker row: what this interpreter can do. */
export function describeProbe(p: QuickProbe): string {
  if (!p.python) {
    return 'did not answer';
  }
  const [major, minor] = p.python.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 9)) {
    return `Python ${p.python}: too old (Torch Doctor needs 3.9 or newer)`;
  }
  if (p.torch === null) {
    return `Python ${p.python} · no torch (lint only: checks and debugger summaries need torch)`;
  }
  return p.torch === 'installed' ? `Python ${p.python} · torch installed` : `Python ${p.python} · torch ${p.torch}`;
}

/** Rows with torch first, then usable ones, then the rest; the discovery order otherwise. */
export function rankProbe(p: QuickProbe): number {
  if (!p.python) {
    return 3;
  }
  const [major, minor] = p.python.split('.').map(Number);
  if (major < 3 || (major === 3 && minor < 9)) {
    return 2;
  }
  return p.torch ? 0 : 1;
}
