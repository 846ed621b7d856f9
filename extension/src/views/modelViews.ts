/**
 * The gradient-flow and shape-trace views beside the editor while a debug session is paused.
 *
 * Two commands open one webview panel each (beside the editor, focus kept). While a panel is
 * open, every stop of the session (a DAP `stopped` event, debounced) takes one snapshot of the
 * debuggee (debugSnapshot.ts), sends it to the backend (torchDoctor/diagnoseSnapshot) and
 * draws the answer in both panels. When the program runs again the data stays with a banner
 * that says so; when the session ends, with "the last data is shown". With no data the page
 * says why: no session, not paused, no model, no runtime, backend not ready, or the error.
 *
 * The pages (extension/media/{dom,modelViewPage,gradientFlow,shapeTrace}.js, page.css and theirs;
 * one panel each: modelViewPanel.ts) get their data
 * by postMessage only, keep it with setState and say `ready` when they (re)load; they ask for
 * `refresh` and `openLocation` (only files that the current view names are opened).
 */
import * as vscode from 'vscode';
import type { Backend } from '../backend/backend';
import { DEBUG_TYPE, MS_PYTHON_DEBUG_TYPE } from '../debug/debugConfiguration';
import { isSimpleReference, SnapshotOutcome, SnapshotTaker } from '../debug/debugSnapshot';
import { gradientFlowPage } from './gradientFlowPage';
import { ModelViewPanel } from './modelViewPanel';
import { shapeTracePage } from './shapeTracePage';
import { BANNERS, messagePage, snapshotFacts, stopSubtitle, withBanner } from './statePages';
import type { Banner, MessageState, ModelPageView, ViewKind } from './viewTypes';
import { DIAGNOSE_SNAPSHOT, DiagnoseSnapshotParams, DiagnoseSnapshotResult } from '../protocol';

export const SHOW_GRADIENT_FLOW_COMMAND = 'torchDoctor.showGradientFlow';
export const SHOW_SHAPE_TRACE_COMMAND = 'torchDoctor.showShapeTrace';

/** A burst of stops (stepping with F10 held) takes one snapshot. */
const STOP_DEBOUNCE_MS = 200;
/** A snapshot slower than this replaces a state page with "Taking a snapshot…". */
const LOADING_PAGE_DELAY_MS = 300;
/** A step answered by a stop within this long never shows the "running" banner. */
const RUNNING_BANNER_DELAY_MS = 400;

const SESSION_TYPES = new Set([DEBUG_TYPE, MS_PYTHON_DEBUG_TYPE]);
/** Requests after which the program runs until the next `stopped` event. */
const RESUMING_REQUESTS = new Set(['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue', 'goto']);

const VIEW_KINDS: ViewKind[] = ['gradientFlow', 'shapeTrace'];

export function registerModelViews(
  context: vscode.ExtensionContext,
  backend: Backend,
  log: vscode.LogOutputChannel,
): void {
  const controller = new ModelViewsController(context, backend, log);
  context.subscriptions.push(
    controller,
    vscode.commands.registerCommand(SHOW_GRADIENT_FLOW_COMMAND, (arg?: unknown) => controller.show('gradientFlow', arg)),
    vscode.commands.registerCommand(SHOW_SHAPE_TRACE_COMMAND, (arg?: unknown) => controller.show('shapeTrace', arg)),
    vscode.debug.registerDebugAdapterTrackerFactory(DEBUG_TYPE, controller),
    vscode.debug.registerDebugAdapterTrackerFactory(MS_PYTHON_DEBUG_TYPE, controller),
    vscode.debug.onDidChangeActiveDebugSession((s) => controller.onActiveSession(s)),
    vscode.debug.onDidTerminateDebugSession((s) => controller.onSessionEnded(s)),
  );
}

/** What the tracker knows of one session. */
interface SessionState {
  session: vscode.DebugSession;
  stopped: boolean | undefined;
  threadId: number | undefined;
  reason: string | null;
  stoppedAt: Date | undefined;
  ended: boolean;
  runningTimer: NodeJS.Timeout | undefined;
  /** The model the user picked in the Variables view (its evaluateName); undefined: the runtime's choice. */
  model: string | undefined;
}

interface DapMessage {
  type?: string;
  event?: string;
  command?: string;
  body?: { threadId?: unknown; reason?: unknown; allThreadsContinued?: unknown };
}

class ModelViewsController implements vscode.DebugAdapterTrackerFactory, vscode.Disposable {
  private readonly panels = new Map<ViewKind, ModelViewPanel>();
  private readonly sessions = new Map<string, SessionState>();
  private readonly taker = new SnapshotTaker();
  /** The session the views follow: the one that stopped last, or the active one. */
  private current: SessionState | undefined;
  /** The latest page of each kind with data (kept for the running/stale banners). */
  private readonly data = new Map<ViewKind, ModelPageView>();
  private debounce: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private again = false;
  private disposed = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly backend: Backend,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  // --- commands -------------------------------------------------------------------------

  /** Open (or reveal) the panel of `kind` and refresh it. `arg`: a Variables-view context, if any. */
  show(kind: ViewKind, arg?: unknown): void {
    const context = variableContext(arg);
    const picked =
      (context.sessionId && this.sessions.get(context.sessionId)) || this.stateOf(vscode.debug.activeDebugSession);
    if (picked && !picked.ended) {
      this.follow(picked);
      if (context.evaluateName && isSimpleReference(context.evaluateName)) {
        // From the Variables view: this model, for the rest of the session (where it is in scope).
        picked.model = context.evaluateName;
      }
    }
    let panel = this.panels.get(kind);
    if (panel) {
      panel.reveal();
    } else {
      // Both views share one column beside the editor (a tab each), so each keeps the split's width.
      const sibling = [...this.panels.values()].find((p) => p.viewColumn !== undefined);
      panel = new ModelViewPanel(kind, this.context.extensionUri, this.log, () => this.requestRefresh(0), sibling?.viewColumn);
      this.panels.set(kind, panel);
      panel.onDidDispose(() => {
        if (this.panels.get(kind) === panel) {
          this.panels.delete(kind);
        }
      });
      const existing = this.data.get(kind);
      panel.render(existing ?? messagePage(kind, 'loading', ''));
    }
    this.requestRefresh(0);
  }

  // --- the tracker: stops, resumes, the end -------------------------------------------

  createDebugAdapterTracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    const state: SessionState = {
      session,
      stopped: undefined,
      threadId: undefined,
      reason: null,
      stoppedAt: undefined,
      ended: false,
      runningTimer: undefined,
      model: undefined,
    };
    this.sessions.set(session.id, state);
    return {
      onDidSendMessage: (m: DapMessage) => {
        if (m?.type !== 'event') {
          return;
        }
        if (m.event === 'stopped') {
          this.onStopped(state, m.body);
        } else if (m.event === 'continued') {
          this.onResumed(state);
        }
      },
      onWillReceiveMessage: (m: DapMessage) => {
        if (m?.type === 'request' && m.command && RESUMING_REQUESTS.has(m.command)) {
          this.onResumed(state);
        }
      },
      onExit: () => this.onSessionEnded(session),
    };
  }

  private onStopped(state: SessionState, body: DapMessage['body']): void {
    clearTimeout(state.runningTimer);
    this.follow(state);
    state.stopped = true;
    state.threadId = typeof body?.threadId === 'number' ? body.threadId : state.threadId;
    state.reason = typeof body?.reason === 'string' ? body.reason : null;
    state.stoppedAt = new Date();
    this.requestRefresh(STOP_DEBOUNCE_MS);
  }

  private onResumed(state: SessionState): void {
    if (state.stopped === false) {
      return;
    }
    state.stopped = false;
    clearTimeout(state.runningTimer);
    state.runningTimer = setTimeout(() => {
      if (state.stopped === false && state === this.current && !state.ended) {
        this.showBanner(BANNERS.running, 'not-paused');
      }
    }, RUNNING_BANNER_DELAY_MS);
  }

  onActiveSession(session: vscode.DebugSession | undefined): void {
    const state = this.stateOf(session);
    if (!state || state === this.current) {
      return;
    }
    this.follow(state);
    this.requestRefresh(STOP_DEBOUNCE_MS);
  }

  /** Follow `state` from now on; what another session showed is not its data. */
  private follow(state: SessionState): void {
    if (this.current !== state) {
      this.current = state;
      this.data.clear();
    }
  }

  onSessionEnded(session: vscode.DebugSession): void {
    const state = this.sessions.get(session.id);
    if (!state || state.ended) {
      return;
    }
    state.ended = true;
    state.stopped = false;
    clearTimeout(state.runningTimer);
    // Forget the session after a while (its id is never reused); keep the one the views show.
    if (state === this.current) {
      this.showBanner(BANNERS.stale, 'no-session');
    }
    this.sessions.delete(session.id);
  }

  private stateOf(session: vscode.DebugSession | undefined): SessionState | undefined {
    if (!session || !SESSION_TYPES.has(session.type)) {
      return undefined;
    }
    return this.sessions.get(session.id);
  }

  // --- refreshing -----------------------------------------------------------------------

  /** Refresh after `delayMs` (restarting the wait); a refresh running now is followed by one more. */
  private requestRefresh(delayMs: number): void {
    if (this.panels.size === 0 || this.disposed) {
      return; // nothing to draw: no snapshot (it costs the debuggee time)
    }
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => {
      this.debounce = undefined;
      if (this.inFlight) {
        this.again = true;
        return;
      }
      this.inFlight = this.refresh()
        .catch((err: unknown) => this.log.error(`Model views: refresh failed: ${errorText(err)}`))
        .finally(() => {
          this.inFlight = undefined;
          if (this.again) {
            this.again = false;
            this.requestRefresh(0);
          }
        });
    }, delayMs);
  }

  private async refresh(): Promise<void> {
    const state = this.current ?? this.stateOf(vscode.debug.activeDebugSession);
    if (!state) {
      this.showBanner(null, 'no-session');
      return;
    }
    if (state.ended) {
      this.showBanner(BANNERS.stale, 'no-session');
      return;
    }
    const running = `“${state.session.name}” · running`;
    if (state.stopped === false) {
      this.showBanner(BANNERS.running, 'not-paused', running);
      return;
    }
    const subtitle = stopSubtitle(state.session.name, state.reason, state.stoppedAt ?? new Date());
    const outcome = await this.snapshot(state, subtitle);
    if (this.disposed) {
      return;
    }
    if (!outcome.ok) {
      this.log.info(`Model views: no snapshot from "${state.session.name}": ${outcome.problem}: ${outcome.detail || outcome.message}`);
      if (outcome.problem === 'not-paused') {
        this.showBanner(BANNERS.running, 'not-paused', running);
        return;
      }
      const known: Partial<Record<string, MessageState>> = { 'no-model': 'no-model', 'no-runtime': 'no-runtime' };
      const st = known[outcome.problem] ?? 'error';
      this.showMessage(st, subtitle, st === 'error' ? outcome.message : '', outcome.detail);
      return;
    }
    this.log.info(
      `Model views: snapshot of "${state.session.name}" (${Math.round(outcome.bytes / 1024)} KB): ${outcome.status}`,
    );
    const result = await this.diagnose(outcome.text, subtitle);
    if (result && !this.disposed) {
      const facts = snapshotFacts(outcome.snapshot);
      this.draw(state, result, stopSubtitle(state.session.name, state.reason, state.stoppedAt ?? new Date(), facts));
    }
  }

  /**
   * One snapshot of the paused debuggee. Data gets an "Updating…" banner (the page shows it
   * only if the update is slow); a state page is replaced by "loading" only when the snapshot
   * takes a while, so stepping through "No model has run a forward pass yet" does not flash.
   */
  private async snapshot(state: SessionState, subtitle: string): Promise<SnapshotOutcome> {
    this.showBanner(BANNERS.refreshing, null, subtitle);
    const slow = setTimeout(() => this.showBanner(BANNERS.refreshing, 'loading', subtitle), LOADING_PAGE_DELAY_MS);
    try {
      return await this.taker.take(state.session, state.threadId, state.model);
    } finally {
      clearTimeout(slow);
    }
  }

  /** The backend's view models of a snapshot; undefined (a page says why) when there are none. */
  private async diagnose(text: string, subtitle: string): Promise<DiagnoseSnapshotResult | undefined> {
    const client = this.backend.languageClient;
    if (!client) {
      this.showMessage('backend', subtitle);
      return undefined;
    }
    let result: DiagnoseSnapshotResult;
    try {
      // As text: the backend parses it once (pygls would turn every object of the params into a namedtuple).
      const params: DiagnoseSnapshotParams = { snapshot: text };
      result = await client.sendRequest<DiagnoseSnapshotResult>(DIAGNOSE_SNAPSHOT, params);
    } catch (err) {
      this.log.error(`Model views: ${DIAGNOSE_SNAPSHOT} failed: ${errorText(err)}`);
      this.showMessage('error', subtitle, `The backend could not diagnose the snapshot: ${errorText(err)}`);
      return undefined;
    }
    if (result && typeof result.status === 'string' && result.status !== 'ok') {
      // The backend could not read it (another snapshot version) or found it empty.
      const st: MessageState = result.status === 'empty' ? 'no-model' : result.status === 'inactive' ? 'no-runtime' : 'error';
      const said = typeof result.message === 'string' ? result.message : '';
      this.showMessage(st, subtitle, st === 'error' ? `The backend could not diagnose the snapshot: ${said || result.status}` : '', said);
      return undefined;
    }
    return result;
  }

  /** Both pages of a diagnosed snapshot, in every open panel. */
  private draw(state: SessionState, result: DiagnoseSnapshotResult, subtitle: string): void {
    // A stop or a resume that came in the meantime wins: its own refresh follows.
    const resumed = !isStopped(state);
    const ctx = { subtitle, banner: resumed ? BANNERS.running : null };
    const pages: Record<ViewKind, ModelPageView> = {
      gradientFlow: gradientFlowPage(result?.gradientFlow, ctx),
      shapeTrace: shapeTracePage(result?.shapeTrace, ctx),
    };
    for (const kind of VIEW_KINDS) {
      const page = pages[kind];
      if (page.kind === 'message') {
        this.data.delete(kind);
      } else {
        this.data.set(kind, page);
      }
      this.panels.get(kind)?.render(page);
    }
  }

  /**
   * Put `banner` over the data each panel shows (removing it when null); a panel without data
   * shows the `state` page instead.
   */
  private showBanner(banner: Banner | null, state: MessageState | null, subtitle?: string): void {
    for (const [kind, panel] of this.panels) {
      const data = this.data.get(kind);
      if (data) {
        const page = withBanner(data, banner);
        this.data.set(kind, page);
        panel.render(page);
      } else if (state) {
        panel.render(messagePage(kind, state, subtitle ?? ''));
      }
    }
  }

  /** A state or error page in every panel; the data of earlier stops is dropped. */
  private showMessage(state: MessageState, subtitle: string, text = '', detail = ''): void {
    this.data.clear();
    for (const [kind, panel] of this.panels) {
      panel.render(messagePage(kind, state, subtitle, text, detail));
    }
  }

  dispose(): void {
    this.disposed = true;
    clearTimeout(this.debounce);
    for (const s of this.sessions.values()) {
      clearTimeout(s.runningTimer);
    }
    for (const p of [...this.panels.values()]) {
      p.dispose();
    }
    this.panels.clear();
    this.taker.dispose();
  }
}

/**
 * The session and the variable of a Variables-view context menu argument
 * ({sessionId, container, variable: {name, evaluateName, type, ...}}); empty for the palette.
 */
function variableContext(arg: unknown): { sessionId?: string; evaluateName?: string } {
  if (!arg || typeof arg !== 'object') {
    return {};
  }
  const o = arg as { sessionId?: unknown; variable?: { evaluateName?: unknown } };
  return {
    sessionId: typeof o.sessionId === 'string' ? o.sessionId : undefined,
    evaluateName: typeof o.variable?.evaluateName === 'string' ? o.variable.evaluateName : undefined,
  };
}

/** Read through a call, so TypeScript does not narrow it across an await. */
function isStopped(state: SessionState): boolean {
  return state.stopped !== false;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
