/**
 * Torch Doctor's entry point: wires the pieces together and nothing more.
 * The brain is the Python backend; this side draws what it says.
 */
import * as vscode from 'vscode';
import { registerAnomalyBreakpoints } from './debug/anomalyBreakpoints';
import { Backend } from './backend/backend';
import { registerChecks } from './checks/checks';
import { registerDataChecks } from './data/dataChecks';
import { registerPausedData } from './data/pausedData';
import { affectsBackend } from './backend/config';
import { registerDebugging } from './debug/debugging';
import { registerModelViews } from './views/modelViews';
import { registerMonitor } from './monitor/monitor';
import { onPythonExtensionInterpreterChange } from './backend/interpreter';
import { StatusBar } from './backend/statusBar';
import { registerInterpreterPicker } from './backend/interpreterPicker';
import { openWalkthroughOnFirstRun, registerWalkthrough } from './walkthrough/getStarted';

const RESTART_DEBOUNCE_MS = 1000;

let backend: Backend | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel('Torch Doctor', { log: true });
  const status = new StatusBar();
  backend = new Backend(context, log, status);
  const b = backend;
  context.subscriptions.push(log, status, { dispose: () => void b.dispose() });

  context.subscriptions.push(
    vscode.commands.registerCommand('torchDoctor.showLog', () => log.show(true)),
    vscode.commands.registerCommand('torchDoctor.restartBackend', () =>
      vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Torch Doctor: restarting the backend…' },
        () => b.restart(),
      ),
    ),
  );

  registerInterpreterPicker(context, log);
  registerWalkthrough(context, log);
  registerDebugging(context, log);
  registerMonitor(context, log);
  registerModelViews(context, b, log);
  registerChecks(context, b, log);
  registerDataChecks(context, b, log);
  registerPausedData(context, log);
  registerAnomalyBreakpoints(context);

  // Settings edits come in bursts (typing a path): restart once they settle.
  const restartSoon = debounce(() => void b.restart(), RESTART_DEBOUNCE_MS);
  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (affectsBackend(e)) {
        log.info('Backend settings changed; restarting the backend');
        restartSoon();
      }
    }),
  );
  const pyChange = await onPythonExtensionInterpreterChange(() => {
    log.info("The Python extension's interpreter changed; restarting the backend");
    restartSoon();
  });
  if (pyChange) {
    context.subscriptions.push(pyChange);
  }

  log.info(`Torch Doctor ${context.extension.packageJSON.version} activating`);
  void b.start(); // the status bar shows progress; activation need not wait
  void openWalkthroughOnFirstRun(context, log);
}

export async function deactivate(): Promise<void> {
  await backend?.dispose();
  backend = undefined;
}

function debounce(fn: () => void, ms: number): () => void {
  let timer: NodeJS.Timeout | undefined;
  return () => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(fn, ms);
  };
}
