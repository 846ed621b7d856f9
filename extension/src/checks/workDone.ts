/**
 * A backend request that runs a job in a worker (a model check, the data check), with LSP
 * work-done progress shown in a VS Code progress notification: the backend's reports (message,
 * percentage) move the notification; cancelling the notification cancels the request (the
 * backend stops the worker and answers). Shared by checks/checks.ts and data/dataChecks.ts.
 */
import { randomUUID } from 'crypto';
import * as vscode from 'vscode';
import { LanguageClient, WorkDoneProgress, WorkDoneProgressReport } from 'vscode-languageclient/node';

/** Send `method` with `params` plus a fresh workDoneToken; report its progress to `progress`. */
export async function sendWithProgress<R>(
  client: LanguageClient,
  method: string,
  params: object,
  progress: vscode.Progress<{ message?: string; increment?: number }>,
  cancel: vscode.CancellationToken,
): Promise<R> {
  const workDoneToken = randomUUID();
  let done = 0;
  const sub = client.onProgress(WorkDoneProgress.type, workDoneToken, (p) => {
    if (p.kind === 'report') {
      const report = p as WorkDoneProgressReport;
      const increment = report.percentage !== undefined ? Math.max(0, report.percentage - done) : undefined;
      done = report.percentage ?? done;
      progress.report({ message: report.message, increment });
    }
  });
  try {
    return await client.sendRequest<R>(method, { ...params, workDoneToken }, cancel);
  } finally {
    sub.dispose();
  }
}

/** The request was cancelled (the notification's Cancel, or the LSP RequestCancelled error). */
export function isCancellation(err: unknown): boolean {
  return err instanceof vscode.CancellationError || (err as { code?: number })?.code === -32800;
}

/** The language client, or undefined after telling the user the backend is not running. */
export function clientOrSay(client: LanguageClient | undefined): LanguageClient | undefined {
  if (!client) {
    void vscode.window.showErrorMessage(
      'Torch Doctor: the backend is not running. Click "Torch Doctor" in the status bar for its log, or run "Torch Doctor: Restart Backend".',
    );
  }
  return client;
}
