/**
 * The backend process and its language client: start, stop, restart, and what the
 * user sees when it dies or cannot start. The only module that talks to
 * vscode-languageclient.
 */
import { execFile } from 'child_process';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  CloseAction,
  CloseHandlerResult,
  ErrorAction,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  TransportKind,
} from 'vscode-languageclient/node';
import { backendSettings, SECTION } from './config';
import { resolveInterpreter } from './interpreter';
import { describeSource, InterpreterChoice } from './interpreterChoice';
import { probeHealth, summarizeHealth } from './interpreterHealth';
import { SELECT_INTERPRETER_COMMAND } from './statusView';
import { interpretPreflight, isProblem, PreflightOutcome, PreflightProblem, PREFLIGHT_SCRIPT } from './preflightCheck';
import { SERVER_INFO, ServerInfo } from '../protocol';
import { RestartPolicy } from './restartPolicy';
import { StatusBar } from './statusBar';
import { trustEnv } from './trustPolicy';
import { DEFAULT_PING, PingEvent, PingMonitor } from './pingMonitor';
import { SerialQueue } from './serialQueue';

const PREFLIGHT_TIMEOUT_MS = 20_000;
/** globalState: interpreters whose "no torch" warning the user asked not to see again. */
const NO_TORCH_DISMISSED_KEY = 'torchDoctor.noTorchWarningDismissed';

export class Backend implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private policy: RestartPolicy;
  private stopping = false;
  private interpreter: InterpreterChoice | undefined;
  private healthRun = 0;
  /** Interpreters already warned about in this window (once is enough; the status item stays). */
  private readonly warnedNoTorch = new Set<string>();
  /** A backend that is alive but stopped answering is noticed (and restarted) by this. */
  private readonly pinger = new PingMonitor(
    () => this.languageClient?.sendRequest(SERVER_INFO, {}) ?? Promise.resolve(),
    (event, misses) => this.onPing(event, misses),
  );
  private readyDetail = '';
  /** start/stop/restart one at a time: concurrent restarts made two clients (serialQueue.ts). */
  private readonly lifecycle = new SerialQueue();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
    private readonly status: StatusBar,
  ) {
    this.policy = new RestartPolicy(backendSettings().maxRestarts);
    // Trust granted: restart, so the backend's environment and torchDoctor.python reflect it.
    context.subscriptions.push(
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log.info('The workspace is now trusted; restarting the backend so checks can run');
        void this.restart();
      }),
    );
  }

  /** The running client, for features that send requests; undefined when not ready. */
  get languageClient(): LanguageClient | undefined {
    return this.client?.state === State.Running ? this.client : undefined;
  }

  start(): Promise<void> {
    return this.lifecycle.run(() => this.startNow());
  }

  stop(): Promise<void> {
    return this.lifecycle.run(() => this.stopNow());
  }

  restart(): Promise<void> {
    return this.lifecycle.run(async () => {
      this.log.info('Restarting the backend');
      await this.stopNow();
      await this.startNow();
    });
  }

  async dispose(): Promise<void> {
    await this.stop();
  }

  private async startNow(): Promise<void> {
    this.status.set('starting', 'Starting the backend…');
    this.policy = new RestartPolicy(backendSettings().maxRestarts);
    const interpreter = await resolveInterpreter(vscode.workspace.workspaceFolders?.[0]?.uri);
    this.interpreter = interpreter;
    this.log.info(`Backend interpreter: ${interpreter.command} (${describeSource(interpreter.source)})`);
    void this.checkHealth(interpreter.command); // in parallel: the status item shows it when it comes

    const env = this.serverEnv();
    const preflight = interpretPreflight(interpreter.command, await runPreflight(interpreter.command, env), this.bundledLibs);
    if (isProblem(preflight)) {
      this.fail(preflight);
      return;
    }
    this.log.info(`Python ${preflight.version} at ${preflight.executable}`);

    this.client = this.createClient(interpreter.command, env);
    this.client.onDidChangeState((e) => this.onStateChange(e.newState));
    try {
      await this.client.start();
    } catch (err) {
      this.fail({
        message: `The Torch Doctor backend failed to start: ${errorText(err)}.`,
        fix: 'The "Torch Doctor" log has the details; then run "Torch Doctor: Restart Backend".',
      });
    }
  }

  private async stopNow(): Promise<void> {
    this.pinger.stop();
    const client = this.client;
    this.client = undefined;
    if (!client) {
      return;
    }
    this.stopping = true;
    try {
      await client.stop(5000);
    } catch (err) {
      this.log.warn(`Backend did not stop cleanly: ${errorText(err)}`);
    } finally {
      this.stopping = false;
    }
  }

  /**
   * Ask the interpreter once what it has (torch, CUDA, numpy, debugpy) and show it in the status
   * item; a missing torch is a warning with the fix. Runs with the user's own environment (not
   * the backend's PYTHONPATH), so it sees what the checks and the debuggee will see.
   */
  private async checkHealth(python: string): Promise<void> {
    const run = ++this.healthRun;
    this.status.setHealth(undefined);
    const health = await probeHealth(python, { cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath });
    if (run !== this.healthRun) {
      return; // a restart started a newer check
    }
    const summary = summarizeHealth(health);
    this.status.setHealth(summary);
    this.log.info(`Interpreter check: ${summary.lines.join('; ').replace(/`/g, '')}`);
    if (summary.warning) {
      this.log.warn(summary.warning);
      void this.warnNoTorch(health.kind === 'report' ? health.report.executable || python : python, summary.warning);
    }
  }

  private async warnNoTorch(executable: string, warning: string): Promise<void> {
    const dismissed = this.context.globalState.get<string[]>(NO_TORCH_DISMISSED_KEY, []);
    if (dismissed.includes(executable) || this.warnedNoTorch.has(executable)) {
      return;
    }
    this.warnedNoTorch.add(executable);
    const choice = await vscode.window.showWarningMessage(`Torch Doctor: ${warning}`, 'Select Interpreter', "Don't Show Again");
    if (choice === 'Select Interpreter') {
      await vscode.commands.executeCommand(SELECT_INTERPRETER_COMMAND);
    } else if (choice === "Don't Show Again") {
      await this.context.globalState.update(NO_TORCH_DISMISSED_KEY, [...dismissed, executable]);
    }
  }

  private get bundledLibs(): string {
    return this.context.asAbsolutePath(path.join('extension', 'bundled', 'libs'));
  }

  /** Bundled libraries first, so an old pygls in the user's environment cannot shadow ours. */
  private serverEnv(): NodeJS.ProcessEnv {
    const ours = [this.bundledLibs, this.context.asAbsolutePath('pybackend')];
    const existing = process.env.PYTHONPATH ? [process.env.PYTHONPATH] : [];
    return {
      ...process.env,
      PYTHONPATH: [...ours, ...existing].join(path.delimiter),
      PYTHONUNBUFFERED: '1',
      TORCHDOCTOR_LOG_LEVEL: backendSettings().logLevel,
      ...trustEnv(vscode.workspace.isTrusted),
    };
  }

  private createClient(python: string, env: NodeJS.ProcessEnv): LanguageClient {
    const serverOptions: ServerOptions = {
      command: python,
      args: ['-m', 'torchdoctor.server', '--stdio'],
      transport: TransportKind.stdio,
      options: { env, cwd: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: 'file', language: 'python' },
        { scheme: 'untitled', language: 'python' },
      ],
      outputChannel: this.log,
      synchronize: { configurationSection: SECTION },
      initializationOptions: { settings: vscode.workspace.getConfiguration(SECTION) },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
    };
    return new LanguageClient('torchDoctor', 'Torch Doctor', serverOptions, clientOptions);
  }

  /** The process ended without us asking: restart it a bounded number of times. */
  private onClosed(): CloseHandlerResult {
    if (this.stopping) {
      return { action: CloseAction.DoNotRestart, handled: true };
    }
    if (this.policy.recordCrash()) {
      const n = this.policy.recentCrashes;
      const msg = `The backend process exited unexpectedly; restarting it (${n} of ${this.policy.limit} in 3 minutes).`;
      this.log.warn(msg);
      this.status.set('restarting', msg);
      return { action: CloseAction.Restart, handled: true };
    }
    this.fail({
      message: `The Torch Doctor backend exited ${this.policy.recentCrashes} times in 3 minutes and was not restarted again.`,
      fix: 'The "Torch Doctor" log shows why; fix it, then run "Torch Doctor: Restart Backend".',
    });
    return { action: CloseAction.DoNotRestart, handled: true };
  }

  private onStateChange(state: State): void {
    if (state === State.Running) {
      void this.markReady();
    } else if (state === State.Starting) {
      this.status.set('starting', 'Starting the backend…');
    }
  }

  private async markReady(): Promise<void> {
    const client = this.client;
    const where = this.interpreter ? `${this.interpreter.command} (${describeSource(this.interpreter.source)})` : '';
    let detail = `running on ${where}.`;
    try {
      const info = await client?.sendRequest<ServerInfo>(SERVER_INFO, {});
      if (info) {
        detail = `version ${info.version}, pid ${info.pid}, Python ${info.pythonVersion} at ${info.python}.`;
        this.log.info(`Backend ready: ${detail}`);
      }
    } catch (err) {
      this.log.warn(`Backend did not answer ${SERVER_INFO}: ${errorText(err)}`);
    }
    this.readyDetail = `Backend ${detail}`;
    this.status.set('ready', this.readyDetail);
    this.pinger.start();
  }

  private onPing(event: PingEvent, misses: number): void {
    const waited = Math.round((misses * DEFAULT_PING.timeoutMs) / 1000);
    if (event === 'recovered') {
      this.log.info(`The backend answers again (after ${misses} unanswered ping${misses > 1 ? 's' : ''})`);
      this.status.set('ready', this.readyDetail);
    } else if (event === 'unresponsive') {
      const msg = `The backend is running but has not answered for ${waited} s (busy or stuck).`;
      this.log.warn(msg);
      this.status.set('error', `${msg} It is restarted if it stays silent.`);
    } else {
      this.log.error(`The backend has not answered ${misses} pings in a row (${waited} s): restarting it`);
      this.status.set('restarting', 'The backend stopped answering; restarting it…');
      void this.restart();
    }
  }

  private fail(problem: PreflightProblem): void {
    this.log.error(`${problem.message} ${problem.fix}`);
    this.status.set('error', `${problem.message}\n\n${problem.fix}`);
    const pick = problem.setting === 'torchDoctor.python' ? ['Select Interpreter'] : [];
    const actions = problem.setting ? ['Open Settings', ...pick, 'Show Log'] : ['Show Log'];
    void vscode.window.showErrorMessage(`${problem.message} ${problem.fix}`, ...actions).then((choice) => {
      if (choice === 'Select Interpreter') {
        void vscode.commands.executeCommand(SELECT_INTERPRETER_COMMAND);
      } else if (choice === 'Open Settings' && problem.setting) {
        void vscode.commands.executeCommand('workbench.action.openSettings', problem.setting);
      } else if (choice === 'Show Log') {
        this.log.show(true);
      }
    });
  }
}

function runPreflight(python: string, env: NodeJS.ProcessEnv): Promise<PreflightOutcome> {
  return new Promise((resolve) => {
    execFile(python, ['-c', PREFLIGHT_SCRIPT], { env, timeout: PREFLIGHT_TIMEOUT_MS }, (err, stdout, stderr) => {
      const code = (err as NodeJS.ErrnoException | null)?.code;
      resolve({
        spawnError: typeof code === 'string' ? code : undefined,
        exitCode: typeof code === 'number' ? code : err ? null : 0,
        stdout: String(stdout),
        stderr: String(stderr),
      });
    });
  });
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
