/**
 * Everything the view knows about one training run: a bounded Track per step series (one per
 * optimizer; "backward" when there is none), the validation losses, the user's series
 * (torchdoctor.log, SummaryWriter.add_scalar), the findings (one per kind, the latest wins), the
 * dropped count and where the run is (running, paused, ended). Fixed memory however long the run.
 * Pure logic, no `vscode` import.
 */
import { DEFAULT_LIMITS, Track, TrackLimits } from './track';
import { Batch, Finding, Hello, Step } from './wire';

/** Parameter groups drawn per series (learning rate, update ratio); more are rare and not drawn. */
export const MAX_GROUPS = 8;
const TIME_PARTS = ['data', 'forward', 'backward', 'optimizer', 'other'] as const;

export const STEP_COLUMNS: readonly string[] = [
  'loss',
  'grad_norm',
  'grad_norm_clipped',
  'samples_per_s',
  'rss',
  'cuda_allocated',
  'cuda_reserved',
  'cuda_peak',
  ...TIME_PARTS.map((p) => `time_${p}`),
  ...Array.from({ length: MAX_GROUPS }, (_, g) => `lr${g}`),
  ...Array.from({ length: MAX_GROUPS }, (_, g) => `update_ratio${g}`),
];
const COL = new Map(STEP_COLUMNS.map((c, i) => [c, i]));
const C = (name: string): number => COL.get(name)!;
/** Step series and user series kept at most; more are counted, not stored. */
export const MAX_SERIES = 16;
export const MAX_USER_SERIES = 32;

export type RunState = 'waiting' | 'running' | 'paused' | 'ended';

export interface RunInfo {
  /** The launch configuration's name. */
  name: string;
  /** Unix ms. */
  started: number;
  ended: number | null;
  state: RunState;
  hello: Hello | null;
  /** The program's working directory: a finding's relative path is relative to it. */
  cwd: string | null;
}

export class RunStore {
  readonly tracks = new Map<string, Track>();
  readonly evals: Track;
  readonly user = new Map<string, Track>();
  readonly findings = new Map<string, Finding>();
  readonly info: RunInfo;
  /** Points the recorder dropped (its own count, the latest it sent). */
  dropped = 0;
  /** Steps in series beyond MAX_SERIES, or user points beyond MAX_USER_SERIES, not kept. */
  ignored = 0;
  /** The step count the recorder gave at exit. */
  endSteps: number | null = null;
  /** Bumped on every change: the view redraws when it moved. */
  version = 0;
  /** The last step seen in any series. */
  lastStep: number | null = null;
  /** The debugger stopped before any data came (see debuggerMoved). */
  private pausedBeforeData = false;

  constructor(
    name: string,
    started: number,
    private readonly limits: TrackLimits = DEFAULT_LIMITS,
  ) {
    this.info = { name, started, ended: null, state: 'waiting', hello: null, cwd: null };
    this.evals = new Track(['loss'], limits);
  }

  setHello(hello: Hello): void {
    this.info.hello = hello;
    this.touch();
  }

  /** One batch from the channel. */
  addBatch(batch: Batch): void {
    for (const s of batch.steps) {
      this.addStep(s);
    }
    for (const e of batch.evals) {
      this.evals.push(e.step, [e.loss]);
    }
    for (const u of batch.user) {
      let t = this.user.get(u.name);
      if (!t) {
        if (this.user.size >= MAX_USER_SERIES) {
          this.ignored++;
          continue;
        }
        t = new Track(['value'], this.limits);
        this.user.set(u.name, t);
      }
      t.push(u.step, [u.value]);
    }
    for (const f of batch.findings) {
      this.findings.set(`${f.kind}\u0000${f.series}`, f); // one per kind and series: the latest
    }
    this.dropped = Math.max(this.dropped, batch.dropped);
    if (this.info.state === 'waiting' && (batch.steps.length || batch.evals.length || batch.user.length)) {
      // The debugger may have stopped before this first batch came (the sender sends every
      // 0.25 s; a fast first epoch reaches its breakpoint sooner): the run is then paused.
      this.info.state = this.pausedBeforeData ? 'paused' : 'running';
    }
    this.touch();
  }

  addStep(s: Step): void {
    let t = this.tracks.get(s.series);
    if (!t) {
      if (this.tracks.size >= MAX_SERIES) {
        this.ignored++;
        return;
      }
      t = new Track(STEP_COLUMNS, this.limits);
      this.tracks.set(s.series, t);
    }
    t.push(s.step, stepValues(s));
    this.lastStep = this.lastStep === null ? s.step : Math.max(this.lastStep, s.step);
  }

  /** Steps seen, the most of any series. */
  get steps(): number {
    let n = 0;
    for (const t of this.tracks.values()) {
      n = Math.max(n, t.steps);
    }
    return n;
  }

  setState(state: RunState, now: number): void {
    if (this.info.state === 'ended') {
      return;
    }
    this.info.state = state;
    if (state === 'ended') {
      this.info.ended = now;
    }
    this.touch();
  }

  /**
   * The debugger stopped or resumed; true when the run's state changed. Before the first batch
   * the run stays "waiting" and the first batch takes this state.
   */
  debuggerMoved(state: 'paused' | 'running', now: number): boolean {
    if (this.info.state === 'waiting') {
      this.pausedBeforeData = state === 'paused';
      return false;
    }
    if (this.info.state === 'ended' || this.info.state === state) {
      return false;
    }
    this.setState(state, now);
    return true;
  }

  end(steps: number, dropped: number): void {
    this.endSteps = steps;
    this.dropped = Math.max(this.dropped, dropped);
    this.touch();
  }

  private touch(): void {
    this.version++;
  }
}

const I = {
  loss: C('loss'),
  gradNorm: C('grad_norm'),
  gradClipped: C('grad_norm_clipped'),
  samples: C('samples_per_s'),
  rss: C('rss'),
  allocated: C('cuda_allocated'),
  reserved: C('cuda_reserved'),
  peak: C('cuda_peak'),
  time: TIME_PARTS.map((p) => C(`time_${p}`)),
  lr: C('lr0'),
  ratio: C('update_ratio0'),
};
/** One step's columns; reused (a Track copies what it keeps). */
const scratch = new Float64Array(STEP_COLUMNS.length);

function stepValues(s: Step): Float64Array {
  const v = scratch.fill(Number.NaN);
  const put = (i: number, x: number | null | undefined) => {
    if (x !== null && x !== undefined) {
      v[i] = x;
    }
  };
  put(I.loss, s.loss);
  put(I.gradNorm, s.grad_norm);
  put(I.gradClipped, s.grad_norm_clipped);
  put(I.samples, s.samples_per_s);
  put(I.rss, s.rss);
  if (s.cuda) {
    put(I.allocated, s.cuda.allocated);
    put(I.reserved, s.cuda.reserved);
    put(I.peak, s.cuda.peak);
  }
  for (let p = 0; p < TIME_PARTS.length; p++) {
    put(I.time[p], s.time[TIME_PARTS[p]]);
  }
  for (let g = 0; g < Math.min(s.lr.length, MAX_GROUPS); g++) {
    put(I.lr + g, s.lr[g]);
  }
  const ratio = s.update_ratio ?? [];
  for (let g = 0; g < Math.min(ratio.length, MAX_GROUPS); g++) {
    put(I.ratio + g, ratio[g]);
  }
  return v;
}
