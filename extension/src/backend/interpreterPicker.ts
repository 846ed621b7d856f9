/**
 * "Torch Doctor: Select Interpreter": a quick pick of the interpreters found on this machine
 * (interpreterDiscovery.ts), each with its Python and torch versions, that writes the choice to
 * `torchDoctor.python` in the workspace's settings (the backend restarts on the change). With
 * the ms-python extension installed, its own interpreter list is offered too, as the convention.
 */
import * as os from 'os';
import * as vscode from 'vscode';
import { SECTION } from './config';
import {
  Candidate,
  describeProbe,
  discoverInterpreters,
  quickProbe,
  QuickProbe,
  rankProbe,
} from './interpreterDiscovery';
import { SELECT_INTERPRETER_COMMAND } from './statusView';

export { SELECT_INTERPRETER_COMMAND };

const PYTHON_EXTENSION_ID = 'ms-python.python';
const PROBE_CONCURRENCY = 4;

interface Row extends vscode.QuickPickItem {
  action: 'use' | 'enter-path' | 'python-extension';
  interpreter?: string;
}

export function registerInterpreterPicker(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  context.subscriptions.push(
    vscode.commands.registerCommand(SELECT_INTERPRETER_COMMAND, () => selectInterpreter(log)),
  );
}

/** A notification for an error that a torch-less interpreter caused, with the fix as a button. */
export async function offerInterpreterFix(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, 'Select Interpreter');
  if (choice === 'Select Interpreter') {
    await vscode.commands.executeCommand(SELECT_INTERPRETER_COMMAND);
  }
}

async function selectInterpreter(log: vscode.LogOutputChannel): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  const current = vscode.workspace.getConfiguration(SECTION, folder?.uri).get<string>('python', '').trim();
  const pick = vscode.window.createQuickPick<Row>();
  pick.title = 'Torch Doctor: Select Interpreter';
  pick.placeholder = current
    ? `torchDoctor.python is ${current}: pick another (saved in the workspace settings)`
    : 'Pick the Python that has your torch (saved as torchDoctor.python in the workspace settings)';
  pick.matchOnDescription = true;
  pick.matchOnDetail = true;
  pick.busy = true;
  const candidates = discoverInterpreters({
    workspaceFolders: (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath),
    home: os.homedir(),
    pathEnv: process.env.PATH ?? '',
    pyenvRoot: process.env.PYENV_ROOT,
  });
  if (current && !candidates.some((c) => c.path === current)) {
    candidates.unshift({ path: current, source: 'setting', where: 'torchDoctor.python now' });
  }
  pick.items = rows(candidates, new Map(), current);
  pick.show();

  const probes = new Map<string, QuickProbe>();
  log.info(`Select Interpreter: ${candidates.length} found (PATH=${process.env.PATH ?? ''})`);
  void probeAll(candidates, probes).then(() => {
    log.info(
      `Select Interpreter: ${candidates.map((c) => `${c.path}: ${describeProbe(probes.get(c.path) ?? {})}`).join('; ')}`,
    );
    const active = pick.activeItems[0]?.interpreter;
    pick.items = rows(candidates, probes, current);
    const again = pick.items.find((r) => r.interpreter === active);
    if (again) {
      pick.activeItems = [again];
    }
    pick.busy = false;
  });

  const chosen = await new Promise<Row | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0]));
    pick.onDidHide(() => resolve(undefined));
  });
  pick.dispose();
  if (!chosen) {
    return;
  }
  if (chosen.action === 'python-extension') {
    // The Python extension's choice applies only while torchDoctor.python is empty.
    if (current) {
      await writeSetting(undefined, folder);
    }
    await vscode.commands.executeCommand('python.setInterpreter');
    return;
  }
  const interpreter =
    chosen.action === 'enter-path'
      ? await vscode.window.showInputBox({
          title: 'Torch Doctor: interpreter path',
          prompt: 'The full path of a Python 3.9+ interpreter (or a command on PATH)',
          value: current,
          ignoreFocusOut: true,
        })
      : chosen.interpreter;
  if (interpreter && interpreter.trim()) {
    await writeSetting(interpreter.trim(), folder);
    log.info(`torchDoctor.python set to ${interpreter.trim()} (${folder ? 'workspace' : 'user'} settings)`);
  }
}

function rows(candidates: Candidate[], probes: Map<string, QuickProbe>, current: string): Row[] {
  const top: Row[] = [
    { label: '$(edit) Enter interpreter path…', action: 'enter-path', alwaysShow: true },
  ];
  if (vscode.extensions.getExtension(PYTHON_EXTENSION_ID)) {
    top.push({
      label: "$(list-selection) Use the Python extension's interpreter…",
      detail: 'Python: Select Interpreter; Torch Doctor follows it while torchDoctor.python is empty',
      action: 'python-extension',
      alwaysShow: true,
    });
  }
  const ranked = candidates
    .map((c, i) => ({ c, i, p: probes.get(c.path) }))
    .sort((a, b) => (a.p && b.p ? rankProbe(a.p) - rankProbe(b.p) : 0) || a.i - b.i);
  const found: Row[] = ranked.map(({ c, p }) => ({
    label: `${c.path === current ? '$(check) ' : ''}${p?.python ? `Python ${p.python}` : 'Python'} (${c.where})`,
    description: c.path,
    detail: p ? `${p.torch ? '$(pass)' : '$(warning)'} ${describeProbe(p)}` : '$(loading~spin) checking…',
    action: 'use',
    interpreter: c.path,
  }));
  const separator = {
    label: found.length ? 'Found on this machine' : 'No interpreter found in the workspace, pyenv, conda or PATH',
    kind: vscode.QuickPickItemKind.Separator,
  } as Row;
  return [...top, separator, ...found];
}

/** Probe every candidate, a few at a time (each has its own short time limit). */
async function probeAll(candidates: Candidate[], into: Map<string, QuickProbe>): Promise<void> {
  const queue = [...candidates];
  const worker = async () => {
    for (let c = queue.shift(); c; c = queue.shift()) {
      into.set(c.path, await quickProbe(c.path));
    }
  };
  await Promise.all(Array.from({ length: PROBE_CONCURRENCY }, worker));
}

async function writeSetting(value: string | undefined, folder: vscode.WorkspaceFolder | undefined): Promise<void> {
  const target = folder ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration(SECTION, folder?.uri).update('python', value, target);
}
