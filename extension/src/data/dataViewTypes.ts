/**
 * The data-check page's contract: the view model extension/media/data/dataResult.js reads
 * (exactly these fields) and the messages between the page and the extension. Types only.
 */
import type { TextPart } from '../webview/format';

export type DataTone = 'pass' | 'warn' | 'fail' | 'error' | 'cancelled' | 'running';

/** A 1-based line of a file of the result (a finding's source, a split's __getitem__). */
export interface DataSourceLink {
  file: string;
  line: number;
  /** "blank_augmentation.py:51" */
  label: string;
}

export interface DataHeaderView {
  title: string;
  /** FILE::NAME's NAME. */
  target: string;
  file: string;
  fileLabel: string;
}

export interface DataVerdictView {
  label: string;
  tone: DataTone;
  icon: string;
}

/** One finding as a card. */
export interface FindingCard {
  kind: string;
  /** "Blank augmentation" */
  title: string;
  severity: 'error' | 'warning';
  tone: 'fail' | 'warn';
  split: string;
  /** What was seen, the likely cause, the next step ("" when the message does not say). */
  seen: TextPart[];
  cause: TextPart[];
  next: TextPart[];
  /** "1, 4, 10 … (40 in all)"; "" when the finding names no samples. */
  indicesText: string;
  indices: (number | string)[];
  count: number;
  source: DataSourceLink | null;
}

export interface GalleryImageView {
  index: number | string;
  /** Under the image: "#17 · 3 (cat)". */
  caption: string;
  blank: boolean;
  nonfinite: boolean;
  /** A finding names this sample (it is outlined too). */
  flagged: boolean;
  /** uint8, H x W x C row-major, base64 (the page decodes it). */
  pixels: string;
}

export interface GalleryView {
  split: string;
  width: number;
  height: number;
  channels: number;
  images: GalleryImageView[];
  /** "32 of the 600 samples drawn from train, as the model gets them (after the dataset's transforms); …",
   * or for a paused program's tensor "64 of the 64 images in images [64, 3, 32, 32], as the variable holds them." */
  caption: string;
  /** How values were mapped to grey levels/colours. */
  scaleNote: string;
  blank: number;
  /** Images left out because their pixels did not match the size (a note says so). */
  dropped: number;
  /** The grid's pages (at least one): the page draws images[start, end) of one at a time. */
  pages: GalleryPage[];
}

export interface GalleryPage {
  start: number;
  end: number;
  /** "1–32 of 128" */
  label: string;
}

/** One channel's histogram, drawn as bars. */
export interface ChannelHistogramView {
  /** "channel 0" */
  channel: string;
  /** 'red' | 'green' | 'blue' for 3-channel images (drawn in that colour in the grid), else ''. */
  tint: string;
  /** Each bin's height, 0..1: the square root of its count over the tallest's. */
  heights: number[];
  counts: number[];
  /** Each bin's range as text, for its tooltip: "[0.25, 0.5): 120". */
  titles: string[];
  lowText: string;
  highText: string;
  /** "12,288 values; 3 NaN/Inf left out" */
  summary: string;
}

export interface SplitHistogramsView {
  split: string;
  /** "Values of each channel in the first 128 samples drawn, 32 bins over each channel's range." */
  caption: string;
  channels: ChannelHistogramView[];
}

export interface LabelBar {
  label: string;
  count: number;
  /** 0..1 of the split's labels. */
  share: number;
  /** 0..1 of the largest bar (its drawn width). */
  width: number;
}

export interface LabelChartView {
  split: string;
  bars: LabelBar[];
  total: number;
  /** Classes beyond the bars drawn (the rest are summed in the caption). */
  more: number;
}

export interface SplitTableView {
  columns: string[];
  numeric: boolean[];
  rows: { cells: string[]; source: DataSourceLink | null; flagged: boolean }[];
}

export interface DataErrorView {
  kind: string;
  kindLabel: string;
  detail: string;
}

export interface DataResultView {
  kind: 'result';
  header: DataHeaderView;
  verdict: DataVerdictView;
  headline: TextPart[];
  cards: FindingCard[];
  galleries: GalleryView[];
  histograms: SplitHistogramsView[];
  labels: LabelChartView[];
  splits: SplitTableView | null;
  notes: TextPart[][];
  error: DataErrorView | null;
  snippet: string | null;
  footer: string;
  canExportCsv: boolean;
}

export interface DataRunningView {
  kind: 'running';
  header: DataHeaderView;
  verdict: DataVerdictView;
  message: string;
  hint: string;
}

export interface DataMessageView {
  kind: 'message';
  header: DataHeaderView;
  verdict: DataVerdictView;
  message: TextPart[];
}

export type DataPageView = DataResultView | DataRunningView | DataMessageView;

/** Page → extension. */
export type DataPageMessage =
  | { type: 'ready' }
  | { type: 'openLocation'; file: string; line: number }
  | { type: 'exportCsv' }
  | { type: 'copySnippet' }
  | { type: 'rerun' };
