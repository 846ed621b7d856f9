"""Every custom LSP method and payload the extension and the backend share.

The TypeScript twin is ``extension/src/protocol.ts``; keep the two in step.
Nothing else spells a ``torchDoctor/*`` method name as a string.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass

from .. import __version__

SERVER_NAME = "torch-doctor"
SERVER_VERSION = __version__

# Request: the extension asks who the backend is (status bar tooltip, diagnostics).
SERVER_INFO = "torchDoctor/serverInfo"


@dataclass(frozen=True)
class ServerInfo:
    """Answer to ``torchDoctor/serverInfo``."""

    version: str
    pid: int
    python: str
    pythonVersion: str

    def to_json(self) -> dict:
        return asdict(self)


def current_server_info(pid: int) -> ServerInfo:
    return ServerInfo(
        version=SERVER_VERSION,
        pid=pid,
        python=sys.executable,
        pythonVersion=".".join(str(p) for p in sys.version_info[:3]),
    )


# --- Model checks (issue 6): CodeLenses, the context menu, check runs ----------------------
#
# Flow: the backend puts four CodeLenses above every nn.Module class, each carrying the
# client-side command RUN_CHECK_COMMAND with one RunCheckArgs argument. The extension owns
# that command (the backend does not register it as an executeCommand): it opens the result
# view and sends the RUN_CHECK request, whose answer is the view model to draw.

# Client-side command of the CodeLenses; arguments: [RunCheckArgs as JSON].
RUN_CHECK_COMMAND = "torchDoctor.runCheck"

# Request (client -> server): run one check on one class. Params: RunCheckParams.
# Result: a CheckResult JSON object (documented in torchdoctor/checks/result.py and below).
# Progress: LSP work-done progress. If the params carry ``workDoneToken`` the server reports
# on it; otherwise, when the client supports window.workDoneProgress, the server creates a
# token with window/workDoneProgress/create. begin is cancellable; report carries
# ``percentage`` (0-100) and ``message`` ("step 50/200: loss 0.31").
# Cancel: window/workDoneProgress/cancel on that token stops the worker and the request
# answers a CheckResult with verdict "CANCELLED"; $/cancelRequest stops the worker and the
# request answers the LSP error RequestCancelled (-32800).
RUN_CHECK = "torchDoctor/runCheck"

# Request (client -> server): the module classes of a file, and the one that contains a
# position (for the editor context menu). Params: FindModelsParams; result: FindModelsResult.
FIND_MODELS = "torchDoctor/findModels"

# Environment variable the extension sets to "1" while the workspace is in Restricted Mode
# (extension/src/backend/trustPolicy.ts): runCheck then answers an ERROR instead of running code.
UNTRUSTED_ENV = "TORCHDOCTOR_UNTRUSTED_WORKSPACE"

# Client settings the checks read, with workspace/configuration (scopeUri = the file's uri).
CONFIG_SECTION = "torchDoctor"
SETTING_PYTHON = "torchDoctor.python"  # string; "" = the backend's own interpreter
SETTING_CHECK_TIMEOUT = "torchDoctor.checks.timeoutSeconds"  # number, default 120
SETTING_CHECK_BATCH_SIZE = "torchDoctor.checks.batchSize"  # integer, default 8
SETTING_CHECK_MEMORY = "torchDoctor.checks.memoryLimitMB"  # integer MB, default 0 (3/4 of the RAM)
DEFAULT_CHECK_TIMEOUT = 120
DEFAULT_CHECK_BATCH_SIZE = 8


@dataclass(frozen=True)
class RunCheckArgs:
    """The argument of RUN_CHECK_COMMAND on each CodeLens.

    ``{"uri": "file:///ws/models/mlp.py", "className": "TinyMLP", "check": "overfit"}``;
    ``check`` is one of ``"overfit" | "lr-find" | "gradcheck" | "shapes"``.
    """

    uri: str
    className: str
    check: str

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class RunCheckParams:
    """Params of RUN_CHECK.

    ``{"uri", "className", "check", "options"?: {...}, "workDoneToken"?: string|number}``

    ``options`` (all optional; unknown keys are ignored):
      - every check: ``batchSize`` (int, default the setting torchDoctor.checks.batchSize),
        ``seed`` (int, 0), ``timeoutSeconds`` (number, default the setting), ``threads`` (int, 1),
        ``spatialSize`` (int: Conv inputs, default 64 / 32 / 16 for 1d / 2d / 3d),
        ``seqLen`` (int: Embedding / RNN inputs, default 16);
      - overfit: ``steps`` (200), ``lr`` (1e-3);
      - lr-find: ``startLr`` (1e-7), ``endLr`` (10), ``numIter`` (100),
        ``optimizer`` ("adam" | "sgd", "adam"), ``csv`` (path: write step,lr,loss,smoothed_loss);
      - gradcheck: ``samples`` (elements per parameter, 20), ``eps`` (1e-6).

    The check runs the editor's current text of ``uri`` when the document is open (unsaved
    edits included), else the file on disk.
    """

    uri: str
    className: str
    check: str
    options: dict | None = None
    workDoneToken: str | int | None = None


# CheckResult (the RUN_CHECK answer), every key always present:
#   check: "overfit" | "lr-find" | "gradcheck" | "shapes";  title: "Overfit test" | ...
#   className, file (absolute path)
#   verdict: "PASS" | "WARN" | "FAIL" | "ERROR" | "CANCELLED";  headline: one sentence
#   sentences: [string]   why, and what to do
#   inferred: [string]    what was guessed about the model and the batch (draw it)
#   example: {source: "inferred" | "torchdoctor_example", inputShapes: [[int]], inputDtypes: [string],
#             targetShape: [int] | null, targetDtype: string | null,
#             loss: "cross-entropy" | "mse" | "custom" | null} | null
#   curve: {xLabel, yLabel, xScale: "linear" | "log",
#           series: [{name, axis?: "right", points: [[x, y | null]]}],   (null: a NaN/Inf loss)
#           marks: [{x, label}]} | null          overfit: loss (+ accuracy on the right axis);
#                                                lr-find: loss and smoothed vs lr, marks = suggestions
#   table: {columns: [string], rows: [[cell]], errorRow: int | null} | null
#           shapes: module, type, depth, input, output, params, dtype, device
#           gradcheck: parameter, shape, checked, max rel diff, status, torch gradcheck,
#                      analytical, numerical, at index, gradient from
#   snippet: string | null   code to paste (the torchdoctor_example() to write)
#   details: {...}           check-specific numbers (suggestedLr, minimumDiv10Lr, worstParameter...)
#   error: {kind, message, detail} | null   kind: see torchdoctor/checks/result.py ERR_*
#   durationSeconds: number | null;  python: the worker's interpreter | null


@dataclass(frozen=True)
class FindModelsParams:
    """Params of FIND_MODELS: ``{"uri", "position"?: {"line", "character"}}``."""

    uri: str
    position: dict | None = None


@dataclass(frozen=True)
class FindModelsResult:
    """Answer to FIND_MODELS.

    ``{"models": [ModelClass], "containing": "TinyMLP" | null, "hasExample": bool,
    "error": {"message", "line", "character"} | null}`` where ModelClass is
    ``{"name", "qualname", "range": Range, "nameRange": Range, "bases": [string],
    "initRequired": [string], "forwardInputs": [string]}`` with LSP Ranges (0-based).
    On a syntax error ``models`` is empty and ``error`` says where.
    """

    models: list
    containing: str | None
    hasExample: bool
    error: dict | None

    def to_json(self) -> dict:
        return asdict(self)


# --- Gradient flow and shape trace while paused (issue 5) ----------------------------------
#
# Flow: at each stop the extension evaluates, in the paused frame of the debuggee,
#   __import__('torchdoctor.runtime.snapshot', fromlist=['_']).dump("<private temp file>")
# which writes the runtime's collection as JSON (schema: torchdoctor/runtime/collect/snapshot.py,
# "version": 1) and answers a short status string ("ok 8 modules 6 params", "empty: no model
# seen yet: ...", "inactive: no data: ..."). The extension reads the file and sends it here;
# the backend applies seed 002's rules (torchdoctor/diagnosis/) and answers the view models.

# Request (client -> server): diagnose one snapshot. Params: DiagnoseSnapshotParams; result:
# DiagnoseSnapshotResult. Never an error for a bad snapshot: the result says why.
DIAGNOSE_SNAPSHOT = "torchDoctor/diagnoseSnapshot"

# Thresholds of the rules, read per request with workspace/configuration:
# torchDoctor.diagnosis.<key>, numbers; an invalid value (not a number > 0; deadFraction
# above 1; gradientRatio at most 1) keeps the default.
SETTING_DIAGNOSIS_PREFIX = "torchDoctor.diagnosis."
DIAGNOSIS_DEFAULTS = {
    "deadFraction": 0.5,  # a ReLU with more of its units 0 for the whole batch: dead units
    "vanishingGradient": 1e-7,  # mean |g| below: vanishing
    "explodingGradient": 100.0,  # mean |g| above: exploding
    "gradientRatio": 100.0,  # first/last layer mean |g| apart by more (either way)
    "collapsedStd": 1e-6,  # output std below: collapsed activations
    "explodingActivation": 10.0,  # output |mean| above: exploding activations
}


@dataclass(frozen=True)
class DiagnoseSnapshotParams:
    """Params of DIAGNOSE_SNAPSHOT: ``{"snapshot": <the JSON object dump() wrote>}``.

    The file's text itself (a JSON string, at most 64 MiB) is accepted too, and is faster for
    big models: pygls turns every object of the params into a namedtuple.
    """

    snapshot: dict


# DiagnoseSnapshotResult, every key always present:
#   status: "ok" | "empty" | "inactive" | "error" | "invalid"
#           (the snapshot's own status; "invalid": not a snapshot this backend reads)
#   message: string               why a view model is null, or the snapshot's one-line message
#   gradientFlow: GradientFlowModel | null      (null unless status is "ok")
#     {summary: string,
#      rows: [{name, module, type, meanAbs: number | null, maxAbs: number | null, norm: number | null,
#              nan: int | true, inf: int | true,            (true: present, not counted)
#              flags: [Flag], location: {file, line} | null,
#              shape: [int], numel: int, requiresGrad: bool,
#              source: "live" | "backward" | "earlier" | "current" | null, changed: bool, note: string | null,
#              fold: [{flag: int, repeats: int}]}],   (flags most severe first; fold: the flags written
#                                                under the row, indices into flags; a run of rows with the
#                                                same rule and next step writes it once, `repeats` rows below)
#                                                (model order; [] when there are no gradients yet)
#      verdicts: [Flag & {module: string | null}],   (most severe first)
#      counts: {rows, flagged, error, warning, info},  (flagged rows by their most severe flag)
#      verdictCounts: {error, warning, info},           (the verdicts by severity)
#      activations: [{path, type, occurrence, mean, std, zeros, deadUnits, min, max,
#                     nonFinite: int | true, source, fromPass: int | null, flags: [Flag],
#                     location}],               (leaf module calls, call order)
#      thresholds: {deadFraction, vanishingGradient, explodingGradient, gradientRatio,
#                   collapsedStd, explodingActivation}}
#   shapeTrace: ShapeTraceModel | null
#     {summary: string,
#      rows: [{index, path, type, depth, occurrence,
#              inputs: [TensorMeta], outputs: [TensorMeta],
#              params: int, dtypeChange: bool, deviceChange: bool,
#              failed: bool,                    (the call whose forward raised; only that one)
#              status: "ok" | "running" | "failed" | "propagated",
#              location: {file, line} | null,
#              activation: {mean, std, zeros, deadUnits, min, max, nonFinite, source} | null,
#              flags: [Flag]}],
#      failedModule: string | null,  error: string | null ("Type: message\n\nplain words"),
#      explanation: string | null,  running: string | null (paused inside this call),
#      counts: {modules, changes, flagged},  (changes: calls changing dtype or device)
#      uniform: string ("All tensors float32 on cpu." when nothing changes and the summary does not say it; else "")}
#   Order, folding, counts and sentences are made in pybackend/torchdoctor/diagnosis/ (presentation.py);
#   the extension validates them and draws.
#   TensorMeta = {shape: [int] | null, dtype: string | null, device: string | null, type?: string}
#   Flag = {rule, severity: "error" | "warning" | "info", sentence, suggestion}
#   rule: grad-nonfinite | grad-exploding | grad-vanishing | grad-ratio | grad-missing |
#         grads-changed | weights-nonfinite | dead-units | activation-collapsed |
#         activation-exploding | activation-nonfinite | input-nonfinite


# --- Data checks in the editor (issue 18): the "Check data" CodeLens, findData, runDataCheck ----
#
# Flow: the model checks' CodeLens handler (checks_feature.py) adds a "Check data" lens over each
# data target (data_checks/discovery.py: Dataset subclasses, functions returning datasets or
# loaders, torchdoctor_data()), carrying the client-side command RUN_DATA_CHECK_COMMAND with one
# RunDataCheckArgs argument; the extension opens the data view and sends RUN_DATA_CHECK.

# Client-side command of the lens; arguments: [{"uri", "name"}].
RUN_DATA_CHECK_COMMAND = "torchDoctor.runDataCheck"

# Request (client -> server): run the data check on FILE::NAME in a worker (data_checks/jobs.py).
# Params: {"uri", "name", "options"?: {"maxSamples", "maxBatches", "galleryImages", "timeoutSeconds"},
# "workDoneToken"?}. Result: the data-check result (data_checks/findings.py, every split with its
# "gallery": the images the grid draws, data_checks/gallery.py). Progress and cancel as RUN_CHECK:
# cancelling the progress answers an ERROR result of kind "cancelled".
RUN_DATA_CHECK = "torchDoctor/runDataCheck"

# Request (client -> server): the data targets of a file and the one containing a position.
# Params: {"uri", "position"?}. Result: {"targets": [DataTarget], "containing": name | null,
# "hasHook": bool, "error": {"message", "line", "character"} | null}; DataTarget = {"name",
# "kind": "hook" | "class" | "function", "range", "nameRange", "initRequired": [string]}.
FIND_DATA = "torchDoctor/findData"

# Settings of the data check (read with workspace/configuration like the model checks').
SETTING_DATA_MAX_SAMPLES = "torchDoctor.dataChecks.maxSamples"  # integer, default 2000
SETTING_DATA_MAX_BATCHES = "torchDoctor.dataChecks.maxBatches"  # integer, default 20
SETTING_DATA_TIMEOUT = "torchDoctor.dataChecks.timeoutSeconds"  # number, default 120
