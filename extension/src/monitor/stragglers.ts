/**
 * Stragglers in a job of several ranks (torchrun / DDP): per training step, which rank was the
 * slowest and by how much. Pure logic, no `vscode` import.
 *
 * Why not just compare the ranks' step times: DDP's gradient all-reduce makes every rank wait at
 * the end of its backward for the slowest one, so in a synchronised job every rank's wall-clock
 * step time is the same. What differs is where the time goes: the ranks that were faster spent
 * it waiting inside `backward()`. So each rank's step is compared by its **own time**: its step
 * time with that wait taken out, `total − backward + min(backward over the ranks)` (the backward
 * compute is the same on every rank; the part above the shortest backward is the wait). The
 * rank the others waited for has the shortest backward and its full step time as own time. For
 * ranks that do not synchronise (no DDP) every backward is its own compute, and own time is the
 * step time.
 *
 * Ranks report their steps through their own connections at their own pace (a batch every
 * 0.25 s), so a step is compared once every expected rank has reported it, or when it is older
 * than MAX_PENDING steps (compared with the ranks that did). Only the first step series any rank
 * reports is compared (`opt0`, or `backward` without an optimizer). Fixed memory: bounded
 * Tracks (slowest, the others' median, per rank) and at most MAX_PENDING steps waiting.
 */
import { DEFAULT_LIMITS, Track, TrackLimits } from './track';
import { Step } from './wire';

/** Steps waiting for their last ranks before they are compared without them. */
export const MAX_PENDING = 512;
/** The recent compared steps the summary's "+X%" is the median of. */
export const RECENT = 20;
/** Below this excess over the other ranks the job has no straggler worth naming. */
export const STRAGGLER_EXCESS = 0.05;
/**
 * Compared steps before any verdict: the first steps of a job carry one-off costs (allocator
 * warm-up, the first all-reduce building its buckets, a rank still importing), so one step's
 * slowest rank says little (a torchrun job's view named rank 1 "in 100% of 1 steps").
 */
export const MIN_STEPS = 5;

/** `time_*`: averaged when the view folds steps into a display bin, as the step time is. */
export const STRAGGLER_COLUMNS = ['time_slowest', 'time_others', 'slowest_rank'] as const;

interface Report {
  total: number;
  backward: number;
}

interface Compared {
  excess: number;
  slowest: number;
  others: number;
}

export interface StragglerSummary {
  /** The step series compared. */
  series: string;
  /** Steps compared (each with two ranks or more). */
  steps: number;
  /** The rank that was the slowest most often, and in what fraction of the compared steps. */
  rank: number;
  share: number;
  /** Over the last RECENT compared steps, the median of (slowest own time / median of the others' − 1). */
  excess: number;
  /** Over the same steps, the median own time of the slowest rank and of the others (seconds). */
  slowest: number;
  others: number;
}

export class Stragglers {
  /** Per compared step: the slowest own time, the median own time of the other ranks, the slowest rank. */
  readonly track: Track;
  /** Per rank, its own time each compared step. */
  readonly own = new Map<number, Track>();
  /** The series compared: the first any rank reported. */
  series: string | null = null;
  /** Reports that came after their step was compared (a rank far behind the others). */
  late = 0;
  private readonly pending = new Map<number, Map<number, Report>>();
  private compared = -Infinity;
  private readonly slowestCount = new Map<number, number>();
  private steps = 0;
  private readonly recent: Compared[] = [];

  /** `expected()`: how many ranks a step waits for (the world size, or the ranks connected). */
  constructor(
    private readonly expected: () => number,
    private readonly limits: TrackLimits = DEFAULT_LIMITS,
  ) {
    this.track = new Track(STRAGGLER_COLUMNS, limits);
  }

  /** One rank's step, as the channel delivers it. */
  add(rank: number, s: Step): void {
    this.series ??= s.series;
    if (s.series !== this.series) {
      return;
    }
    const parts = Object.values(s.time);
    if (parts.length === 0) {
      return; // no time measured: nothing to compare
    }
    if (s.step <= this.compared) {
      this.late++;
      return;
    }
    let reports = this.pending.get(s.step);
    if (!reports) {
      reports = new Map();
      this.pending.set(s.step, reports);
    }
    reports.set(rank, { total: parts.reduce((a, b) => a + b, 0), backward: s.time.backward ?? 0 });
    if (reports.size >= this.expected()) {
      this.compareUpTo(s.step);
    } else if (this.pending.size > MAX_PENDING) {
      this.compareUpTo(Math.min(...this.pending.keys()));
    }
  }

  /** Compare every step still waiting (the job ended: no more reports will come). */
  flush(): void {
    if (this.pending.size) {
      this.compareUpTo(Math.max(...this.pending.keys()));
    }
  }

  /** The job so far; null until a step was compared across two ranks or more. */
  summary(): StragglerSummary | null {
    if (this.steps === 0 || this.series === null) {
      return null;
    }
    let rank = -1;
    let most = -1;
    for (const [r, n] of this.slowestCount) {
      if (n > most || (n === most && r < rank)) {
        rank = r;
        most = n;
      }
    }
    const pick = (f: (x: Compared) => number) => median(this.recent.map(f));
    return {
      series: this.series,
      steps: this.steps,
      rank,
      share: most / this.steps,
      excess: pick((x) => x.excess),
      slowest: pick((x) => x.slowest),
      others: pick((x) => x.others),
    };
  }

  /** Steps up to `last` leave the waiting list in step order (a Track takes steps in order). */
  private compareUpTo(last: number): void {
    const due = [...this.pending.keys()].filter((k) => k <= last).sort((a, b) => a - b);
    for (const step of due) {
      this.compareStep(step, this.pending.get(step)!);
      this.pending.delete(step);
      this.compared = step;
    }
  }

  private compareStep(step: number, reports: Map<number, Report>): void {
    const minBackward = Math.min(...[...reports.values()].map((r) => r.backward));
    const own = [...reports].map(([rank, r]) => ({ rank, t: r.total - r.backward + minBackward }));
    for (const { rank, t } of own) {
      let track = this.own.get(rank);
      if (!track) {
        track = new Track(['time_own'], this.limits);
        this.own.set(rank, track);
      }
      track.push(step, [t]);
    }
    if (own.length < 2) {
      return; // one rank reported: nothing to compare it with
    }
    const slowest = own.reduce((a, b) => (b.t > a.t || (b.t === a.t && b.rank < a.rank) ? b : a));
    const others = median(own.filter((o) => o !== slowest).map((o) => o.t));
    this.track.push(step, [slowest.t, others, slowest.rank]);
    this.slowestCount.set(slowest.rank, (this.slowestCount.get(slowest.rank) ?? 0) + 1);
    this.steps++;
    this.recent.push({ excess: others > 0 ? slowest.t / others - 1 : 0, slowest: slowest.t, others });
    if (this.recent.length > RECENT) {
      this.recent.shift();
    }
  }
}

export function median(xs: number[]): number {
  if (xs.length === 0) {
    return Number.NaN;
  }
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Is there a straggler worth naming: enough steps compared, and an excess over the others. */
export function stragglerNamed(s: StragglerSummary): boolean {
  return s.steps >= MIN_STEPS && s.excess >= STRAGGLER_EXCESS;
}

/** The sentence the view shows above the charts. */
export function stragglerSentence(s: StragglerSummary): string {
  const pct = (x: number) => `${Math.round(x * 100)}%`;
  const ms = (x: number) => `${(x * 1000).toFixed(x < 0.01 ? 2 : 1)} ms`;
  if (s.steps < MIN_STEPS) {
    const n = `${s.steps} step${s.steps === 1 ? '' : 's'}`;
    return `Comparing the ranks: ${n} of ${MIN_STEPS} so far; the slowest rank is named after ${MIN_STEPS} steps.`;
  }
  if (s.excess < STRAGGLER_EXCESS) {
    return `No straggler: over the last ${Math.min(s.steps, RECENT)} steps the slowest rank is within ${pct(STRAGGLER_EXCESS)} of the others (${ms(s.slowest)} vs ${ms(s.others)} a step).`;
  }
  return (
    `Slowest: rank ${s.rank} (in ${pct(s.share)} of ${s.steps} steps), +${pct(s.excess)} over the other ranks' median ` +
    `(${ms(s.slowest)} vs ${ms(s.others)} of own work a step); the other ranks wait for it in backward's all-reduce.`
  );
}
