/**
 * How the Torch Doctor runtime gets into the user's program under the debugger: the
 * directory holding `torchdoctor/` and `pydevd_plugins/` goes first on the debuggee's
 * PYTHONPATH. debugpy then finds our pydevd plugin (tensor summaries) by itself.
 * Pure logic, no `vscode` import, unit-tested.
 */

export const RUNTIME_MARKER_ENV = 'TORCHDOCTOR_RUNTIME';

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
  return env;
}

/** Is this configuration already injected (so a second resolver pass leaves it alone)? */
export function isInjected(configEnv: DebugEnv | undefined, runtimeDir: string, delimiter: string): boolean {
  return (configEnv?.PYTHONPATH ?? '').split(delimiter)[0] === runtimeDir;
}
