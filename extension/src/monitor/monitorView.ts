/**
 * What the "Torch Doctor: Training" page draws, built from a RunStore: the run's header, the
 * verdict cards (findings) and the charts, each already laid out for uPlot (one x array of
 * steps, series on it, null where a series has no point). Loss: train per series with its
 * min/max band, validation; learning rate; gradient norm before and after clipping; update
 * ratio (log, with the ~1e-3 reference); the step time split, stacked; samples/s; memory; one
 * chart per user series. At most POINTS bins per chart: the cost and the message size follow the
 * store's bounded rows, never the steps of the run. Pure logic, no `vscode` import.
 */
import { JobStore, pickRank } from './jobStore';
import { MAX_GROUPS, RunState, RunStore, STEP_COLUMNS } from './runStore';
import { Agg, onGrid, sample, Sampled, stepRange, unionX } from './sampling';
import { StragglerSummary, stragglerNamed, stragglerSentence } from './stragglers';
import { Track } from './track';
import { Finding } from './wire';

export const POINTS = 1000;
/** The update-to-weight ratio seed 000 calls healthy. */
export const UPDATE_RATIO_TARGET = 1e-3;

export type Unit = '' | 's' | 'bytes' | 'per_s';
export type Style = 'line' | 'points' | 'dashed' | 'area';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** The band under the line (bucketed runs): each bin's min and max. */
  lo?: (number | null)[];
  hi?: (number | null)[];
  /** Stacked charts: the part itself (values are the running sum). */
  part?: (number | null)[];
  style: Style;
  /** Colour slot. */
  color: number;
}

export interface ChartSpec {
  id: string;
  title: string;
  unit: Unit;
  /** Log y-axis by default. */
  log: boolean;
  /** The page offers the log-scale toggle and smoothing (the loss chart). */
  loss?: boolean;
  stacked?: boolean;
  x: number[];
  series: ChartSeries[];
}

export interface MonitorView {
  run: {
    name: string;
    script: string | null;
    pid: number | null;
    state: RunState;
    started: number;
    ended: number | null;
    cwd: string | null;
  };
  steps: number;
  lastStep: number | null;
  dropped: number;
  ignored: number;
  /** Steps per stored bucket in the oldest part (1: all exact). */
  bucketWidth: number;
  findings: Finding[];
  charts: ChartSpec[];
  /** A job of several ranks (torchrun): which are drawn and which is slowest. Absent for one process. */
  ranks?: RankInfo;
}

export interface RankInfo {
  /** Ranks that reported, in order (the picker's options). */
  list: number[];
  /** The rank whose charts, verdicts and CSV these are. */
  shown: number;
  /** WORLD_SIZE, when the ranks said. */
  world: number | null;
  /** `named`: MIN_STEPS steps compared and the slowest rank more than STRAGGLER_EXCESS over the others (stragglerNamed). */
  stragglers: (StragglerSummary & { sentence: string; named: boolean }) | null;
}

const col = (name: string): number => STEP_COLUMNS.indexOf(name);

interface Source {
  track: Track;
  col: number;
  agg: Agg;
  label: string;
  style?: Style;
  band?: boolean;
}

/** How a column folds into a display bin: times and throughput average, memory peaks, the rest last. */
export function aggOf(column: string): Agg {
  if (column.startsWith('time_') || column === 'samples_per_s') {
    return 'mean';
  }
  return column === 'rss' || column.startsWith('cuda_') ? 'max' : 'last';
}

/** Each track sampled once per view, every column it has, shared by the charts that draw it. */
class Sampler {
  private readonly done = new Map<Track, { out: Sampled; index: Map<number, number> }>();
  constructor(
    private readonly from: number,
    private readonly to: number,
  ) {}
  get(track: Track): { out: Sampled; index: Map<number, number> } {
    let got = this.done.get(track);
    if (!got) {
      const cols = track.columns.map((_, c) => c).filter((c) => track.hasColumn(c));
      const out = sample(track, cols.map((c) => ({ col: c, agg: aggOf(track.columns[c]) })), this.from, this.to, POINTS);
      got = { out, index: new Map(cols.map((c, i) => [c, i])) };
      this.done.set(track, got);
    }
    return got;
  }
}

/** One chart from its sources: each sampled over the common step range, laid on one x grid. */
function chart(id: string, title: string, unit: Unit, sources: Source[], sampler: Sampler): ChartSpec | null {
  const present = sources.filter((s) => s.track.hasColumn(s.col));
  if (present.length === 0) {
    return null;
  }
  const tracks = [...new Set(present.map((s) => s.track))];
  const x = unionX(tracks.map((t) => sampler.get(t).out.x));
  const series: ChartSeries[] = present.map((s, i) => {
    const { out, index } = sampler.get(s.track);
    const c = out.cols[index.get(s.col)!];
    return {
      label: s.label,
      values: onGrid(x, out.x, c.v),
      ...(s.band ? { lo: onGrid(x, out.x, c.lo), hi: onGrid(x, out.x, c.hi) } : {}),
      style: s.style ?? 'line',
      color: i,
    };
  });
  return { id, title, unit, log: false, x, series };
}

function trackLabel(series: string, many: boolean, what: string): string {
  return many ? `${what} · ${series}` : what;
}

export function buildView(store: RunStore): MonitorView {
  const tracks = [...store.tracks];
  const ranges = [...tracks.map(([, t]) => stepRange(t)), stepRange(store.evals), ...[...store.user.values()].map(stepRange)];
  const from = Math.min(...ranges.map((r) => (r ? r[0] : Infinity)));
  const to = Math.max(...ranges.map((r) => (r ? r[1] : -Infinity)));
  const charts = Number.isFinite(from) ? buildCharts(store, tracks, new Sampler(from, to)) : [];
  const first = tracks[0]?.[1];
  return {
    run: {
      name: store.info.name,
      script: store.info.hello?.script ?? null,
      pid: store.info.hello?.pid ?? null,
      state: store.info.state,
      started: store.info.started,
      ended: store.info.ended,
      cwd: store.info.cwd,
    },
    steps: store.endSteps ?? store.steps,
    lastStep: store.lastStep,
    dropped: store.dropped,
    ignored: store.ignored,
    bucketWidth: first?.bucketWidth ?? 1,
    findings: [...store.findings.values()].sort(bySeverity),
    charts,
  };
}

const RANK = { error: 0, warning: 1, info: 2 };

function bySeverity(a: Finding, b: Finding): number {
  return RANK[a.severity] - RANK[b.severity] || (a.step ?? 0) - (b.step ?? 0);
}

function buildCharts(store: RunStore, tracks: [string, Track][], sampler: Sampler): ChartSpec[] {
  const many = tracks.length > 1;
  const each = (f: (name: string, t: Track) => Source[]) => tracks.flatMap(([n, t]) => f(n, t));
  const groups = (prefix: string, what: string, style?: Style) =>
    each((n, t) =>
      Array.from({ length: MAX_GROUPS }, (_, g) => ({
        track: t,
        col: col(`${prefix}${g}`),
        agg: 'last' as Agg,
        label: trackLabel(n, many, `${what} ${g}`),
        style,
      })),
    );
  const loss = chart(
    'loss',
    'Loss',
    '',
    [
      ...each((n, t) => [{ track: t, col: col('loss'), agg: 'last' as Agg, label: trackLabel(n, many, 'train'), band: true }]),
      { track: store.evals, col: 0, agg: 'last', label: 'validation', style: 'points' },
    ],
    sampler,
  );
  if (loss) {
    loss.loss = true;
  }
  const lr = chart('lr', 'Learning rate', '', groups('lr', 'group'), sampler);
  const grad = chart(
    'grad_norm',
    'Gradient norm',
    '',
    each((n, t) => [
      { track: t, col: col('grad_norm'), agg: 'last', label: trackLabel(n, many, 'before clipping'), band: true },
      { track: t, col: col('grad_norm_clipped'), agg: 'last', label: trackLabel(n, many, 'after clipping') },
    ]),
    sampler,
  );
  const ratio = chart('update_ratio', 'Update / weight ratio', '', groups('update_ratio', 'group'), sampler);
  if (ratio) {
    ratio.log = true;
    ratio.series.push({ label: '~1e-3 (healthy)', values: ratio.x.map(() => UPDATE_RATIO_TARGET), style: 'dashed', color: 7 });
  }
  const user = [...store.user].map(([name, t], i) =>
    chart(`user_${i}`, name, '', [{ track: t, col: 0, agg: 'last', label: name, band: true }], sampler),
  );
  return [loss, lr, grad, ratio, stepTime(tracks, sampler), throughput(tracks, many, sampler), memory(tracks, sampler), ...user].filter(
    (c): c is ChartSpec => c !== null,
  );
}

const PARTS = ['data', 'forward', 'backward', 'optimizer', 'other'];

/** The first series' step time, stacked: values are the running sums, `part` each part. */
function stepTime(tracks: [string, Track][], sampler: Sampler): ChartSpec | null {
  const first = tracks[0]?.[1];
  if (!first) {
    return null;
  }
  const c = chart(
    'step_time',
    tracks.length > 1 ? `Step time (${tracks[0][0]})` : 'Step time',
    's',
    PARTS.map((p) => ({ track: first, col: col(`time_${p}`), agg: 'mean' as Agg, label: p, style: 'area' as Style })),
    sampler,
  );
  if (!c) {
    return null;
  }
  c.stacked = true;
  const sum = c.x.map(() => 0);
  for (const s of c.series) {
    s.part = s.values;
    s.values = s.values.map((v, i) => (sum[i] += v ?? 0));
  }
  return c;
}

function throughput(tracks: [string, Track][], many: boolean, sampler: Sampler): ChartSpec | null {
  const sources = tracks.map(([n, t]) => ({ track: t, col: col('samples_per_s'), agg: 'mean' as Agg, label: trackLabel(n, many, 'samples/s') }));
  return chart('samples', 'Samples per second', 'per_s', sources, sampler);
}

/** Memory is the process's: from the first series. */
function memory(tracks: [string, Track][], sampler: Sampler): ChartSpec | null {
  const first = tracks[0]?.[1];
  if (!first) {
    return null;
  }
  const parts: [string, string][] = [
    ['rss', 'process RSS'],
    ['cuda_allocated', 'CUDA allocated'],
    ['cuda_reserved', 'CUDA reserved'],
    ['cuda_peak', 'CUDA peak'],
  ];
  return chart('memory', 'Memory', 'bytes', parts.map(([c, label]) => ({ track: first, col: col(c), agg: 'max' as Agg, label })), sampler);
}

/**
 * A job's view: one rank's store drawn as a single process is (`wanted`, else rank 0: pickRank),
 * plus, with two ranks or more, the rank list for the picker, the straggler sentence and the
 * "Step time across ranks" chart after the step time. undefined before any rank reported.
 */
export function buildJobView(job: JobStore, wanted: number | null): MonitorView | undefined {
  const ranks = job.ranks;
  const shown = pickRank(ranks, wanted);
  const store = shown === null ? undefined : job.store(shown);
  if (shown === null || !store) {
    return undefined;
  }
  const view = buildView(store);
  if (ranks.length < 2 && (job.world ?? 1) < 2) {
    return view; // one process: exactly the single-run view
  }
  const summary = job.stragglers.summary();
  view.ranks = {
    list: ranks,
    shown,
    world: job.world,
    stragglers: summary ? { ...summary, sentence: stragglerSentence(summary), named: stragglerNamed(summary) } : null,
  };
  const across = acrossRanks(job, shown);
  if (across) {
    const at = view.charts.findIndex((c) => c.id === 'step_time');
    view.charts.splice(at < 0 ? view.charts.length : at + 1, 0, across);
  }
  return view;
}

/** Per step the slowest rank's own time (waits taken out), the other ranks' median, and the shown rank's. */
function acrossRanks(job: JobStore, shown: number): ChartSpec | null {
  const s = job.stragglers;
  const own = s.own.get(shown);
  const ranges = [stepRange(s.track), own ? stepRange(own) : null].filter((r): r is [number, number] => r !== null);
  if (!ranges.length) {
    return null;
  }
  const sampler = new Sampler(Math.min(...ranges.map((r) => r[0])), Math.max(...ranges.map((r) => r[1])));
  const sources: Source[] = [
    { track: s.track, col: 0, agg: 'mean', label: 'slowest rank' },
    { track: s.track, col: 1, agg: 'mean', label: 'other ranks (median)', style: 'dashed' },
    ...(own ? [{ track: own, col: 0, agg: 'mean' as Agg, label: `rank ${shown} (shown)` }] : []),
  ];
  const c = chart('rank_step_time', `Step time across ranks (${s.series ?? ''}, waits for other ranks taken out)`, 's', sources, sampler);
  c?.series.forEach((x, i) => (x.color = [4, 7, 0][i]));
  return c;
}
