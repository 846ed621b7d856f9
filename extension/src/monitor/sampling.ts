/**
 * A Track's rows folded into at most `points` display bins over a step range, per column: the
 * value to draw (last, mean or max of the bin) and the bin's min and max for the band, so a
 * spike between two drawn points is still seen. The cost follows the rows a Track holds (bounded),
 * never the steps of the run. Pure logic, no `vscode` import.
 */
import { Track } from './track';

export type Agg = 'last' | 'mean' | 'max';

export interface ColumnRequest {
  col: number;
  agg: Agg;
}

export interface Sampled {
  /** The last step of each bin. */
  x: number[];
  /** Per requested column: value, min, max per bin (null: not measured in that bin). */
  cols: { v: (number | null)[]; lo: (number | null)[]; hi: (number | null)[] }[];
}

/** The first and last step a track covers, or null when empty. */
export function stepRange(track: Track): [number, number] | null {
  let lo: number | null = null;
  let hi: number | null = null;
  for (const r of track.rows()) {
    lo ??= r.first;
    hi = r.last;
  }
  return lo === null || hi === null ? null : [lo, hi];
}

/**
 * Bins of equal step width over [from, to]; a row goes to the bin of its last step. Bins with
 * no row are left out. One pass over the rows, no allocation per row or bin.
 */
export function sample(track: Track, request: ColumnRequest[], from: number, to: number, points: number): Sampled {
  const k = request.length;
  const out: Sampled = { x: [], cols: request.map(() => ({ v: [], lo: [], hi: [] })) };
  const perBin = Math.max(to - from + 1, 1) / Math.max(points, 1);
  const min = new Float64Array(k);
  const max = new Float64Array(k);
  const last = new Float64Array(k);
  const sum = new Float64Array(k);
  const n = new Float64Array(k);
  const reset = () => {
    min.fill(Infinity);
    max.fill(-Infinity);
    sum.fill(0);
    n.fill(0);
  };
  let bin = -1;
  let x = 0;
  let any = false;
  const flush = () => {
    if (!any) {
      return;
    }
    out.x.push(x);
    for (let i = 0; i < k; i++) {
      const c = out.cols[i];
      const has = n[i] > 0;
      const agg = request[i].agg;
      c.v.push(!has ? null : agg === 'last' ? last[i] : agg === 'mean' ? sum[i] / n[i] : max[i]);
      c.lo.push(has ? min[i] : null);
      c.hi.push(has ? max[i] : null);
    }
  };
  for (const r of track.rows()) {
    if (r.last < from || r.last > to) {
      continue;
    }
    const b = Math.floor((r.last - from) / perBin);
    if (b !== bin) {
      flush();
      reset();
      any = false;
      bin = b;
    }
    x = r.last;
    for (let i = 0; i < k; i++) {
      const col = request[i].col;
      const c = r.count(col);
      if (c === 0) {
        continue;
      }
      any = true;
      min[i] = Math.min(min[i], r.min(col));
      max[i] = Math.max(max[i], r.max(col));
      last[i] = r.lastValue(col);
      sum[i] += r.mean(col) * c;
      n[i] += c;
    }
  }
  flush();
  return out;
}

/** Sorted unique union of step arrays (each sorted). */
export function unionX(xs: number[][]): number[] {
  if (xs.length === 1) {
    return xs[0].slice();
  }
  const all = new Set<number>();
  for (const a of xs) {
    for (const v of a) {
      all.add(v);
    }
  }
  return [...all].sort((a, b) => a - b);
}

/** `values` (at steps `x`) laid on `grid` (a superset of x): null where x has no point. */
export function onGrid(grid: number[], x: number[], values: (number | null)[]): (number | null)[] {
  if (grid.length === x.length) {
    return values.slice();
  }
  const out: (number | null)[] = new Array(grid.length).fill(null);
  let j = 0;
  for (let i = 0; i < grid.length && j < x.length; i++) {
    if (grid[i] === x[j]) {
      out[i] = values[j];
      j++;
    }
  }
  return out;
}
