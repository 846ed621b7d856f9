/**
 * The shape-trace page from the backend's ShapeTraceModel: the module tree of the last forward
 * with input → output shapes, parameter counts, dtype/device changes, the call that raised
 * and the one the program is paused in. The summary, counts and the "All tensors … on …" note
 * are the backend's (diagnosis/shape_trace.py, presentation.py); this checks and spells them.
 * Pure logic, unit-tested (tests/ts/unit/views/shapeTracePage.test.ts).
 */
import type { ShapeTraceModel, TensorMeta } from '../protocol';
import { baseName, dtypeName, formatMagnitude, formatNumber, plainText, shapeText, splitInlineCode } from '../webview/format';
import { arr, count, flagViews, obj, statValue, str, targetOf } from './payload';
import { messagePage } from './statePages';
import type { MessagePage, PageContext, ShapeRowView, ShapeTracePage } from './viewTypes';
import { VIEW_TITLES } from './viewTypes';

function tensorMeta(v: unknown): TensorMeta {
  const o = obj(v);
  const shape = Array.isArray(o.shape) && o.shape.every((d) => typeof d === 'number') ? (o.shape as number[]) : null;
  const meta: TensorMeta = { shape, dtype: str(o.dtype) || null, device: str(o.device) || null };
  if (!shape && str(o.type)) {
    meta.type = str(o.type);
  }
  return meta;
}

/**
 * "(64, 3, 32, 32)", "(10,)", "()" for a scalar; a non-tensor by its type ("None", "int"),
 * "?" when unknown. No thousands separators: "(64, 1152)", never "(64, 1,152)".
 */
export function tensorShapeText(t: TensorMeta): string {
  if (!t.shape) {
    return t.type === 'NoneType' ? 'None' : t.type || '?';
  }
  return shapeText(t.shape);
}

export function tensorsText(ts: TensorMeta[]): string {
  return ts.length ? ts.map(tensorShapeText).join(', ') : '—';
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

interface TraceState {
  failedModule: string | null;
  running: string | null;
  error: string;
  failedRow: number | null;
  pausedRow: number | null;
}

/** What a row says to a screen reader (and in its tooltip). */
function rowLabel(r: Omit<ShapeRowView, 'label'>): string {
  const parts = [`${r.path || r.name}${r.type ? ` (${r.type})` : ''}: ${r.input} to ${r.failed ? 'an error' : r.output}, ${r.params} parameters`];
  if (r.dtypeNote) {
    parts.push(`dtype ${r.dtypeNote}`);
  }
  if (r.deviceNote) {
    parts.push(`device ${r.deviceNote}`);
  }
  if (r.activation) {
    parts.push(`output ${r.activation}`);
  }
  if (r.failed) {
    parts.push('the shape error was raised here');
  }
  if (r.paused) {
    parts.push('the program is paused inside it');
  }
  for (const f of r.flags) {
    parts.push(`${f.label}: ${f.plain}`);
  }
  return parts.join('; ') + (r.target ? `. Enter opens ${baseName(r.target.file)}:${r.target.line}.` : '.');
}

/** A block's fold, checked (the rows it folds are bounded by the page, not trusted here). */
function foldOf(raw: unknown): ShapeRowView['fold'] {
  const o = obj(raw);
  const rows = count(o.rows);
  return rows > 0 ? { rows, folded: o.folded === true } : null;
}

function shapeRow(raw: unknown, index: number, st: TraceState): ShapeRowView {
  const o = obj(raw);
  const inputs = arr(o.inputs).map(tensorMeta);
  const outputs = arr(o.outputs).map(tensorMeta);
  const path = str(o.path);
  const status = str(o.status);
  const depth = typeof o.depth === 'number' && o.depth >= 0 ? Math.floor(o.depth) : path ? path.split('.').length : 0;
  const failed =
    st.failedRow === null &&
    (o.failed === true || (st.failedModule !== null && st.failedModule !== '' && path === st.failedModule && !status));
  if (failed) {
    st.failedRow = index;
  }
  // Did not return: the status says so, or (an older payload) it encloses the failing module.
  const encloses = st.failedModule !== null && (path === '' || st.failedModule.startsWith(`${path}.`));
  const unfinished =
    !failed && outputs.length === 0 && (status === 'running' || status === 'propagated' || (!status && !!st.error && encloses));
  const paused = status === 'running' && st.running !== null && path === st.running && st.pausedRow === null;
  if (paused) {
    st.pausedRow = index;
  }
  const dtypeNote = o.dtypeChange ? changeNote(inputs.map((t) => dtypeName(t.dtype)), outputs.map((t) => dtypeName(t.dtype))) : '';
  const deviceNote = o.deviceChange ? changeNote(inputs.map((t) => t.device), outputs.map((t) => t.device)) : '';
  const flags = flagViews(o.flags);
  const output = failed ? 'raised' : unfinished ? (status === 'running' ? 'not returned yet' : 'did not return') : tensorsText(outputs);
  const row = {
    index,
    path,
    name: path ? path.split('.').pop()! : '(model)',
    type: str(o.type),
    depth,
    input: tensorsText(inputs),
    output,
    params: typeof o.params === 'number' && Number.isFinite(o.params) ? formatNumber(o.params) : '—',
    dtypeNote,
    deviceNote,
    failed,
    unfinished,
    paused,
    activation: activationText(o.activation),
    flags,
    tone: failed ? ('error' as const) : (flags[0]?.tone ?? null),
    target: targetOf(o.location),
    fold: foldOf(o.fold),
  };
  return { ...row, label: rowLabel(row) };
}

/** The shape error and where it was raised; null when the forward completed. */
function failureView(m: Record<string, unknown>, rows: ShapeRowView[], st: TraceState): ShapeTracePage['failure'] {
  if (!st.error && st.failedRow === null) {
    return null;
  }
  const row = st.failedRow !== null ? rows[st.failedRow] : null;
  const explanation = str(m.explanation).trim();
  // The error is "Type: message", then a blank line and the plain words (shown apart).
  let head = st.error;
  if (explanation && head.endsWith(explanation)) {
    head = head.slice(0, head.length - explanation.length).trimEnd();
  } else if (explanation && head.includes('\n\n')) {
    head = head.slice(0, head.lastIndexOf('\n\n')).trimEnd();
  }
  const module = st.failedModule ?? row?.path ?? '';
  const type = row?.type ?? '';
  const where = module ? `${module}${type ? ` (${type})` : ''}` : type ? `${type} (its own forward)` : 'the forward';
  return {
    module,
    type,
    where,
    error: head || 'The forward raised in this module.',
    explanation: splitInlineCode(explanation),
    target: row?.target ?? null,
    row: st.failedRow,
  };
}

export function shapeTracePage(model: ShapeTraceModel | null | undefined, ctx: PageContext): ShapeTracePage | MessagePage {
  const m = obj(model);
  const rawRows = arr(m.rows);
  const st: TraceState = {
    failedModule: typeof m.failedModule === 'string' ? m.failedModule : null,
    running: typeof m.running === 'string' ? m.running : null,
    error: str(m.error).trim(),
    failedRow: null,
    pausedRow: null,
  };
  if (!model || (rawRows.length === 0 && !st.error)) {
    return messagePage('shapeTrace', 'empty', ctx.subtitle, plainText(str(m.summary).trim()));
  }
  const rows = rawRows.map((r, index) => shapeRow(r, index, st));
  const c = obj(m.counts);
  return {
    kind: 'shapeTrace',
    title: VIEW_TITLES.shapeTrace,
    subtitle: ctx.subtitle,
    summary: splitInlineCode(str(m.summary).trim()),
    rows,
    failure: failureView(m, rows, st),
    uniform: str(m.uniform).trim(),
    counts: { modules: rows.length, changes: count(c.changes), flagged: count(c.flagged) },
    banner: ctx.banner ?? null,
  };
}
