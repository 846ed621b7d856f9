/** The extension's settings, read in one place. Declared in package.json. */
import * as vscode from 'vscode';

export const SECTION = 'torchDoctor';

export interface BackendSettings {
  /** Interpreter from `torchDoctor.python`; empty means "choose for me". */
  python: string;
  maxRestarts: number;
  logLevel: string;
}

export function backendSettings(scope?: vscode.ConfigurationScope): BackendSettings {
  const cfg = vscode.workspace.getConfiguration(SECTION, scope);
  return {
    python: (cfg.get<string>('python') ?? '').trim(),
    maxRestarts: cfg.get<number>('backend.maxRestarts') ?? 5,
    logLevel: cfg.get<string>('backend.logLevel') ?? 'INFO',
  };
}

/** Settings whose change means the backend process must be restarted. */
export function affectsBackend(e: vscode.ConfigurationChangeEvent): boolean {
  return ['python', 'backend'].some((key) => e.affectsConfiguration(`${SECTION}.${key}`));
}
