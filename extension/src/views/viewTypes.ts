/**
 * The model views' contract: what the gradient-flow and shape-trace pages
 * (extension/media/gradientFlow.js, shapeTrace.js) read, exactly these fields, and the
 * messages between the pages and the extension. Types and titles only.
 */
import type { TextPart } from '../webview/format';

export type { TextPart } from '../webview/format';

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
   * their icon (their own sentence is in `label`). Folded by the backend (the row's `fold`,
   * diagnosis/presentation.py); here only checked.
   */
  details: { flag: FlagView; repeats: number }[];
  /** The most severe flag's tone, or null. */
  tone: Tone | null;
  target: Target | null;
  /** One sentence for screen readers and the tooltip. */
  label: string;
  /** Index into the page's `groups` (the block it belongs to), or null. */
  group: number | null;
}

/** A block (`transformer.h.3`): a foldable group of consecutive rows, with its own bars. */
export interface GradientGroupView {
  index: number;
  path: string;
  type: string;
  first: number;
  count: number;
  /** The default state (the page keeps the user's choice). */
  folded: boolean;
  flagged: number;
  tone: Tone | null;
  mean: BarView;
  max: BarView;
  norm: string;
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
  /** The blocks, each a foldable group of rows ([] when the model has none). */
  groups: GradientGroupView[];
  /** When the values are from, in words ("Values at the pause: ... after clipping"); "" when unknown. */
  moment: TextPart[];
  axis: LogAxisView;
  /** The vanishing and exploding thresholds, drawn as dashed lines across the bars. */
  thresholds: { kind: 'vanishing' | 'exploding'; value: number; label: string; fraction: number }[];
  counts: { rows: number; flagged: number; error: number; warning: number; info: number };
  /** The verdicts by severity, as the backend counted them (the chips over the verdicts). */
  verdictCounts: { error: number; warning: number; info: number };
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
  /** A block's call: the `rows` rows after it are its submodules' calls; `folded` by default. */
  fold: { rows: number; folded: boolean } | null;
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

export interface PageContext {
  /** "Train CNN · paused (breakpoint) at 14:03:12": under the title. */
  subtitle: string;
  banner?: Banner | null;
}
