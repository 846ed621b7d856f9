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

/** How the check got its model and batch. */
export interface CheckExample {
  source: 'inferred' | 'torchdoctor_example';
  inputShapes: number[][];
  inputDtypes: string[];
  targetShape: number[] | null;
  targetDtype: string | null;
  loss: 'cross-entropy' | 'mse' | 'custom' | null;
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

// --- Gradient flow and shape trace while paused (issue 5): torchDoctor/diagnoseSnapshot ---
//
// Flow: at each stop the extension evaluates torchdoctor.runtime.snapshot.dump(path) in the
// paused debuggee (extension/src/debugSnapshot.ts), reads the JSON file it wrote, and sends it
// here; the backend applies the diagnosis rules and answers the view models the two webviews
// draw (extension/src/modelViews.ts).

/** Params of DIAGNOSE_SNAPSHOT: the JSON object snapshot.dump() wrote, passed through as is. */
export interface DiagnoseSnapshotParams {
  snapshot: unknown;
}

export type DiagnosisSeverity = 'error' | 'warning' | 'info';

/** 1-based line of the statement that defines a module (`self.fc1 = nn.Linear(...)`). */
export interface ModuleLocation {
  file: string;
  line: number;
}

/** One rule that fired: a sentence naming the layer and the suggested next step. */
export interface DiagnosisFlag {
  rule: string;
  severity: DiagnosisSeverity;
  sentence: string;
  suggestion: string;
}

/**
 * One parameter's gradient after the most recent backward, in model order. Statistics are
 * null when the parameter got no gradient; a NaN/Inf statistic may arrive as null or as the
 * strings "nan" / "inf" (JSON has no NaN), with `nan` / `inf` saying so.
 */
export interface GradientFlowRow {
  name: string;
  module: string;
  type: string;
  meanAbs: number | string | null;
  maxAbs: number | string | null;
  norm: number | string | null;
  /** NaN (Inf) present in the gradient: a flag, or a count of elements. */
  nan: boolean | number;
  inf: boolean | number;
  flags: DiagnosisFlag[];
  location: ModuleLocation | null;
}

/** A verdict about the whole model (first/last layer ratio, ...); module: the layer it names. */
export interface GradientFlowVerdict extends DiagnosisFlag {
  module: string | null;
}

export interface GradientFlowModel {
  summary: string;
  rows: GradientFlowRow[];
  verdicts: GradientFlowVerdict[];
}

export interface TensorMeta {
  shape: number[] | null;
  dtype: string | null;
  device: string | null;
}

/** One module call of the most recent forward, in call order; depth 0 is the model itself. */
export interface ShapeTraceRow {
  path: string;
  type: string;
  depth: number;
  inputs: TensorMeta[];
  outputs: TensorMeta[];
  params: number;
  dtypeChange: boolean;
  deviceChange: boolean;
  /** The module that raised (a shape mismatch); its outputs are empty. */
  failed: boolean;
  location: ModuleLocation | null;
}

export interface ShapeTraceModel {
  summary: string;
  rows: ShapeTraceRow[];
  failedModule: string | null;
  error: string | null;
}

/** Answer to DIAGNOSE_SNAPSHOT; a part is null when the snapshot has nothing for it. */
export interface DiagnoseSnapshotResult {
  gradientFlow: GradientFlowModel | null;
  shapeTrace: ShapeTraceModel | null;
}
