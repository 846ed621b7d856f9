/**
 * The "Get started with Torch Doctor" walkthrough (contributes.walkthroughs in package.json,
 * pages in extension/media/walkthrough/): it opens once, on the first activation after install,
 * and from "Torch Doctor: Get Started". Each step's button is one of the commands below; each
 * does the step on the sample workspace (sampleWorkspace.ts).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { RUN_CHECK_COMMAND, RunCheckArgs } from '../protocol';
import { copySample, findSampleFolder, markedLine, OVERFIT_CLASS, ruleId, SAMPLE_FILES } from './sampleWorkspace';

export const WALKTHROUGH_ID = 'torchDoctor.getStarted';
/** globalState: the walkthrough was opened (or the user's settings said not to): never again. */
const SHOWN_KEY = 'torchDoctor.walkthroughShown';
const DIAGNOSTICS_TIMEOUT_MS = 20_000;
/** VS Code's own switch for opening an extension's walkthrough when it is installed. */
const OPEN_ON_INSTALL = 'workbench.welcomePage.walkthroughs.openOnInstall';
const STARTUP_EDITOR = 'workbench.startupEditor';

export const COMMANDS = {
  getStarted: 'torchDoctor.getStarted',
  openSample: 'torchDoctor.openSampleWorkspace',
  hoverTensor: 'torchDoctor.walkthrough.hoverTensor',
  pauseOnNan: 'torchDoctor.walkthrough.pauseOnNan',
  overfitTest: 'torchDoctor.walkthrough.overfitTest',
  readSquiggle: 'torchDoctor.walkthrough.readSquiggle',
} as const;

export function registerWalkthrough(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const steps = new Steps(context, log);
  const guarded = (name: string, fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      const msg = err instanceof Error ? err.message : String(err);
      log.error(`Walkthrough step "${name}" failed: ${msg}`);
      void vscode.window.showErrorMessage(`Torch Doctor: ${msg}`);
    }
  };
  context.subscriptions.push(
    vscode.commands.registerCommand(COMMANDS.getStarted, () => openWalkthrough(context)),
    vscode.commands.registerCommand(COMMANDS.openSample, guarded('open the sample', () => steps.openSample())),
    vscode.commands.registerCommand(COMMANDS.hoverTensor, guarded('hover a tensor', () => steps.hoverTensor())),
    vscode.commands.registerCommand(COMMANDS.pauseOnNan, guarded('pause on a NaN', () => steps.pauseOnNan())),
    vscode.commands.registerCommand(COMMANDS.overfitTest, guarded('overfit test', () => steps.overfitTest())),
    vscode.commands.registerCommand(COMMANDS.readSquiggle, guarded('read a squiggle', () => steps.readSquiggle())),
  );
}

/**
 * Open the walkthrough on the first activation after install, once. Not when the user asked
 * VS Code for no start pages: `workbench.welcomePage.walkthroughs.openOnInstall` false (when the
 * extension host can see it: code-server 4.139 does not pass it on) or `workbench.startupEditor`
 * "none".
 */
export async function openWalkthroughOnFirstRun(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): Promise<void> {
  if (context.globalState.get<boolean>(SHOWN_KEY)) {
    return;
  }
  await context.globalState.update(SHOWN_KEY, true);
  const config = vscode.workspace.getConfiguration();
  const why =
    config.get<boolean>(OPEN_ON_INSTALL) === false
      ? `${OPEN_ON_INSTALL} is false`
      : config.get<string>(STARTUP_EDITOR) === 'none'
        ? `${STARTUP_EDITOR} is "none"`
        : undefined;
  const open = why === undefined;
  log.info(open ? 'First run: opening the walkthrough' : `First run: not opening the walkthrough (${why})`);
  if (open) {
    await openWalkthrough(context);
  }
}

async function openWalkthrough(context: vscode.ExtensionContext): Promise<void> {
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', `${context.extension.id}#${WALKTHROUGH_ID}`, false);
}

class Steps {
  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  /** The sample is open: show its README. Else copy the bundled one and offer to open it. */
  async openSample(): Promise<void> {
    const open = this.openSampleFolder();
    if (open) {
      const readme = vscode.Uri.file(path.join(open.uri.fsPath, SAMPLE_FILES.readme));
      await vscode.commands.executeCommand('revealInExplorer', readme).then(undefined, () => undefined);
      await vscode.commands.executeCommand('markdown.showPreview', readme).then(undefined, () =>
        vscode.window.showTextDocument(readme),
      );
      return;
    }
    const bundled = this.context.asAbsolutePath('sample_workspace');
    const target = copySample(bundled, path.join(this.context.globalStorageUri.fsPath, 'sample_workspace'));
    this.log.info(`Sample workspace at ${target}`);
    const choice = await vscode.window.showInformationMessage(
      `Torch Doctor's sample workspace is in ${target}. Open it?`,
      'Open Here',
      'Open in New Window',
    );
    if (choice) {
      await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(target), {
        forceNewWindow: choice === 'Open in New Window',
      });
    }
  }

  /** Breakpoint on the marked line of inspect_tensors.py, then "Debug current file". */
  async hoverTensor(): Promise<void> {
    const target = await this.openStepFile(SAMPLE_FILES.hoverTensor);
    if (!target) {
      return;
    }
    const { folder, editor } = target;
    const uri = editor.document.uri;
    const line = markedLine(editor.document.getText());
    if (line !== undefined) {
      const at = new vscode.Position(line, 0);
      editor.selection = new vscode.Selection(at, at);
      editor.revealRange(new vscode.Range(at, at), vscode.TextEditorRevealType.InCenter);
      const has = vscode.debug.breakpoints.some(
        (b) => b instanceof vscode.SourceBreakpoint && b.location.uri.fsPath === uri.fsPath && b.location.range.start.line === line,
      );
      if (!has) {
        vscode.debug.addBreakpoints([new vscode.SourceBreakpoint(new vscode.Location(uri, at))]);
      }
    }
    await vscode.debug.startDebugging(folder, {
      name: 'Debug current file',
      type: 'torchdoctor',
      request: 'launch',
      program: uri.fsPath,
      console: 'integratedTerminal',
      justMyCode: true,
    });
  }

  /** broken/nan_in_input.py under the anomaly watch (launch.json's "…with anomaly watch"). */
  async pauseOnNan(): Promise<void> {
    const target = await this.openStepFile(SAMPLE_FILES.pauseOnNan);
    if (!target) {
      return;
    }
    await vscode.debug.startDebugging(target.folder, {
      name: 'Debug current file with anomaly watch',
      type: 'torchdoctor',
      request: 'launch',
      program: target.editor.document.uri.fsPath,
      console: 'integratedTerminal',
      justMyCode: true,
      anomaly: { mode: 'break' },
    });
  }

  /** The overfit test of models/mlp.py's TinyMLP, as its CodeLens runs it. */
  async overfitTest(): Promise<void> {
    const target = await this.openStepFile(SAMPLE_FILES.overfitTest);
    if (!target) {
      return;
    }
    const args: RunCheckArgs = { uri: target.editor.document.uri.toString(), className: OVERFIT_CLASS, check: 'overfit' };
    await vscode.commands.executeCommand(RUN_CHECK_COMMAND, args);
  }

  /** Open broken/lint_classifier.py, put the cursor on a finding and show its hover. */
  async readSquiggle(): Promise<void> {
    const target = await this.openStepFile(SAMPLE_FILES.squiggle);
    if (!target) {
      return;
    }
    const editor = target.editor;
    const diagnostics = await waitForFindings(editor.document.uri, DIAGNOSTICS_TIMEOUT_MS);
    const finding = diagnostics.find((d) => ruleId(d.code) === 'TD003') ?? diagnostics[0];
    if (!finding) {
      void vscode.window.showWarningMessage(
        'Torch Doctor: no squiggle yet. The backend may still be starting: hover "Torch Doctor" in the status bar.',
      );
      return;
    }
    const at = finding.range.start;
    editor.selection = new vscode.Selection(at, at);
    editor.revealRange(finding.range, vscode.TextEditorRevealType.InCenter);
    await vscode.window.showTextDocument(editor.document, editor.viewColumn);
    await vscode.commands.executeCommand('editor.action.showHover');
  }

  private openSampleFolder(): vscode.WorkspaceFolder | undefined {
    const folders = vscode.workspace.workspaceFolders ?? [];
    const dir = findSampleFolder(folders.map((f) => f.uri.fsPath));
    return folders.find((f) => f.uri.fsPath === dir);
  }

  /** The step's file in the open sample, in an editor; without the sample, offer to open it. */
  private async openStepFile(
    relative: string,
  ): Promise<{ folder: vscode.WorkspaceFolder; editor: vscode.TextEditor } | undefined> {
    const folder = this.openSampleFolder();
    if (!folder) {
      const choice = await vscode.window.showInformationMessage(
        "Torch Doctor: this step uses the sample workspace, and it is not open.",
        'Open the Sample Workspace',
      );
      if (choice) {
        await vscode.commands.executeCommand(COMMANDS.openSample);
      }
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(path.join(folder.uri.fsPath, relative)));
    const editor = await vscode.window.showTextDocument(doc, { preview: false, viewColumn: vscode.ViewColumn.One });
    return { folder, editor };
  }
}

/** Torch Doctor's findings (codes TDnnn) on `uri`, waiting for the first ones up to `timeoutMs`. */
function waitForFindings(uri: vscode.Uri, timeoutMs: number): Promise<vscode.Diagnostic[]> {
  const ours = () => vscode.languages.getDiagnostics(uri).filter((d) => ruleId(d.code));
  const now = ours();
  if (now.length) {
    return Promise.resolve(now);
  }
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve(ours());
    };
    const timer = setTimeout(done, timeoutMs);
    const sub = vscode.languages.onDidChangeDiagnostics((e) => {
      if (e.uris.some((u) => u.toString() === uri.toString()) && ours().length) {
        done();
      }
    });
  });
}
