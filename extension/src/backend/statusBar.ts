/**
 * The "Torch Doctor" status bar item: starting / ready / restarting / error, and warning when the
 * interpreter lacks torch (statusView.ts decides what each looks like). Click: the log, or in the
 * warning state the interpreter picker.
 */
import * as vscode from 'vscode';
import type { HealthSummary } from './interpreterHealth';
import { BackendState, SELECT_INTERPRETER_COMMAND, SHOW_LOG_COMMAND, ShownState, statusView } from './statusView';

export type { BackendState } from './statusView';

export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private state: BackendState = 'starting';
  private detail = 'Starting the backend…';
  private health: HealthSummary | undefined;

  constructor() {
    this.item = vscode.window.createStatusBarItem('torchDoctor.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Torch Doctor';
    this.render();
    this.item.show();
  }

  /** Show a backend state; `detail` is the tooltip's sentence (what is happening, or what is wrong). */
  set(state: BackendState, detail: string): void {
    this.state = state;
    this.detail = detail;
    this.render();
  }

  /** The interpreter check's result (undefined: checking). */
  setHealth(health: HealthSummary | undefined): void {
    this.health = health;
    this.render();
  }

  /** What the item shows now, in the words of its accessible label (for callers and tests). */
  get shownState(): ShownState {
    return statusView(this.state, this.detail, this.health).state;
  }

  private render(): void {
    const view = statusView(this.state, this.detail, this.health);
    this.item.text = view.text;
    this.item.accessibilityInformation = { label: view.label };
    const tooltip = new vscode.MarkdownString(view.tooltip, true);
    tooltip.isTrusted = { enabledCommands: [SELECT_INTERPRETER_COMMAND, SHOW_LOG_COMMAND] };
    this.item.tooltip = tooltip;
    this.item.command = view.command;
    this.item.backgroundColor = view.background
      ? new vscode.ThemeColor(view.background === 'error' ? 'statusBarItem.errorBackground' : 'statusBarItem.warningBackground')
      : undefined;
  }

  dispose(): void {
    this.item.dispose();
  }
}
