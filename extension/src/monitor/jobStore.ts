/**
 * One monitored debug session's job: a RunStore per rank (a single process is rank 0), each with
 * today's per-series limits, at most MAX_RANKS of them, and the Stragglers comparison across
 * them. The channel server feeds it by rank; the view draws one rank's store (pickRank) plus the
 * cross-rank summary. Pure logic, no `vscode` import.
 */
import { RunState, RunStore } from './runStore';
import { Stragglers } from './stragglers';
import { DEFAULT_LIMITS, TrackLimits } from './track';
import { Batch, Hello } from './wire';

/** Ranks kept; a rank beyond is connected but not stored (counted in `ignoredRanks`). */
export const MAX_RANKS = 64;

/**
 * The rank to draw: the one asked for when it reported, else rank 0, else the lowest that
 * reported. null when no rank reported yet.
 */
export function pickRank(ranks: readonly number[], wanted: number | null): number | null {
  if (wanted !== null && ranks.includes(wanted)) {
    return wanted;
  }
  if (ranks.includes(0)) {
    return 0;
  }
  return ranks.length ? Math.min(...ranks) : null;
}

export class JobStore {
  private readonly stores = new Map<number, RunStore>();
  readonly stragglers: Stragglers;
  /** The job's size from the ranks' hello (WORLD_SIZE); null for a single process or an older recorder. */
  world: number | null = null;
  /** Connections of ranks beyond MAX_RANKS. */
  ignoredRanks = 0;
  /** The program's working directory, for every rank (a finding's relative path). */
  cwd: string | null = null;
  /** The debugger's last move, for a rank whose first data comes after it. */
  private debugger: 'paused' | 'running' | null = null;

  constructor(
    readonly name: string,
    readonly started: number,
    private readonly limits: TrackLimits = DEFAULT_LIMITS,
  ) {
    this.stragglers = new Stragglers(() => Math.max(this.world ?? 0, this.stores.size), limits);
  }

  /** Ranks with a store, in order. */
  get ranks(): number[] {
    return [...this.stores.keys()].sort((a, b) => a - b);
  }

  store(rank: number): RunStore | undefined {
    return this.stores.get(rank);
  }

  /**
   * A rank's connection starts feeding: its store (made now, with the job's state so far), or
   * undefined beyond MAX_RANKS.
   */
  open(hello: Hello): RunStore | undefined {
    const rank = hello.rank ?? 0;
    if (hello.world_size !== null && hello.world_size > 1) {
      this.world = Math.min(hello.world_size, MAX_RANKS);
    }
    let store = this.stores.get(rank);
    if (!store) {
      if (this.stores.size >= MAX_RANKS) {
        this.ignoredRanks++;
        return undefined;
      }
      store = new RunStore(this.name, this.started, this.limits);
      store.info.cwd = this.cwd;
      if (this.debugger) {
        store.debuggerMoved(this.debugger, this.started);
      }
      this.stores.set(rank, store);
    }
    store.setHello(hello);
    return store;
  }

  addBatch(rank: number, batch: Batch): void {
    const store = this.stores.get(rank);
    if (!store) {
      return;
    }
    store.addBatch(batch);
    for (const s of batch.steps) {
      this.stragglers.add(rank, s);
    }
  }

  end(rank: number, steps: number, dropped: number): void {
    this.stores.get(rank)?.end(steps, dropped);
  }

  /** The last step of any rank. */
  get lastStep(): number | null {
    let last: number | null = null;
    for (const s of this.stores.values()) {
      if (s.lastStep !== null) {
        last = last === null ? s.lastStep : Math.max(last, s.lastStep);
      }
    }
    return last;
  }

  setState(state: RunState, now: number): void {
    if (state === 'ended') {
      this.stragglers.flush(); // no more reports: compare the steps some ranks never sent
    }
    for (const s of this.stores.values()) {
      s.setState(state, now);
    }
  }

  /** The debugger stopped or resumed (any rank's session): true when a rank's state changed. */
  debuggerMoved(state: 'paused' | 'running', now: number): boolean {
    this.debugger = state;
    let moved = false;
    for (const s of this.stores.values()) {
      moved = s.debuggerMoved(state, now) || moved;
    }
    return moved;
  }
}
