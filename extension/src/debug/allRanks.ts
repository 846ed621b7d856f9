/**
 * Continue All Ranks / Pause All Ranks, and a status item while some ranks are paused.
 *
 * The ranks of a torchrun job are child sessions of one root session (torchrun's own process).
 * VS Code's Continue acts on one session, so without these a user presses it once per rank;
 * and while one rank is paused the others run on into their next collective and wait there,
 * which looks like a hang: the status item says so.
 */
import * as vscode from 'vscode';
import { DEBUG_TYPE } from './debugConfiguration';

interface ThreadsBody {
  threads?: { id: number }[];
}

export function registerAllRanks(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const paused = new Set<string>();
  const status = vscode.window.createStatusBarItem('torchdoctor.ranks', vscode.StatusBarAlignment.Left, 50);
  status.name = 'Torch Doctor: ranks';
  status.command = 'torchDoctor.continueAllRanks';
  const refresh = (): void => showRanks(status, paused);
  context.subscriptions.push(
    status,
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, {
      createDebugAdapterTracker: (session) => ({
        onDidSendMessage: (m: { type?: string; event?: string; body?: { reason?: string } }) => {
          if (m.type !== 'event' || (m.event !== 'stopped' && m.event !== 'continued')) {
            return;
          }
          if (m.event === 'continued') {
            paused.delete(session.id);
          } else {
            paused.add(session.id);
          }
          refresh();
          if (m.event === 'stopped' && m.body?.reason === 'exception' && session.parentSession) {
            // A rank paused on an anomaly (or an exception): pause the others where they are,
            // before they all-reduce its NaN or sit in a collective waiting for it.
            log.info(`"${session.name}" stopped on an exception: pausing the other ranks`);
            void everyRank('pause', paused, log);
          }
        },
        onExit: () => {
          paused.delete(session.id);
          refresh();
        },
      }),
    }),
    vscode.debug.onDidStartDebugSession((s) => known.set(s.id, s)),
    vscode.debug.onDidTerminateDebugSession((s) => {
      known.delete(s.id);
      paused.delete(s.id);
      refresh();
    }),
    vscode.debug.onDidChangeActiveDebugSession(refresh),
    vscode.commands.registerCommand('torchDoctor.continueAllRanks', () => everyRank('continue', paused, log)),
    vscode.commands.registerCommand('torchDoctor.pauseAllRanks', () => everyRank('pause', paused, log)),
  );
}

/** "rank 0 paused · 1 running (it waits in its next collective)", only during a job with ranks. */
function showRanks(status: vscode.StatusBarItem, paused: Set<string>): void {
  const ranks = rankSessions();
  if (ranks.length < 2 || paused.size === 0) {
    status.hide();
    return;
  }
  const stopped = ranks.filter((s) => paused.has(s.id)).map((s) => s.name);
  const running = ranks.length - stopped.length;
  status.text = `$(debug-pause) ${stopped.join(', ')} paused` + (running ? ` · ${running} running` : '');
  status.tooltip = running
    ? 'The running ranks wait in their next collective until every rank reaches it: not a hang. Click to continue all ranks.'
    : 'Every rank is paused. Click to continue all ranks.';
  status.show();
}

/** The sessions of the active job's ranks: the children of its root session. */
function rankSessions(): vscode.DebugSession[] {
  const active = vscode.debug.activeDebugSession;
  if (!active) {
    return [];
  }
  const root = rootOf(active);
  return allSessions().filter((s) => s.parentSession !== undefined && rootOf(s) === root);
}

function rootOf(session: vscode.DebugSession): vscode.DebugSession {
  let s = session;
  while (s.parentSession) {
    s = s.parentSession;
  }
  return s;
}

/** Every live debug session (VS Code lists only the active one). */
const known = new Map<string, vscode.DebugSession>();

function allSessions(): vscode.DebugSession[] {
  return [...known.values()];
}

async function everyRank(command: 'continue' | 'pause', paused: Set<string>, log: vscode.LogOutputChannel) {
  const ranks = rankSessions();
  if (ranks.length === 0) {
    void vscode.window.showInformationMessage('Torch Doctor: no torchrun job with ranks is being debugged.');
    return;
  }
  const wanted = ranks.filter((s) => (command === 'continue' ? paused.has(s.id) : !paused.has(s.id)));
  await Promise.all(wanted.map((s) => oneRank(s, command, log)));
}

async function oneRank(session: vscode.DebugSession, command: string, log: vscode.LogOutputChannel) {
  try {
    const { threads } = (await session.customRequest('threads')) as ThreadsBody;
    const threadId = threads?.[0]?.id;
    if (threadId !== undefined) {
      await session.customRequest(command, { threadId });
    }
  } catch (err) {
    log.warn(`${command} "${session.name}": ${(err as Error).message}`);
  }
}
