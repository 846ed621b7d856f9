"""The facts of one anomaly as a JSON-able dict: what, where, when, and the numbers around it.

Built only after a check has failed, so it may take its time: exact NaN/Inf counts, the
summaries of the module's inputs and output (:func:`summary.stats`, computed on the tensor's
device), the names the user knows (``model.net.2``), and the user's stack. Common keys::

    kind        nonfinite_output | exploding_output | dead_output | nonfinite_grad |
                exploding_grad | vanished_grad | stale_grad | scaler_skips | loss_nan |
                loss_spike | loss_not_decreasing | loss_oscillating
    phase       forward | backward | loss | optimizer
    step        backward() calls seen before this one (0 for the first step)
    sentence    the one line shown to the user
    where       "file:line" of the user's frame the debugger stops at
    user_stack  ["file:line:function", ...] innermost first
    action      break | log
    exact       False when found by the once-per-step device check (accelerators)

Module anomalies add ``module`` (path in its root model), ``module_type``, ``root``,
``root_var``, ``qualname``, ``counts``, ``max_abs``, ``output`` / ``inputs`` (stats dicts) and
``output_summary`` / ``input_summaries`` (one-line strings). Gradient anomalies add ``param``.
A non-finite gradient or loss that no module output showed first adds ``data_bad``: the loop's
data tensors holding NaN/Inf (:mod:`data_origin`), ``[{"name", "counts"}]``.
"""

from __future__ import annotations

from types import FrameType
from typing import Any, Dict, List, Optional

from ..summary.api import stats, summarize
from .detect import NONFINITE, bad_counts, checkable, extremes, iter_tensors, magnitude, verdict
from .frames import user_stack, variable_name
from .names import unwrap

Report = Dict[str, Any]

MAX_INPUTS = 4
MAX_PARAMS = 64


def base(kind: str, phase: str, step: int, frame: Optional[FrameType], action: str) -> Report:
    stack = user_stack(frame)
    where = ":".join(stack[0].split(":")[:-1]) if stack else None
    return {
        "kind": kind,
        "phase": phase,
        "step": step,
        "action": action,
        "where": where,
        "user_stack": stack,
        "exact": True,
    }


def root_label(root: Any, frame: Optional[FrameType]) -> Dict[str, Any]:
    var = variable_name(root, frame)
    return {"root": type(root).__name__, "root_var": var, "label": var or type(root).__name__}


def module_facts(names: Any, module: Any, frame: Optional[FrameType], hint: Any = None) -> Report:
    root, path = names.name(module, hint)
    if root is None:
        root, path = module, ""
    label = root_label(root, frame)
    return {
        "module": path,
        "module_type": type(unwrap(module)).__name__,
        "root": label["root"],
        "root_var": label["root_var"],
        "qualname": f"{label['label']}.{path}" if path else label["label"],
    }


def output_facts(
    tensor: Any, inputs: Any, low: float, high: float, threshold: float, names: Optional[List[str]] = None
) -> Report:
    """Counts and summaries of a bad output, and what its inputs looked like (``names``: of
    the inputs, when some came by keyword)."""
    facts: Report = {
        "dtype": str(tensor.dtype).replace("torch.", ""),
        "max_abs": magnitude(low, high),
        "min": low,
        "max": high,
        "threshold": threshold,
        "counts": bad_counts(tensor),
        "device": str(tensor.device),
        "output": stats(tensor),
        "output_summary": summarize(tensor),
    }
    tensors = list(iter_tensors(inputs))[:MAX_INPUTS]
    facts["inputs"] = [stats(t) for t in tensors]
    facts["input_summaries"] = [summarize(t) for t in tensors]
    facts.update(inputs_facts(tensors))
    if names is not None:
        facts["input_names"] = names[: len(tensors)]
        facts["bad_input_names"] = [n for n, t in zip(names, tensors) if bad_counts(t)["nan"] or _has_inf(t)]
    return facts


def _has_inf(t: Any) -> bool:
    counts = bad_counts(t)
    return bool(counts["posinf"] or counts["neginf"])


def origin_facts(found: Dict[str, Any]) -> Report:
    """Where a parent's forward made a NaN/Inf (:func:`origins.made_inside`)."""
    frame = found.get("frame")
    facts: Report = {"origin_op": found.get("op"), "origin_detail": found.get("detail")}
    facts["origin_node"] = found.get("node")
    if found.get("dtype"):
        facts["origin_dtype"] = found["dtype"]
    filename = frame.f_code.co_filename if frame is not None else found.get("file")
    if found.get("line") is not None and filename is not None:
        facts["origin_where"] = f"{filename}:{found['line']}"
        facts["origin_code"] = found.get("code")
    elif found.get("lines"):  # several lines of the forward do the op: which one is not known
        facts["origin_lines"] = found["lines"]
    return facts


def params_facts(module: Any) -> Report:
    """Names of the module's own parameters (and its children's) that hold NaN/Inf already, and
    of its buffers (a positional table, BatchNorm's running statistics: an Inf planted in
    attention-is-all-you-need's ``pos_table`` read "its inputs were finite" and nothing more).
    A buffer holding -Inf by design (an additive attention mask: :func:`_mask`) is not named, and
    a module whose ``named_parameters`` / ``named_buffers`` raise loses those names, not its
    report."""
    bad, shared = [], False
    for name, p in _named(module, "named_parameters"):
        if _nonfinite(p):
            bad.append(name)
            shared = shared or _is_shared(p)
    facts: Report = {"params_bad": bad}
    if shared:  # in shared memory (hogwild): other processes update them too
        facts["params_shared"] = True
    buffers, kinds = [], []
    for name, b in _named(module, "named_buffers"):
        if _nonfinite(b) and not _mask(name, b):
            buffers.append(name)
            kinds.append(_kind(b))
    if buffers:
        facts["buffers_bad"], facts["buffers_bad_kinds"] = buffers, kinds
    return facts


def _named(module: Any, method: str) -> List[Any]:
    try:
        return list(getattr(unwrap(module), method)())[:MAX_PARAMS]
    except Exception:  # noqa: BLE001 - the user's module may override them (and raise)
        return []


def _nonfinite(t: Any) -> bool:
    return checkable(t) and verdict(*extremes(t), float("inf")) == NONFINITE


def _kind(t: Any) -> str:
    counts = bad_counts(t)
    nan, inf = counts["nan"], counts["posinf"] + counts["neginf"]
    return "NaN and Inf" if nan and inf else "Inf" if inf else "NaN"


def _mask(name: str, t: Any) -> bool:
    """A buffer that holds Inf by design: an additive attention mask, with no NaN, no +Inf, and
    -Inf where attention is barred. Named as one (``attn_mask``; nanoGPT's causal ``bias``), or by
    its values: a matrix whose finite values are all 0 and whose -Inf fill whole diagonals (a
    triangle as ``full(-inf).triu(1)`` makes, the outside of a sliding window's band), the same in
    every slice. An identity or adjacency with a -Inf (finite 1s), a lone -Inf in zeros, and a
    fresh BatchNorm's statistics (one-dimensional) are named."""
    try:
        counts = bad_counts(t)
        if counts["nan"] or counts["posinf"]:
            return False
        leaf = name.rsplit(".", 1)[-1].lower()
        if "mask" in leaf or "bias" in leaf:
            return True
        if t.dim() < 2:
            return False
        data = t.detach()
        finite = data.isfinite()
        return bool((data[finite] == 0).all()) and _banded(data.isneginf())
    except Exception:  # noqa: BLE001 - an odd tensor: named, as before
        return False


def _banded(barred: Any) -> bool:
    """Do the True entries of a (..., rows, cols) matrix fill whole diagonals (a triangle, the
    outside of a band, the diagonal itself), the same in every slice, and number at least
    ``min(rows, cols) - 1`` (a causal mask's fewest)? A lone planted value shares its diagonal."""
    rows, cols = barred.shape[-2], barred.shape[-1]
    slices = barred.reshape(-1, rows, cols)
    first = slices[0]
    if not bool((slices == first).all()):
        return False
    open_at, barred_at = (~first).nonzero(), first.nonzero()
    if not len(open_at) or len(barred_at) < min(rows, cols) - 1:
        return False
    open_d = (open_at[:, 1] - open_at[:, 0]).unique()
    barred_d = (barred_at[:, 1] - barred_at[:, 0]).unique()
    return not bool((barred_d.unsqueeze(1) == open_d.unsqueeze(0)).any())


def evaluation_facts(root: Any, torch: Any, frame: Any = None) -> Report:
    """A forward outside training: its model in eval mode (a ``test()`` loop, where BatchNorm uses
    its running statistics), or gradients off. Gradients off alone is not evaluation (a GAN's
    fakes drawn under no_grad in the discriminator's step): it is named as such; inside
    ``torch.utils.checkpoint`` (whose first forward runs under no_grad) it is not named at all.
    ``{}`` in a training forward."""
    eval_mode = root is not None and not getattr(unwrap(root), "training", True)
    grad_off = "inference_mode" if torch.is_inference_mode_enabled() else None
    if grad_off is None and not torch.is_grad_enabled():
        grad_off = "no_grad"
    if grad_off and not eval_mode and _in_checkpoint(frame):
        grad_off = None
    return {"evaluation": {"eval_mode": eval_mode, "grad_off": grad_off}} if eval_mode or grad_off else {}


def _in_checkpoint(frame: Any) -> bool:
    """Is ``torch.utils.checkpoint`` running this forward (a frame of its on the stack)?"""
    while frame is not None:
        if frame.f_code.co_filename.replace("\\", "/").endswith("torch/utils/checkpoint.py"):
            return True
        frame = frame.f_back
    return False


def _is_shared(p: Any) -> bool:
    try:
        return bool(p.is_shared())
    except Exception:  # a tensor kind without storage to ask about
        return False


def inputs_facts(tensors: List[Any]) -> Report:
    """Summed NaN/Inf counts of the inputs, and their overall extremes."""
    total = {"nan": 0, "posinf": 0, "neginf": 0, "numel": 0}
    low, high = None, None
    for t in tensors:
        for key, value in bad_counts(t).items():
            total[key] += value
        t_low, t_high = extremes(t)
        low = t_low if low is None else min(low, t_low)
        high = t_high if high is None else max(high, t_high)
    bad = bool(total["nan"] or total["posinf"] or total["neginf"])
    facts: Report = {"inputs_counts": total, "inputs_bad": bad, "inputs_min": low, "inputs_max": high}
    facts["inputs_max_abs"] = magnitude(low, high) if low is not None and high is not None else None
    return facts


def tensor_facts(tensor: Any) -> Report:
    """Counts and summary of a gradient (or any tensor a report is about)."""
    return {
        "counts": bad_counts(tensor),
        "device": str(tensor.device),
        "output": stats(tensor),
        "output_summary": summarize(tensor),
    }
