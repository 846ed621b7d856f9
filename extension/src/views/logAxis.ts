/**
 * The gradient-flow view's shared log axis: whole decades from 1e-9 to 1e3 or wider to fit the
 * data, and the bars drawn on it (below/above the axis, zero, no gradient, NaN, Inf). Pure logic.
 */
import { formatMagnitude } from '../webview/format';
import type { BarView, LogAxisView, TickView } from './viewTypes';


/** The default span, 1e-9 .. 1e3: the vanishing (1e-7) and exploding (100) thresholds fit in. */
export const AXIS_LO = -9;
export const AXIS_HI = 3;
/** Float limits: beyond these an axis would be all empty decades. */
const AXIS_FLOOR = -45;
const AXIS_CEIL = 39;

export function formatPow(exp: number): string {
  return exp === 0 ? '1' : `1e${exp}`;
}

/** Whole decades covering 1e-9..1e3 and every finite positive value given. */
export function logAxis(values: (number | null)[]): LogAxisView {
  let lo = AXIS_LO;
  let hi = AXIS_HI;
  for (const v of values) {
    if (typeof v === 'number' && Number.isFinite(v) && v > 0) {
      const e = Math.log10(v);
      lo = Math.min(lo, Math.floor(e + 1e-9));
      hi = Math.max(hi, Math.ceil(e - 1e-9));
    }
  }
  lo = Math.max(lo, AXIS_FLOOR);
  hi = Math.min(hi, AXIS_CEIL);
  const ticks: TickView[] = [];
  for (let e = lo; e <= hi; e++) {
    ticks.push({ exp: e, label: formatPow(e), fraction: (e - lo) / (hi - lo) });
  }
  return { lo, hi, ticks };
}

/** Where v (> 0) falls on the axis, 0..1 (clamped). */
export function logFraction(v: number, axis: LogAxisView): number {
  const f = (Math.log10(v) - axis.lo) / (axis.hi - axis.lo);
  return Math.min(1, Math.max(0, f));
}

/** A stub of this fraction stands for a value under the axis. */
const BELOW_FRACTION = 0.006;

export function barView(value: number | null, axis: LogAxisView, nan: boolean, inf: boolean): BarView {
  if (value === null) {
    if (nan) {
      return { kind: 'nan', fraction: 0, text: 'NaN' };
    }
    if (inf) {
      return { kind: 'inf', fraction: 1, text: 'Inf' };
    }
    return { kind: 'none', fraction: 0, text: '—' };
  }
  if (Number.isNaN(value)) {
    return { kind: 'nan', fraction: 0, text: 'NaN' };
  }
  const a = Math.abs(value);
  if (!Number.isFinite(a)) {
    return { kind: 'inf', fraction: 1, text: 'Inf' };
  }
  if (a === 0) {
    return { kind: 'zero', fraction: 0, text: '0' };
  }
  const e = Math.log10(a);
  if (e < axis.lo) {
    return { kind: 'below', fraction: BELOW_FRACTION, text: formatMagnitude(a) };
  }
  if (e > axis.hi) {
    return { kind: 'above', fraction: 1, text: formatMagnitude(a) };
  }
  return { kind: 'value', fraction: Math.max(logFraction(a, axis), BELOW_FRACTION), text: formatMagnitude(a) };
}
