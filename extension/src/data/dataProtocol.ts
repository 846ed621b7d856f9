/**
 * The payloads of the data-check methods (RUN_DATA_CHECK, FIND_DATA, RUN_DATA_CHECK_COMMAND in
 * ../protocol.ts, which names the methods). The Python twins: pybackend/torchdoctor/server/protocol.py
 * and data_checks/findings.py (the result), data_checks/gallery.py (the images). Types only.
 */
import type { CheckError, LspRange } from '../protocol';

export interface RunDataCheckArgs {
  uri: string;
  /** A Dataset class, a function, or torchdoctor_data. */
  name: string;
}

export interface RunDataCheckParams extends RunDataCheckArgs {
  options?: DataCheckOptions;
  workDoneToken?: string | number;
}

/** Options of a data check (data_checks/engine.py; budgetSeconds: data_checks/budget.py, 0 = none). */
export interface DataCheckOptions {
  maxSamples?: number;
  maxBatches?: number;
  galleryImages?: number;
  timeoutSeconds?: number;
  budgetSeconds?: number;
}

export interface DataTarget {
  name: string;
  kind: 'hook' | 'class' | 'function';
  range: LspRange;
  nameRange: LspRange;
  initRequired: string[];
}

export interface FindDataResult {
  targets: DataTarget[];
  containing: string | null;
  hasHook: boolean;
  error: { message: string; line: number; character: number } | null;
}

/** One finding (pybackend/torchdoctor/data_checks/findings.py). */
export interface DataFinding {
  kind: string;
  severity: 'error' | 'warning';
  split: string;
  /** What was seen; the likely cause; the next step. */
  message: string;
  /** At most 50; `count` is the total. */
  indices: (number | string)[];
  count: number;
  source: { file: string; line: number } | null;
  details: Record<string, unknown>;
}

/** The images of one split for the grid (data_checks/gallery.py): uint8, H x W x C row-major, each
 * image's values as one base64 string (`pixels`). */
export interface DataGallery {
  width: number;
  height: number;
  /** 1 or 3. */
  channels: number;
  sourceShape: number[];
  layout: string;
  scale: { kind: 'uint8' | 'unit' | 'range'; low: number[]; high: number[] };
  images: { index: number | string; label: string | null; blank: boolean; nonfinite: boolean; pixels: string }[];
  drawn: number;
  /** Per-channel value histograms of the raw samples (data_checks/histograms.py). */
  histograms?: DataHistograms | null;
}

/** One channel: `counts` of `bins` equal bins over low..high (the kept finite values' range). */
export interface DataChannelHistogram {
  low: number | null;
  high: number | null;
  counts: number[];
  /** Finite values counted (the counts' sum). */
  values: number;
  /** NaN/Inf values left out. */
  nonfinite: number;
}

export interface DataHistograms {
  bins: number;
  /** Samples read (the first ones drawn, at most 256). */
  samples: number;
  channels: DataChannelHistogram[];
}

export interface DataSplitSummary {
  name: string;
  kind: string;
  length: number | null;
  sampled: number;
  layout: string;
  shape: number[];
  batchShape: number[] | null;
  dtype: string;
  labelDtype: string;
  found: string;
  random: boolean | null;
  channelMean: number[] | null;
  channelStd: number[] | null;
  min: number | null;
  max: number | null;
  /** Class label (with its name when known) → count. */
  labels: Record<string, number> | null;
  labelKind: string | null;
  columns: number | null;
  source: { file: string; line: number } | null;
  seconds: number;
  gallery?: DataGallery | null;
}

/** The answer of RUN_DATA_CHECK (and of `torchdoctor check data --json`). */
export interface DataCheckResult {
  check: 'data';
  title: string;
  target: string;
  file: string;
  verdict: 'PASS' | 'FINDINGS' | 'ERROR';
  headline: string;
  findings: DataFinding[];
  splits: DataSplitSummary[];
  notes: string[];
  error: CheckError | null;
  snippet?: string | null;
  durationSeconds: number | null;
  python: string | null;
  /** A paused program's tensor, array or batch (data_checks/paused.py): the samples are the values
   * the variable holds, no dataset transform ran. */
  asHeld?: boolean;
}
