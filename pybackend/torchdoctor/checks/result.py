"""The result of one check run: the view model the webview draws and the CLI prints.

Pure Python, no torch: the worker fills it in the user's interpreter, the job
controller fills it in the backend when the worker could not (no torch, crash,
time limit, cancel). Every key is always present so a view never tests for it.

Shape (JSON)::

    {
      "check": "overfit" | "lr-find" | "gradcheck" | "shapes",
      "title": "Overfit test",            # human name of the check
      "className": "TinyMLP", "file": "/abs/path/models/mlp.py",
      "verdict": "PASS" | "WARN" | "FAIL" | "ERROR" | "CANCELLED",
      "headline": "one sentence, verdict first",
      "sentences": ["why, and what to do next", ...],
      "inferred": ["what Torch Doctor guessed about the model and the batch", ...],
      "example": {"source": "inferred" | "torchdoctor_example",
                  "inputShapes": [[8, 20]], "inputDtypes": ["torch.float32"],   # positional, then keyword
                  "inputNames": [null],       # the keyword of each input (null: positional)
                  "targetShape": [8] | null, "targetDtype": "torch.int64" | null,
                  "loss": "cross-entropy" | "mse" | "custom" | "model" | null} | null,
                  # a nested input (an LSTM's hidden tuple) has a nested shape: [[2, 8, 32], [2, 8, 32]]
                  # "model": the model's own loss (nanoGPT's (logits, loss), a Hugging Face .loss)
      "curve": {"xLabel", "yLabel", "xScale": "linear" | "log",
                "series": [{"name", "points": [[x, y], ...]}],
                "marks": [{"x", "label"}]} | null,
      "table": {"columns": [...], "rows": [[...], ...], "errorRow": int | null} | null,
      "snippet": "code to paste into the user's file" | null,
      "details": {...check-specific numbers...},
      "error": {"kind", "message", "detail"} | null,
      "durationSeconds": float | null,
      "python": "/path/to/the/worker/python" | null
    }
"""

from __future__ import annotations

from typing import Any

OVERFIT = "overfit"
LR_FIND = "lr-find"
GRADCHECK = "gradcheck"
SHAPES = "shapes"
CHECKS = (OVERFIT, LR_FIND, GRADCHECK, SHAPES)

# Seconds a check may run by default (``--timeout``; the editor's setting): here rather than in
# jobs.py, so that building the CLI's parser imports no asyncio (~25 ms of every ``torchdoctor``
# command, ``lint`` included).
DEFAULT_TIMEOUT = 120.0

TITLES = {
    OVERFIT: "Overfit test",
    LR_FIND: "LR finder",
    GRADCHECK: "Gradient check",
    SHAPES: "Shape trace",
}

PASS = "PASS"
WARN = "WARN"
FAIL = "FAIL"
ERROR = "ERROR"
CANCELLED = "CANCELLED"

# Kinds of ERROR, so a view or a test can branch without parsing prose.
ERR_NO_INTERPRETER = "no-interpreter"
ERR_NO_TORCH = "no-torch"
ERR_SYNTAX = "syntax-error"
ERR_IMPORT = "import-error"
ERR_NO_CLASS = "no-class"
ERR_NEEDS_EXAMPLE = "needs-example"
ERR_BAD_EXAMPLE = "bad-example"
ERR_CONSTRUCT = "constructor-error"
ERR_NEEDS_CUDA = "needs-cuda"
ERR_FORWARD = "forward-error"
ERR_TIMEOUT = "timeout"
ERR_CRASH = "worker-crash"
ERR_USAGE = "usage"
ERR_INTERNAL = "internal"


def new_result(check: str, class_name: str, file: str) -> dict[str, Any]:
    """An empty result; the check fills the verdict and the rest."""
    return {
        "check": check,
        "title": TITLES.get(check, check),
        "className": class_name,
        "file": file,
        "verdict": None,
        "headline": "",
        "sentences": [],
        "inferred": [],
        "example": None,
        "curve": None,
        "table": None,
        "snippet": None,
        "details": {},
        "error": None,
        "durationSeconds": None,
        "python": None,
    }


def error_result(
    check: str,
    class_name: str,
    file: str,
    kind: str,
    message: str,
    *,
    detail: str = "",
    snippet: str | None = None,
    inferred: list[str] | None = None,
) -> dict[str, Any]:
    """A result for a run that could not judge the model (setup or environment problem)."""
    result = new_result(check, class_name, file)
    result["verdict"] = ERROR
    result["headline"] = message
    result["error"] = {"kind": kind, "message": message, "detail": detail}
    result["snippet"] = snippet
    result["inferred"] = list(inferred or [])
    return result


def cancelled_result(check: str, class_name: str, file: str) -> dict[str, Any]:
    result = new_result(check, class_name, file)
    result["verdict"] = CANCELLED
    result["headline"] = f"{TITLES.get(check, check)} on {class_name} was cancelled; the worker process was stopped."
    return result


def sanitize(obj: Any) -> Any:
    """NaN and Inf are not JSON (JavaScript's JSON.parse rejects them): they become None."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: sanitize(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [sanitize(v) for v in obj]
    return obj


def exit_status(result: dict[str, Any]) -> int:
    """The CLI's exit status: 0 pass (or warning), 1 the check failed, 2 it could not run."""
    verdict = result.get("verdict")
    if verdict in (PASS, WARN):
        return 0
    if verdict == FAIL:
        return 1
    return 2
