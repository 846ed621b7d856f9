/**
 * The training monitor's channel, debuggee → extension (docs/monitor.md, "Channel"): one
 * `{"hello": ...}` line with the session's token, then one JSON object per line, `{"batch": ...}`
 * at most every 250 ms and `{"end": ...}` before exit. Everything here is checked field by field:
 * a bad field is dropped (a step without a number for `step` is dropped whole), never trusted.
 * Pure logic, no `vscode` import.
 */
import { timingSafeEqual } from 'node:crypto';

export const WIRE_VERSION = 1;
/** A longer line is refused and the connection closed (a batch of 250 ms is far smaller). */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;

export interface Hello {
  pid: number | null;
  rank: number | null;
  /** WORLD_SIZE of a torchrun rank (how many ranks to compare); null for one process or an older recorder. */
  world_size: number | null;
  script: string | null;
  version: number;
}

export type StepTimes = Partial<Record<'data' | 'forward' | 'backward' | 'optimizer' | 'other', number>>;

export interface Step {
  step: number;
  series: string;
  t: number | null;
  loss: number | null;
  lr: number[];
  grad_norm: number | null;
  grad_norm_clipped: number | null;
  update_ratio: number[] | null;
  time: StepTimes;
  samples_per_s: number | null;
  rss: number | null;
  cuda: { allocated: number | null; reserved: number | null; peak: number | null } | null;
}

export interface Eval {
  step: number;
  loss: number;
}

export interface UserPoint {
  name: string;
  step: number;
  value: number;
}

export type Severity = 'info' | 'warning' | 'error';

export interface Finding {
  kind: string;
  severity: Severity;
  step: number | null;
  sentence: string;
  where: { path: string; line: number } | null;
  /** The step series it is about ("opt0"...; "" run-wide). */
  series: string;
}

export interface Batch {
  steps: Step[];
  evals: Eval[];
  user: UserPoint[];
  findings: Finding[];
  dropped: number;
}

export type Message = { kind: 'batch'; batch: Batch } | { kind: 'end'; steps: number; dropped: number };

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A finite number, else null (JSON has no NaN: the recorder sends null, or a string by mistake). */
function num(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) ? v : null;
}

function int(v: unknown): number | null {
  const n = num(v);
  return n !== null && Number.isInteger(n) ? n : null;
}

function str(v: unknown, max = 4096): string | null {
  return typeof v === 'string' ? v.slice(0, max) : null;
}

function numList(v: unknown, max = 64): number[] {
  return Array.isArray(v) ? v.slice(0, max).map((x) => num(x) ?? Number.NaN) : [];
}

function list(v: unknown, max: number): unknown[] {
  return Array.isArray(v) ? v.slice(0, max) : [];
}

/**
 * The hello line: checked against the session's token (constant time). undefined: not a
 * hello, or the wrong token; the caller closes the connection.
 */
export function parseHello(line: string, token: string): Hello | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObj(raw) || !isObj(raw.hello)) {
    return undefined;
  }
  const h = raw.hello;
  if (typeof h.token !== 'string' || !sameToken(h.token, token)) {
    return undefined;
  }
  return { pid: int(h.pid), rank: int(h.rank), world_size: int(h.world_size), script: str(h.script), version: int(h.version) ?? WIRE_VERSION };
}

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A line after the hello; undefined when it is neither a batch nor an end. */
export function parseMessage(line: string): Message | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!isObj(raw)) {
    return undefined;
  }
  if (isObj(raw.batch)) {
    return { kind: 'batch', batch: parseBatch(raw.batch) };
  }
  if (isObj(raw.end)) {
    return { kind: 'end', steps: int(raw.end.steps) ?? 0, dropped: int(raw.end.dropped) ?? 0 };
  }
  return undefined;
}

export function parseBatch(b: Obj): Batch {
  const keep = <T>(xs: (T | undefined)[]): T[] => xs.filter((x): x is T => x !== undefined);
  return {
    steps: keep(list(b.steps, 100_000).map(parseStep)),
    evals: keep(
      list(b.evals, 10_000).map((e) => {
        const step = isObj(e) ? int(e.step) : null;
        const loss = isObj(e) ? num(e.loss) : null;
        return step !== null && loss !== null ? { step, loss } : undefined;
      }),
    ),
    user: keep(
      list(b.user, 100_000).map((u) => {
        if (!isObj(u)) {
          return undefined;
        }
        const name = str(u.name, 200);
        const step = int(u.step);
        const value = num(u.value);
        return name && step !== null && value !== null ? { name, step, value } : undefined;
      }),
    ),
    findings: keep(list(b.findings, 1000).map(parseFinding)),
    dropped: int(b.dropped) ?? 0,
  };
}

export function parseStep(v: unknown): Step | undefined {
  if (!isObj(v)) {
    return undefined;
  }
  const step = int(v.step);
  if (step === null) {
    return undefined;
  }
  const time: StepTimes = {};
  if (isObj(v.time)) {
    for (const k of ['data', 'forward', 'backward', 'optimizer', 'other'] as const) {
      const t = num(v.time[k]);
      if (t !== null) {
        time[k] = t;
      }
    }
  }
  const cuda = isObj(v.cuda)
    ? { allocated: num(v.cuda.allocated), reserved: num(v.cuda.reserved), peak: num(v.cuda.peak) }
    : null;
  return {
    step,
    series: str(v.series, 100) || 'opt0',
    t: num(v.t),
    loss: num(v.loss),
    lr: numList(v.lr),
    grad_norm: num(v.grad_norm),
    grad_norm_clipped: num(v.grad_norm_clipped),
    update_ratio: Array.isArray(v.update_ratio) ? numList(v.update_ratio) : null,
    time,
    samples_per_s: num(v.samples_per_s),
    rss: num(v.rss),
    cuda,
  };
}

const SEVERITIES: Severity[] = ['info', 'warning', 'error'];

export function parseFinding(v: unknown): Finding | undefined {
  if (!isObj(v)) {
    return undefined;
  }
  const kind = str(v.kind, 100);
  const sentence = str(v.sentence, 2000);
  if (!kind || !sentence) {
    return undefined;
  }
  const severity = SEVERITIES.includes(v.severity as Severity) ? (v.severity as Severity) : 'warning';
  let where: Finding['where'] = null;
  if (isObj(v.where)) {
    const path = str(v.where.path);
    const line = int(v.where.line);
    where = path && line !== null && line > 0 ? { path, line } : null;
  }
  return { kind, severity, step: int(v.step), sentence, where, series: str(v.series, 100) ?? '' };
}
