/**
 * The data check from the editor: the "Check data" CodeLens command (torchDoctor.runDataCheck,
 * arguments from the backend's lens) and "Torch Doctor: Check Data" in the palette and the editor
 * context menu (torchDoctor.checkData: the target around the cursor, else torchdoctor_data(), else
 * the file's only target, else a pick). The backend runs the check in a worker within
 * torchDoctor.dataChecks.timeoutSeconds, with the grid's images and time budget of dataOptions.ts; the progress notification and its Cancel are the model
 * checks' (checks/workDone.ts). The result goes to the data panel (dataPanel.ts).
 */
import * as vscode from 'vscode';
import { Backend } from '../backend/backend';
import { offerInterpreterFix } from '../backend/interpreterPicker';
import { ensureTrusted } from '../backend/trust';
import { clientOrSay, isCancellation, sendWithProgress } from '../checks/workDone';
import { FIND_DATA, RUN_DATA_CHECK, RUN_DATA_CHECK_COMMAND } from '../protocol';
import type { DataCheckResult, DataTarget, FindDataResult, RunDataCheckArgs, RunDataCheckParams } from './dataProtocol';
import { BUDGET_SETTING, dataCheckOptions } from './dataOptions';
import { DataPanel } from './dataPanel';
import { targetAtCursor } from './dataTargets';

export const CHECK_DATA_COMMAND = 'torchDoctor.checkData';

export function registerDataChecks(context: vscode.ExtensionContext, backend: Backend, log: vscode.LogOutputChannel): void {
  const runner = new DataCheckRunner(context, backend, log);
  context.subscriptions.push(
    vscode.commands.registerCommand(RUN_DATA_CHECK_COMMAND, (args: RunDataCheckArgs) => runner.run(args)),
    vscode.commands.registerCommand(CHECK_DATA_COMMAND, () => runner.runAtCursor()),
    DataPanel.onDidRequestRerun((t) => {
      if (!t.paused) {
        void runner.run({ uri: vscode.Uri.file(t.file).toString(), name: t.name });
      }
    }),
  );
}

const KIND_WORDS: Record<DataTarget['kind'], string> = {
  hook: 'the splits torchdoctor_data() returns',
  class: 'Dataset class',
  function: 'function returning data',
};

class DataCheckRunner {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async runAtCursor(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.languageId !== 'python') {
      void vscode.window.showWarningMessage('Torch Doctor: open a Python file with a Dataset class or torchdoctor_data().');
      return;
    }
    const client = clientOrSay(this.backend.languageClient);
    if (!client || !(await ensureTrusted('data check'))) {
      return;
    }
    const uri = editor.document.uri.toString();
    const pos = editor.selection.active;
    const found = await client.sendRequest<FindDataResult>(FIND_DATA, { uri, position: { line: pos.line, character: pos.character } });
    if (found.error) {
      void vscode.window.showErrorMessage(`Torch Doctor: ${found.error.message} (line ${found.error.line + 1}).`);
      return;
    }
    let name = targetAtCursor(found);
    if (!name && found.targets.length) {
      const pick = await vscode.window.showQuickPick(
        found.targets.map((t) => ({ label: t.name, description: KIND_WORDS[t.kind] })),
        { title: 'Torch Doctor: which data to check?' },
      );
      name = pick?.label;
      if (!name) {
        return;
      }
    }
    if (!name) {
      void vscode.window.showWarningMessage(
        'Torch Doctor: no Dataset class, function returning a Dataset or DataLoader, or torchdoctor_data() in this file.',
      );
      return;
    }
    await this.run({ uri, name });
  }

  /** Run the check with a cancellable progress notification; draw the result beside the editor. */
  async run(args: RunDataCheckArgs): Promise<void> {
    if (!(await ensureTrusted('data check'))) {
      return;
    }
    const client = clientOrSay(this.backend.languageClient);
    if (!client) {
      return;
    }
    const file = vscode.Uri.parse(args.uri).fsPath;
    const panel = DataPanel.show(this.context, { file, name: args.name });
    panel.showRunning();
    this.log.info(`Data check of ${args.name} (${args.uri})`);
    try {
      const budget = vscode.workspace.getConfiguration('torchDoctor', vscode.Uri.parse(args.uri)).get(BUDGET_SETTING);
      const params: RunDataCheckParams = { ...args, options: dataCheckOptions(budget) };
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Torch Doctor: checking the data of ${args.name}`, cancellable: true },
        (progress, cancel) => sendWithProgress<DataCheckResult>(client, RUN_DATA_CHECK, params, progress, cancel),
      );
      this.log.info(`Data check of ${args.name}: ${result.verdict}: ${result.headline}`);
      panel.showResult(result);
      if (result.error?.kind === 'no-numpy' || result.error?.kind === 'no-interpreter') {
        void offerInterpreterFix(`Torch Doctor: ${result.headline}`);
      }
    } catch (err) {
      const cancelled = isCancellation(err);
      const message = cancelled ? 'The data check was cancelled.' : `The data check failed: ${err instanceof Error ? err.message : String(err)}`;
      this.log.warn(message);
      panel.showError(message, cancelled);
    }
  }
}
