/**
 * The webview beside the editor that draws one check's result (overfit test, LR finder,
 * gradient check, shape trace).
 *
 * One panel per key; the key defaults to the title, so `show(context, "Overfit test: TinyMLP")`
 * gives one panel per (check, class): running the same check on the same class again reuses
 * (and reveals) its panel, another check or class opens a new one beside it.
 *
 * The page (extension/media/checkResult.{js,css}, after media/dom.js, chart.js, page.css) gets no
 * data in its HTML: every view arrives with postMessage as a PageView built by
 * checkResultModel.ts and is written with textContent. The page keeps the last view with
 * setState, so hiding the panel loses nothing; it says `ready` when it loads and the panel
 * (webview/panelHost.ts) answers with the latest view.
 *
 * Messages from the page: openLocation {file, line?, column?, symbols?} (only files of the
 * current result), exportCsv (LR finder), copySnippet, rerun (→ CheckResultPanel.onDidRequestRerun).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import type { CheckResult } from '../protocol';
import { WebviewPanelHost } from '../webview/panelHost';
import { buildResultView, csvFileName, lrFinderCsv, messageView, parsePageMessage, runningView } from './checkResultModel';
import type { CheckRunTarget, PageMessage, PageView } from './checkResultTypes';
import { allowedFiles, findSymbolLine } from './traceback';

export class CheckResultPanel implements vscode.Disposable {
  static readonly viewType = 'torchDoctor.checkResult';
  private static readonly panels = new Map<string, CheckResultPanel>();
  private static readonly rerunEmitter = new vscode.EventEmitter<CheckRunTarget>();
  /**
   * The user pressed "Run again" in any result panel: run `check` on `className` in `file`
   * (a file system path) once more. Static, so it is subscribed once (panels are reused per key).
   */
  static readonly onDidRequestRerun: vscode.Event<CheckRunTarget> = CheckResultPanel.rerunEmitter.event;

  /**
   * The panel for `key` (default: `title`), created beside the active editor without taking the
   * focus, or revealed (focus kept where it is) and retitled when it exists.
   */
  static show(context: vscode.ExtensionContext, title: string, key: string = title): CheckResultPanel {
    const existing = CheckResultPanel.panels.get(key);
    if (existing) {
      existing.host.panel.title = title;
      existing.host.reveal();
      return existing;
    }
    const created = new CheckResultPanel(context.extensionUri, title, key);
    CheckResultPanel.panels.set(key, created);
    return created;
  }

  private readonly host: WebviewPanelHost<PageView, PageMessage>;
  /** The user closed the panel (or dispose() was called). */
  readonly onDidDispose: vscode.Event<void>;
  private result: CheckResult | undefined;
  private target: CheckRunTarget | undefined;

  private constructor(
    extensionUri: vscode.Uri,
    title: string,
    private readonly key: string,
  ) {
    this.host = new WebviewPanelHost<PageView, PageMessage>({
      viewType: CheckResultPanel.viewType,
      title,
      extensionUri,
      scripts: ['chart.js', 'checkResult.js'],
      styles: ['checkResult.css'],
      pageTitle: 'Torch Doctor check result',
      live: true,
      parse: parsePageMessage,
      handle: (msg) => this.handle(msg),
      onError: (err: unknown) =>
        void vscode.window.showErrorMessage(`Torch Doctor: ${err instanceof Error ? err.message : String(err)}`),
    });
    this.onDidDispose = this.host.onDidDispose;
    this.host.onDidDispose(() => {
      if (CheckResultPanel.panels.get(this.key) === this) {
        CheckResultPanel.panels.delete(this.key);
      }
    });
  }

  /** The underlying webview panel (tests, and callers that need its view column). */
  get webviewPanel(): vscode.WebviewPanel {
    return this.host.panel;
  }

  /** The view the page shows now. */
  get view(): PageView | undefined {
    return this.host.view;
  }

  /** A check was started: show its header and a "running…" state. */
  showRunning(args: { className: string; check: string; file: string }): void {
    this.target = { className: args.className, check: args.check, file: args.file };
    this.result = undefined;
    this.render(runningView(this.target));
  }

  /** Draw a CheckResult: verdict, headline, chart, table, snippet, error, what was assumed. */
  showResult(result: CheckResult): void {
    this.result = result;
    this.target = { className: result.className, check: result.check, file: result.file };
    this.render(buildResultView(result));
  }

  /** The run produced no CheckResult (the request failed, the backend is down): say so. */
  showError(message: string): void {
    this.result = undefined;
    this.render(messageView(message, this.target ?? null));
  }

  dispose(): void {
    this.host.dispose();
  }

  private render(view: PageView): void {
    this.host.render(view);
  }

  private async handle(msg: PageMessage): Promise<void> {
    switch (msg.type) {
      case 'openLocation':
        return this.openLocation(msg.file, msg.line, msg.column, msg.symbols);
      case 'exportCsv':
        return this.exportCsv();
      case 'copySnippet':
        return this.copySnippet();
      case 'rerun':
        if (this.target) {
          CheckResultPanel.rerunEmitter.fire({ ...this.target });
        }
        return;
    }
  }

  /** Open a file of this result at a line, or at the first of `symbols` found in its text. */
  private async openLocation(
    file: string,
    line: number | null,
    column: number | null,
    symbols: { className: string; member?: string }[],
  ): Promise<void> {
    const allowed = this.result ? allowedFiles(this.result) : new Set(this.target ? [this.target.file] : []);
    if (!allowed.has(file)) {
      return; // the page only offers the result's own files; anything else is ignored
    }
    await this.host.openFile(file, (doc) => {
      let line0 = line !== null ? line - 1 : null;
      if (line0 === null) {
        const text = doc.getText();
        for (const symbol of symbols) {
          line0 = findSymbolLine(text, symbol);
          if (line0 !== null) {
            break;
          }
        }
      }
      return { line: line0 ?? 0, character: column !== null ? column - 1 : null };
    });
  }

  /** Save the LR finder's sweep as CSV (lr,loss,smoothed_loss) where the user chooses. */
  private async exportCsv(): Promise<void> {
    const result = this.result;
    const csv = result ? lrFinderCsv(result) : null;
    if (!result || !csv) {
      void vscode.window.showWarningMessage('Torch Doctor: there is no LR finder sweep to export.');
      return;
    }
    const defaultUri = vscode.Uri.file(path.join(path.dirname(result.file), csvFileName(result.className)));
    const uri = await vscode.window.showSaveDialog({
      defaultUri,
      filters: { CSV: ['csv'] },
      saveLabel: 'Export',
      title: `Export the LR finder sweep of ${result.className}`,
    });
    if (!uri) {
      return;
    }
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(csv));
    const points = csv.trimEnd().split('\n').length - 1;
    void vscode.window.showInformationMessage(
      `Torch Doctor: saved the LR finder sweep (${points} points) to ${uri.scheme === 'file' ? uri.fsPath : uri.toString()}.`,
    );
  }

  private async copySnippet(): Promise<void> {
    const snippet = this.result?.snippet;
    if (!snippet) {
      return;
    }
    await vscode.env.clipboard.writeText(snippet);
    const fill = snippet.includes('...') ? ' and fill in the "..."' : '';
    void vscode.window.showInformationMessage(
      `Torch Doctor: snippet copied; paste it into ${path.basename(this.result!.file)}${fill}.`,
    );
  }
}
