/**
 * Every custom LSP method and payload shared with the backend.
 * The Python twin is `pybackend/torchdoctor/server/protocol.py`; keep them in step.
 * Nothing else in the extension spells a `torchDoctor/*` method name.
 */

/** Request: who the backend is (shown in the status bar tooltip). */
export const SERVER_INFO = 'torchDoctor/serverInfo';

export interface ServerInfo {
  version: string;
  pid: number;
  python: string;
  pythonVersion: string;
}

// --- Model checks (issue 6): the CodeLens command, torchDoctor/runCheck, torchDoctor/findModels ---

/** The command on each model CodeLens; its one argument is a RunCheckArgs. */
export const RUN_CHECK_COMMAND = 'torchDoctor.runCheck';

/**
 * Request (client -> server): run one check on one model class. Params: RunCheckParams;
 * result: CheckResult. Progress is LSP work-done progress (cancellable); cancelling the progress
 * answers a CheckResult with verdict "CANCELLED", $/cancelRequest answers RequestCancelled.
 */
export const RUN_CHECK = 'torchDoctor/runCheck';

/**
 * Request (client -> server): the module classes of a file and the one containing a position
 * (for the editor context menu). Params: FindModelsParams; result: FindModelsResult.
 */
export const FIND_MODELS = 'torchDoctor/findModels';

export type CheckKind = 'overfit' | 'lr-find' | 'gradcheck' | 'shapes';
export const CHECK_KINDS: readonly CheckKind[] = ['overfit', 'lr-find', 'gradcheck', 'shapes'];

export type CheckVerdict = 'PASS' | 'WARN' | 'FAIL' | 'ERROR' | 'CANCELLED';

/** The argument of RUN_CHECK_COMMAND: `{uri: "file:///ws/models/mlp.py", className, check}`. */
export interface RunCheckArgs {
  uri: string;
  className: string;
  check: CheckKind;
}

/**
 * Options of a check run; all optional, unknown keys ignored by the backend.
 * Every check: batchSize, seed, timeoutSeconds, threads, spatialSize, seqLen.
 * overfit: steps, lr. lr-find: startLr, endLr, numIter, optimizer, csv. gradcheck: samples, eps.
 */
export interface RunCheckOptions {
  batchSize?: number;
  seed?: number;
  timeoutSeconds?: number;
  threads?: number;
  spatialSize?: number;
  seqLen?: number;
  steps?: number;
  lr?: number;
  startLr?: number;
  endLr?: number;
  numIter?: number;
  optimizer?: 'adam' | 'sgd';
  csv?: string;
  samples?: number;
  eps?: number;
}

/** Params of RUN_CHECK. The backend runs the editor's current text of `uri` when it is open. */
export interface RunCheckParams extends RunCheckArgs {
  options?: RunCheckOptions;
  workDoneToken?: string | number;
}

/**
 * The shape of one forward argument: a tensor's [8, 20]; a nested argument keeps its structure (an
 * LSTM's hidden tuple [[2, 8, 32], [2, 8, 32]], a dict {input_ids: [8, 16]}); null for a non-tensor.
 */
export type ShapeNest = number[] | ShapeNest[] | { [name: string]: ShapeNest } | null;

/** How the check got its model and batch (pybackend/torchdoctor/checks/example/core.py describe()). */
export interface CheckExample {
  source: 'inferred' | 'torchdoctor_example';
  /** Positional arguments, then keyword arguments. */
  inputShapes: ShapeNest[];
  /** One per input: torch.int64, or "torch.float32/torch.int64" for a nest of several dtypes. */
  inputDtypes: string[];
  /** The keyword each input is passed as; null for a positional one. Absent from older backends. */
  inputNames?: (string | null)[];
  targetShape: number[] | null;
  targetDtype: string | null;
  /** "model": the model's own loss (nanoGPT's (logits, loss), a Hugging Face ModelOutput.loss). */
  loss: 'cross-entropy' | 'mse' | 'custom' | 'model' | null;
}

/** One line of a chart; a null y is a NaN/Inf value (a gap in the line). */
export interface CurveSeries {
  name: string;
  axis?: 'right';
  points: [number, number | null][];
}

export interface CheckCurve {
  xLabel: string;
  yLabel: string;
  xScale: 'linear' | 'log';
  series: CurveSeries[];
  /** Vertical marks, e.g. the LR finder's suggestions. */
  marks: { x: number; label: string }[];
}

export type TableCell = string | number | boolean | null | TableCell[];

export interface CheckTable {
  columns: string[];
  rows: TableCell[][];
  /** Index into rows of the row where the check failed (the failing module, the wrong gradient). */
  errorRow: number | null;
}

/** kind: see ERR_* in pybackend/torchdoctor/checks/result.py ("no-torch", "forward-error", ...). */
export interface CheckError {
  kind: string;
  message: string;
  detail: string;
}

/**
 * The answer of RUN_CHECK (and of `torchdoctor check --json`); every key is always present.
 * Documented in pybackend/torchdoctor/checks/result.py and protocol.py.
 */
export interface CheckResult {
  check: CheckKind;
  title: string;
  className: string;
  /** Absolute path of the model's file. */
  file: string;
  verdict: CheckVerdict;
  /** One sentence, verdict first. */
  headline: string;
  /** Why, and what to do next. */
  sentences: string[];
  /** What was guessed about the model and the batch. */
  inferred: string[];
  example: CheckExample | null;
  curve: CheckCurve | null;
  /** shapes: module, type, depth, input, output, params, dtype, device; gradcheck: parameter, ... */
  table: CheckTable | null;
  /** Code to paste into the user's file (the torchdoctor_example() to write). */
  snippet: string | null;
  /** Check-specific numbers (suggestedLr, minimumDiv10Lr, worstParameter, ...). */
  details: Record<string, unknown>;
  error: CheckError | null;
  durationSeconds: number | null;
  /** The worker's interpreter. */
  python: string | null;
}

/** Params of FIND_MODELS; position is 0-based (LSP). */
export interface FindModelsParams {
  uri: string;
  position?: { line: number; character: number };
}

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

export interface ModelClass {
  name: string;
  /** Outer.Inner for nested classes. */
  qualname: string;
  /** The whole class statement, decorators excluded. */
  range: LspRange;
  /** The class name after `class`. */
  nameRange: LspRange;
  /** Base expressions as written. */
  bases: string[];
  /** Constructor parameters without a default (the checks cannot guess them). */
  initRequired: string[];
  forwardInputs: string[];
}

/** Answer to FIND_MODELS. On a syntax error `models` is empty and `error` says where. */
export interface FindModelsResult {
  models: ModelClass[];
  /** qualname of the innermost model class containing the requested position, if any. */
  containing: string | null;
  /** Whether the file itself defines torchdoctor_example() at top level. */
  hasExample: boolean;
  error: { message: string; line: number; character: number } | null;
}

// --- Data checks (issue 18): the "Check data" CodeLens, torchDoctor/runDataCheck, torchDoctor/findData ---

/** The command on each "Check data" CodeLens; its one argument is a RunDataCheckArgs. */
export const RUN_DATA_CHECK_COMMAND = 'torchDoctor.runDataCheck';

/**
 * Request (client -> server): run the data check on FILE::NAME in a worker. Params:
 * RunDataCheckParams; result: DataCheckResult. Progress and cancel as RUN_CHECK (a cancelled
 * progress answers an ERROR result of kind "cancelled").
 */
export const RUN_DATA_CHECK = 'torchDoctor/runDataCheck';

/** Request (client -> server): the data targets of a file and the one at a position. */
export const FIND_DATA = 'torchDoctor/findData';

// Payloads (RunDataCheckArgs, RunDataCheckParams, FindDataResult, DataCheckResult): data/dataProtocol.ts.

// --- Gradient flow and shape trace while paused (issue 5): torchDoctor/diagnoseSnapshot ---
//
// Flow: at each stop the extension evaluates torchdoctor.runtime.snapshot.dump(path) in the
// paused debuggee (extension/src/debug/debugSnapshot.ts), reads the JSON file it wrote (schema in
// pybackend/torchdoctor/runtime/snapshot.py), and sends it here; the backend applies the
// diagnosis rules (pybackend/torchdoctor/diagnosis/) and answers the view models the two
// webviews draw (extension/src/views/). Floats are finite or null (JSON has no NaN):
// counts say when values were not finite.

/**
 * Request (client -> server): diagnose one runtime snapshot. Params: DiagnoseSnapshotParams;
 * result: DiagnoseSnapshotResult.
 */
export const DIAGNOSE_SNAPSHOT = 'torchDoctor/diagnoseSnapshot';

/**
 * Params of DIAGNOSE_SNAPSHOT: what snapshot.dump() wrote, as the file's text (a JSON string,
 * at most 64 MiB; faster for big models) or as the parsed object.
 */
export interface DiagnoseSnapshotParams {
  snapshot: string | object;
}

export type DiagnosisSeverity = 'error' | 'warning' | 'info';

/** 1-based line of the statement that defines a module (`self.fc1 = nn.Linear(...)`). */
export interface ModuleLocation {
  file: string;
  line: number;
}

/** One rule that fired: a sentence naming the layer and the suggested next step (`code` in backticks). */
export interface DiagnosisFlag {
  rule: string;
  severity: DiagnosisSeverity;
  sentence: string;
  suggestion: string;
}

/** One parameter's gradient after the most recent backward, in model order. */
export interface GradientFlowRow {
  name: string;
  module: string;
  type: string;
  /** Over the finite values; null when there is no gradient (or nothing finite). */
  meanAbs: number | null;
  maxAbs: number | null;
  norm: number | null;
  /** NaN (Inf) elements in the gradient: a count, or true when present but not counted. */
  nan: number | boolean;
  inf: number | boolean;
  flags: DiagnosisFlag[];
  location: ModuleLocation | null;
  shape?: number[];
  numel?: number;
  requiresGrad?: boolean;
  /** Where the statistics come from: "live" | "backward" | "earlier" | "current" | null. */
  source?: string | null;
  /** Modified in place since the backward (clipping, zero_grad): the statistics are of its current values. */
  changed?: boolean;
  /** Why there is no gradient ("frozen (requires_grad=False)"). */
  note?: string | null;
  /**
   * The flags written out under the row (indices into `flags`, which come most severe first):
   * a run of rows flagged by the same rule with the same next step writes it once, under its
   * first row, `repeats` = how many rows below share it. Made by diagnosis/presentation.py.
   */
  fold?: { flag: number; repeats: number }[];
  /** Index into the model's `groups` (the block this row belongs to), or null. */
  group?: number | null;
}

/**
 * One block of the model (`transformer.h.3`) as a foldable group of consecutive rows
 * (diagnosis/blocks.py): rows `first` .. `first + count - 1`; `folded` is the default state.
 */
export interface GradientFlowGroup {
  path: string;
  type: string;
  first: number;
  count: number;
  folded: boolean;
  flagged: number;
  tone: 'error' | 'warning' | 'info' | null;
  meanAbs: number | null;
  maxAbs: number | null;
  norm: number | null;
}

/** A verdict about the model: most severe first; module: the layer it names. */
export interface GradientFlowVerdict extends DiagnosisFlag {
  module: string | null;
}

/** Activation statistics of one leaf module call of the latest forward. */
export interface ActivationRow {
  path: string;
  type: string;
  occurrence: number;
  mean: number | null;
  std: number | null;
  /** Fraction of exact zeros, 0..1. */
  zeros: number | null;
  min: number | null;
  max: number | null;
  nonFinite: number | boolean;
  source: string | null;
  flags: DiagnosisFlag[];
  location: ModuleLocation | null;
}

export interface GradientFlowModel {
  summary: string;
  /** Empty when there are no gradients yet (the summary says so; verdicts may still hold activation findings). */
  rows: GradientFlowRow[];
  verdicts: GradientFlowVerdict[];
  activations?: ActivationRow[];
  /** The thresholds in force: deadFraction, vanishingGradient, explodingGradient, gradientRatio, collapsedStd, explodingActivation. */
  thresholds?: Record<string, number>;
  /** Rows, flagged rows, and flagged rows by their most severe flag. */
  counts?: { rows: number; flagged: number; error: number; warning: number; info: number };
  /** The verdicts by severity (the chips over them). */
  verdictCounts?: { error: number; warning: number; info: number };
  /** The blocks, each a foldable group of rows. */
  groups?: GradientFlowGroup[];
  /** When the values are from: the pause (after the program's clipping) or the backward (freed since). */
  moment?: { when: 'pause' | 'backward' | 'mixed'; changed: number; text: string } | null;
}

/** A tensor's metadata; a non-tensor value has a null shape and its `type` ("NoneType"). */
export interface TensorMeta {
  shape: number[] | null;
  dtype: string | null;
  device: string | null;
  type?: string;
}

export type CallStatus = 'ok' | 'running' | 'failed' | 'propagated';

/** One module call of the latest forward, in call order; depth 0 is the model's own call. */
export interface ShapeTraceRow {
  index?: number;
  path: string;
  type: string;
  depth: number;
  occurrence?: number;
  inputs: TensorMeta[];
  /** Empty when the call did not return. */
  outputs: TensorMeta[];
  /** With submodules. */
  params: number;
  /** First input tensor vs first output tensor. */
  dtypeChange: boolean;
  deviceChange: boolean;
  /** The call whose forward raised (only that one). */
  failed: boolean;
  /** running: not returned yet (paused inside it); propagated: the exception went through it. */
  status?: CallStatus;
  location: ModuleLocation | null;
  activation?: {
    mean: number | null;
    std: number | null;
    zeros: number | null;
    min: number | null;
    max: number | null;
    nonFinite: number | boolean;
    source: string | null;
  } | null;
  /** Activation findings of this call (dead units, collapsed, exploding, NaN/Inf). */
  flags?: DiagnosisFlag[];
  /** A block's call: the `rows` calls of its submodules that follow it fold under it. */
  fold?: { rows: number; folded: boolean } | null;
}

export interface ShapeTraceModel {
  summary: string;
  rows: ShapeTraceRow[];
  /** Path of the failed call ("" is the model's own code), or null. */
  failedModule: string | null;
  /** "RuntimeError: mat1 and mat2 ...", then a blank line and the plain words, or null. */
  error: string | null;
  /** The plain words alone. */
  explanation?: string | null;
  /** Path of the innermost call not returned (the program is paused inside it), or null. */
  running?: string | null;
  /** Module calls, calls that change dtype or device, calls with activation flags. */
  counts?: { modules: number; changes: number; flagged: number };
  /** "All tensors float32 on cpu." when nothing changes and the summary does not say so; "" otherwise. */
  uniform?: string;
}

/**
 * Answer to DIAGNOSE_SNAPSHOT. status "ok": both view models (one is null when the snapshot has
 * nothing for it); otherwise ("empty", "inactive", "error", "invalid") both are null and
 * `message` says why.
 */
export interface DiagnoseSnapshotResult {
  status: string;
  message: string;
  gradientFlow: GradientFlowModel | null;
  shapeTrace: ShapeTraceModel | null;
}
