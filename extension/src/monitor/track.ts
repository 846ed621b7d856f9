/**
 * One bounded time series of a training run, the way the recorder keeps its own (issue 17): the
 * most recent steps exact, older steps folded into buckets of `width` steps with min / max /
 * last / sum / count per column; when there are too many buckets, neighbours merge and the
 * width doubles. Memory is fixed however long the run (a 1M-step run holds the same number of
 * rows as a 10k-step one) and the shape of every curve survives: a spike stays in its bucket's
 * max. Pure logic, no `vscode` import.
 */

/** Per column: min, max, last, sum, count. */
const AGG = 5;
const MIN = 0;
const MAX = 1;
const LAST = 2;
const SUM = 3;
const COUNT = 4;
/** Per row, before the columns: first step, last step. */
const HEAD = 2;

export interface TrackLimits {
  /** Steps kept exact at the end. */
  recent: number;
  /** Buckets before neighbours merge (must be even). */
  buckets: number;
}

export const DEFAULT_LIMITS: TrackLimits = { recent: 1024, buckets: 1024 };

/** A read-only look at one row (an exact step or a bucket). */
export interface RowView {
  first: number;
  last: number;
  has(col: number): boolean;
  min(col: number): number;
  max(col: number): number;
  lastValue(col: number): number;
  mean(col: number): number;
  count(col: number): number;
}

class Row implements RowView {
  constructor(readonly data: Float64Array) {}
  get first(): number {
    return this.data[0];
  }
  get last(): number {
    return this.data[1];
  }
  has(col: number): boolean {
    return this.data[HEAD + col * AGG + COUNT] > 0;
  }
  min(col: number): number {
    return this.data[HEAD + col * AGG + MIN];
  }
  max(col: number): number {
    return this.data[HEAD + col * AGG + MAX];
  }
  lastValue(col: number): number {
    return this.data[HEAD + col * AGG + LAST];
  }
  mean(col: number): number {
    const o = HEAD + col * AGG;
    return this.data[o + SUM] / this.data[o + COUNT];
  }
  count(col: number): number {
    return this.data[HEAD + col * AGG + COUNT];
  }
  /** Fold `later` (the next rows in step order) into this one. */
  absorb(later: Row, cols: number): void {
    const a = this.data;
    const b = later.data;
    a[1] = b[1];
    for (let c = 0, o = HEAD; c < cols; c++, o += AGG) {
      if (b[o + COUNT] === 0) {
        continue;
      }
      if (a[o + COUNT] === 0) {
        a.set(b.subarray(o, o + AGG), o);
        continue;
      }
      a[o + MIN] = Math.min(a[o + MIN], b[o + MIN]);
      a[o + MAX] = Math.max(a[o + MAX], b[o + MAX]);
      a[o + LAST] = b[o + LAST];
      a[o + SUM] += b[o + SUM];
      a[o + COUNT] += b[o + COUNT];
    }
  }
}

export class Track {
  private readonly index = new Map<string, number>();
  private readonly ring: (Row | undefined)[];
  private head = 0;
  private size = 0;
  private buckets: Row[] = [];
  private width = 1;
  private lastStep = -Infinity;
  /** Points refused because their step went backwards. */
  outOfOrder = 0;
  /** Steps seen (including those folded into buckets). */
  steps = 0;
  /** Per column: 1 once a value came. */
  private readonly seen: Uint8Array;
  private listed: Row[] | undefined;

  constructor(
    readonly columns: readonly string[],
    private readonly limits: TrackLimits = DEFAULT_LIMITS,
  ) {
    columns.forEach((c, i) => this.index.set(c, i));
    this.ring = new Array(limits.recent);
    this.seen = new Uint8Array(columns.length);
  }

  col(name: string): number {
    const i = this.index.get(name);
    if (i === undefined) {
      throw new Error(`unknown column ${name}`);
    }
    return i;
  }

  /** Steps per bucket now. */
  get bucketWidth(): number {
    return this.width;
  }

  get rowCount(): number {
    return this.buckets.length + this.size;
  }

  /**
   * One step's values (`values[i]` for column i; NaN or undefined: not measured). A step equal
   * to the last one adds to its row; a smaller one is refused and counted.
   */
  push(step: number, values: ArrayLike<number | undefined>): void {
    if (step < this.lastStep) {
      this.outOfOrder++;
      return;
    }
    this.listed = undefined;
    if (step === this.lastStep && this.size > 0) {
      this.ring[(this.head + this.size - 1) % this.ring.length]!.absorb(this.newRow(step, values), this.columns.length);
      return;
    }
    this.lastStep = step;
    this.steps++;
    let spare: Row | undefined;
    if (this.size === this.ring.length) {
      const oldest = this.ring[this.head]!;
      this.head = (this.head + 1) % this.ring.length;
      this.size--;
      spare = this.fold(oldest) ? oldest : undefined;
    }
    this.ring[(this.head + this.size) % this.ring.length] = this.newRow(step, values, spare);
    this.size++;
  }

  /** Every row, oldest first: buckets, then the exact recent steps (a list kept until the next push). */
  rows(): readonly RowView[] {
    if (!this.listed) {
      const list: Row[] = this.buckets.slice();
      for (let i = 0; i < this.size; i++) {
        list.push(this.ring[(this.head + i) % this.ring.length]!);
      }
      this.listed = list;
    }
    return this.listed;
  }

  /** Whether any step had a value in this column. */
  hasColumn(col: number): boolean {
    return this.seen[col] === 1;
  }

  /** A row for one step; in `spare`'s storage when given (a row folded away). */
  private newRow(step: number, values: ArrayLike<number | undefined>, spare?: Row): Row {
    const data = spare ? spare.data.fill(0) : new Float64Array(HEAD + this.columns.length * AGG);
    data[0] = step;
    data[1] = step;
    const n = Math.min(values.length, this.columns.length);
    for (let c = 0; c < n; c++) {
      const v = values[c];
      if (v === undefined || Number.isNaN(v)) {
        continue;
      }
      const o = HEAD + c * AGG;
      data[o + MIN] = v;
      data[o + MAX] = v;
      data[o + LAST] = v;
      data[o + SUM] = v;
      data[o + COUNT] = 1;
      this.seen[c] = 1;
    }
    return spare ?? new Row(data);
  }

  /**
   * An exact row leaves the recent window: into its bucket (floor(step / width)). True when it
   * was merged into one (its storage is free again), false when it became a bucket itself.
   */
  private fold(row: Row): boolean {
    const last = this.buckets[this.buckets.length - 1];
    if (last && Math.floor(last.first / this.width) === Math.floor(row.first / this.width)) {
      last.absorb(row, this.columns.length);
      return true;
    }
    this.buckets.push(row);
    while (this.buckets.length > this.limits.buckets) {
      this.halve();
    }
    return false;
  }

  /** Double the width: buckets whose first steps share floor(step / 2w) merge. */
  private halve(): void {
    this.width *= 2;
    const merged: Row[] = [];
    for (const b of this.buckets) {
      const prev = merged[merged.length - 1];
      if (prev && Math.floor(prev.first / this.width) === Math.floor(b.first / this.width)) {
        prev.absorb(b, this.columns.length);
      } else {
        merged.push(b);
      }
    }
    this.buckets = merged;
  }
}
