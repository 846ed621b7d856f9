/**
 * The webview beside the editor that draws one data check (verdict cards, the image grid, label
 * charts, the per-split table): extension/media/data/dataResult.{js,css} after the shared dom.js
 * and page.css, and checkResult.css for the header, badge and table styles it shares with the
 * model checks' page. One panel per FILE::NAME, reused when the same data is checked again.
 *
 * Like the check-result panel (webview/panelHost.ts), the page gets no data in its HTML: the view
 * (dataView.ts) arrives with postMessage and is written with textContent; images are drawn on
 * canvases from the view's uint8 arrays. Messages from the page: openLocation {file, line} (only
 * files the result names), exportCsv (the flagged samples), copySnippet, rerun.
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { WebviewPanelHost } from '../webview/panelHost';
import type { DataCheckResult } from './dataProtocol';
import { buildDataView, dataAllowedFiles, dataMessageView, dataRunningView, flaggedCsv, parseDataPageMessage } from './dataView';
import type { DataPageMessage, DataPageView } from './dataViewTypes';

export interface DataTargetRef {
  /** The file the data comes from (for a paused program: the paused frame's file, or ""). */
  file: string;
  /** FILE::NAME's NAME, or the paused program's variable. */
  name: string;
  /** Checked inside a paused program (pausedData.ts), not from the file. */
  paused?: { sessionId: string; mode: 'data' | 'images' };
}

export class DataPanel implements vscode.Disposable {
  static readonly viewType = 'torchDoctor.dataCheck';
  private static readonly panels = new Map<string, DataPanel>();
  private static readonly rerunEmitter = new vscode.EventEmitter<DataTargetRef>();
  /** "Run again" in any data panel. */
  static readonly onDidRequestRerun: vscode.Event<DataTargetRef> = DataPanel.rerunEmitter.event;

  /** The panel of this target, created beside the editor (focus kept) or revealed. */
  static show(context: vscode.ExtensionContext, target: DataTargetRef): DataPanel {
    const key = `${target.paused ? `paused:${target.paused.mode}:` : ''}${target.file}::${target.name}`;
    const existing = DataPanel.panels.get(key);
    if (existing) {
      existing.host.reveal();
      return existing;
    }
    const created = new DataPanel(context.extensionUri, target, key);
    DataPanel.panels.set(key, created);
    return created;
  }

  private readonly host: WebviewPanelHost<DataPageView, DataPageMessage>;
  private result: DataCheckResult | undefined;

  private constructor(
    extensionUri: vscode.Uri,
    private readonly target: DataTargetRef,
    private readonly key: string,
  ) {
    this.host = new WebviewPanelHost<DataPageView, DataPageMessage>({
      viewType: DataPanel.viewType,
      title: target.paused?.mode === 'images' ? `Images: ${target.name}` : `Data check: ${target.name}`,
      extensionUri,
      scripts: ['data/dataResult.js'],
      styles: ['checkResult.css', 'data/dataResult.css'],
      pageTitle: 'Torch Doctor data check',
      live: true,
      parse: parseDataPageMessage,
      handle: (msg) => this.handle(msg),
      onError: (err: unknown) =>
        void vscode.window.showErrorMessage(`Torch Doctor: ${err instanceof Error ? err.message : String(err)}`),
    });
    this.host.onDidDispose(() => {
      if (DataPanel.panels.get(this.key) === this) {
        DataPanel.panels.delete(this.key);
      }
    });
  }

  get view(): DataPageView | undefined {
    return this.host.view;
  }

  showRunning(): void {
    this.result = undefined;
    this.host.render(dataRunningView(this.target.name, this.target.file, this.target.paused?.mode));
  }

  showResult(result: DataCheckResult): void {
    this.result = result;
    this.host.render(buildDataView(result, this.target.paused?.mode));
  }

  showError(message: string, cancelled = false): void {
    this.result = undefined;
    this.host.render(dataMessageView(this.target.name, this.target.file, message, cancelled, this.target.paused?.mode));
  }

  dispose(): void {
    this.host.dispose();
  }

  private async handle(msg: DataPageMessage): Promise<void> {
    switch (msg.type) {
      case 'openLocation':
        if (dataAllowedFiles(this.result, this.target.file).has(msg.file)) {
          await this.host.openFile(msg.file, () => ({ line: msg.line - 1, character: null }));
        }
        return;
      case 'exportCsv':
        return this.exportCsv();
      case 'copySnippet':
        if (this.result?.snippet) {
          await vscode.env.clipboard.writeText(this.result.snippet);
          void vscode.window.showInformationMessage(
            `Torch Doctor: snippet copied; paste it into ${path.basename(this.target.file)} and fill in the "...".`,
          );
        }
        return;
      case 'rerun':
        DataPanel.rerunEmitter.fire({ ...this.target });
        return;
    }
  }

  /** Save kind,severity,split,index of every flagged sample where the user chooses. */
  private async exportCsv(): Promise<void> {
    const csv = this.result ? flaggedCsv(this.result) : null;
    if (!csv) {
      void vscode.window.showWarningMessage('Torch Doctor: no finding names samples to export.');
      return;
    }
    const uri = await vscode.window.showSaveDialog({
      defaultUri: vscode.Uri.file(path.join(path.dirname(this.target.file), `${this.target.name}_flagged.csv`)),
      filters: { CSV: ['csv'] },
      saveLabel: 'Export',
      title: `Export the flagged samples of ${this.target.name}`,
    });
    if (!uri) {
      return;
    }
    await vscode.workspace.fs.writeFile(uri, new TextEncoder().encode(csv));
    void vscode.window.showInformationMessage(`Torch Doctor: saved the flagged samples to ${uri.fsPath}.`);
  }
}
