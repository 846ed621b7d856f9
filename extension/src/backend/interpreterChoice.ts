/**
 * Which Python runs the backend: pure logic, no `vscode` import, unit-tested.
 *
 * Order: the `torchDoctor.python` setting, then the Python extension's active
 * interpreter when that extension is installed, then `python3` on PATH.
 */

export type InterpreterSource = 'setting' | 'python-extension' | 'default';

export interface InterpreterChoice {
  command: string;
  source: InterpreterSource;
}

export const DEFAULT_PYTHON = 'python3';

export function chooseInterpreter(setting: string, fromPythonExtension?: string): InterpreterChoice {
  if (setting.trim()) {
    return { command: setting.trim(), source: 'setting' };
  }
  if (fromPythonExtension && fromPythonExtension.trim()) {
    return { command: fromPythonExtension.trim(), source: 'python-extension' };
  }
  return { command: DEFAULT_PYTHON, source: 'default' };
}

export function describeSource(source: InterpreterSource): string {
  switch (source) {
    case 'setting':
      return 'from the setting torchDoctor.python';
    case 'python-extension':
      return "the Python extension's active interpreter";
    default:
      return 'python3 on PATH (torchDoctor.python is empty)';
  }
}
