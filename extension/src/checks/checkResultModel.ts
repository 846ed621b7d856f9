/**
 * The check-result view, as data: CheckResult → the view model the webview draws
 * (`extension/media/checkResult.js`), the LR-finder CSV, the page's HTML shell and the
 * messages between the page and the extension.
 * Pure logic, no `vscode` import, unit-tested (tests/ts/unit/checkResultModel.test.ts).
 *
 * The page never sees raw data interpolated into HTML: the shell below carries no data, and
 * everything arrives with postMessage as a PageView, which the page writes with textContent.
 */
import { randomBytes } from 'node:crypto';
import type { CheckCurve, CheckExample, CheckResult, CheckTable, TableCell } from '../protocol';

// ---------------------------------------------------------------------------------------------
// View model types (the page's contract; checkResult.js reads exactly these fields)

export type Tone = 'pass' | 'warn' | 'fail' | 'error' | 'cancelled' | 'running';

/** A piece of prose; `code` for the parts the backend wrote between backticks. */
export interface TextPart {
  text: string;
  code: boolean;
}

/**
 * Something to find in a file when no line is known: a class, or a member of a class
 * (`self.fc1 = ...`, `def backward(...)`). Tried in order; the first found wins.
 */
export interface SymbolRef {
  className: string;
  member?: string;
}

/** Where a click goes. `line`/`column` are 1-based; null line: look the symbols up. */
export interface SourceTarget {
  file: string;
  line: number | null;
  column?: number | null;
  symbols?: SymbolRef[];
}

export interface FrameView {
  file: string;
  line: number;
  func: string;
  /** "fwd.py:5 in helper" */
  label: string;
  /** Not the standard library, site-packages or Torch Doctor itself. */
  user: boolean;
}

export interface CellView {
  text: string;
  tone: Tone | null;
}

export interface RowView {
  cells: CellView[];
  error: boolean;
  /** Where Enter/click on the row goes; null: the row is not focusable. */
  target: SourceTarget | null;
  /** Accessible description of the action, e.g. "Open fc1 (Linear) in the editor". */
  action: string | null;
  /** shapes: nesting depth of the module (indents the first cell). */
  depth: number;
}

export interface TableView {
  caption: string;
  columns: string[];
  /** Right-aligned columns (every non-null cell is a number). */
  numeric: boolean[];
  rows: RowView[];
  errorRow: number | null;
}

export interface TickView {
  value: number;
  label: string;
}

export interface AxisView {
  label: string;
  scale: 'linear' | 'log';
  min: number;
  max: number;
  ticks: TickView[];
}

export interface SeriesView {
  name: string;
  axis: 'left' | 'right';
  /** Finite points only where drawable; null y (NaN/Inf) splits the line. */
  points: [number, number | null][];
  /** Points not drawn: NaN/Inf values (and, on a log axis, x <= 0). */
  missing: number;
  /** Values above the axis' top (drawn clipped). */
  clipped: number;
  /** A noisy series drawn under its smoothed twin. */
  faint: boolean;
  /** Legend text. */
  legend: string;
}

export interface CurveView {
  x: AxisView;
  y: AxisView;
  y2: AxisView | null;
  series: SeriesView[];
  marks: { x: number; label: string }[];
  /** Nothing drawable: show `emptyText` instead of a chart. */
  empty: boolean;
  emptyText: string;
  /** One sentence for screen readers (the svg's aria-label). */
  summary: string;
  /** A note under the chart, e.g. values cut off at the top; "" when none. */
  note: string;
}

export interface ErrorView {
  kind: string;
  kindLabel: string;
  /** null when the message is the headline already shown above. */
  message: TextPart[] | null;
  detail: string;
  frames: FrameView[];
  /** The most useful place to go: the syntax error, or the last frame in the user's code. */
  location: (SourceTarget & { label: string }) | null;
}

export interface HeaderView {
  title: string;
  check: string;
  className: string;
  file: string;
  /** The file's base name. */
  fileLabel: string;
  classTarget: SourceTarget | null;
}

export interface VerdictView {
  label: string;
  tone: Tone;
  /** A glyph beside the label, so the verdict is never told by colour alone. */
  icon: string;
}

export interface ResultView {
  kind: 'result';
  header: HeaderView;
  verdict: VerdictView;
  headline: TextPart[];
  sentences: TextPart[][];
  inferred: TextPart[][];
  /** The batch in one line (exampleSummary); "" when none. */
  example: string;
  error: ErrorView | null;
  curve: CurveView | null;
  table: TableView | null;
  snippet: string | null;
  snippetHint: string;
  details: [string, string][];
  footer: string;
  canExportCsv: boolean;
  canRerun: boolean;
}

export interface RunningView {
  kind: 'running';
  header: HeaderView;
  verdict: VerdictView;
  message: string;
  hint: string;
}

export interface MessageView {
  kind: 'message';
  header: HeaderView;
  verdict: VerdictView;
  message: TextPart[];
  canRerun: boolean;
}

export type PageView = ResultView | RunningView | MessageView;

/** Extension → page. */
export interface RenderMessage {
  type: 'render';
  view: PageView;
}

/** Page → extension. */
export type PageMessage =
  | { type: 'ready' }
  | { type: 'openLocation'; file: string; line: number | null; column: number | null; symbols: SymbolRef[] }
  | { type: 'exportCsv' }
  | { type: 'copySnippet' }
  | { type: 'rerun' };

/** What a run was asked for: the argument of showRunning, and of a re-run request. */
export interface CheckRunTarget {
  className: string;
  check: string;
  file: string;
}

// ---------------------------------------------------------------------------------------------
// Small formatters

const TITLES: Record<string, string> = {
  overfit: 'Overfit test',
  'lr-find': 'LR finder',
  gradcheck: 'Gradient check',
  shapes: 'Shape trace',
};

/** "Overfit test" for "overfit"; the id itself for an unknown check. */
export function checkTitle(check: string): string {
  return TITLES[check] ?? check;
}

const VERDICTS: Record<string, VerdictView> = {
  PASS: { label: 'PASS', tone: 'pass', icon: '✓' },
  WARN: { label: 'WARN', tone: 'warn', icon: '!' },
  FAIL: { label: 'FAIL', tone: 'fail', icon: '✗' },
  ERROR: { label: 'ERROR', tone: 'error', icon: '⊘' },
  CANCELLED: { label: 'CANCELLED', tone: 'cancelled', icon: '■' },
};

export function verdictView(verdict: string | null | undefined): VerdictView {
  return VERDICTS[verdict ?? ''] ?? { label: String(verdict ?? 'ERROR'), tone: 'error', icon: '?' };
}

export function baseName(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] || file;
}

/** Split prose at backticks: `act.beta` becomes a code part. Unbalanced backticks stay text. */
export function splitInlineCode(text: string): TextPart[] {
  const pieces = text.split('`');
  if (pieces.length < 3 || pieces.length % 2 === 0) {
    return text ? [{ text, code: false }] : [];
  }
  return pieces.map((p, i) => ({ text: p, code: i % 2 === 1 })).filter((p) => p.text !== '');
}

/** Numbers as a person reads them: 14,210 · 0.02686 · 6.05e-8 · 8.26e-1 stays 0.8262. */
export function formatNumber(n: number): string {
  if (!Number.isFinite(n)) {
    return Number.isNaN(n) ? 'NaN' : n > 0 ? 'Inf' : '-Inf';
  }
  if (Number.isInteger(n) && Math.abs(n) < 1e15) {
    return n.toLocaleString('en-US');
  }
  const a = Math.abs(n);
  if (a < 1e-3 || a >= 1e6) {
    return expo(n, 2);
  }
  return trimZeros(n.toPrecision(4));
}

/** 6.05e-8 rather than 6.05e-08 or 6.050e-8. */
function expo(n: number, digits: number): string {
  const [mant, exp] = n.toExponential(digits).split('e');
  return `${trimZeros(mant)}e${exp.replace('+', '')}`;
}

function trimZeros(s: string): string {
  return s.includes('.') && !s.includes('e') ? s.replace(/0+$/, '').replace(/\.$/, '') : s;
}

/** A table cell as text: a shape [64, 10] as "(64, 10)", [37] as "(37,)", null as "—". */
export function formatCell(cell: TableCell | undefined): string {
  if (cell === null || cell === undefined) {
    return '—';
  }
  if (typeof cell === 'number') {
    return formatNumber(cell);
  }
  if (typeof cell === 'boolean') {
    return cell ? 'yes' : 'no';
  }
  if (Array.isArray(cell)) {
    const inner = cell.map((c) => formatCell(c));
    return inner.length === 1 ? `(${inner[0]},)` : `(${inner.join(', ')})`;
  }
  if (typeof cell === 'string') {
    return cell;
  }
  return JSON.stringify(cell);
}

const CELL_TONES: Record<string, Tone> = {
  PASS: 'pass',
  pass: 'pass',
  OK: 'pass',
  WARN: 'warn',
  warn: 'warn',
  FAIL: 'fail',
  fail: 'fail',
};

/** "9.2 s", "0.07 s", "2 min 5 s"; "" when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    return '';
  }
  if (seconds < 0.1) {
    return `${trimZeros(seconds.toFixed(2))} s`;
  }
  if (seconds < 60) {
    return `${trimZeros(seconds.toFixed(1))} s`;
  }
  const m = Math.floor(seconds / 60);
  return `${m} min ${Math.round(seconds - m * 60)} s`;
}

/** "suggestedLr" → "suggested lr". */
export function humanKey(key: string): string {
  return key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/_/g, ' ')
    .toLowerCase();
}

function formatDetailValue(v: unknown): string {
  if (v === null || v === undefined) {
    return '—';
  }
  if (typeof v === 'number') {
    return formatNumber(v);
  }
  if (typeof v === 'boolean') {
    return v ? 'yes' : 'no';
  }
  if (typeof v === 'string') {
    return v === '' ? '—' : v;
  }
  if (Array.isArray(v)) {
    return v.length ? v.map((x) => formatDetailValue(x)).join(', ') : '—';
  }
  return JSON.stringify(v);
}

// ---------------------------------------------------------------------------------------------
// Tracebacks and locations

const FRAME_RE = /^\s*File "(.+)", line (\d+), in (.+)$/gm;

/** Whether a traceback frame is the user's code (not the stdlib, site-packages or Torch Doctor). */
export function isUserFrame(file: string): boolean {
  if (file.startsWith('<') || !(file.startsWith('/') || /^[A-Za-z]:[\\/]/.test(file))) {
    return false;
  }
  const f = file.replace(/\\/g, '/');
  return !/\/(site-packages|dist-packages)\/|\/lib\/python\d|\/torchdoctor\/(checks|runtime|server)\//.test(f);
}

/** The frames of a Python traceback, outermost first. */
export function parseTraceback(detail: string): FrameView[] {
  const frames: FrameView[] = [];
  for (const m of detail.matchAll(FRAME_RE)) {
    const file = m[1];
    const line = Number(m[2]);
    const func = m[3].trim();
    frames.push({ file, line, func, label: `${baseName(file)}:${line} in ${func}`, user: isUserFrame(file) });
  }
  return frames;
}

/** "… syntax error at line 3, column 23: …" → {line: 3, column: 23}. */
export function syntaxErrorPosition(message: string): { line: number; column: number | null } | null {
  const m = /\bline (\d+)(?:, column (\d+))?/.exec(message);
  return m ? { line: Number(m[1]), column: m[2] ? Number(m[2]) : null } : null;
}

function errorLocation(result: CheckResult, frames: FrameView[]): ErrorView['location'] {
  const err = result.error;
  if (!err) {
    return null;
  }
  if (err.kind === 'syntax-error') {
    const pos = syntaxErrorPosition(err.message);
    if (pos) {
      return { file: result.file, line: pos.line, column: pos.column, label: `${baseName(result.file)}:${pos.line}` };
    }
  }
  const user = frames.filter((f) => f.user);
  const last = user[user.length - 1];
  return last ? { file: last.file, line: last.line, column: null, label: last.label } : null;
}

/** The files a page may ask to open for this result: its own, and those in its traceback. */
export function allowedFiles(result: CheckResult): Set<string> {
  const files = new Set<string>([result.file]);
  for (const f of parseTraceback(result.error?.detail ?? '')) {
    files.add(f.file);
  }
  return files;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The 0-based line of a class, or of a member in it (`self.fc1 = ...`, `fc1: nn.Linear = ...`,
 * `def backward(`), in Python source; the class line when the member is not found; null when
 * the class is not in the text. A qualname (Outer.Inner) is looked up by its last part.
 */
export function findSymbolLine(text: string, symbol: SymbolRef): number | null {
  const lines = text.split(/\r?\n/);
  const name = symbol.className.split('.').pop() ?? symbol.className;
  const classRe = new RegExp(`^(\\s*)class\\s+${escapeRegExp(name)}\\b`);
  let start = -1;
  let indent = 0;
  for (let i = 0; i < lines.length; i++) {
    const m = classRe.exec(lines[i]);
    if (m) {
      start = i;
      indent = m[1].length;
      break;
    }
  }
  if (start < 0) {
    return null;
  }
  if (!symbol.member) {
    return start;
  }
  const member = escapeRegExp(symbol.member);
  const memberRes = [
    new RegExp(`^\\s*self\\.${member}\\s*(:[^=]*)?=(?!=)`),
    new RegExp(`^\\s*(async\\s+)?def\\s+${member}\\s*\\(`),
    new RegExp(`^\\s*${member}\\s*(:[^=]*)?=(?!=)`),
  ];
  let best: { line: number; rank: number } | null = null;
  for (let i = start + 1; i < lines.length; i++) {
    const line = lines[i];
    if (line.trim() !== '' && !line.trim().startsWith('#') && line.length - line.trimStart().length <= indent) {
      break; // left the class body
    }
    const rank = memberRes.findIndex((re) => re.test(line));
    if (rank >= 0 && (!best || rank < best.rank)) {
      best = { line: i, rank };
    }
  }
  return best ? best.line : start;
}

// ---------------------------------------------------------------------------------------------
// Table

const TABLE_CAPTIONS: Record<string, string> = {
  shapes: 'Modules in call order: input and output shapes',
  gradcheck: 'Parameters: analytical vs numerical gradient',
};

function columnIndex(table: CheckTable, name: string): number {
  return table.columns.findIndex((c) => c.toLowerCase() === name);
}

function leadingIdentifier(s: string): string | null {
  const m = /^([A-Za-z_][A-Za-z0-9_]*)/.exec(s);
  return m ? m[1] : null;
}

/** Where a table row points in the model's source (a layer's definition, a custom backward). */
export function rowTarget(result: CheckResult, row: TableCell[]): { target: SourceTarget; action: string } | null {
  const table = result.table;
  if (!table) {
    return null;
  }
  const own = (member?: string): SymbolRef => (member ? { className: result.className, member } : { className: result.className });
  const moduleCol = columnIndex(table, 'module');
  if (moduleCol >= 0 && typeof row[moduleCol] === 'string') {
    const name = row[moduleCol] as string;
    const typeCol = columnIndex(table, 'type');
    const type = typeCol >= 0 && typeof row[typeCol] === 'string' ? ` (${row[typeCol]})` : '';
    const first = name.startsWith('(') ? null : leadingIdentifier(name);
    const symbols = first ? [own(first)] : [own()];
    return {
      target: { file: result.file, line: null, symbols },
      action: first ? `Open ${name}${type} in the editor` : `Open ${result.className} in the editor`,
    };
  }
  const paramCol = columnIndex(table, 'parameter');
  if (paramCol >= 0 && typeof row[paramCol] === 'string') {
    const name = row[paramCol] as string;
    const first = leadingIdentifier(name);
    const symbols: SymbolRef[] = [];
    const fromCol = columnIndex(table, 'gradient from');
    const from = fromCol >= 0 && typeof row[fromCol] === 'string' ? (row[fromCol] as string) : 'autograd';
    const fn = from !== 'autograd' ? leadingIdentifier(from) : null;
    if (fn) {
      symbols.push({ className: fn, member: 'backward' });
    }
    symbols.push(first ? own(first) : own());
    return {
      target: { file: result.file, line: null, symbols },
      action: fn ? `Open the backward of ${fn} in the editor` : `Open ${name} in the editor`,
    };
  }
  return null;
}

export function tableView(result: CheckResult): TableView | null {
  const table = result.table;
  if (!table || !Array.isArray(table.columns)) {
    return null;
  }
  const rows = Array.isArray(table.rows) ? table.rows : [];
  const numeric = table.columns.map((_, c) => {
    const vals = rows.map((r) => r[c]).filter((v) => v !== null && v !== undefined && v !== '');
    return vals.length > 0 && vals.every((v) => typeof v === 'number');
  });
  const depthCol = columnIndex(table, 'depth');
  const errorRow = typeof table.errorRow === 'number' && table.errorRow >= 0 && table.errorRow < rows.length ? table.errorRow : null;
  return {
    caption: TABLE_CAPTIONS[result.check] ?? 'Results',
    columns: table.columns.map(String),
    numeric,
    errorRow,
    rows: rows.map((row, i) => {
      const where = rowTarget(result, row);
      const depth = depthCol >= 0 && typeof row[depthCol] === 'number' ? Math.max(0, Math.min(8, row[depthCol] as number)) : 0;
      return {
        cells: table.columns.map((_, c) => {
          const v = row[c];
          return { text: formatCell(v), tone: typeof v === 'string' ? (CELL_TONES[v] ?? null) : null };
        }),
        error: i === errorRow,
        target: where?.target ?? null,
        action: where?.action ?? null,
        depth,
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Chart axes

function niceStep(span: number, count: number): number {
  const raw = span / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const f = raw / mag;
  const nice = f <= 1 ? 1 : f <= 2 ? 2 : f <= 2.5 ? 2.5 : f <= 5 ? 5 : 10;
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

export function curveView(curve: CheckCurve | null | undefined): CurveView | null {
  if (!curve || !Array.isArray(curve.series)) {
    return null;
  }
  const log = curve.xScale === 'log';
  const names = curve.series.map((s) => s.name);
  const hasSmoothed = names.some((n) => /smooth/i.test(n));
  const series: SeriesView[] = curve.series.map((s) => {
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

  const drawable = (s: SeriesView) => s.points.filter((p) => p[1] !== null) as [number, number][];
  const all = series.flatMap(drawable);
  const marks = (Array.isArray(curve.marks) ? curve.marks : []).filter(
    (m) => typeof m?.x === 'number' && Number.isFinite(m.x) && (!log || m.x > 0),
  );
  const xLabel = curve.xLabel || 'x';
  const yLabel = curve.yLabel || 'y';
  if (all.length === 0) {
    const total = curve.series.reduce((n, s) => n + (Array.isArray(s.points) ? s.points.length : 0), 0);
    const emptyText =
      total === 0
        ? `No points to draw: the run recorded no ${yLabel} values.`
        : `No points to draw: every ${yLabel} value was NaN or Inf.`;
    const axis = linearAxis(xLabel, 0, 1, 5, false);
    return {
      x: axis,
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

  const xs = all.map((p) => p[0]).concat(marks.map((m) => m.x));
  const xMin = Math.min(...xs);
  const xMax = Math.max(...xs);
  const x = log ? logAxis(xLabel, xMin, xMax) : linearAxis(xLabel, xMin, xMax, 6, false);

  const yAxis = (side: 'left' | 'right', label: string): { axis: AxisView; top: number; clipped: boolean } | null => {
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
  };
  const rightNames = series.filter((s) => s.axis === 'right').map((s) => s.name);
  const left = yAxis('left', yLabel) ?? { axis: linearAxis(yLabel, 0, 1, 5, true), top: Infinity, clipped: false };
  const right = rightNames.length ? yAxis('right', rightNames.join(', ')) : null;
  for (const s of series) {
    const axis = s.axis === 'right' ? right : left;
    if (axis && Number.isFinite(axis.top)) {
      s.clipped = drawable(s).filter((p) => p[1] > axis.axis.max).length;
    }
    s.legend = legendText(s);
  }

  const parts = series.map((s) => {
    const fl = firstLast(s.points);
    const fmt = (v: number) => (s.axis === 'right' && right?.axis.ticks.some((t) => t.label.endsWith('%')) ? `${Math.round(v * 100)}%` : formatNumber(v));
    return fl ? `${s.name}${s.axis === 'right' ? ' (right axis)' : ''} from ${fmt(fl[0])} to ${fmt(fl[1])}` : `${s.name}: no finite values`;
  });
  const xRange = `${xLabel} ${formatNumber(xMin)} to ${formatNumber(xMax)}${log ? ' (log scale)' : ''}`;
  const markText = marks.length ? `; marked: ${marks.map((m) => m.label).join(', ')}` : '';
  const summary = `Chart of ${yLabel} against ${xRange}: ${parts.join('; ')}${markText}.`;
  const clippedCount = series.reduce((n, s) => n + s.clipped, 0);
  const notes: string[] = [];
  for (const s of series) {
    const nulls = s.points.filter((p) => p[1] === null).length;
    if (nulls && drawable(s).length === 0) {
      notes.push(`No ${s.name} line: every ${s.name} value was NaN or Inf.`);
    } else if (nulls) {
      notes.push(`The ${s.name} line breaks where the value was NaN or Inf (${nulls} ${nulls === 1 ? 'point' : 'points'}).`);
    }
  }
  if (clippedCount) {
    notes.push(
      `${clippedCount} ${clippedCount === 1 ? 'value' : 'values'} above ${formatNumber(left.axis.max)} ${clippedCount === 1 ? 'is' : 'are'} cut off at the top so the rest of the curve stays readable.`,
    );
  }
  const note = notes.join(' ');
  return { x, y: left.axis, y2: right?.axis ?? null, series, marks, empty: false, emptyText: '', summary, note };
}

function legendText(s: SeriesView): string {
  let text = s.name + (s.axis === 'right' ? ' (right axis)' : '');
  if (s.missing) {
    text += ` · ${s.missing} NaN/Inf ${s.missing === 1 ? 'point' : 'points'} not drawn`;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Result → view

const ERROR_KINDS: Record<string, string> = {
  'no-interpreter': 'No Python interpreter',
  'no-torch': 'torch is not installed',
  'syntax-error': 'Syntax error',
  'import-error': 'Import error',
  'no-class': 'Class not found',
  'needs-example': 'Needs torchdoctor_example()',
  'bad-example': 'torchdoctor_example() failed',
  'constructor-error': 'The constructor raised',
  'needs-cuda': 'Needs CUDA',
  'forward-error': 'The forward raised',
  timeout: 'Time limit reached',
  'worker-crash': 'The worker crashed',
  usage: 'Usage error',
  internal: 'Internal error',
};

export function errorKindLabel(kind: string): string {
  return ERROR_KINDS[kind] ?? kind;
}

function dtypeName(d: string | null | undefined): string {
  return (d ?? '').replace(/^torch\./, '');
}

function shapeText(shape: number[] | null | undefined): string {
  return Array.isArray(shape) ? formatCell(shape) : '?';
}

/**
 * The batch in one line: "Batch (inferred): input (8, 20) float32 · targets (8,) int64 ·
 * cross-entropy loss"; "" when the run got no batch.
 */
export function exampleSummary(example: CheckExample | null | undefined): string {
  if (!example) {
    return '';
  }
  const parts: string[] = [];
  const shapes = Array.isArray(example.inputShapes) ? example.inputShapes : [];
  const dtypes = Array.isArray(example.inputDtypes) ? example.inputDtypes : [];
  if (shapes.length) {
    const ins = shapes.map((s, i) => `${shapeText(s)} ${dtypeName(dtypes[i])}`.trim());
    parts.push(`${shapes.length === 1 ? 'input' : 'inputs'} ${ins.join(', ')}`);
  }
  if (example.targetShape) {
    parts.push(`targets ${shapeText(example.targetShape)} ${dtypeName(example.targetDtype)}`.trim());
  }
  if (example.loss) {
    parts.push(`${example.loss} loss`);
  }
  const source = example.source === 'torchdoctor_example' ? 'from torchdoctor_example()' : 'inferred';
  return `Batch (${source}): ${parts.join(' · ')}`;
}

function headerView(title: string, check: string, className: string, file: string): HeaderView {
  return {
    title,
    check,
    className,
    file,
    fileLabel: file ? baseName(file) : '',
    classTarget: file && className ? { file, line: null, symbols: [{ className }] } : null,
  };
}

function curveHasPoints(result: CheckResult): boolean {
  return !!result.curve?.series?.some((s) => Array.isArray(s.points) && s.points.length > 0);
}

/** The whole page for one CheckResult. */
export function buildResultView(result: CheckResult): ResultView {
  const verdict = verdictView(result.verdict);
  const headline = result.headline || `${result.title || checkTitle(result.check)}: ${verdict.label}`;
  let error: ErrorView | null = null;
  if (result.error) {
    const frames = parseTraceback(result.error.detail ?? '');
    const same = (result.error.message ?? '').trim() === headline.trim();
    error = {
      kind: result.error.kind,
      kindLabel: errorKindLabel(result.error.kind),
      message: same || !result.error.message ? null : splitInlineCode(result.error.message),
      detail: result.error.detail ?? '',
      frames,
      location: errorLocation(result, frames),
    };
  }
  const fileLabel = baseName(result.file || '');
  const snippetHint =
    result.error?.kind === 'needs-example'
      ? `Add this to ${fileLabel} (or to a sibling torchdoctor_example.py), fill in the ..., and run the check again.`
      : `Add this to ${fileLabel}:`;
  const footerParts: string[] = [];
  const dur = formatDuration(result.durationSeconds);
  if (dur) {
    footerParts.push(`Ran in ${dur}`);
  }
  if (result.python) {
    footerParts.push(`Python: ${result.python}`);
  }
  const details = Object.entries(result.details ?? {})
    .filter(([, v]) => typeof v !== 'object' || v === null || Array.isArray(v))
    .map(([k, v]) => [humanKey(k), formatDetailValue(v)] as [string, string]);
  return {
    kind: 'result',
    header: headerView(result.title || checkTitle(result.check), result.check, result.className, result.file),
    verdict,
    headline: splitInlineCode(headline),
    sentences: (result.sentences ?? []).map(splitInlineCode),
    inferred: (result.inferred ?? []).map(splitInlineCode),
    example: exampleSummary(result.example),
    error,
    curve: curveView(result.curve),
    table: tableView(result),
    snippet: result.snippet ?? null,
    snippetHint,
    details,
    footer: footerParts.join(' · '),
    canExportCsv: result.check === 'lr-find' && curveHasPoints(result),
    canRerun: true,
  };
}

export function runningView(args: CheckRunTarget): RunningView {
  const title = checkTitle(args.check);
  return {
    kind: 'running',
    header: headerView(title, args.check, args.className, args.file),
    verdict: { label: 'RUNNING', tone: 'running', icon: '…' },
    message: `Running the ${title} on ${args.className}…`,
    hint: 'Progress, and Cancel, are in the notification.',
  };
}

/** A failure that produced no CheckResult (the backend is down, the request failed). */
export function messageView(message: string, args: CheckRunTarget | null): MessageView {
  return {
    kind: 'message',
    header: args
      ? headerView(checkTitle(args.check), args.check, args.className, args.file)
      : headerView('Torch Doctor', '', '', ''),
    verdict: verdictView('ERROR'),
    message: splitInlineCode(message),
    canRerun: !!args,
  };
}

// ---------------------------------------------------------------------------------------------
// LR finder CSV

/** `<className>-lr-finder.csv`, with characters unsafe in a file name replaced. */
export function csvFileName(className: string): string {
  const safe = (className || 'model').replace(/[^A-Za-z0-9_.-]/g, '_');
  return `${safe}-lr-finder.csv`;
}

function csvNumber(v: number | null | undefined): string {
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : '';
}

/**
 * The LR finder's sweep as CSV: `lr,loss,smoothed_loss`, one row per learning rate, in sweep
 * order; an empty cell for a NaN/Inf loss. null when the result has no sweep to export.
 */
export function lrFinderCsv(result: CheckResult): string | null {
  const series = result.curve?.series ?? [];
  if (result.check !== 'lr-find' || series.length === 0) {
    return null;
  }
  const loss = series.find((s) => s.name === 'loss') ?? series.find((s) => !/smooth/i.test(s.name)) ?? series[0];
  const smoothed = series.find((s) => s !== loss && /smooth/i.test(s.name)) ?? null;
  const smoothedByLr = new Map<number, number | null>();
  for (const [lr, y] of smoothed?.points ?? []) {
    smoothedByLr.set(lr, y);
  }
  const lines = ['lr,loss,smoothed_loss'];
  for (const [lr, y] of loss.points ?? []) {
    if (typeof lr !== 'number' || !Number.isFinite(lr)) {
      continue;
    }
    lines.push(`${csvNumber(lr)},${csvNumber(y)},${csvNumber(smoothedByLr.get(lr))}`);
  }
  return `${lines.join('\n')}\n`;
}

// ---------------------------------------------------------------------------------------------
// The page's HTML shell and its messages

export function makeNonce(): string {
  return randomBytes(18).toString('base64');
}

export function contentSecurityPolicy(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src ${cspSource}`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
  ].join('; ');
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The page: a CSP meta, the stylesheet, an empty <main> and the script. No data: the view
 * arrives with postMessage. Every argument comes from VS Code (webview.cspSource,
 * asWebviewUri) or makeNonce; they are escaped anyway.
 */
export function renderHtml(opts: { cspSource: string; nonce: string; scriptUri: string; styleUri: string }): string {
  const csp = escapeAttr(contentSecurityPolicy(opts.cspSource, opts.nonce));
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${escapeAttr(opts.styleUri)}">
<title>Torch Doctor check result</title>
</head>
<body>
<main id="app" aria-live="polite"></main>
<script nonce="${escapeAttr(opts.nonce)}" src="${escapeAttr(opts.scriptUri)}"></script>
</body>
</html>
`;
}

function isSymbolRef(v: unknown): v is SymbolRef {
  if (!v || typeof v !== 'object') {
    return false;
  }
  const o = v as Record<string, unknown>;
  return typeof o.className === 'string' && (o.member === undefined || typeof o.member === 'string');
}

function positiveInt(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 ? v : null;
}

/** A message from the page, checked field by field; undefined for anything else. */
export function parsePageMessage(raw: unknown): PageMessage | undefined {
  if (!raw || typeof raw !== 'object') {
    return undefined;
  }
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case 'ready':
    case 'exportCsv':
    case 'copySnippet':
    case 'rerun':
      return { type: m.type };
    case 'openLocation': {
      if (typeof m.file !== 'string' || m.file === '') {
        return undefined;
      }
      const symbols = Array.isArray(m.symbols) ? m.symbols.filter(isSymbolRef).slice(0, 5) : [];
      return { type: 'openLocation', file: m.file, line: positiveInt(m.line), column: positiveInt(m.column), symbols };
    }
    default:
      return undefined;
  }
}
