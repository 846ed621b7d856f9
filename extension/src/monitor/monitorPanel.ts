/**
 * The "Torch Doctor: Training" panel beside the editor: the shared HTML shell (CSP with a nonce,
 * no remote resources) around the page bundle dist/monitor/page.js (extension/media/monitor/ with
 * uPlot, bundled by esbuild) and its stylesheet. It shows one run at a time (a MonitorView,
 * posted as `{type: "render", view}`); the page asks to open a finding's line, to export CSV,
 * to draw another rank of a torchrun job (`rank`, from its rank picker), and says how long a
 * render took (`rendered`, logged at debug level).
 */
import * as path from 'path';
import * as vscode from 'vscode';
import { makeNonce, webviewHtml } from '../webview/html';
import { MonitorView } from './monitorView';

export const MONITOR_VIEW_TYPE = 'torchDoctor.monitor';
export const MONITOR_TITLE = 'Torch Doctor: Training';

export type PageMessage =
  | { type: 'ready' }
  | { type: 'open'; path: string; line: number }
  | { type: 'exportCsv' }
  | { type: 'rank'; rank: number }
  | { type: 'rendered'; ms: number; points: number };

/** Checks a message from the page field by field; undefined drops it. */
export function parsePageMessage(raw: unknown): PageMessage | undefined {
  if (typeof raw !== 'object' || raw === null) {
    return undefined;
  }
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'exportCsv':
      return { type: m.type };
    case 'open':
      return typeof m.path === 'string' && typeof m.line === 'number' && Number.isInteger(m.line) && m.line > 0
        ? { type: 'open', path: m.path, line: m.line }
        : undefined;
    case 'rank':
      return typeof m.rank === 'number' && Number.isInteger(m.rank) && m.rank >= 0 ? { type: 'rank', rank: m.rank } : undefined;
    case 'rendered':
      return typeof m.ms === 'number' && typeof m.points === 'number' ? { type: 'rendered', ms: m.ms, points: m.points } : undefined;
    default:
      return undefined;
  }
}

export interface PanelHandlers {
  exportCsv(): Promise<void>;
  chooseRank(rank: number): void;
  log: vscode.LogOutputChannel;
}

export class MonitorPanel implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  private latest: MonitorView | undefined;
  private disposed = false;
  private readonly subscriptions: vscode.Disposable[] = [];
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  readonly onDidDispose = this.disposeEmitter.event;

  constructor(
    extensionUri: vscode.Uri,
    private readonly handlers: PanelHandlers,
  ) {
    const media = vscode.Uri.joinPath(extensionUri, 'extension', 'media');
    const bundle = vscode.Uri.joinPath(extensionUri, 'dist', 'monitor');
    this.panel = vscode.window.createWebviewPanel(
      MONITOR_VIEW_TYPE,
      MONITOR_TITLE,
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media, bundle] },
    );
    const webview = this.panel.webview;
    const uri = (base: vscode.Uri, name: string) => webview.asWebviewUri(vscode.Uri.joinPath(base, name)).toString();
    webview.html = webviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUris: [uri(bundle, 'page.js')],
      styleUris: [uri(media, 'page.css'), uri(bundle, 'page.css')],
      title: MONITOR_TITLE,
    });
    this.subscriptions.push(
      this.panel.onDidDispose(() => this.cleanUp()),
      webview.onDidReceiveMessage((raw: unknown) => {
        const msg = parsePageMessage(raw);
        if (msg) {
          void this.handle(msg).catch((err: unknown) => {
            const text = err instanceof Error ? err.message : String(err);
            this.handlers.log.warn(`Training monitor: ${text}`);
            void vscode.window.showErrorMessage(`Torch Doctor: ${text}`);
          });
        }
      }),
    );
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  render(view: MonitorView): void {
    this.latest = view;
    if (!this.disposed) {
      void this.panel.webview.postMessage({ type: 'render', view });
    }
  }

  reveal(): void {
    this.panel.reveal(undefined, true);
  }

  dispose(): void {
    this.panel.dispose();
  }

  private async handle(msg: PageMessage): Promise<void> {
    switch (msg.type) {
      case 'ready':
        if (this.latest) {
          this.render(this.latest);
        }
        return;
      case 'exportCsv':
        return this.handlers.exportCsv();
      case 'rank':
        return this.handlers.chooseRank(msg.rank);
      case 'rendered':
        this.handlers.log.debug(`Training monitor: rendered ${msg.points} points in ${msg.ms.toFixed(1)} ms`);
        return;
      case 'open':
        return this.open(msg.path, msg.line);
    }
  }

  /** A finding's line: only a file the current view names. */
  private async open(file: string, line: number): Promise<void> {
    const named = this.latest?.findings.some((f) => f.where?.path === file);
    if (!named) {
      return;
    }
    const cwd = this.latest?.run.cwd;
    const full = path.isAbsolute(file) || !cwd ? file : path.join(cwd, file);
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(full));
    const l = Math.min(Math.max(line - 1, 0), Math.max(doc.lineCount - 1, 0));
    const pos = new vscode.Position(l, doc.lineAt(l).firstNonWhitespaceCharacterIndex);
    const column = this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
    await vscode.window.showTextDocument(doc, { viewColumn: column, selection: new vscode.Range(pos, pos) });
  }

  private cleanUp(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.disposeEmitter.fire();
    for (const d of this.subscriptions) {
      d.dispose();
    }
    this.disposeEmitter.dispose();
  }
}
