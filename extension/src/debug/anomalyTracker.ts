/**
 * Watches a debug session's output for the runtime's anomaly line and says it where the
 * user looks: a warning notification and the log. The pause itself is the runtime's.
 */
import * as vscode from 'vscode';
import { anomalySentence } from './anomalyConfig';

interface DapMessage {
  type?: string;
  event?: string;
  body?: { output?: string; category?: string };
}

export class AnomalyTrackerFactory implements vscode.DebugAdapterTrackerFactory {
  constructor(private readonly log: vscode.LogOutputChannel) {}

  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    return {
      onDidSendMessage: (m: DapMessage) => {
        if (m.type !== 'event' || m.event !== 'output' || !m.body?.output) {
          return;
        }
        const sentence = anomalySentence(m.body.output);
        if (sentence) {
          this.log.warn(`Anomaly in "${session.name}": ${sentence}`);
          void vscode.window.showWarningMessage(`Torch Doctor: ${sentence}`);
        }
      },
    };
  }
}
