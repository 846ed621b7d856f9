/**
 * Before the backend starts, ask the interpreter three questions (does it run, is it
 * Python >= 3.9, does it import what the server imports from our bundled libraries) so a
 * failure becomes a sentence that says what to fix (naming a missing module), instead of a
 * language client timing out.
 * Pure logic, no `vscode` import, unit-tested.
 */

import preflightScript from './preflight.py';

export const MIN_PYTHON: [number, number] = [3, 9];

/**
 * Runs under the candidate interpreter: extension/src/backend/preflight.py, inlined as text by
 * esbuild (its `.py` loader). It imports what `python -m torchdoctor.server` imports, and
 * tests/python/unit/test_bundled_requirements.py runs that same file on every supported Python.
 */
export const PREFLIGHT_SCRIPT: string = preflightScript;

/** What happened when the script ran. */
export interface PreflightOutcome {
  /** Node's error code when the process could not start (e.g. ENOENT). */
  spawnError?: string;
  exitCode?: number | null;
  stdout: string;
  stderr: string;
}

export interface PreflightProblem {
  /** One sentence: what is wrong. */
  message: string;
  /** What the user does about it. */
  fix: string;
  /** The settings id to open, when a setting is the fix. */
  setting?: string;
}

export interface PreflightOk {
  executable: string;
  version: string;
}

export function interpretPreflight(
  python: string,
  outcome: PreflightOutcome,
  bundledLibs: string,
): PreflightOk | PreflightProblem {
  if (outcome.spawnError) {
    return {
      message: `Torch Doctor could not run the Python interpreter "${python}" (${outcome.spawnError}).`,
      fix: 'Set "torchDoctor.python" to the full path of a Python 3.9+ interpreter, then run "Torch Doctor: Restart Backend".',
      setting: 'torchDoctor.python',
    };
  }
  const report = parseReport(outcome.stdout);
  if (!report) {
    const detail = lastLine(outcome.stderr) || `exit code ${outcome.exitCode}`;
    return {
      message: `The interpreter "${python}" did not answer as a Python 3 interpreter (${detail}).`,
      fix: 'Set "torchDoctor.python" to a Python 3.9+ interpreter.',
      setting: 'torchDoctor.python',
    };
  }
  const [major, minor, micro] = report.version;
  const version = `${major}.${minor}.${micro}`;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    return {
      message: `"${python}" is Python ${version}; the Torch Doctor backend needs Python 3.9 or newer.`,
      fix: 'Set "torchDoctor.python" to a Python 3.9+ interpreter.',
      setting: 'torchDoctor.python',
    };
  }
  if (report.libs !== 'ok') {
    const fix = 'Reinstall the extension (or, in a development checkout, run "make build").';
    if (report.missing) {
      const neededBy = report.neededBy && report.neededBy !== '__main__' ? ` (needed by ${report.neededBy})` : '';
      return {
        message:
          `The Torch Doctor backend cannot start on Python ${version}: the module "${report.missing}"${neededBy} ` +
          `is missing from its bundled libraries at ${bundledLibs} (${report.libs}).`,
        fix,
      };
    }
    return {
      message: `The Torch Doctor backend cannot import its bundled libraries from ${bundledLibs} (${report.libs}) on Python ${version}.`,
      fix,
    };
  }
  return { executable: report.executable, version };
}

export function isProblem(r: PreflightOk | PreflightProblem): r is PreflightProblem {
  return (r as PreflightProblem).message !== undefined;
}

interface Report {
  version: number[];
  executable: string;
  libs: string;
  /** When an import failed: the module that was not found, and the module that imported it. */
  missing?: string;
  neededBy?: string;
}

function parseReport(stdout: string): Report | undefined {
  try {
    const r = JSON.parse(lastLine(stdout));
    return Array.isArray(r.version) && typeof r.libs === 'string' ? (r as Report) : undefined;
  } catch {
    return undefined;
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split(/\r?\n/);
  return lines[lines.length - 1] ?? '';
}
