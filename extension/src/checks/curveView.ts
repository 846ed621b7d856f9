/**
 * The chart of a check result (loss per step, the LR finder's sweep): linear and log axes with
 * readable ticks, series split where a value was NaN/Inf, spikes cut off so the rest stays
 * readable, and one sentence that says what the chart shows. Pure logic.
 */
import type { CheckCurve } from '../protocol';
import { expo, formatNumber, trimZeros } from '../webview/format';
import type { AxisView, CurveView, SeriesView, TickView } from './checkResultTypes';

function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  // `10 ** -4` is 1e-4 in one V8 and a digit off in another (Node 20 vs 24): parse the power
  // instead, and compare with a tolerance, so the same data gets the same ticks everywhere.
  const mag = Number(`1e${Math.floor(Math.log10(raw) + 1e-9)}`);
  const f = raw / mag;
  const near = (x: number, limit: number): boolean => x <= limit * (1 + 1e-9);
  const nice = near(f, 1) ? 1 : near(f, 2) ? 2 : near(f, 2.5) ? 2.5 : near(f, 5) ? 5 : 10;
  return nice * mag;
}

/** A linear tick label: decimals from the step, exponent form for tiny or huge values. */
export function formatLinearTick(value: number, step: number, percent = false): string {
  if (percent) {
    return `${trimZeros((value * 100).toFixed(Math.max(0, -Math.floor(Math.log10(step * 100)))))}%`;
  }
  if (value === 0) {
    return '0';
  }
  const a = Math.abs(value);
  if (a >= 1e5 || step < 1e-3) {
    return expo(value, Math.max(0, Math.min(3, Math.floor(Math.log10(a)) - Math.floor(Math.log10(step)))));
  }
  const decimals = Math.max(0, -Math.floor(Math.log10(step) + 1e-9));
  const s = trimZeros(value.toFixed(Math.min(decimals + 1, 10)));
  return s === '-0' ? '0' : s;
}

/**
 * Ticks for a linear axis over [min, max]. `extend` rounds the axis out to whole steps
 * (y axes); without it the axis keeps the data's range (x axes) and ticks fall inside it.
 */
export function linearAxis(label: string, min: number, max: number, count: number, extend: boolean, percent = false): AxisView {
  if (!(max > min)) {
    const pad = min === 0 ? 1 : Math.abs(min) * 0.5;
    const nonNegative = min >= 0;
    min -= pad;
    max += pad;
    if (nonNegative && min < 0) {
      min = 0; // a step or a loss does not go below zero
    }
  }
  const step = niceStep(max - min, count);
  if (extend) {
    min = Math.floor(min / step + 1e-9) * step;
    max = Math.ceil(max / step - 1e-9) * step;
  }
  const ticks: TickView[] = [];
  const first = Math.ceil(min / step - 1e-9);
  for (let k = first; k * step <= max + step * 1e-9; k++) {
    const value = Number((k * step).toPrecision(12));
    ticks.push({ value, label: formatLinearTick(value, step, percent) });
  }
  return { label, scale: 'linear', min, max, ticks };
}

/** A power of ten as a tick label: 1e-7 … 1e-2, 0.1, 1, 10, 100, 1e3 …. */
export function formatPow10(k: number): string {
  if (k >= -1 && k <= 2) {
    return String(10 ** k);
  }
  return `1e${k}`;
}

/** Decade ticks for a log axis; the axis spans whole decades around [min, max] (both > 0). */
export function logAxis(label: string, min: number, max: number): AxisView {
  let lo = Math.floor(Math.log10(min) + 1e-9);
  let hi = Math.ceil(Math.log10(max) - 1e-9);
  if (hi <= lo) {
    lo -= 1;
    hi += 1;
  }
  const every = Math.max(1, Math.ceil((hi - lo) / 10));
  const ticks: TickView[] = [];
  for (let k = lo; k <= hi; k++) {
    if ((k - lo) % every === 0) {
      ticks.push({ value: 10 ** k, label: formatPow10(k) });
    }
  }
  return { label, scale: 'log', min: 10 ** lo, max: 10 ** hi, ticks };
}

/** The top of a y axis: the data's max, unless a few spikes would flatten the rest of the line. */
export function robustTop(values: number[]): { top: number; clipped: boolean } {
  const sorted = [...values].sort((a, b) => a - b);
  const max = sorted[sorted.length - 1];
  if (sorted.length < 10) {
    return { top: max, clipped: false };
  }
  const q = sorted[Math.floor(0.95 * (sorted.length - 1))];
  const low = sorted[0];
  if (q > low && max - low > 3 * (q - low)) {
    return { top: low + 1.5 * (q - low), clipped: true };
  }
  return { top: max, clipped: false };
}

function firstLast(points: [number, number | null][]): [number, number] | null {
  const ys = points.map((p) => p[1]).filter((y): y is number => y !== null && Number.isFinite(y));
  return ys.length ? [ys[0], ys[ys.length - 1]] : null;
}

/** The series as drawn: finite points, null y where a value was NaN/Inf (the line breaks). */
function seriesViews(curve: CheckCurve, log: boolean): SeriesView[] {
  const hasSmoothed = curve.series.some((s) => /smooth/i.test(s.name));
  return curve.series.map((s) => {
    const axis = s.axis === 'right' ? 'right' : 'left';
    const pts: [number, number | null][] = [];
    let missing = 0;
    for (const p of Array.isArray(s.points) ? s.points : []) {
      const x = p?.[0];
      const y = p?.[1];
      if (typeof x !== 'number' || !Number.isFinite(x) || (log && x <= 0)) {
        missing++;
        continue;
      }
      if (typeof y !== 'number' || !Number.isFinite(y)) {
        missing++;
        pts.push([x, null]);
      } else {
        pts.push([x, y]);
      }
    }
    const faint = hasSmoothed && !/smooth/i.test(s.name) && axis === 'left';
    return { name: s.name, axis, points: pts, missing, clipped: 0, faint, legend: '' };
  });
}

function drawable(s: SeriesView): [number, number][] {
  return s.points.filter((p) => p[1] !== null) as [number, number][];
}

/** Nothing finite to draw: empty axes and a sentence saying why. */
function emptyCurve(curve: CheckCurve, series: SeriesView[], xLabel: string, yLabel: string): CurveView {
  const total = curve.series.reduce((n, s) => n + (Array.isArray(s.points) ? s.points.length : 0), 0);
  const emptyText =
    total === 0
      ? `No points to draw: the run recorded no ${yLabel} values.`
      : `No points to draw: every ${yLabel} value was NaN or Inf.`;
  return {
    x: linearAxis(xLabel, 0, 1, 5, false),
    y: linearAxis(yLabel, 0, 1, 5, true),
    y2: null,
    series: series.map((s) => ({ ...s, legend: legendText(s) })),
    marks: [],
    empty: true,
    emptyText,
    summary: emptyText,
    note: '',
  };
}

interface YAxis {
  axis: AxisView;
  /** Values above this are cut off (Infinity: none). */
  top: number;
  clipped: boolean;
}

/** The y axis of one side, or null when no series on it has a finite value. */
function yAxisFor(series: SeriesView[], side: 'left' | 'right', label: string): YAxis | null {
  const ys = series.filter((s) => s.axis === side).flatMap((s) => drawable(s).map((p) => p[1]));
  if (!ys.length) {
    return null;
  }
  const lo = Math.min(...ys);
  const { top, clipped } = robustTop(ys);
  const unit = lo >= 0 && top <= 1;
  const percent = side === 'right' && unit && /acc/i.test(label);
  if (side === 'right' && unit) {
    return { axis: linearAxis(label, 0, 1, 4, true, percent), top: Infinity, clipped: false };
  }
  // A loss is read against zero (the overfit test is about reaching it); other series from
  // zero when that does not squash them.
  const bottom = lo >= 0 && (/loss/i.test(label) || lo <= top / 2) ? 0 : lo;
  return { axis: linearAxis(label, bottom, top, 5, true), top: clipped ? top : Infinity, clipped };
}

/** One sentence for screen readers: what is plotted, from where to where, what is marked. */
function curveSummary(
  series: SeriesView[],
  right: YAxis | null,
  marks: { x: number; label: string }[],
  x: { label: string; min: number; max: number; log: boolean },
  yLabel: string,
): string {
  const parts = series.map((s) => {
    const fl = firstLast(s.points);
    const percent = s.axis === 'right' && right?.axis.ticks.some((t) => t.label.endsWith('%'));
    const fmt = (v: number) => (percent ? `${Math.round(v * 100)}%` : formatNumber(v));
    return fl ? `${s.name}${s.axis === 'right' ? ' (right axis)' : ''} from ${fmt(fl[0])} to ${fmt(fl[1])}` : `${s.name}: no finite values`;
  });
  const xRange = `${x.label} ${formatNumber(x.min)} to ${formatNumber(x.max)}${x.log ? ' (log scale)' : ''}`;
  const markText = marks.length ? `; marked: ${marks.map((m) => m.label).join(', ')}` : '';
  return `Chart of ${yLabel} against ${xRange}: ${parts.join('; ')}${markText}.`;
}

/** Under the chart: lines broken by NaN/Inf, values cut off at the top. */
function curveNote(series: SeriesView[], left: YAxis): string {
  const notes: string[] = [];
  for (const s of series) {
    const nulls = s.points.filter((p) => p[1] === null).length;
    if (nulls && drawable(s).length === 0) {
      notes.push(`No ${s.name} line: every ${s.name} value was NaN or Inf.`);
    } else if (nulls) {
      notes.push(`The ${s.name} line breaks where the value was NaN or Inf (${nulls} ${nulls === 1 ? 'point' : 'points'}).`);
    }
  }
  const clippedCount = series.reduce((n, s) => n + s.clipped, 0);
  if (clippedCount) {
    notes.push(
      `${clippedCount} ${clippedCount === 1 ? 'value' : 'values'} above ${formatNumber(left.axis.max)} ${clippedCount === 1 ? 'is' : 'are'} cut off at the top so the rest of the curve stays readable.`,
    );
  }
  return notes.join(' ');
}

export function curveView(curve: CheckCurve | null | undefined): CurveView | null {
  if (!curve || !Array.isArray(curve.series)) {
    return null;
  }
  const log = curve.xScale === 'log';
  const series = seriesViews(curve, log);
  const all = series.flatMap(drawable);
  const marks = (Array.isArray(curve.marks) ? curve.marks : []).filter(
    (m) => typeof m?.x === 'number' && Number.isFinite(m.x) && (!log || m.x > 0),
  );
  const xLabel = curve.xLabel || 'x';
  const yLabel = curve.yLabel || 'y';
  if (all.length === 0) {
    return emptyCurve(curve, series, xLabel, yLabel);
  }
  const xs = all.map((p) => p[0]).concat(marks.map((m) => m.x));
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const x = log ? logAxis(xLabel, xMin, xMax) : linearAxis(xLabel, xMin, xMax, 6, false);
  const rightNames = series.filter((s) => s.axis === 'right').map((s) => s.name);
  const left = yAxisFor(series, 'left', yLabel) ?? { axis: linearAxis(yLabel, 0, 1, 5, true), top: Infinity, clipped: false };
  const right = rightNames.length ? yAxisFor(series, 'right', rightNames.join(', ')) : null;
  for (const s of series) {
    const axis = s.axis === 'right' ? right : left;
    if (axis && Number.isFinite(axis.top)) {
      s.clipped = drawable(s).filter((p) => p[1] > axis.axis.max).length;
    }
    s.legend = legendText(s);
  }
  const summary = curveSummary(series, right, marks, { label: xLabel, min: xMin, max: xMax, log }, yLabel);
  return { x, y: left.axis, y2: right?.axis ?? null, series, marks, empty: false, emptyText: '', summary, note: curveNote(series, left) };
}

function legendText(s: SeriesView): string {
  let text = s.name + (s.axis === 'right' ? ' (right axis)' : '');
  if (s.missing) {
    text += ` · ${s.missing} NaN/Inf ${s.missing === 1 ? 'point' : 'points'} not drawn`;
  }
  return text;
}

