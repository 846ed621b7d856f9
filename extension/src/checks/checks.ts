/**
 * Model checks from the editor: the CodeLens command and the four context-menu commands.
 * The backend finds the classes and runs the check in a worker; this module shows a
 * cancellable progress notification and hands the result to the result panel.
 */
import * as vscode from 'vscode';
import { Backend } from '../backend/backend';
import { offerInterpreterFix } from '../backend/interpreterPicker';
import { ensureTrusted } from '../backend/trust';
import { CheckResultPanel } from './checkResultPanel';
import { clientOrSay, isCancellation, sendWithProgress } from './workDone';
import {
  CheckKind,
  CheckResult,
  FIND_MODELS,
  FindModelsResult,
  RUN_CHECK,
  RUN_CHECK_COMMAND,
  RunCheckArgs,
  RunCheckParams,
} from '../protocol';

/** Palette / context-menu command id → check, with the title users read. */
export const CHECK_COMMANDS: { command: string; check: CheckKind; title: string }[] = [
  { command: 'torchDoctor.runOverfitTest', check: 'overfit', title: 'Overfit test' },
  { command: 'torchDoctor.runLrFinder', check: 'lr-find', title: 'LR finder' },
  { command: 'torchDoctor.runGradientCheck', check: 'gradcheck', title: 'Gradient check' },
  { command: 'torchDoctor.runShapeTrace', check: 'shapes', title: 'Shape trace' },
];

export function registerChecks(context: vscode.ExtensionContext, backend: Backend, log: vscode.LogOutputChannel): void {
  const runner = new CheckRunner(context, backend, log);
  context.subscriptions.push(
    vscode.commands.registerCommand(RUN_CHECK_COMMAND, (args: RunCheckArgs) => runner.run(args)),
    ...CHECK_COMMANDS.map(({ command, check }) =>
      vscode.commands.registerCommand(command, () => runner.runAtCursor(check)),
    ),
    CheckResultPanel.onDidRequestRerun((t) =>
      runner.run({ uri: vscode.Uri.file(t.file).toString(), className: t.className, check: t.check as CheckKind }),
    ),
  );
}

class CheckRunner {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** Context menu / palette: the model class around the cursor. */
  async runAtCursor(check: CheckKind): Promise<void> {
    if (!(await ensureTrusted('model check'))) {
      return;
    }
    const editor = vscode.window.activeTextEditor;
    const client = this.client();
    if (!client) {
      return;
    }
    if (!editor || editor.document.languageId !== 'python') {
      void vscode.window.showWarningMessage('Torch Doctor: open a Python file and put the cursor inside an nn.Module class.');
      return;
    }
    const uri = editor.document.uri.toString();
    const found = await client.sendRequest<FindModelsResult>(FIND_MODELS, {
      uri,
      position: { line: editor.selection.active.line, character: editor.selection.active.character },
    });
    if (found.error) {
      void vscode.window.showErrorMessage(
        `Torch Doctor: this file does not parse (line ${found.error.line + 1}): ${found.error.message}. Fix the syntax error first.`,
      );
      return;
    }
    const className = found.containing ?? (found.models.length === 1 ? found.models[0].qualname : undefined);
    if (!className) {
      const names = found.models.map((m) => m.qualname).join(', ');
      void vscode.window.showWarningMessage(
        names
          ? `Torch Doctor: put the cursor inside one of the model classes (${names}), or use the CodeLens above it.`
          : 'Torch Doctor: no nn.Module subclass in this file.',
      );
      return;
    }
    await this.run({ uri, className, check });
  }

  /** Run one check with a cancellable progress notification; draw the result beside the editor. */
  async run(args: RunCheckArgs): Promise<void> {
    if (!(await ensureTrusted('model check'))) {
      return;
    }
    const client = this.client();
    if (!client) {
      return;
    }
    const title = CHECK_COMMANDS.find((c) => c.check === args.check)?.title ?? args.check;
    const panel = CheckResultPanel.show(this.context, `${title}: ${args.className}`);
    panel.showRunning({ className: args.className, check: args.check, file: vscode.Uri.parse(args.uri).fsPath });
    this.log.info(`${title} of ${args.className} (${args.uri})`);
    try {
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `Torch Doctor: ${title} of ${args.className}`, cancellable: true },
        (progress, cancel) => this.request(args, progress, cancel),
      );
      this.log.info(`${title} of ${args.className}: ${result.verdict}: ${result.headline}`);
      panel.showResult(result);
      if (result.error?.kind === 'no-torch') {
        void offerInterpreterFix(`Torch Doctor: ${result.headline}`); // the fix, one click away
      }
    } catch (err) {
      const cancelled = isCancellation(err);
      const message = cancelled ? `${title} cancelled.` : `${title} failed: ${errorText(err)}`;
      this.log.warn(message);
      panel.showError(message);
    }
  }

  private async request(
    args: RunCheckArgs,
    progress: vscode.Progress<{ message?: string; increment?: number }>,
    cancel: vscode.CancellationToken,
  ): Promise<CheckResult> {
    const params: RunCheckParams = { ...args };
    return sendWithProgress<CheckResult>(this.backend.languageClient!, RUN_CHECK, params, progress, cancel);
  }

  private client() {
    return clientOrSay(this.backend.languageClient);
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
