/**
 * The check-result view, as data: CheckResult → the view model the webview draws
 * (`extension/media/checkResult.js`; the types in checkResultTypes.ts), the LR-finder CSV and
 * the messages from the page. The chart is curveView.ts, the table resultTable.ts, the
 * traceback traceback.ts. Pure logic, no `vscode` import, unit-tested
 * (tests/ts/unit/checks/checkResultModel.test.ts).
 *
 * The page never sees raw data interpolated into HTML: the shell (webview/html.ts) carries no
 * data, and everything arrives with postMessage as a PageView, which the page writes with
 * textContent.
 */
import type { CheckExample, CheckResult, ShapeNest } from '../protocol';
import { baseName, dtypeName, formatNumber, shapeText, splitInlineCode, trimZeros, tupleText } from '../webview/format';
import type {
  CheckRunTarget,
  ErrorView,
  HeaderView,
  MessageView,
  PageMessage,
  ResultView,
  RunningView,
  SymbolRef,
  VerdictView,
} from './checkResultTypes';
import { curveView } from './curveView';
import { tableView } from './resultTable';
import { errorLocation, parseTraceback } from './traceback';

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

/** A forward argument's shape as text: [8, 20] as "(8, 20)" (no thousands separators), a tuple of
 * shapes as "((2, 8, 32), (2, 8, 32))", a dict as "{input_ids: (8, 16)}"; "?" for anything else. */
export function nestText(shape: ShapeNest | undefined): string {
  if (Array.isArray(shape)) {
    return shape.every((d) => typeof d === 'number') ? shapeText(shape) : tupleText(shape.map((s) => nestText(s as ShapeNest)));
  }
  if (shape && typeof shape === 'object') {
    return `{${Object.entries(shape)
      .map(([k, v]) => `${k}: ${nestText(v)}`)
      .join(', ')}}`;
  }
  return '?';
}

const LOSS_WORDS: Record<string, string> = { model: "the model's own loss" };

/**
 * The batch in one line: "Batch (inferred): input (8, 20) float32 · targets (8,) int64 ·
 * cross-entropy loss"; keyword inputs are named ("input_ids=(8, 16) int64"), a model that computes
 * its own loss says so; "" when the run got no batch.
 */
export function exampleSummary(example: CheckExample | null | undefined): string {
  if (!example) {
    return '';
  }
  const parts: string[] = [];
  const shapes = Array.isArray(example.inputShapes) ? example.inputShapes : [];
  const dtypes = Array.isArray(example.inputDtypes) ? example.inputDtypes : [];
  const names = Array.isArray(example.inputNames) ? example.inputNames : [];
  if (shapes.length) {
    const ins = shapes.map((s, i) => {
      const name = names[i];
      return `${name ? `${name}=` : ''}${nestText(s)} ${dtypeText(dtypes[i])}`.trim();
    });
    parts.push(`${shapes.length === 1 ? 'input' : 'inputs'} ${ins.join(', ')}`);
  }
  if (example.targetShape) {
    parts.push(`targets ${nestText(example.targetShape)} ${dtypeName(example.targetDtype)}`.trim());
  }
  if (example.loss) {
    parts.push(LOSS_WORDS[example.loss] ?? `${example.loss} loss`);
  }
  const source = example.source === 'torchdoctor_example' ? 'from torchdoctor_example()' : 'inferred';
  return `Batch (${source}): ${parts.join(' · ')}`;
}

/** "float32", or "float32/int64" for a nest that holds several dtypes. */
function dtypeText(dtype: string | undefined): string {
  return (dtype ?? '')
    .split('/')
    .map((d) => dtypeName(d))
    .join('/');
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
