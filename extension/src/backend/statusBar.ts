/** The "Torch Doctor" status bar item: starting / ready / restarting / error. Click: the log. */
import * as vscode from 'vscode';

export type BackendState = 'starting' | 'ready' | 'restarting' | 'error' | 'stopped';

const ICONS: Record<BackendState, string> = {
  starting: '$(loading~spin)',
  ready: '$(pulse)',
  restarting: '$(loading~spin)',
  error: '$(error)',
  stopped: '$(circle-slash)',
};

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;

  constructor(showLogCommand: string) {
    this.item = vscode.window.createStatusBarItem('torchDoctor.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Torch Doctor';
    this.item.command = showLogCommand;
    this.set('starting', 'Starting the backend…');
    this.item.show();
  }

  /** Show a state; `detail` is the tooltip's sentence (what is happening, or what is wrong). */
  set(state: BackendState, detail: string): void {
    this.item.text = `${ICONS[state]} Torch Doctor`;
    // The accessible label carries the state in words: screen readers and the E2E tests read it.
    this.item.accessibilityInformation = { label: `Torch Doctor: ${state}` };
    const tooltip = new vscode.MarkdownString(`**Torch Doctor: ${state}**\n\n${detail}\n\n_Click to open the log._`);
    this.item.tooltip = tooltip;
    this.item.backgroundColor =
      state === 'error' ? new vscode.ThemeColor('statusBarItem.errorBackground') : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
