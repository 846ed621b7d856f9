/**
 * How the Torch Doctor runtime gets into the user's program under the debugger: the
 * directory holding `torchdoctor/` and `pydevd_plugins/` goes first on the debuggee's
 * PYTHONPATH. debugpy then finds our pydevd plugin (tensor summaries) by itself.
 * Pure logic, no `vscode` import, unit-tested.
 */

export const RUNTIME_MARKER_ENV = 'TORCHDOCTOR_RUNTIME';

/**
 * Set in the debuggee unless its configuration sets them, for the processes debugpy follows
 * (torchrun's ranks, spawned DataLoader workers): debugpy starts the program itself with
 * `-X frozen_modules=off`, but not those children, and each of them printed pydevd's four-line
 * "frozen modules are being used, which may make the debugger miss breakpoints" note. What it
 * may miss are breakpoints inside the frozen standard-library modules (`os`, `posixpath`...):
 * Python 3.13 reads `PYTHON_FROZEN_MODULES=off` and freezes nothing; on 3.11 and 3.12 the note
 * is turned off (docs/troubleshooting.md says so, and how to have it back).
 */
export const CHILD_PROCESS_ENV: Readonly<Record<string, string>> = {
  PYTHON_FROZEN_MODULES: 'off',
  PYDEVD_DISABLE_FILE_VALIDATION: '1',
};

export interface DebugEnv {
  [key: string]: string | null | undefined;
}

/**
 * The env of a launch configuration with the runtime injected. The user's own
 * PYTHONPATH (from the configuration, else from the editor's environment) is kept after ours.
 */
export function injectRuntime(
  configEnv: DebugEnv | undefined,
  runtimeDir: string,
  inheritedPythonPath: string | undefined,
  delimiter: string,
): DebugEnv {
  const env: DebugEnv = { ...(configEnv ?? {}) };
  const userPath = env.PYTHONPATH ?? inheritedPythonPath ?? '';
  const parts = userPath.split(delimiter).filter((p) => p && p !== runtimeDir);
  env.PYTHONPATH = [runtimeDir, ...parts].join(delimiter);
  env[RUNTIME_MARKER_ENV] = '1';
  for (const [key, value] of Object.entries(CHILD_PROCESS_ENV)) {
    if (!(key in env)) {
      env[key] = value; // the configuration's own value wins, null (unset) included
    }
  }
  return env;
}

/** Is this configuration already injected (so a second resolver pass leaves it alone)? */
export function isInjected(configEnv: DebugEnv | undefined, runtimeDir: string, delimiter: string): boolean {
  return (configEnv?.PYTHONPATH ?? '').split(delimiter)[0] === runtimeDir;
}
