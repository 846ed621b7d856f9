/**
 * One webview panel beside the editor, with the plumbing every Torch Doctor page shares: the
 * HTML shell (webview/html.ts: CSP nonce, media/dom.js first), `render` (keep the latest view,
 * post `{type: "render", view}`), the page's `ready` (a (re)loaded page gets the latest view
 * again), messages checked by the caller's parser before they reach its handler, and opening
 * a file of the view in an editor column next to the panel.
 *
 * Used by the check result panel (checks/checkResultPanel.ts) and the model views
 * (views/modelViews.ts); what a page may ask for stays with them.
 */
import * as vscode from 'vscode';
import { makeNonce, webviewHtml } from './html';

export interface PanelHostOptions<M extends { type: string }> {
  viewType: string;
  title: string;
  extensionUri: vscode.Uri;
  /** File names in extension/media/, after dom.js / page.css. */
  scripts: string[];
  styles: string[];
  /** The <title> of the page. */
  pageTitle: string;
  /** aria-live on the page's <main>. */
  live?: boolean;
  /** Checks a message from the page field by field; undefined drops it. */
  parse: (raw: unknown) => M | undefined;
  /** Every checked message but `ready` (answered here). */
  handle: (msg: M) => Promise<void> | void;
  /** A handler that threw or rejected. */
  onError: (err: unknown) => void;
  /** Where to open: beside the active editor unless given (a sibling view's column). */
  viewColumn?: vscode.ViewColumn;
}

/** Scripts and styles every page loads first. */
const SHARED_SCRIPTS = ['dom.js'];
const SHARED_STYLES = ['page.css'];

export class WebviewPanelHost<V, M extends { type: string }> implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  private readonly disposeEmitter = new vscode.EventEmitter<void>();
  /** The user closed the panel (or dispose() was called). */
  readonly onDidDispose: vscode.Event<void> = this.disposeEmitter.event;
  private readonly subscriptions: vscode.Disposable[] = [];
  private latest: V | undefined;
  private disposed = false;

  constructor(opts: PanelHostOptions<M>) {
    const media = vscode.Uri.joinPath(opts.extensionUri, 'extension', 'media');
    this.panel = vscode.window.createWebviewPanel(
      opts.viewType,
      opts.title,
      { viewColumn: opts.viewColumn ?? vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, enableFindWidget: true, localResourceRoots: [media] },
    );
    const webview = this.panel.webview;
    const uri = (name: string) => webview.asWebviewUri(vscode.Uri.joinPath(media, name)).toString();
    webview.html = webviewHtml({
      cspSource: webview.cspSource,
      nonce: makeNonce(),
      scriptUris: [...SHARED_SCRIPTS, ...opts.scripts].map(uri),
      styleUris: [...SHARED_STYLES, ...opts.styles].map(uri),
      title: opts.pageTitle,
      live: opts.live,
    });
    this.subscriptions.push(
      this.panel.onDidDispose(() => this.cleanUp()),
      webview.onDidReceiveMessage((raw: unknown) => {
        const msg = opts.parse(raw);
        if (!msg) {
          return;
        }
        if (msg.type === 'ready') {
          this.post(); // a (re)loaded page: give it the latest view
          return;
        }
        Promise.resolve()
          .then(() => opts.handle(msg))
          .catch(opts.onError);
      }),
    );
  }

  /** The view the page shows now. */
  get view(): V | undefined {
    return this.latest;
  }

  get isDisposed(): boolean {
    return this.disposed;
  }

  render(view: V): void {
    this.latest = view;
    this.post();
  }

  /** Bring the panel forward, focus kept where it is. */
  reveal(): void {
    this.panel.reveal(undefined, true);
  }

  /**
   * Open `file` in an editor beside the panel (the column that already shows it, else the
   * other of the first two), the cursor where `place` says: a 0-based line (clamped to the
   * document) and a 0-based character, or null for the line's first non-blank.
   */
  async openFile(
    file: string,
    place: (doc: vscode.TextDocument) => { line: number; character: number | null },
  ): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
    const at = place(doc);
    const line = Math.min(Math.max(at.line, 0), Math.max(doc.lineCount - 1, 0));
    const text = doc.lineAt(line);
    const character = at.character !== null ? Math.min(at.character, text.text.length) : text.firstNonWhitespaceCharacterIndex;
    const pos = new vscode.Position(line, character);
    const shown = vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === doc.uri.toString());
    const viewColumn =
      shown?.viewColumn ?? (this.panel.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One);
    await vscode.window.showTextDocument(doc, { viewColumn, selection: new vscode.Range(pos, pos), preserveFocus: false });
  }

  dispose(): void {
    this.panel.dispose(); // fires onDidDispose → cleanUp
  }

  private post(): void {
    if (!this.disposed && this.latest !== undefined) {
      void this.panel.webview.postMessage({ type: 'render', view: this.latest });
    }
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
