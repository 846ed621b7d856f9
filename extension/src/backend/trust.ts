/**
 * Workspace Trust in the editor: gate the features that execute the workspace's code.
 * The policy and its words live in `trustPolicy.ts` (tested without VS Code).
 */
import * as vscode from 'vscode';
import { MANAGE_TRUST_COMMAND, untrustedMessage } from './trustPolicy';

const MANAGE = 'Manage Workspace Trust';

/** True when the workspace is trusted; else says why `what` cannot run, with a button to trust it. */
export async function ensureTrusted(what: string): Promise<boolean> {
  if (vscode.workspace.isTrusted) {
    return true;
  }
  const choice = await vscode.window.showWarningMessage(untrustedMessage(what), MANAGE);
  if (choice === MANAGE) {
    await vscode.commands.executeCommand(MANAGE_TRUST_COMMAND);
  }
  return false;
}
