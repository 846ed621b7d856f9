/**
 * The data-check view, as data: DataCheckResult → the view model the webview draws
 * (extension/media/data/dataResult.js; the types in dataViewTypes.ts), the CSV of flagged samples
 * and the messages from the page. The image grid, label chart and split table are
 * dataSections.ts. Pure logic, no `vscode` import, unit-tested (tests/ts/unit/data/).
 */
import { errorKindLabel } from '../checks/checkResultModel';
import { baseName, splitInlineCode } from '../webview/format';
import type { TextPart } from '../webview/format';
import type { DataCheckResult, DataFinding } from './dataProtocol';
import { splitHistogramsAll } from './dataHistograms';
import { galleryViews, labelCharts, sourceLink, splitTable } from './dataSections';
import type {
  DataHeaderView,
  DataMessageView,
  DataPageMessage,
  DataResultView,
  DataRunningView,
  DataVerdictView,
  FindingCard,
} from './dataViewTypes';

export const DATA_TITLE = 'Data check';
/** The page's title for **Show as Images** on a paused program's variable (pausedData.ts). */
export const IMAGES_TITLE = 'Images';

/** How a page was asked for: a paused program's Check Data or Show as Images, else undefined. */
export type PausedMode = 'data' | 'images' | undefined;

const VERDICTS: Record<string, DataVerdictView> = {
  PASS: { label: 'PASS', tone: 'pass', icon: '✓' },
  WARN: { label: 'FINDINGS', tone: 'warn', icon: '!' },
  FAIL: { label: 'FINDINGS', tone: 'fail', icon: '✗' },
  ERROR: { label: 'ERROR', tone: 'error', icon: '⊘' },
  CANCELLED: { label: 'CANCELLED', tone: 'cancelled', icon: '■' },
  RUNNING: { label: 'RUNNING', tone: 'running', icon: '' },
};

const KIND_TITLES: Record<string, string> = {
  nonfinite: 'NaN or Inf values',
  'blank-augmentation': 'Augmentation blanks samples',
  'constant-samples': 'Blank or constant samples',
  'uint8-range-floats': 'Pixel values 0..255 as floats',
  unnormalised: 'Features not normalised',
  'normalisation-mismatch': "Normalize statistics do not match the data",
  'channels-last': 'Channels-last images',
  'float64-inputs': 'float64 inputs',
  'float-class-labels': 'Class labels stored as floats',
  'label-imbalance': 'Imbalanced labels',
  'labels-out-of-range': "Labels outside the model's classes",
  'one-output-many-classes': 'One output, many classes',
  'onehot-labels-for-loss': 'One-hot labels for a class-index loss',
  'index-labels-for-binary-loss': 'Class indices for a one-hot loss',
  'height-width-swapped': 'Height and width swapped between splits',
  'temporal-leakage': 'Training rows later than the split they precede',
  'unseen-labels': 'Labels never seen in training',
  'duplicates-within-split': 'Duplicate samples',
  'duplicates-across-splits': 'Samples shared between splits',
  drift: 'Drift between splits',
  'numbers-as-text': 'Numbers stored as text',
  'missing-values': 'Missing values',
  'constant-column': 'Constant column',
  'id-overlap': 'Ids shared between splits',
  'token-ids-out-of-range': 'Token ids past the embedding',
  'padding-share': 'Mostly padding',
  'empty-split': 'Empty split',
  'unshuffled-class-runs': 'Unshuffled training batches of one class',
  'draw-did-not-return': 'A sample never came back',
};

const DATA_ERROR_KINDS: Record<string, string> = {
  'no-numpy': 'numpy is not installed',
  'no-data': 'Nothing to check',
  'bad-data': 'Not a dataset',
  'bad-options': 'Options not understood',
  'dataset-error': 'The dataset raised',
  cancelled: 'Cancelled',
};

/** "Augmentation blanks samples" for "blank-augmentation"; the kind itself when unknown. */
export function findingTitle(kind: string): string {
  return KIND_TITLES[kind] ?? kind;
}

/** The verdict badge: FINDINGS in the fail tone when any finding is an error. */
export function dataVerdict(result: Pick<DataCheckResult, 'verdict' | 'findings' | 'error'>): DataVerdictView {
  if (result.error?.kind === 'cancelled') {
    return VERDICTS.CANCELLED;
  }
  if (result.verdict === 'FINDINGS') {
    return (result.findings ?? []).some((f) => f.severity === 'error') ? VERDICTS.FAIL : VERDICTS.WARN;
  }
  return VERDICTS[result.verdict] ?? VERDICTS.ERROR;
}

function header(target: string, file: string, mode?: PausedMode): DataHeaderView {
  return { title: mode === 'images' ? IMAGES_TITLE : DATA_TITLE, target, file, fileLabel: file ? baseName(file) : '' };
}

/**
 * A finding's message in its three parts: what was seen, "Likely cause: …", "Next step: …"
 * (the backend writes them in that order); a message without the markers is all "seen".
 */
export function messageParts(message: string): { seen: string; cause: string; next: string } {
  const causeAt = message.indexOf('Likely cause:');
  const nextAt = message.indexOf('Next step:');
  const end = (from: number) => [causeAt, nextAt, message.length].filter((i) => i > from).reduce((a, b) => Math.min(a, b));
  const seen = message.slice(0, [causeAt, nextAt, message.length].filter((i) => i >= 0).reduce((a, b) => Math.min(a, b)));
  const cause = causeAt >= 0 ? message.slice(causeAt + 'Likely cause:'.length, end(causeAt)) : '';
  const next = nextAt >= 0 ? message.slice(nextAt + 'Next step:'.length, end(nextAt)) : '';
  return { seen: seen.trim(), cause: cause.trim(), next: next.trim() };
}

/** "1, 4, 10, 16 (40 in all)"; the first `shown` indices. */
export function indicesText(indices: readonly (number | string)[], count: number, shown = 20): string {
  if (!indices.length) {
    return '';
  }
  const head = indices.slice(0, shown).join(', ');
  const total = Math.max(count, indices.length);
  return total > Math.min(shown, indices.length) ? `${head} … (${total} in all)` : head;
}

export function findingCard(f: DataFinding): FindingCard {
  const parts = messageParts(String(f.message ?? ''));
  const indices = Array.isArray(f.indices) ? f.indices.filter((i) => typeof i === 'number' || typeof i === 'string') : [];
  const count = Number.isInteger(f.count) ? f.count : indices.length;
  const severity = f.severity === 'error' ? 'error' : 'warning';
  return {
    kind: String(f.kind),
    title: findingTitle(String(f.kind)),
    severity,
    tone: severity === 'error' ? 'fail' : 'warn',
    split: String(f.split ?? ''),
    seen: splitInlineCode(parts.seen),
    cause: splitInlineCode(parts.cause),
    next: splitInlineCode(parts.next),
    indicesText: indicesText(indices, count),
    indices,
    count,
    source: sourceLink(f.source),
  };
}

function footer(r: DataCheckResult): string {
  const parts = [];
  if (typeof r.durationSeconds === 'number' && Number.isFinite(r.durationSeconds)) {
    parts.push(`${r.durationSeconds.toFixed(1)} s`);
  }
  if (r.python) {
    parts.push(r.python);
  }
  return parts.join(' · ');
}

/** The whole page for a result; findings errors first. ``mode``: asked for in a paused program. */
export function buildDataView(r: DataCheckResult, mode?: PausedMode): DataResultView {
  const findings = Array.isArray(r.findings) ? r.findings : [];
  const cards = findings.map(findingCard).sort((a, b) => Number(b.severity === 'error') - Number(a.severity === 'error'));
  const splits = Array.isArray(r.splits) ? r.splits : [];
  const notes = (Array.isArray(r.notes) ? r.notes : []).filter((n) => typeof n === 'string' && !n.includes('\n'));
  return {
    kind: 'result',
    header: header(r.target, r.file, mode),
    verdict: dataVerdict(r),
    headline: splitInlineCode(r.headline ?? ''),
    cards,
    galleries: galleryViews(splits, findings, r.asHeld === true),
    histograms: splitHistogramsAll(splits, r.asHeld === true),
    labels: labelCharts(splits),
    splits: splitTable(splits, findings),
    notes: notes.map((n) => splitInlineCode(n)),
    error:
      r.error && r.error.kind !== 'cancelled'
        ? { kind: r.error.kind, kindLabel: dataErrorLabel(r.error.kind), detail: r.error.detail ?? '' }
        : null,
    snippet: r.snippet ?? null,
    footer: footer(r),
    canExportCsv: cards.some((c) => c.indices.length > 0),
  };
}

export function dataErrorLabel(kind: string): string {
  return DATA_ERROR_KINDS[kind] ?? errorKindLabel(kind);
}

const RUNNING_MESSAGE: Record<'worker' | 'data' | 'images', (target: string) => string> = {
  worker: (target) => `Drawing the data of ${target}…`,
  data: (target) => `Checking the data of ${target}…`,
  images: (target) => `Reading the images in ${target}…`,
};

export function dataRunningView(target: string, file: string, mode?: PausedMode): DataRunningView {
  return {
    kind: 'running',
    header: header(target, file, mode),
    verdict: VERDICTS.RUNNING,
    message: RUNNING_MESSAGE[mode ?? 'worker'](target),
    hint: mode
      ? 'Read inside the paused program, which stays paused at the same line; a slow dataset stops at the time budget.'
      : 'The samples are drawn in a worker of your interpreter, after your transforms; cancel from the notification.',
  };
}

export function dataMessageView(target: string, file: string, message: string, cancelled = false, mode?: PausedMode): DataMessageView {
  return {
    kind: 'message',
    header: header(target, file, mode),
    verdict: cancelled ? VERDICTS.CANCELLED : VERDICTS.ERROR,
    message: splitInlineCode(message),
  };
}

function csvCell(v: string): string {
  return /[",\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** The flagged samples as CSV (kind,severity,split,index), or null when no finding names one. */
export function flaggedCsv(r: DataCheckResult): string | null {
  const rows: string[] = [];
  for (const f of r.findings ?? []) {
    for (const i of f.indices ?? []) {
      rows.push([f.kind, f.severity, f.split, String(i)].map(csvCell).join(','));
    }
  }
  return rows.length ? `kind,severity,split,index\n${rows.join('\n')}\n` : null;
}

/** The files a page may open: the result's own file and every source it names. */
export function dataAllowedFiles(r: DataCheckResult | undefined, file: string): Set<string> {
  const out = new Set<string>(file ? [file] : []);
  for (const f of r?.findings ?? []) {
    if (f.source?.file) {
      out.add(f.source.file);
    }
  }
  for (const s of r?.splits ?? []) {
    if (s.source?.file) {
      out.add(s.source.file);
    }
  }
  return out;
}

/** A message from the page, checked field by field; undefined for anything else. */
export function parseDataPageMessage(raw: unknown): DataPageMessage | undefined {
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
    case 'openLocation':
      if (typeof m.file !== 'string' || !m.file || !Number.isInteger(m.line) || (m.line as number) < 1) {
        return undefined;
      }
      return { type: 'openLocation', file: m.file, line: m.line as number };
    default:
      return undefined;
  }
}

export type { TextPart };
