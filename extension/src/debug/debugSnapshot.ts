/**
 * One snapshot of the model from a paused debuggee: what the runtime recorded in the most
 * recent forward and backward (module shapes, activation and gradient statistics).
 *
 * Payloads can be large (hundreds of layers), and debugger value strings are truncated, so the
 * data does not travel as an evaluate result. Instead the extension evaluates, in the paused
 * frame,
 *
 *     __import__('torchdoctor.runtime.snapshot', fromlist=['_']).dump("<private temp file>")
 *
 * which writes the collection as JSON and answers a short status string; the extension reads
 * the file (size-limited), parses it and deletes it. The file lives in a directory of its own,
 * created once per extension run under os.tmpdir() with mode 0700, and removed on dispose. The
 * expression carries nothing but a JSON-quoted path this module made itself.
 *
 * No `vscode` import at run time (only types): tests drive it with a fake session.
 */
import { randomUUID } from 'crypto';
import { promises as fsp, rmSync } from 'fs';
import * as os from 'os';
import * as path from 'path';

/** What is needed of a vscode.DebugSession. */
export interface SnapshotSession {
  readonly id: string;
  readonly type: string;
  readonly name: string;
  customRequest(command: string, args?: unknown): Thenable<unknown>;
}

export type SnapshotProblem =
  /** The program runs (or the thread is gone): nothing to evaluate in. */
  | 'not-paused'
  /** The runtime has recorded no forward pass yet. */
  | 'no-model'
  /** torchdoctor.runtime.snapshot cannot be imported in the debuggee. */
  | 'no-runtime'
  /** The evaluate request failed some other way; the message is the adapter's, verbatim. */
  | 'evaluate-error'
  /** The dump said it wrote a file, and no file is here (a remote debuggee). */
  | 'no-file'
  | 'too-large'
  | 'unreadable'
  | 'timeout';

export type SnapshotOutcome =
  /** snapshot: the parsed file; text: the file as written (what the backend is sent). */
  | { ok: true; snapshot: unknown; text: string; status: string; threadId: number; frameId: number; bytes: number }
  | { ok: false; problem: SnapshotProblem; message: string; detail: string };

export const SNAPSHOT_MODULE = 'torchdoctor.runtime.snapshot';
/** Larger than any model's collection should be (a few KB per module); a clear error above. */
export const MAX_SNAPSHOT_BYTES = 50 * 1024 * 1024;
/** How long the debuggee may take to write the snapshot. */
export const DUMP_TIMEOUT_MS = 30_000;

export const MESSAGES = {
  notPaused: 'The program is not paused. The views refresh when it stops at a breakpoint, an exception or a pause.',
  noModel:
    'No model has run a forward pass yet. Step past the first forward (and a backward, for the gradients), then look again.',
  noRuntime:
    'The Torch Doctor runtime is not loaded in this session: start it with a torchdoctor launch configuration ("type": "torchdoctor" in launch.json).',
} as const;

/**
 * The expression evaluated in the paused frame. `file` is JSON-quoted, which is a valid Python
 * string literal; `model`, when given, must pass isSimpleReference (a variable's evaluateName).
 */
export function dumpExpression(file: string, model?: string): string {
  const args = [JSON.stringify(file)];
  if (model !== undefined) {
    if (!isSimpleReference(model)) {
      throw new Error(`not a plain variable reference: ${model}`);
    }
    args.push(model);
  }
  return `__import__('${SNAPSHOT_MODULE}', fromlist=['_']).dump(${args.join(', ')})`;
}

/**
 * Whether `expr` only names a value: `model`, `self.net`, `models[0]`, `nets['enc']`: names,
 * attributes, and integer or plain string subscripts, as debugpy writes a variable's
 * evaluateName. Nothing that calls, operates or spans lines is ever evaluated.
 */
export function isSimpleReference(expr: string): boolean {
  return (
    expr.length <= 200 &&
    /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*|\[-?\d+\]|\['[A-Za-z0-9_. -]*'\]|\["[A-Za-z0-9_. -]*"\])*$/.test(expr)
  );
}

/**
 * The text of a Python `repr()` of a str, as debugpy answers an evaluate of a str value
 * (`'ok: 3 modules'`); anything that is not a quoted literal comes back as it is.
 */
export function unquotePythonStr(repr: string): string {
  const m = /^([rRbBuU]*)(['"])([\s\S]*)\2$/.exec(repr.trim());
  if (!m) {
    return repr;
  }
  const raw = /r/i.test(m[1]);
  const body = m[3];
  if (raw) {
    return body;
  }
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[\\'"abfnrtv0]|\n)/g, (_all, e: string) => {
    switch (e[0]) {
      case 'x':
      case 'u':
      case 'U':
        return String.fromCodePoint(parseInt(e.slice(1), 16));
      case 'n':
        return '\n';
      case 't':
        return '\t';
      case 'r':
        return '\r';
      case 'a':
        return '\x07';
      case 'b':
        return '\b';
      case 'f':
        return '\f';
      case 'v':
        return '\v';
      case '0':
        return '\0';
      case '\n':
        return '';
      default:
        return e;
    }
  });
}

/** The last line of a Python traceback ("ValueError: ..."), or the whole text when it is not one. */
export function lastTracebackLine(text: string): string {
  const lines = text.trimEnd().split(/\r?\n/);
  if (!/^Traceback \(most recent call last\)/.test(lines[0] ?? '')) {
    return text.trim();
  }
  // The exception line is the first unindented line after the frames; a message may span lines.
  let i = lines.length - 1;
  for (let k = 1; k < lines.length; k++) {
    if (!/^\s/.test(lines[k]) && lines[k] !== '') {
      i = k;
      break;
    }
  }
  return lines.slice(i).join('\n').trim();
}

/** What an evaluate error (the adapter's message) means for the views. */
export function classifyEvaluateError(message: string): { problem: SnapshotProblem; message: string; detail: string } {
  const text = message || 'The evaluate request failed without a message.';
  if (/No module named '?torchdoctor(\.runtime(\.snapshot)?)?'?/.test(text) || /cannot import name .*snapshot/i.test(text)) {
    return { problem: 'no-runtime', message: MESSAGES.noRuntime, detail: text };
  }
  if (
    /Unable to find thread for evaluation|not (suspended|paused|stopped)|Thread .* (is )?(running|not found)|disconnected unexpectedly|Invalid frame|frame .* not found/i.test(
      text,
    )
  ) {
    return { problem: 'not-paused', message: MESSAGES.notPaused, detail: text };
  }
  return { problem: 'evaluate-error', message: lastTracebackLine(text), detail: text };
}

/**
 * What a snapshot (or, without a file, the dump's status line) says: `ok`, `empty` (no model has
 * run a forward), `inactive` (the collection is not running) or `error`, and its own sentence.
 * The runtime's status line is "ok 12 modules 20 params", "empty: no model seen yet: ...",
 * "inactive: ...", "error: ..." (torchdoctor/runtime/snapshot.py).
 */
export function snapshotStatus(snapshot: unknown, statusLine: string): { status: string; message: string } {
  const o = snapshot && typeof snapshot === 'object' ? (snapshot as Record<string, unknown>) : null;
  if (o && typeof o.status === 'string') {
    return { status: o.status, message: typeof o.message === 'string' ? o.message : '' };
  }
  const m = /^\s*(ok|empty|inactive|error)\b:?\s*([\s\S]*)$/.exec(statusLine);
  return m ? { status: m[1], message: m[2].trim() } : { status: statusLine ? 'unknown' : 'empty', message: statusLine };
}

/** Outcome for a snapshot whose status is not `ok`. */
export function problemForStatus(status: string, message: string, statusLine: string): SnapshotOutcome & { ok: false } {
  switch (status) {
    case 'empty':
      return { ok: false, problem: 'no-model', message: MESSAGES.noModel, detail: message || statusLine };
    case 'inactive':
      return { ok: false, problem: 'no-runtime', message: MESSAGES.noRuntime, detail: message || statusLine };
    default:
      return {
        ok: false,
        problem: 'evaluate-error',
        message: `The runtime could not take the snapshot: ${message || statusLine || 'no reason given'}`,
        detail: statusLine,
      };
  }
}

function errorText(err: unknown): string {
  if (err instanceof Error) {
    return err.message;
  }
  if (err && typeof err === 'object' && typeof (err as { message?: unknown }).message === 'string') {
    return (err as { message: string }).message;
  }
  return String(err);
}

function withTimeout<T>(p: Thenable<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(TIMED_OUT), ms);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}
const TIMED_OUT = Symbol('timed out');

function formatMb(bytes: number): string {
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** Takes snapshots through one private temp directory; dispose() removes the directory. */
export class SnapshotTaker {
  private dir: Promise<string> | undefined;
  private dirPath: string | undefined;
  private disposed = false;

  constructor(
    private readonly options: { maxBytes?: number; timeoutMs?: number; tmpRoot?: string } = {},
  ) {}

  /** The private directory (created on first use, 0700). */
  directory(): Promise<string> {
    if (!this.dir) {
      this.dir = (async () => {
        const dir = await fsp.mkdtemp(path.join(this.options.tmpRoot ?? os.tmpdir(), 'torchdoctor-'));
        await fsp.chmod(dir, 0o700);
        if (this.disposed) {
          rmSync(dir, { recursive: true, force: true });
          throw new Error('Torch Doctor is shutting down.');
        }
        this.dirPath = dir;
        return dir;
      })();
      this.dir.catch(() => {
        this.dir = undefined; // try again next time
      });
    }
    return this.dir;
  }

  /**
   * The top frame of `threadId` (or, without one, of the first thread that has a frame).
   * debugpy answers stackTrace for a running thread too, so a frame here does not prove the
   * program is paused: the evaluate says that.
   */
  async topFrame(session: SnapshotSession, threadId?: number): Promise<{ threadId: number; frameId: number } | null> {
    let ids: number[] = [];
    if (threadId !== undefined) {
      ids = [threadId];
    } else {
      try {
        const body = (await session.customRequest('threads')) as { threads?: { id?: unknown }[] } | undefined;
        ids = (body?.threads ?? []).map((t) => t.id).filter((id): id is number => typeof id === 'number');
      } catch {
        return null;
      }
    }
    for (const id of ids) {
      try {
        const body = (await session.customRequest('stackTrace', { threadId: id, startFrame: 0, levels: 1 })) as
          | { stackFrames?: { id?: unknown }[] }
          | undefined;
        const frameId = body?.stackFrames?.[0]?.id;
        if (typeof frameId === 'number') {
          return { threadId: id, frameId };
        }
      } catch {
        // a thread that ended or is running: try the next
      }
    }
    return null;
  }

  /**
   * Dump, read, parse and delete one snapshot of `session`, paused in `threadId` (when known).
   * `model`: a variable reference (evaluateName) naming the model to show instead of the
   * runtime's choice; when the paused frame cannot evaluate it, the runtime's choice is taken.
   */
  async take(session: SnapshotSession, threadId?: number, model?: string): Promise<SnapshotOutcome> {
    if (model !== undefined && isSimpleReference(model)) {
      const focused = await this.takeOnce(session, threadId, model);
      if (focused.ok || focused.problem !== 'evaluate-error' || !/\b(NameError|AttributeError|KeyError|IndexError)\b/.test(focused.detail)) {
        return focused;
      }
    }
    return this.takeOnce(session, threadId);
  }

  private async takeOnce(session: SnapshotSession, threadId?: number, model?: string): Promise<SnapshotOutcome> {
    const frame = await this.topFrame(session, threadId);
    if (!frame) {
      return { ok: false, problem: 'not-paused', message: MESSAGES.notPaused, detail: 'No thread has a stack frame.' };
    }
    const file = path.join(await this.directory(), `snapshot-${randomUUID()}.json`);
    try {
      const said = await this.evaluateDump(session, frame.frameId, file, model);
      return typeof said === 'string' ? await this.readSnapshot(file, said, frame) : said;
    } finally {
      await fsp.rm(file, { force: true }).catch(() => undefined);
    }
  }

  /** Ask the paused program to write the snapshot to `file`: the runtime's status line, or why not. */
  private async evaluateDump(
    session: SnapshotSession,
    frameId: number,
    file: string,
    model?: string,
  ): Promise<string | SnapshotOutcome> {
    let answer: unknown;
    try {
      answer = await withTimeout(
        session.customRequest('evaluate', { expression: dumpExpression(file, model), frameId, context: 'repl' }),
        this.options.timeoutMs ?? DUMP_TIMEOUT_MS,
      );
    } catch (err) {
      return { ok: false, ...classifyEvaluateError(errorText(err)) };
    }
    if (answer === TIMED_OUT) {
      const s = Math.round((this.options.timeoutMs ?? DUMP_TIMEOUT_MS) / 1000);
      return {
        ok: false,
        problem: 'timeout',
        message: `The program did not answer within ${s} s while writing the snapshot.`,
        detail: '',
      };
    }
    const body = answer as { result?: unknown } | undefined;
    return unquotePythonStr(typeof body?.result === 'string' ? body.result : '');
  }

  /** The snapshot file the runtime wrote, checked: there, under the size limit, a JSON object, "ok". */
  private async readSnapshot(
    file: string,
    statusLine: string,
    frame: { threadId: number; frameId: number },
  ): Promise<SnapshotOutcome> {
    let size: number;
    try {
      size = (await fsp.stat(file)).size;
    } catch {
      const said = snapshotStatus(null, statusLine);
      if (said.status !== 'ok' && said.status !== 'unknown') {
        return problemForStatus(said.status, said.message, statusLine);
      }
      return {
        ok: false,
        problem: 'no-file',
        message:
          `The runtime answered "${statusLine}" but no snapshot file appeared here. ` +
          'Is the program running on another machine or in a container? The views need it on this one.',
        detail: file,
      };
    }
    const limit = this.options.maxBytes ?? MAX_SNAPSHOT_BYTES;
    if (size > limit) {
      return {
        ok: false,
        problem: 'too-large',
        message: `The snapshot is ${formatMb(size)}, over the ${formatMb(limit)} limit; it was not read.`,
        detail: statusLine,
      };
    }
    let snapshot: unknown;
    let text: string;
    try {
      text = await fsp.readFile(file, 'utf8');
      snapshot = JSON.parse(text);
    } catch (err) {
      return { ok: false, problem: 'unreadable', message: `The snapshot file could not be read as JSON: ${errorText(err)}`, detail: statusLine };
    }
    if (snapshot === null || typeof snapshot !== 'object' || Array.isArray(snapshot)) {
      return { ok: false, problem: 'unreadable', message: 'The snapshot file does not hold a JSON object.', detail: statusLine };
    }
    const said = snapshotStatus(snapshot, statusLine);
    if (said.status !== 'ok') {
      return problemForStatus(said.status, said.message, statusLine);
    }
    return { ok: true, snapshot, text, status: statusLine, threadId: frame.threadId, frameId: frame.frameId, bytes: size };
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    if (this.dirPath) {
      rmSync(this.dirPath, { recursive: true, force: true });
      this.dirPath = undefined;
    }
  }
}
