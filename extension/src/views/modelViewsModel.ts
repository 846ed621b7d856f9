/**
 * The gradient-flow and shape-trace views, as data: the backend's view models
 * (torchDoctor/diagnoseSnapshot) → what the pages draw (extension/media/gradientFlow.js,
 * shapeTrace.js), the state pages (loading, not paused, no model...), the HTML shell and the
 * messages between the pages and the extension.
 * Pure logic, no `vscode` import, unit-tested (tests/ts/unit/modelViewsModel.test.ts).
 *
 * Nothing from the debuggee is interpolated into HTML: the shell carries no data; every view
 * arrives with postMessage and the pages write it with textContent. The backend's payload is
 * checked field by field here, so a missing or mistyped field draws as "—", never throws.
 */
import { baseName, contentSecurityPolicy, formatNumber, splitInlineCode, TextPart } from '../checks/checkResultModel';
import type {
  DiagnosisSeverity,
  GradientFlowModel,
  ModuleLocation,
  ShapeTraceModel,
  TensorMeta,
} from '../protocol';

export { makeNonce } from '../checks/checkResultModel';
export type { TextPart } from '../checks/checkResultModel';

// ---------------------------------------------------------------------------------------------
// View model types (the pages' contract; gradientFlow.js / shapeTrace.js read exactly these)

export type ViewKind = 'gradientFlow' | 'shapeTrace';

export const VIEW_TITLES: Record<ViewKind, string> = {
  gradientFlow: 'Gradient Flow',
  shapeTrace: 'Shape Trace',
};

export type Tone = 'error' | 'warning' | 'info';

/** Where a click goes: a file of the debuggee, 1-based line. */
export interface Target {
  file: string;
  line: number;
}

export interface FlagView {
  tone: Tone;
  /** A glyph beside the text, so the severity is never told by colour alone. */
  icon: string;
  /** "Error", "Warning", "Note": read by screen readers, shown as the glyph's title. */
  label: string;
  rule: string;
  /** Prose; the backend's `code` (between backticks) as code parts. */
  sentence: TextPart[];
  suggestion: TextPart[];
  /** The sentence as plain text (tooltips, screen-reader labels, folding). */
  plain: string;
}

export interface VerdictView extends FlagView {
  module: string | null;
  target: Target | null;
}

/**
 * One bar on the shared log axis. value: a finite magnitude drawn to `fraction` of the track;
 * below/above: outside the axis (drawn as a stub / full with an arrow); zero, none (no
 * gradient), nan, inf: no bar, `text` says which.
 */
export type BarKind = 'value' | 'below' | 'above' | 'zero' | 'none' | 'nan' | 'inf';

export interface BarView {
  kind: BarKind;
  /** 0..1 along the track. */
  fraction: number;
  /** The number as shown beside the bar ("3.2e-4", "0", "NaN", "—"). */
  text: string;
}

export interface TickView {
  /** The power of ten. */
  exp: number;
  label: string;
  fraction: number;
}

export interface LogAxisView {
  /** The axis spans 10^lo .. 10^hi, whole decades. */
  lo: number;
  hi: number;
  ticks: TickView[];
}

export interface GradientRowView {
  index: number;
  name: string;
  module: string;
  type: string;
  mean: BarView;
  max: BarView;
  norm: string;
  /** "NaN", "3 Inf", "NaN and Inf" in the gradient; "" when clean. */
  nonFinite: string;
  /** Why there is no gradient ("frozen (requires_grad=False)"); "" when there is one. */
  note: string;
  /** Modified in place since the backward: the numbers are of its current values. */
  changed: boolean;
  flags: FlagView[];
  /**
   * The flags written out under the row. A run of consecutive rows flagged by the same rule
   * with the same next step (40 layers with vanishing gradients) writes its sentence once,
   * under its first row, with `repeats` = how many rows below share it; those rows show only
   * their icon (their own sentence is in `label`).
   */
  details: { flag: FlagView; repeats: number }[];
  /** The most severe flag's tone, or null. */
  tone: Tone | null;
  target: Target | null;
  /** One sentence for screen readers and the tooltip. */
  label: string;
}

/** Over the data: why it may be out of date. */
export interface Banner {
  state: 'stale' | 'running' | 'refreshing';
  text: string;
}

export interface GradientFlowPage {
  kind: 'gradientFlow';
  title: string;
  subtitle: string;
  summary: TextPart[];
  verdicts: VerdictView[];
  rows: GradientRowView[];
  /** No rows (no backward yet) while verdicts have something to say: this, instead of the table. */
  emptyText: string;
  axis: LogAxisView;
  /** The vanishing and exploding thresholds, drawn as dashed lines across the bars. */
  thresholds: { kind: 'vanishing' | 'exploding'; value: number; label: string; fraction: number }[];
  counts: { rows: number; flagged: number; error: number; warning: number; info: number };
  banner: Banner | null;
}

export interface ShapeRowView {
  index: number;
  path: string;
  /** The last path segment ("0" of "features.0"); the model itself is "(model)". */
  name: string;
  type: string;
  depth: number;
  input: string;
  output: string;
  params: string;
  /** "float32 → float16" when the module changes the dtype; "" otherwise. */
  dtypeNote: string;
  deviceNote: string;
  failed: boolean;
  /** Did not return: it encloses the failing module, or the program is paused inside it. */
  unfinished: boolean;
  /** The innermost call not returned: the program is paused inside it. */
  paused: boolean;
  /** "mean 0.01 · std 1 · zeros 73%" of its first output; "" when not measured. */
  activation: string;
  /** Activation findings (dead units, collapsed, exploding, NaN/Inf), most severe first. */
  flags: FlagView[];
  tone: Tone | null;
  target: Target | null;
  label: string;
}

export interface ShapeTracePage {
  kind: 'shapeTrace';
  title: string;
  subtitle: string;
  summary: TextPart[];
  rows: ShapeRowView[];
  /**
   * The shape error and the module that raised it; null when the forward completed.
   * where: "classifier.0 (Linear)", or "Net (its own forward)"; error: the exception line(s);
   * explanation: the plain words ([] when none).
   */
  failure: {
    module: string;
    type: string;
    where: string;
    error: string;
    explanation: TextPart[];
    target: Target | null;
    row: number | null;
  } | null;
  /** "All tensors float32 on cpu" when nothing changes; "" otherwise. */
  uniform: string;
  counts: { modules: number; changes: number; flagged: number };
  banner: Banner | null;
}

export type MessageState =
  | 'loading'
  | 'no-session'
  | 'not-paused'
  | 'no-model'
  | 'no-runtime'
  | 'backend'
  | 'empty'
  | 'error';

export interface MessagePage {
  kind: 'message';
  view: ViewKind;
  title: string;
  subtitle: string;
  state: MessageState;
  headline: string;
  text: string;
  /** A traceback or the adapter's words, folded under the message; "" when none. */
  detail: string;
  canRefresh: boolean;
}

export type ModelPageView = GradientFlowPage | ShapeTracePage | MessagePage;

/** Extension → page. */
export interface RenderMessage {
  type: 'render';
  view: ModelPageView;
}

/** Page → extension. */
export type ModelPageMessage = { type: 'ready' } | { type: 'refresh' } | { type: 'openLocation'; file: string; line: number };

// ---------------------------------------------------------------------------------------------
// Checking the backend's payload

function str(v: unknown, fallback = ''): string {
  return typeof v === 'string' ? v : fallback;
}

function arr(v: unknown): unknown[] {
  return Array.isArray(v) ? v : [];
}

function obj(v: unknown): Record<string, unknown> {
  return v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** A statistic: a number, or "nan" / "inf" / "-inf" (JSON has no NaN), or null. */
export function statValue(v: unknown): number | null {
  if (typeof v === 'number') {
    return v;
  }
  if (typeof v === 'string') {
    const t = v.trim().toLowerCase();
    if (t === 'nan') {
      return NaN;
    }
    if (t === 'inf' || t === '+inf' || t === 'infinity' || t === '+infinity') {
      return Infinity;
    }
    if (t === '-inf' || t === '-infinity') {
      return -Infinity;
    }
    const n = Number(t);
    return t !== '' && Number.isFinite(n) ? n : null;
  }
  return null;
}

/** A location the page may open: an absolute-looking file and a positive line. */
export function targetOf(v: unknown): Target | null {
  const o = obj(v) as Partial<ModuleLocation>;
  if (typeof o.file !== 'string' || o.file === '') {
    return null;
  }
  const line = typeof o.line === 'number' && Number.isFinite(o.line) && o.line >= 1 ? Math.floor(o.line) : 1;
  return { file: o.file, line };
}

const SEVERITY: Record<DiagnosisSeverity, { icon: string; label: string; rank: number }> = {
  error: { icon: '✖', label: 'Error', rank: 3 },
  warning: { icon: '⚠', label: 'Warning', rank: 2 },
  info: { icon: 'ℹ', label: 'Note', rank: 1 },
};

function toneOf(v: unknown): Tone {
  return v === 'error' || v === 'warning' || v === 'info' ? v : 'warning';
}

export function flagView(v: unknown): FlagView | null {
  const o = obj(v);
  const sentence = str(o.sentence).trim();
  if (!sentence) {
    return null;
  }
  const tone = toneOf(o.severity);
  return {
    tone,
    icon: SEVERITY[tone].icon,
    label: SEVERITY[tone].label,
    rule: str(o.rule),
    sentence: splitInlineCode(sentence),
    suggestion: splitInlineCode(str(o.suggestion).trim()),
    plain: plainText(sentence),
  };
}

/** Prose without the backticks that mark code. */
export function plainText(text: string): string {
  return splitInlineCode(text)
    .map((p) => p.text)
    .join('');
}

function worst(flags: FlagView[]): Tone | null {
  let best: Tone | null = null;
  for (const f of flags) {
    if (!best || SEVERITY[f.tone].rank > SEVERITY[best].rank) {
      best = f.tone;
    }
  }
  return best;
}

/** Flags sorted most severe first (stable). */
function bySeverity<T extends FlagView>(flags: T[]): T[] {
  return flags
    .map((f, i) => ({ f, i }))
    .sort((a, b) => SEVERITY[b.f.tone].rank - SEVERITY[a.f.tone].rank || a.i - b.i)
    .map((x) => x.f);
}

// ---------------------------------------------------------------------------------------------
// Log axis and bars

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

/** A magnitude as text: 3 significant digits, exponent form outside [1e-3, 1e3). */
export function formatMagnitude(v: number): string {
  if (Number.isNaN(v)) {
    return 'NaN';
  }
  if (!Number.isFinite(v)) {
    return v > 0 ? 'Inf' : '-Inf';
  }
  if (v === 0) {
    return '0';
  }
  const a = Math.abs(v);
  if (a < 1e-3 || a >= 1e3) {
    const [mant, exp] = v.toExponential(2).split('e');
    return `${mant.replace(/\.?0+$/, '')}e${exp.replace('+', '')}`;
  }
  return String(Number(v.toPrecision(3)));
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

function countText(v: unknown, what: string): string {
  if (typeof v === 'number' && v > 0) {
    return `${formatNumber(v)} ${what}`;
  }
  return v === true ? what : '';
}

function nonFiniteText(nan: unknown, inf: unknown): string {
  const parts = [countText(nan, 'NaN'), countText(inf, 'Inf')].filter(Boolean);
  return parts.join(' and ');
}

// ---------------------------------------------------------------------------------------------
// Gradient flow

export interface PageContext {
  /** "Train CNN · paused (breakpoint) at 14:03:12": under the title. */
  subtitle: string;
  banner?: Banner | null;
}

export function gradientFlowPage(model: GradientFlowModel | null | undefined, ctx: PageContext): GradientFlowPage | MessagePage {
  const m = obj(model);
  const rawRows = arr(m.rows);
  const summaryText = str(m.summary).trim();
  const stats = rawRows.map((r) => {
    const o = obj(r);
    return { o, mean: statValue(o.meanAbs), max: statValue(o.maxAbs), norm: statValue(o.norm) };
  });
  const th = obj(m.thresholds);
  const thresholdValues = [statValue(th.vanishingGradient), statValue(th.explodingGradient)];
  const axis = logAxis([...stats.flatMap((s) => [s.mean, s.max]), ...thresholdValues]);
  const counts = { rows: stats.length, flagged: 0, error: 0, warning: 0, info: 0 };
  const rows: GradientRowView[] = stats.map((s, index) => {
    const o = s.o;
    const nan = !!o.nan || (s.mean !== null && Number.isNaN(s.mean));
    const inf = !!o.inf || (s.max !== null && Math.abs(s.max) === Infinity);
    const flags = bySeverity(arr(o.flags).map(flagView).filter((f): f is FlagView => f !== null));
    const tone = worst(flags);
    if (tone) {
      counts.flagged++;
      counts[tone]++;
    }
    const name = str(o.name) || str(o.module) || `parameter ${index + 1}`;
    const type = str(o.type);
    const mean = barView(s.mean, axis, nan, false);
    const max = barView(s.max, axis, nan, inf);
    const nonFinite =
      nonFiniteText(o.nan, o.inf) || (mean.kind === 'nan' || max.kind === 'nan' ? 'NaN' : max.kind === 'inf' ? 'Inf' : '');
    const note = mean.kind === 'none' && max.kind === 'none' ? str(o.note).trim() : '';
    const changed = o.changed === true;
    const target = targetOf(o.location);
    const parts = [`${name}${type ? ` (${type})` : ''}: mean |g| ${mean.text}, max |g| ${max.text}`];
    if (nonFinite) {
      parts.push(`${nonFinite} in the gradient`);
    }
    if (note) {
      parts.push(note);
    }
    if (changed) {
      parts.push('modified in place since the backward');
    }
    for (const f of flags) {
      parts.push(`${f.label}: ${f.plain}`);
    }
    return {
      index,
      name,
      module: str(o.module),
      type,
      mean,
      max,
      norm: s.norm === null ? '—' : formatMagnitude(Math.abs(s.norm)),
      nonFinite,
      note,
      changed,
      flags,
      details: [],
      tone,
      target,
      label: parts.join('. ') + (target ? `. Enter opens ${baseName(target.file)}:${target.line}.` : '.'),
    };
  });
  foldRepeatedFlags(rows);
  const targetsByModule = new Map<string, Target>();
  for (const r of rows) {
    if (r.target && r.module && !targetsByModule.has(r.module)) {
      targetsByModule.set(r.module, r.target);
    }
  }
  // Activation rows (leaf calls) locate the layers that own no parameter (a ReLU).
  for (const a of arr(m.activations)) {
    const o = obj(a);
    const t = targetOf(o.location);
    if (t && str(o.path) && !targetsByModule.has(str(o.path))) {
      targetsByModule.set(str(o.path), t);
    }
  }
  const verdicts = bySeverity(
    arr(m.verdicts)
      .map((v) => {
        const f = flagView(v);
        if (!f) {
          return null;
        }
        const module = str(obj(v).module) || null;
        return { ...f, module, target: module ? (targetsByModule.get(module) ?? null) : null };
      })
      .filter((v): v is VerdictView => v !== null),
  );
  if (!model || (rows.length === 0 && verdicts.length === 0)) {
    return messagePage('gradientFlow', 'empty', ctx.subtitle, plainText(summaryText));
  }
  const thresholds: GradientFlowPage['thresholds'] = [];
  const [vanishing, exploding] = thresholdValues;
  if (vanishing !== null && vanishing > 0 && Number.isFinite(vanishing)) {
    thresholds.push({ kind: 'vanishing', value: vanishing, label: `vanishing < ${formatMagnitude(vanishing)}`, fraction: logFraction(vanishing, axis) });
  }
  if (exploding !== null && exploding > 0 && Number.isFinite(exploding)) {
    thresholds.push({ kind: 'exploding', value: exploding, label: `exploding > ${formatMagnitude(exploding)}`, fraction: logFraction(exploding, axis) });
  }
  return {
    kind: 'gradientFlow',
    title: VIEW_TITLES.gradientFlow,
    subtitle: ctx.subtitle,
    summary: splitInlineCode(summaryText || defaultGradientSummary(counts)),
    verdicts,
    rows,
    emptyText: rows.length ? '' : EMPTY_TEXT.gradientFlow.text,
    axis,
    thresholds,
    counts,
    banner: ctx.banner ?? null,
  };
}

/** Flags fold when they say the same thing: the rule, and the same next step. */
function flagKey(f: FlagView): string {
  return `${f.tone}\u0000${f.rule}\u0000${f.suggestion.map((p) => p.text).join('')}`;
}

/** Fill each row's `details`: a flag whose rule also flagged the row above is not repeated. */
export function foldRepeatedFlags(rows: GradientRowView[]): void {
  for (let i = 0; i < rows.length; i++) {
    const above = i > 0 ? new Set(rows[i - 1].flags.map(flagKey)) : new Set<string>();
    rows[i].details = [];
    for (const flag of rows[i].flags) {
      const key = flagKey(flag);
      if (flag.rule && above.has(key)) {
        continue;
      }
      let repeats = 0;
      while (flag.rule && i + repeats + 1 < rows.length && rows[i + repeats + 1].flags.some((f) => flagKey(f) === key)) {
        repeats++;
      }
      rows[i].details.push({ flag, repeats });
    }
  }
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

function defaultGradientSummary(c: GradientFlowPage['counts']): string {
  if (!c.flagged) {
    return `${plural(c.rows, 'parameter')}: no gradient problems found.`;
  }
  return `${plural(c.rows, 'parameter')}, ${plural(c.flagged, 'flagged', 'flagged')}.`;
}

// ---------------------------------------------------------------------------------------------
// Shape trace

function tensorMeta(v: unknown): TensorMeta {
  const o = obj(v);
  const shape = Array.isArray(o.shape) && o.shape.every((d) => typeof d === 'number') ? (o.shape as number[]) : null;
  const meta: TensorMeta = { shape, dtype: str(o.dtype) || null, device: str(o.device) || null };
  if (!shape && str(o.type)) {
    meta.type = str(o.type);
  }
  return meta;
}

function dtypeName(d: string | null): string {
  return (d ?? '').replace(/^torch\./, '');
}

/**
 * "(64, 3, 32, 32)", "(10,)", "()" for a scalar; a non-tensor by its type ("None", "int"),
 * "?" when unknown. No thousands separators: "(64, 1152)", never "(64, 1,152)".
 */
export function shapeText(t: TensorMeta): string {
  if (!t.shape) {
    return t.type === 'NoneType' ? 'None' : t.type || '?';
  }
  const dims = t.shape.map((d) => (Number.isInteger(d) ? String(d) : '?'));
  return dims.length === 1 ? `(${dims[0]},)` : `(${dims.join(', ')})`;
}

export function tensorsText(ts: TensorMeta[]): string {
  return ts.length ? ts.map(shapeText).join(', ') : '—';
}

function changeNote(before: (string | null)[], after: (string | null)[]): string {
  const a = [...new Set(before.filter((x): x is string => !!x))];
  const b = [...new Set(after.filter((x): x is string => !!x))];
  if (!a.length && !b.length) {
    return 'changed';
  }
  return `${a.join('/') || '?'} → ${b.join('/') || '?'}`;
}

/** "mean 0.0123 · std 1.02 · zeros 73% · 4 NaN/Inf" of a call's first output; "" when not measured. */
export function activationText(v: unknown): string {
  const a = obj(v);
  if (!Object.keys(a).length) {
    return '';
  }
  const parts: string[] = [];
  const mean = statValue(a.mean);
  const std = statValue(a.std);
  const zeros = statValue(a.zeros);
  if (mean !== null) {
    parts.push(`mean ${mean < 0 ? '-' : ''}${formatMagnitude(Math.abs(mean))}`);
  }
  if (std !== null) {
    parts.push(`std ${formatMagnitude(std)}`);
  }
  if (zeros !== null && zeros > 0) {
    const pct = zeros * 100;
    parts.push(`zeros ${pct >= 99.95 || pct < 0.05 ? pct.toFixed(0) : pct.toPrecision(pct < 10 ? 2 : 3)}%`);
  }
  const bad = a.nonFinite;
  if (typeof bad === 'number' && bad > 0) {
    parts.push(`${formatNumber(bad)} NaN/Inf`);
  } else if (bad === true) {
    parts.push('NaN/Inf');
  }
  return parts.join(' · ');
}

export function shapeTracePage(model: ShapeTraceModel | null | undefined, ctx: PageContext): ShapeTracePage | MessagePage {
  const m = obj(model);
  const rawRows = arr(m.rows);
  const error = str(m.error).trim();
  if (!model || (rawRows.length === 0 && !error)) {
    return messagePage('shapeTrace', 'empty', ctx.subtitle, plainText(str(m.summary).trim()));
  }
  const failedModule = typeof m.failedModule === 'string' ? m.failedModule : null;
  const running = typeof m.running === 'string' ? m.running : null;
  const dtypes = new Set<string>();
  const devices = new Set<string>();
  let changes = 0;
  let flagged = 0;
  let failedRow: number | null = null;
  let pausedRow: number | null = null;
  const rows: ShapeRowView[] = rawRows.map((r, index) => {
    const o = obj(r);
    const inputs = arr(o.inputs).map(tensorMeta);
    const outputs = arr(o.outputs).map(tensorMeta);
    for (const t of [...inputs, ...outputs]) {
      if (t.dtype) {
        dtypes.add(dtypeName(t.dtype));
      }
      if (t.device) {
        devices.add(t.device);
      }
    }
    const path = str(o.path);
    const status = str(o.status);
    const depth = typeof o.depth === 'number' && o.depth >= 0 ? Math.floor(o.depth) : path ? path.split('.').length : 0;
    const failed =
      failedRow === null && (o.failed === true || (failedModule !== null && failedModule !== '' && path === failedModule && !status));
    if (failed) {
      failedRow = index;
    }
    // Did not return: the status says so, or (an older payload) it encloses the failing module.
    const encloses = failedModule !== null && (path === '' || failedModule.startsWith(`${path}.`));
    const unfinished =
      !failed &&
      outputs.length === 0 &&
      (status === 'running' || status === 'propagated' || (!status && !!error && encloses));
    const paused = status === 'running' && running !== null && path === running && pausedRow === null;
    if (paused) {
      pausedRow = index;
    }
    const dtypeNote = o.dtypeChange
      ? changeNote(inputs.map((t) => dtypeName(t.dtype)), outputs.map((t) => dtypeName(t.dtype)))
      : '';
    const deviceNote = o.deviceChange ? changeNote(inputs.map((t) => t.device), outputs.map((t) => t.device)) : '';
    if (dtypeNote || deviceNote) {
      changes++;
    }
    const flags = bySeverity(arr(o.flags).map(flagView).filter((f): f is FlagView => f !== null));
    const tone = failed ? 'error' : worst(flags);
    if (flags.length) {
      flagged++;
    }
    const type = str(o.type);
    const name = path ? path.split('.').pop()! : '(model)';
    const input = tensorsText(inputs);
    const output = failed ? 'raised' : unfinished ? (status === 'running' ? 'not returned yet' : 'did not return') : tensorsText(outputs);
    const params = typeof o.params === 'number' && Number.isFinite(o.params) ? formatNumber(o.params) : '—';
    const activation = activationText(o.activation);
    const target = targetOf(o.location);
    const parts = [`${path || name}${type ? ` (${type})` : ''}: ${input} to ${failed ? 'an error' : output}, ${params} parameters`];
    if (dtypeNote) {
      parts.push(`dtype ${dtypeNote}`);
    }
    if (deviceNote) {
      parts.push(`device ${deviceNote}`);
    }
    if (activation) {
      parts.push(`output ${activation}`);
    }
    if (failed) {
      parts.push('the shape error was raised here');
    }
    if (paused) {
      parts.push('the program is paused inside it');
    }
    for (const f of flags) {
      parts.push(`${f.label}: ${f.plain}`);
    }
    return {
      index,
      path,
      name,
      type,
      depth,
      input,
      output,
      params,
      dtypeNote,
      deviceNote,
      failed,
      unfinished,
      paused,
      activation,
      flags,
      tone,
      target,
      label: parts.join('; ') + (target ? `. Enter opens ${baseName(target.file)}:${target.line}.` : '.'),
    };
  });
  let failure: ShapeTracePage['failure'] = null;
  if (error || failedRow !== null) {
    const row = failedRow !== null ? rows[failedRow] : null;
    const explanation = str(m.explanation).trim();
    // The error is "Type: message", then a blank line and the plain words (shown apart).
    let head = error;
    if (explanation && head.endsWith(explanation)) {
      head = head.slice(0, head.length - explanation.length).trimEnd();
    } else if (explanation && head.includes('\n\n')) {
      head = head.slice(0, head.lastIndexOf('\n\n')).trimEnd();
    }
    const module = failedModule ?? row?.path ?? '';
    const type = row?.type ?? '';
    const where = module ? `${module}${type ? ` (${type})` : ''}` : type ? `${type} (its own forward)` : 'the forward';
    failure = {
      module,
      type,
      where,
      error: head || 'The forward raised in this module.',
      explanation: splitInlineCode(explanation),
      target: row?.target ?? null,
      row: failedRow,
    };
  }
  const backendSummary = str(m.summary).trim();
  // Said once: the backend's summary may already end with it (the page hides the summary under a failure).
  const uniform =
    changes === 0 && dtypes.size === 1 && devices.size === 1 && (failure || !/all tensors/i.test(backendSummary))
      ? `All tensors ${[...dtypes][0]} on ${[...devices][0]}.`
      : '';
  const summaryText =
    backendSummary ||
    (failure
      ? `The forward failed in ${failure.where} after ${plural(Math.max(rows.length - 1, 0), 'module call')}.`
      : `${plural(rows.length, 'module call')} in the last forward.`);
  return {
    kind: 'shapeTrace',
    title: VIEW_TITLES.shapeTrace,
    subtitle: ctx.subtitle,
    summary: splitInlineCode(summaryText),
    rows,
    failure,
    uniform,
    counts: { modules: rows.length, changes, flagged },
    banner: ctx.banner ?? null,
  };
}

// ---------------------------------------------------------------------------------------------
// State pages

export const STATE_TEXT: Record<MessageState, { headline: string; text: string }> = {
  loading: { headline: 'Taking a snapshot of the model…', text: '' },
  'no-session': {
    headline: 'No debug session.',
    text:
      'Start your training script with a Torch Doctor launch configuration and pause it after a forward pass ' +
      '(and a backward, for the gradients): this view fills in at every stop.',
  },
  'not-paused': {
    headline: 'The program is not paused.',
    text: 'The view refreshes when it stops at a breakpoint, an exception or a pause.',
  },
  'no-model': {
    headline: 'No model has run a forward pass yet.',
    text: 'Step past the first forward (and a backward, for the gradients); the view refreshes at the next stop.',
  },
  'no-runtime': {
    headline: 'The Torch Doctor runtime is not loaded in this session.',
    text: 'Start it with a torchdoctor launch configuration ("type": "torchdoctor" in launch.json).',
  },
  backend: {
    headline: 'The Torch Doctor backend is not ready.',
    text: 'It diagnoses the snapshot. The status bar item says what it is doing; once it is ready, press Refresh.',
  },
  empty: { headline: '', text: '' },
  error: { headline: 'The snapshot could not be shown.', text: '' },
};

const EMPTY_TEXT: Record<ViewKind, { headline: string; text: string }> = {
  gradientFlow: {
    headline: 'No gradients yet.',
    text: 'The model has not run a backward pass since it was created (or no parameter requires a gradient). Step past loss.backward(); the view refreshes at the next stop.',
  },
  shapeTrace: {
    headline: 'No module calls recorded.',
    text: 'The model has not run a forward pass yet. Step past the first forward; the view refreshes at the next stop.',
  },
};

/**
 * A page with no data: loading, no session, not paused, no model, no runtime, backend not
 * ready, nothing for this view, or an error (text = the message; detail = the traceback).
 */
export function messagePage(view: ViewKind, state: MessageState, subtitle: string, text = '', detail = ''): MessagePage {
  const base = state === 'empty' ? EMPTY_TEXT[view] : STATE_TEXT[state];
  let headline = base.headline;
  let body = base.text;
  if (state === 'error') {
    headline = text || base.headline;
    body = '';
  } else if (text) {
    // A more specific sentence (the backend's summary, the snapshot module's own words).
    body = text === headline ? base.text : text;
  }
  return {
    kind: 'message',
    view,
    title: VIEW_TITLES[view],
    subtitle,
    state,
    headline,
    text: body,
    detail: detail && detail !== headline ? detail : '',
    canRefresh: state !== 'loading',
  };
}

/** The data page with a banner on it (or off it), or the page as it is for a message. */
export function withBanner(view: ModelPageView, banner: Banner | null): ModelPageView {
  return view.kind === 'message' ? view : { ...view, banner };
}

export const BANNERS = {
  stale: { state: 'stale', text: 'The debug session ended; the last data is shown.' },
  running: {
    state: 'running',
    text: 'The program is running; this is the data from the last stop. The view refreshes at the next one.',
  },
  refreshing: { state: 'refreshing', text: 'Updating…' },
} as const satisfies Record<string, Banner>;

/** "“Train CNN” · TinyCNN, forward 3 · paused (breakpoint) at 14:03:12". */
export function stopSubtitle(sessionName: string, reason: string | null, at: Date, facts = ''): string {
  const hh = String(at.getHours()).padStart(2, '0');
  const mm = String(at.getMinutes()).padStart(2, '0');
  const ss = String(at.getSeconds()).padStart(2, '0');
  const why = reason ? ` (${reason})` : '';
  return [`“${sessionName}”`, facts, `paused${why} at ${hh}:${mm}:${ss}`].filter(Boolean).join(' · ');
}

/**
 * Which model and forward a snapshot shows ("TinyCNN, forward 3"; "TinyCNN, forward 3, the
 * encoder"), from the runtime's envelope (torchdoctor/runtime/snapshot.py); "" when unknown.
 */
export function snapshotFacts(snapshot: unknown): string {
  const model = obj(obj(snapshot).model);
  const type = str(model.type);
  if (!type) {
    return '';
  }
  const parts = [type];
  if (typeof model.passNumber === 'number') {
    parts.push(`forward ${model.passNumber}`);
  }
  if (str(model.focus)) {
    parts.push(`picked: ${str(model.focus)}`);
  }
  return parts.join(', ');
}

// ---------------------------------------------------------------------------------------------
// Clicks

/** The files a page may ask to open: the locations in its own view, nothing else. */
export function allowedTargets(view: ModelPageView | undefined): Set<string> {
  const files = new Set<string>();
  if (!view || view.kind === 'message') {
    return files;
  }
  const add = (t: Target | null) => {
    if (t) {
      files.add(t.file);
    }
  };
  if (view.kind === 'gradientFlow') {
    view.rows.forEach((r) => add(r.target));
    view.verdicts.forEach((v) => add(v.target));
  } else {
    view.rows.forEach((r) => add(r.target));
    add(view.failure?.target ?? null);
  }
  return files;
}

/** A message from a page, checked field by field; undefined for anything else. */
export function parseModelPageMessage(raw: unknown): ModelPageMessage | undefined {
  const m = obj(raw);
  switch (m.type) {
    case 'ready':
    case 'refresh':
      return { type: m.type };
    case 'openLocation':
      if (typeof m.file !== 'string' || m.file === '') {
        return undefined;
      }
      return {
        type: 'openLocation',
        file: m.file,
        line: typeof m.line === 'number' && Number.isInteger(m.line) && m.line >= 1 ? m.line : 1,
      };
    default:
      return undefined;
  }
}

// ---------------------------------------------------------------------------------------------
// The page's HTML shell

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/**
 * The page: a CSP meta, the stylesheet, an empty <main> and the script. No data: views arrive
 * with postMessage. Arguments come from VS Code (cspSource, asWebviewUri) or makeNonce, and
 * the title is ours; all are escaped anyway.
 */
export function renderModelViewHtml(opts: {
  cspSource: string;
  nonce: string;
  scriptUris: string[];
  styleUris: string[];
  title: string;
}): string {
  const csp = escapeAttr(contentSecurityPolicy(opts.cspSource, opts.nonce));
  const styles = opts.styleUris.map((u) => `<link rel="stylesheet" href="${escapeAttr(u)}">`).join('\n');
  const scripts = opts.scriptUris
    .map((u) => `<script nonce="${escapeAttr(opts.nonce)}" src="${escapeAttr(u)}"></script>`)
    .join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
${styles}
<title>${escapeAttr(opts.title)}</title>
</head>
<body>
<main id="app"></main>
${scripts}
</body>
</html>
`;
}
