/**
 * The training monitor on the extension side: a channel server and a JobStore (a RunStore per
 * rank; one for a single process) per torchdoctor launch (armed from debugConfiguration.ts through `prepareMonitor`), the session's pause and
 * resume from the debug adapter's messages, the "Torch Doctor: Training" panel (opened by itself
 * once the run has a curve, openRule.ts, when torchDoctor.monitor.openOnFirstStep is on; by the
 * command at any time), redrawn every RENDER_INTERVAL_MS
 * while data flows and at once at a pause), Export CSV, and the last run kept after its session
 * ends (in memory, and on disk so it survives a reload). A torchrun job draws one rank, rank 0
 * unless the page's rank picker chose another (kept per run); CSV and verdicts follow that rank.
 */
import * as vscode from 'vscode';
import { ChannelServer } from './channelServer';
import { csvFileName, runCsv } from './csvExport';
import { MonitorDefaults, monitorEnv, normalizeMonitor } from './monitorConfig';
import { MonitorPanel } from './monitorPanel';
import { JobStore, pickRank } from './jobStore';
import { buildJobView, MonitorView } from './monitorView';
import { jobHasCurve } from './openRule';

export const RENDER_INTERVAL_MS = 500;
/** A prepared channel that no session claims in this time is closed (the launch failed). */
const UNCLAIMED_MS = 120_000;
/** After the session ends, the end line and the last batch may still be on their way. */
const END_GRACE_MS = 1500;
export const MONITOR_ID_KEY = 'torchDoctorMonitorId';
const LAST_RUN_FILE = 'monitor-last-run.json';
const RESUMING = new Set(['continue', 'next', 'stepIn', 'stepOut', 'stepBack', 'reverseContinue', 'goto', 'restartFrame']);

interface Run {
  id: string;
  server: ChannelServer;
  job: JobStore;
  /** The rank the picker chose; null: the default (rank 0). */
  rank: number | null;
  session?: vscode.DebugSession;
  unclaimed?: NodeJS.Timeout;
  sawStep: boolean;
  /** The run had a curve to draw (openRule.ts): the view opened by itself then, if it was to. */
  sawCurve: boolean;
}

let controller: MonitorController | undefined;

/** The monitor's environment for a torchdoctor launch, or {} when it is off. Throws on a bad "monitor". */
export async function prepareMonitor(config: vscode.DebugConfiguration, folder?: vscode.WorkspaceFolder): Promise<Record<string, string>> {
  return controller ? controller.prepare(config, folder) : {};
}

export function registerMonitor(context: vscode.ExtensionContext, log: vscode.LogOutputChannel): void {
  const c = new MonitorController(context, log);
  controller = c;
  context.subscriptions.push(
    c,
    { dispose: () => (controller = undefined) },
    vscode.commands.registerCommand('torchDoctor.monitor.show', () => c.show()),
    vscode.commands.registerCommand('torchDoctor.monitor.exportCsv', () => c.exportCsv()),
    vscode.debug.onDidStartDebugSession((s) => c.claim(s)),
    vscode.debug.onDidTerminateDebugSession((s) => c.terminated(s)),
    vscode.debug.registerDebugAdapterTrackerFactory('torchdoctor', {
      createDebugAdapterTracker: (s) => c.tracker(s),
    }),
  );
}

/** The verdict thresholds with a torchDoctor.monitor.* setting each (the recorder's names and defaults). */
export const THRESHOLD_SETTINGS = [
  'inputBoundFraction',
  'overfittingEvals',
  'overfittingRise',
  'updateRatioHigh',
  'updateRatioLow',
  'memoryGrowthBytes',
  'memoryWindow',
  'cudaMemoryHigh',
  'spikeFactor',
  'cpuBatchFraction',
  'cpuBatchCopyShare',
];

function settings(folder?: vscode.WorkspaceFolder): MonitorDefaults & { openOnFirstStep: boolean } {
  const cfg = vscode.workspace.getConfiguration('torchDoctor.monitor', folder?.uri);
  // Only the thresholds the user set: the recorder owns the defaults.
  const thresholds: Record<string, number> = {};
  for (const key of THRESHOLD_SETTINGS) {
    const i = cfg.inspect<number>(key);
    const set = i?.workspaceFolderValue ?? i?.workspaceValue ?? i?.globalValue;
    if (typeof set === 'number') {
      thresholds[key] = set;
    }
  }
  return {
    enable: cfg.get<boolean>('enable', true),
    every: cfg.get<number>('every', 10),
    thresholds,
    openOnFirstStep: cfg.get<boolean>('openOnFirstStep', true),
  };
}

class MonitorController implements vscode.Disposable {
  private readonly runs = new Map<string, Run>();
  private panel: MonitorPanel | undefined;
  /** The run the panel shows: the latest that sent a step. */
  private shown: Run | undefined;
  private lastView: MonitorView | undefined;
  private timer: NodeJS.Timeout | undefined;
  private nextId = 1;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  async prepare(config: vscode.DebugConfiguration, folder?: vscode.WorkspaceFolder): Promise<Record<string, string>> {
    const s = settings(folder);
    const armed = normalizeMonitor(config.monitor, s);
    if (!armed || config.request !== 'launch') {
      return {};
    }
    const id = `${process.pid}-${this.nextId++}`;
    const job = new JobStore(String(config.name ?? 'debug session'), Date.now());
    job.cwd = typeof config.cwd === 'string' && config.cwd ? config.cwd : (folder?.uri.fsPath ?? null);
    const run: Run = { id, job, rank: null, sawStep: false, sawCurve: false, server: undefined as unknown as ChannelServer };
    run.server = new ChannelServer(job, {
      onData: () => this.onData(run),
      onLog: (m) => this.log.info(m),
    });
    const address = await run.server.start();
    run.unclaimed = setTimeout(() => this.drop(run), UNCLAIMED_MS);
    this.runs.set(id, run);
    config[MONITOR_ID_KEY] = id;
    this.log.info(`Debug session "${config.name}": training monitor on 127.0.0.1:${address.port}`);
    return monitorEnv(armed, address);
  }

  claim(session: vscode.DebugSession): void {
    const run = this.runs.get(session.configuration[MONITOR_ID_KEY]);
    if (run && !run.session) {
      run.session = session;
      clearTimeout(run.unclaimed);
    }
  }

  terminated(session: vscode.DebugSession): void {
    const run = this.runOf(session);
    if (!run || run.session !== session) {
      return;
    }
    setTimeout(() => {
      run.job.setState('ended', Date.now());
      run.server.close();
      this.runs.delete(run.id);
      if (run === this.shown) {
        this.renderNow();
        // A run without a curve (one backward of a script that inspects tensors, a crash before the
        // second step) is not kept in place of the last training run: that one stays for next time.
        if (run.sawCurve) {
          void this.saveLastRun();
        } else {
          this.log.info(`Training monitor: "${run.job.name}" ended without a curve; the last run kept is unchanged`);
        }
      }
    }, END_GRACE_MS);
  }

  tracker(session: vscode.DebugSession): vscode.DebugAdapterTracker {
    const set = (state: 'paused' | 'running') => {
      const run = this.runOf(session);
      if (run && run.job.debuggerMoved(state, Date.now()) && run === this.shown) {
        this.renderNow();
      }
    };
    return {
      onDidSendMessage: (m: { type?: string; event?: string }) => {
        if (m.type === 'event' && m.event === 'stopped') {
          set('paused');
        } else if (m.type === 'event' && m.event === 'continued') {
          set('running');
        }
      },
      onWillReceiveMessage: (m: { type?: string; command?: string }) => {
        if (m.type === 'request' && m.command && RESUMING.has(m.command)) {
          set('running');
        }
      },
    };
  }

  async show(): Promise<void> {
    if (!this.shown && !this.lastView) {
      this.lastView = await this.loadLastRun();
    }
    this.ensurePanel().reveal();
    this.renderNow();
  }

  async exportCsv(): Promise<void> {
    // The rank drawn now (the picker's, else rank 0): the CSV holds what the view shows.
    const job = this.shown?.job;
    const drawn = job ? pickRank(job.ranks, this.shown!.rank) : null;
    const store = drawn === null ? undefined : job?.store(drawn);
    const rank = job && job.ranks.length > 1 ? drawn : null;
    if (!store) {
      void vscode.window.showInformationMessage('Torch Doctor: no training run to export yet (debug a training script first).');
      return;
    }
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      defaultUri: folder ? vscode.Uri.joinPath(folder, csvFileName(store.info.name, rank)) : undefined,
      filters: { CSV: ['csv'] },
      title: 'Export the training run as CSV',
    });
    if (!target) {
      return;
    }
    await vscode.workspace.fs.writeFile(target, Buffer.from(runCsv(store), 'utf8'));
    const of = rank === null ? '' : ` of rank ${rank}`;
    void vscode.window.showInformationMessage(`Torch Doctor: exported ${store.steps} steps${of} to ${target.fsPath}.`);
  }

  /** The page's rank picker: draw that rank from now on (this run only). */
  chooseRank(rank: number): void {
    if (this.shown) {
      this.shown.rank = rank;
      this.renderNow();
    }
  }

  dispose(): void {
    clearTimeout(this.timer);
    for (const run of this.runs.values()) {
      clearTimeout(run.unclaimed);
      run.server.close();
    }
    this.runs.clear();
    this.panel?.dispose();
  }

  /** The run of a session or of the session it was started from (a DataLoader worker, a rank). */
  private runOf(session: vscode.DebugSession | undefined): Run | undefined {
    for (let s = session; s; s = s.parentSession) {
      const run = this.runs.get(s.configuration[MONITOR_ID_KEY]);
      if (run) {
        return run;
      }
    }
    return undefined;
  }

  private onData(run: Run): void {
    const first = !run.sawStep && run.job.lastStep !== null;
    if (first) {
      run.sawStep = true;
      this.shown = run;
    }
    // Opened by itself once per run, when the run has a curve (openRule.ts): one backward() of a
    // script that only inspects tensors is no training run to pop up beside the editor.
    const curve = run.sawStep && !run.sawCurve && jobHasCurve(run.job.ranks.map((r) => run.job.store(r)));
    if (curve) {
      run.sawCurve = true;
      this.shown = run;
      if (settings(run.session?.workspaceFolder).openOnFirstStep && (!this.panel || this.panel.isDisposed)) {
        this.ensurePanel();
      }
    }
    if (first || curve) {
      this.renderNow();
      return;
    }
    if (run === this.shown && !this.timer) {
      this.timer = setTimeout(() => this.renderNow(), RENDER_INTERVAL_MS);
    }
  }

  private ensurePanel(): MonitorPanel {
    if (!this.panel || this.panel.isDisposed) {
      this.panel = new MonitorPanel(this.context.extensionUri, {
        exportCsv: () => this.exportCsv(),
        chooseRank: (rank) => this.chooseRank(rank),
        log: this.log,
      });
    }
    return this.panel;
  }

  private renderNow(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.shown) {
      this.lastView = buildJobView(this.shown.job, this.shown.rank) ?? this.lastView;
    }
    if (this.lastView && this.panel && !this.panel.isDisposed) {
      this.panel.render(this.lastView);
    }
  }

  private drop(run: Run): void {
    if (!run.session) {
      run.server.close();
      this.runs.delete(run.id);
    }
  }

  private async saveLastRun(): Promise<void> {
    if (!this.lastView) {
      return;
    }
    try {
      const dir = this.context.globalStorageUri;
      await vscode.workspace.fs.createDirectory(dir);
      await vscode.workspace.fs.writeFile(vscode.Uri.joinPath(dir, LAST_RUN_FILE), Buffer.from(JSON.stringify(this.lastView)));
    } catch (err) {
      this.log.warn(`Training monitor: could not keep the last run: ${(err as Error).message}`);
    }
  }

  private async loadLastRun(): Promise<MonitorView | undefined> {
    try {
      const bytes = await vscode.workspace.fs.readFile(vscode.Uri.joinPath(this.context.globalStorageUri, LAST_RUN_FILE));
      return JSON.parse(Buffer.from(bytes).toString('utf8')) as MonitorView;
    } catch {
      return undefined;
    }
  }
}
