/** Resolve the interpreter, asking the ms-python extension when it is installed (optional). */
import * as vscode from 'vscode';
import { backendSettings } from './config';
import { chooseInterpreter, InterpreterChoice } from './interpreterChoice';

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string }): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath?: vscode.Event<unknown>;
  };
}

const PYTHON_EXTENSION_ID = 'ms-python.python';

async function pythonExtensionApi(): Promise<PythonExtensionApi | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION_ID);
  if (!ext) {
    return undefined;
  }
  try {
    return ext.isActive ? ext.exports : await ext.activate();
  } catch {
    return undefined; // a broken Python extension must not stop ours
  }
}

async function interpreterFromPythonExtension(resource?: vscode.Uri): Promise<string | undefined> {
  const envs = (await pythonExtensionApi())?.environments;
  if (!envs) {
    return undefined;
  }
  try {
    const active = envs.getActiveEnvironmentPath(resource);
    const resolved = await envs.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

export async function resolveInterpreter(resource?: vscode.Uri): Promise<InterpreterChoice> {
  const setting = backendSettings(resource).python;
  const fromExtension = setting ? undefined : await interpreterFromPythonExtension(resource);
  return chooseInterpreter(setting, fromExtension);
}

/** Fires when the Python extension's active interpreter changes (never fires without it). */
export async function onPythonExtensionInterpreterChange(listener: () => void): Promise<vscode.Disposable | undefined> {
  const event = (await pythonExtensionApi())?.environments?.onDidChangeActiveEnvironmentPath;
  return event ? event(listener) : undefined;
}
