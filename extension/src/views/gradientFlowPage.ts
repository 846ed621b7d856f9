/**
 * The gradient-flow page from the backend's GradientFlowModel: one row per parameter in model
 * order with mean |g| and max |g| bars on one log axis, the verdicts linked to their layers,
 * the threshold lines. Order, folding, counts and the summary are the backend's
 * (diagnosis/gradient_flow.py, presentation.py); this checks them and prepares the drawing.
 * Pure logic, unit-tested (tests/ts/unit/views/gradientFlowPage.test.ts).
 */
import type { GradientFlowModel } from '../protocol';
import { baseName, formatMagnitude, formatNumber, plainText, splitInlineCode } from '../webview/format';
import { barView, logAxis, logFraction } from './logAxis';
import { arr, count, flagView, flagViews, obj, statValue, str, targetOf } from './payload';
import { EMPTY_TEXT, messagePage } from './statePages';
import type {
  FlagView,
  GradientFlowPage,
  GradientGroupView,
  GradientRowView,
  LogAxisView,
  MessagePage,
  PageContext,
  Target,
  Tone,
  VerdictView,
} from './viewTypes';
import { VIEW_TITLES } from './viewTypes';

interface RowStats {
  o: Record<string, unknown>;
  mean: number | null;
  max: number | null;
  norm: number | null;
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

/** The row's `fold` of the backend, checked: indices into its flags, repeats within the rows below. */
export function foldedDetails(raw: unknown, flags: FlagView[], rowsBelow: number): GradientRowView['details'] {
  const details: GradientRowView['details'] = [];
  for (const d of arr(raw)) {
    const o = obj(d);
    const i = o.flag;
    if (typeof i === 'number' && Number.isInteger(i) && i >= 0 && i < flags.length) {
      details.push({ flag: flags[i], repeats: Math.min(count(o.repeats), rowsBelow) });
    }
  }
  return details;
}

function gradientRow(s: RowStats, index: number, rowCount: number, axis: LogAxisView): GradientRowView {
  const o = s.o;
  const nan = !!o.nan || (s.mean !== null && Number.isNaN(s.mean));
  const inf = !!o.inf || (s.max !== null && Math.abs(s.max) === Infinity);
  const flags = flagViews(o.flags);
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
    details: foldedDetails(o.fold, flags, rowCount - index - 1),
    tone: flags[0]?.tone ?? null,
    target,
    label: parts.join('. ') + (target ? `. Enter opens ${baseName(target.file)}:${target.line}.` : '.'),
    group: null,
  };
}

const TONES = new Set(['error', 'warning', 'info']);

/** The backend's groups, checked: in range, in order, not overlapping; each row told its group. */
export function groupViews(raw: unknown, rows: GradientRowView[], axis: LogAxisView): GradientGroupView[] {
  const groups: GradientGroupView[] = [];
  let next = 0;
  for (const g of arr(raw)) {
    const o = obj(g);
    const first = o.first;
    const n = count(o.count);
    if (typeof first !== 'number' || !Number.isInteger(first) || first < next || n < 1 || first + n > rows.length) {
      continue;
    }
    const path = str(o.path);
    const type = str(o.type);
    const mean = barView(statValue(o.meanAbs), axis, false, false);
    const max = barView(statValue(o.maxAbs), axis, false, false);
    const norm = statValue(o.norm);
    const tone = TONES.has(str(o.tone)) ? (str(o.tone) as Tone) : null;
    const flagged = count(o.flagged);
    const index = groups.length;
    for (let i = first; i < first + n; i++) {
      rows[i].group = index;
    }
    groups.push({
      index,
      path,
      type,
      first,
      count: n,
      folded: o.folded === true,
      flagged,
      tone,
      mean,
      max,
      norm: norm === null ? '—' : formatMagnitude(Math.abs(norm)),
      label: `${path}${type ? ` (${type})` : ''}: ${n} parameters, mean |g| ${mean.text}, max |g| ${max.text}${flagged ? `, ${flagged} flagged` : ''}.`,
    });
    next = first + n;
  }
  return groups;
}

/** The verdicts in the backend's order, each linked to the first location of its layer. */
function verdictViews(m: Record<string, unknown>, rows: GradientRowView[]): VerdictView[] {
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
  const verdicts: VerdictView[] = [];
  for (const v of arr(m.verdicts)) {
    const f = flagView(v);
    if (f) {
      const module = str(obj(v).module) || null;
      verdicts.push({ ...f, module, target: module ? (targetsByModule.get(module) ?? null) : null });
    }
  }
  return verdicts;
}

function thresholdViews(vanishing: number | null, exploding: number | null, axis: LogAxisView): GradientFlowPage['thresholds'] {
  const out: GradientFlowPage['thresholds'] = [];
  if (vanishing !== null && vanishing > 0 && Number.isFinite(vanishing)) {
    out.push({ kind: 'vanishing', value: vanishing, label: `vanishing < ${formatMagnitude(vanishing)}`, fraction: logFraction(vanishing, axis) });
  }
  if (exploding !== null && exploding > 0 && Number.isFinite(exploding)) {
    out.push({ kind: 'exploding', value: exploding, label: `exploding > ${formatMagnitude(exploding)}`, fraction: logFraction(exploding, axis) });
  }
  return out;
}

/** The backend's counts, checked; `rows` is always the rows drawn. */
function countsOf(v: unknown, rows: number): GradientFlowPage['counts'] {
  const c = obj(v);
  return { rows, flagged: count(c.flagged), error: count(c.error), warning: count(c.warning), info: count(c.info) };
}

export function gradientFlowPage(model: GradientFlowModel | null | undefined, ctx: PageContext): GradientFlowPage | MessagePage {
  const m = obj(model);
  const summaryText = str(m.summary).trim();
  const stats: RowStats[] = arr(m.rows).map((r) => {
    const o = obj(r);
    return { o, mean: statValue(o.meanAbs), max: statValue(o.maxAbs), norm: statValue(o.norm) };
  });
  const th = obj(m.thresholds);
  const [vanishing, exploding] = [statValue(th.vanishingGradient), statValue(th.explodingGradient)];
  const axis = logAxis([...stats.flatMap((s) => [s.mean, s.max]), vanishing, exploding]);
  const rows = stats.map((s, index) => gradientRow(s, index, stats.length, axis));
  const verdicts = verdictViews(m, rows);
  if (!model || (rows.length === 0 && verdicts.length === 0)) {
    return messagePage('gradientFlow', 'empty', ctx.subtitle, plainText(summaryText));
  }
  return {
    kind: 'gradientFlow',
    title: VIEW_TITLES.gradientFlow,
    subtitle: ctx.subtitle,
    summary: splitInlineCode(summaryText),
    verdicts,
    rows,
    emptyText: rows.length ? '' : EMPTY_TEXT.gradientFlow.text,
    groups: groupViews(m.groups, rows, axis),
    moment: splitInlineCode(str(obj(m.moment).text).trim()),
    axis,
    thresholds: thresholdViews(vanishing, exploding, axis),
    counts: countsOf(m.counts, rows.length),
    verdictCounts: { error: count(obj(m.verdictCounts).error), warning: count(obj(m.verdictCounts).warning), info: count(obj(m.verdictCounts).info) },
    banner: ctx.banner ?? null,
  };
}
