/**
 * While paused: **Check Data** and **Show as Images** in the Variables view's context menu, on a
 * Dataset, a DataLoader, a batch tensor or a dict batch. The paused program itself runs the check
 * (data_checks/paused.py: the RNG states are restored, the program goes on as it would have) and
 * writes the result to a file in a private temp directory (debug/debugSnapshot.ts's SnapshotTaker);
 * the result is drawn in the data panel (dataPanel.ts), like a Check data from the editor. The
 * options (the grid's images, torchDoctor.dataChecks.budgetSeconds) are dataOptions.ts's.
 */
import { randomUUID } from 'crypto';
import { promises as fsp } from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import { SnapshotTaker, unquotePythonStr } from '../debug/debugSnapshot';
import { BUDGET_SETTING, dataCheckOptions } from './dataOptions';
import type { DataCheckResult } from './dataProtocol';
import { DataPanel, DataTargetRef } from './dataPanel';
import { PausedMode, pausedDumpExpression, variableArg } from './dataTargets';

export const CHECK_DATA_VARIABLE_COMMAND = 'torchDoctor.checkDataVariable';
export const SHOW_AS_IMAGES_COMMAND = 'torchDoctor.showAsImages';
const MAX_RESULT_BYTES = 64 * 1024 * 1024;

export function registerPausedData(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const taker = new SnapshotTaker();
  const run = (mode: PausedMode) => (arg: unknown) => checkVariable(context, taker, log, arg, mode);
  context.subscriptions.push(
    { dispose: () => taker.dispose() },
    vscode.commands.registerCommand(CHECK_DATA_VARIABLE_COMMAND, run('data')),
    vscode.commands.registerCommand(SHOW_AS_IMAGES_COMMAND, run('images')),
    DataPanel.onDidRequestRerun((t) => {
      if (t.paused) {
        void checkVariable(context, taker, log, { sessionId: t.paused.sessionId, variable: { evaluateName: t.name } }, t.paused.mode);
      }
    }),
  );
}

async function checkVariable(
  context: vscode.ExtensionContext,
  taker: SnapshotTaker,
  log: vscode.LogOutputChannel,
  arg: unknown,
  mode: PausedMode,
): Promise<void> {
  const { sessionId, evaluateName } = variableArg(arg);
  const session = vscode.debug.activeDebugSession;
  if (!session || (sessionId && session.id !== sessionId) || !evaluateName) {
    void vscode.window.showWarningMessage('Torch Doctor: pause the program and right-click a variable in the Variables view.');
    return;
  }
  let expression: string;
  const file = path.join(await taker.directory(), `data-${randomUUID()}.json`);
  try {
    const budget = vscode.workspace.getConfiguration('torchDoctor', session.workspaceFolder?.uri).get(BUDGET_SETTING);
    expression = pausedDumpExpression(evaluateName, file, mode, dataCheckOptions(budget));
  } catch {
    void vscode.window.showWarningMessage(`Torch Doctor: ${evaluateName} is not a plain variable; assign it to one and try again.`);
    return;
  }
  const frame = await pausedFrame(session, taker);
  if (!frame) {
    void vscode.window.showWarningMessage('Torch Doctor: the program is not paused.');
    return;
  }
  const target: DataTargetRef = { file: frame.source, name: evaluateName, paused: { sessionId: session.id, mode } };
  const panel = DataPanel.show(context, target);
  panel.showRunning();
  log.info(`${mode === 'images' ? 'Show as Images' : 'Check Data'} of ${evaluateName} in the paused program`);
  try {
    const title = `Torch Doctor: ${mode === 'images' ? 'drawing' : 'checking the data of'} ${evaluateName} in the paused program`;
    const answer = (await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
      session.customRequest('evaluate', { expression, frameId: frame.frameId, context: 'repl' }),
    )) as { result?: unknown };
    const status = unquotePythonStr(typeof answer?.result === 'string' ? answer.result : '');
    const result = await readResult(file, status);
    log.info(`${evaluateName}: ${status}`);
    panel.showResult(result);
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    log.warn(`Check Data of ${evaluateName}: ${message}`);
    panel.showError(/No module named/.test(message) ? 'The Torch Doctor runtime is not loaded in this session: start it with a torchdoctor launch configuration.' : message);
  } finally {
    await fsp.rm(file, { force: true }).catch(() => undefined);
  }
}

/** The focused frame of the paused session (else the first thread's top frame) and its file. */
async function pausedFrame(session: vscode.DebugSession, taker: SnapshotTaker): Promise<{ frameId: number; source: string } | null> {
  const item = vscode.debug.activeStackItem;
  let frameId: number | undefined;
  let threadId: number | undefined;
  if (item instanceof vscode.DebugStackFrame && item.session.id === session.id) {
    frameId = item.frameId;
    threadId = item.threadId;
  } else {
    const top = await taker.topFrame(session);
    frameId = top?.frameId;
    threadId = top?.threadId;
  }
  if (frameId === undefined || threadId === undefined) {
    return null;
  }
  let source = '';
  try {
    const body = (await session.customRequest('stackTrace', { threadId, startFrame: 0, levels: 50 })) as {
      stackFrames?: { id?: number; source?: { path?: string } }[];
    };
    source = body?.stackFrames?.find((f) => f.id === frameId)?.source?.path ?? '';
  } catch {
    // the file is only for links and the CSV's folder
  }
  return { frameId, source };
}

async function readResult(file: string, status: string): Promise<DataCheckResult> {
  let size: number;
  try {
    size = (await fsp.stat(file)).size;
  } catch {
    throw new Error(status.startsWith('error: ') ? status.slice(7) : `The program answered "${status}" but wrote no result here.`);
  }
  if (size > MAX_RESULT_BYTES) {
    throw new Error(`The result is ${Math.round(size / 1e6)} MB, over the ${MAX_RESULT_BYTES / 1e6} MB limit.`);
  }
  const result = JSON.parse(await fsp.readFile(file, 'utf8')) as DataCheckResult;
  if (!result || typeof result !== 'object' || result.check !== 'data') {
    throw new Error('The program wrote something that is not a data-check result.');
  }
  return result;
}
