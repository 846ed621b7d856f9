/**
 * The check-result page's contract: the view model checkResult.js reads (exactly these fields)
 * and the messages between the page and the extension. Types only.
 */
import type { TextPart } from '../webview/format';

export type { TextPart } from '../webview/format';
export type Tone = 'pass' | 'warn' | 'fail' | 'error' | 'cancelled' | 'running';

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

