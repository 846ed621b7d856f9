/**
 * Debug configurations: defaults for F5 without a launch.json, the interpreter, and the
 * runtime injection, for our `torchdoctor` type and (when ms-python.debugpy is installed)
 * for its `debugpy` type, so tensor summaries work in both.
 */
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { resolveInterpreter } from '../backend/interpreter';
import { anomalyEnv } from './anomalyConfig';
import { prepareMonitor } from '../monitor/monitor';
import { injectRuntime, isInjected } from './runtimeInjection';
import { BUDGET_SETTING, budgetEnv } from './summaryBudget';
import { isSubprocessAttach, rankName, torchrunLaunch } from './torchrunConfig';

export const DEBUG_TYPE = 'torchdoctor';
export const MS_PYTHON_DEBUG_TYPE = 'debugpy';

export class TorchDoctorConfigurationProvider implements vscode.DebugConfigurationProvider {
  constructor(
    private readonly runtimeDir: string,
    private readonly log: vscode.LogOutputChannel,
    private readonly ownType: boolean,
  ) {}

  /** F5 with no launch.json: debug the current file. */
  resolveDebugConfiguration(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): vscode.DebugConfiguration | undefined {
    if (this.ownType && !config.type && !config.request && !config.name) {
      const editor = vscode.window.activeTextEditor;
      if (!editor || editor.document.languageId !== 'python') {
        void vscode.window.showErrorMessage(
          'Torch Doctor: open a Python file to debug it, or add a "torchdoctor" configuration to launch.json.',
        );
        return undefined;
      }
      return { ...defaultLaunch(), program: editor.document.uri.fsPath };
    }
    return config;
  }

  /** After ${variables} are substituted: pick the interpreter and inject the runtime. */
  async resolveDebugConfigurationWithSubstitutedVariables(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Promise<vscode.DebugConfiguration | undefined> {
    if (isSubprocessAttach(config)) {
      config.name = rankName(processEnviron(config.subProcessId)) ?? config.name;
      return config; // a child of a session already resolved: nothing to inject again
    }
    try {
      config = torchrunLaunch(config) as vscode.DebugConfiguration;
    } catch (err) {
      void vscode.window.showErrorMessage(
        `Torch Doctor: the launch configuration "${config.name}" has a bad "torchrun" attribute: ${(err as Error).message}.`,
      );
      return undefined;
    }
    if (this.ownType && !config.python && config.request === 'launch') {
      config.python = (await resolveInterpreter(folder?.uri)).command;
    }
    try {
      config.env = { ...(config.env ?? {}), ...anomalyEnv(config.anomaly) };
    } catch (err) {
      void vscode.window.showErrorMessage(
        `Torch Doctor: the launch configuration "${config.name}" has a bad "anomaly" attribute: ${(err as Error).message}.`,
      );
      return undefined; // do not start a session that would silently watch nothing
    }
    if (this.ownType) {
      try {
        config.env = { ...config.env, ...(await prepareMonitor(config, folder)) };
      } catch (err) {
        void vscode.window.showErrorMessage(
          `Torch Doctor: the launch configuration "${config.name}" has a bad "monitor" attribute: ${(err as Error).message}.`,
        );
        return undefined;
      }
    }
    config.env = { ...config.env, ...this.summaryBudget(folder, config) };
    if (!isInjected(config.env, this.runtimeDir, path.delimiter)) {
      config.env = injectRuntime(config.env, this.runtimeDir, process.env.PYTHONPATH, path.delimiter);
      this.log.info(`Debug session "${config.name}": runtime injected from ${this.runtimeDir}`);
    }
    return config;
  }

  private summaryBudget(
    folder: vscode.WorkspaceFolder | undefined,
    config: vscode.DebugConfiguration,
  ): Record<string, string> {
    return summaryBudgetEnv(folder, config, this.log);
  }
}

/** The summaries' time budget from the settings; a bad value is said and the defaults kept. */
function summaryBudgetEnv(
  folder: vscode.WorkspaceFolder | undefined,
  config: vscode.DebugConfiguration,
  log: vscode.LogOutputChannel,
): Record<string, string> {
  try {
    return budgetEnv(vscode.workspace.getConfiguration('torchDoctor', folder?.uri).get(BUDGET_SETTING), config.env);
  } catch (err) {
    log.warn(`Debug session "${config.name}": ${(err as Error).message}; the default budget is used`);
    void vscode.window.showWarningMessage(`Torch Doctor: ${(err as Error).message}. The default budget is used.`);
    return budgetEnv(undefined, config.env);
  }
}

/** A process's environment (Linux: /proc/PID/environ), or undefined where it cannot be read. */
function processEnviron(pid: unknown): string | undefined {
  try {
    return fs.readFileSync(`/proc/${Number(pid)}/environ`, 'latin1');
  } catch {
    return undefined;
  }
}

export function defaultLaunch(): vscode.DebugConfiguration {
  return {
    type: DEBUG_TYPE,
    request: 'launch',
    name: 'Torch Doctor: Debug current file',
    program: '${file}',
    console: 'integratedTerminal',
    justMyCode: true,
  };
}
