/**
 * One model-view panel (gradient flow or shape trace), reused while it is open: the shared
 * panel host (webview/panelHost.ts) with the page scripts modelViewPage.js and `<kind>.js`;
 * `refresh` goes to the controller, `openLocation` opens only files the view on show names.
 */
import * as vscode from 'vscode';
import { WebviewPanelHost } from '../webview/panelHost';
import { allowedTargets, parseModelPageMessage } from './pageMessages';
import type { ModelPageMessage, ModelPageView, ViewKind } from './viewTypes';
import { VIEW_TITLES } from './viewTypes';

export class ModelViewPanel implements vscode.Disposable {
  private readonly host: WebviewPanelHost<ModelPageView, ModelPageMessage>;
  readonly onDidDispose: vscode.Event<void>;

  constructor(
    readonly kind: ViewKind,
    extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
    private readonly onRefresh: () => void,
    viewColumn?: vscode.ViewColumn,
  ) {
    this.host = new WebviewPanelHost<ModelPageView, ModelPageMessage>({
      viewType: `torchDoctor.${kind}`,
      title: VIEW_TITLES[kind],
      extensionUri,
      scripts: ['modelViewPage.js', `${kind}.js`],
      styles: ['modelViewPage.css', `${kind}.css`],
      pageTitle: VIEW_TITLES[kind],
      viewColumn,
      parse: parseModelPageMessage,
      handle: (msg) => this.handle(msg),
      onError: (err: unknown) => {
        const text = err instanceof Error ? err.message : String(err);
        this.log.warn(`Model views: ${text}`);
        void vscode.window.showErrorMessage(`Torch Doctor: ${text}`);
      },
    });
    this.onDidDispose = this.host.onDidDispose;
  }

  get view(): ModelPageView | undefined {
    return this.host.view;
  }

  /** The editor column it shows in (the other model view opens there too). */
  get viewColumn(): vscode.ViewColumn | undefined {
    return this.host.panel.viewColumn;
  }

  reveal(): void {
    this.host.reveal();
  }

  render(view: ModelPageView): void {
    this.host.render(view);
  }

  dispose(): void {
    this.host.dispose();
  }

  private async handle(msg: ModelPageMessage): Promise<void> {
    switch (msg.type) {
      case 'refresh':
        this.onRefresh();
        return;
      case 'openLocation':
        // Only a module's defining line in a file the view on show names.
        if (allowedTargets(this.host.view).has(msg.file)) {
          await this.host.openFile(msg.file, () => ({ line: msg.line - 1, character: null }));
        }
        return;
    }
  }
}
