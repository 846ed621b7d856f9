"""Which operation made a non-finite loss, when no module output was bad: a walk of its graph.

A hand-written loss (``torch.log(p)`` with ``p == 0``, ``x / std`` with ``std == 0``) runs no
module, so no forward hook sees it. Its autograd graph does: before ``backward`` runs, the nodes
still hold the tensors they saved. We walk from the loss towards the leaves and, for the
operations that turn finite inputs into NaN/Inf (log of <= 0, division by 0, sqrt of < 0,
overflowing exp...), test the operand they saved. The deepest match is where the first
non-finite value was born. Only runs once something is already wrong, so its cost is free.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

MAX_NODES = 5000

Verdict = Optional[str]


def find_origin(loss: Any) -> Optional[Dict[str, object]]:
    """``{"op", "node", "detail", "depth"}`` of the deepest op that made a non-finite value, or None."""
    torch = sys.modules["torch"]
    best: Optional[Tuple[int, Dict[str, object]]] = None
    with torch.no_grad():
        for node, depth in _walk(getattr(loss, "grad_fn", None)):
            name = type(node).__name__
            rule = _RULES.get(name)
            if rule is not None:
                detail, dtype = _test(torch, node, rule), None
                op = rule[1]
            elif name in _RECOMPUTE:
                op = _RECOMPUTE[name][1]
                detail, dtype = _recompute(torch, node, _RECOMPUTE[name])
            else:
                continue
            if detail and (best is None or depth > best[0]):
                best = (depth, {"op": op, "node": name, "detail": detail, "depth": depth, "dtype": dtype})
    return best[1] if best else None


def describe(origin: Optional[Dict[str, object]]) -> Optional[str]:
    if not origin:
        return None
    return f"`{origin['op']}` {origin['detail']} ({origin['node']})"


def _walk(root: Any):
    # the nodes seen are kept, not only their ids: ``next_functions`` makes a new Python object for a
    # node whose last one was freed, and a freed object's id is reused, so a set of ids alone skipped
    # unseen nodes (the `log` of a hand-written BCE went unnamed on Python 3.9 with torch 2.8)
    seen: Dict[int, Any] = {}
    frontier: List[Tuple[Any, int]] = [(root, 0)] if root is not None else []
    while frontier and len(seen) < MAX_NODES:
        node, depth = frontier.pop()
        if node is None or id(node) in seen:
            continue
        seen[id(node)] = node
        yield node, depth
        try:
            nexts = node.next_functions
        except Exception:
            continue
        frontier.extend((child, depth + 1) for child, _ in nexts if child is not None)


def _saved(node: Any, attr: str) -> Any:
    try:
        value = getattr(node, attr)
    except Exception:  # freed after a backward, or not saved by this torch version
        return None
    torch = sys.modules["torch"]
    return value if isinstance(value, torch.Tensor) and value.dtype.is_floating_point else None


def _nonpositive(torch, x) -> Verdict:
    if not bool(torch.isfinite(x).all()):
        return None  # the operand was already bad: the origin is further up
    zeros, negatives = int((x == 0).sum()), int((x < 0).sum())
    parts = [f"{zeros} zeros"] if zeros else []
    parts += [f"{negatives} negative values"] if negatives else []
    return "of " + " and ".join(parts) if parts else None


def _below_minus_one(torch, x) -> Verdict:
    if not bool(torch.isfinite(x).all()):
        return None
    count = int((x <= -1).sum())
    return f"of {count} values <= -1" if count else None


def _zero_divisor(torch, x) -> Verdict:
    if not bool(torch.isfinite(x).all()):
        return None
    zeros = int((x == 0).sum())
    return f"by {zeros} zeros{_spread_divisor(x)}" if zeros else None


# A divisor's grad_fn that measures the spread of its input, and what the sentence calls it
_SPREADS = {
    "StdBackward0": "standard deviation",
    "StdMeanBackward0": "standard deviation",
    "VarBackward0": "variance",
    "VarMeanBackward0": "variance",
    "LinalgVectorNormBackward0": "norm",
    "NormBackward1": "norm",
}
# Nodes between the spread and the division that keep a zero a zero (``std + eps``, ``var.sqrt()``, a
# clamp, a view): the first operand is followed
_THROUGH = ("Add", "Clamp", "View", "Unsqueeze", "Expand", "Reshape", "Squeeze", "Mul", "Sqrt")


def _spread_divisor(x) -> str:
    """``(a standard deviation of 0: ...)`` when the zero divisor is a standard deviation, variance
    or norm (plus an eps, clamped, reshaped): a normalisation ``x / (x.std() + eps)`` with eps=0 of
    an input that is constant where it is measured (vq-vae-2-style code). The plain "by 4 zeros" did
    not say when it happens."""
    node, hops = getattr(x, "grad_fn", None), 0
    while node is not None and hops < 6:
        name = type(node).__name__
        if name in _SPREADS:
            return (
                f" (a {_SPREADS[name]} of 0: the input it measures is constant there, and no eps above 0 "
                "is added to it)"
            )
        if not name.startswith(_THROUGH):
            return ""
        node, hops = _first_parent(node), hops + 1
    return ""


def _first_parent(node: Any) -> Any:
    return next((n for n, _ in node.next_functions if n is not None), None)


def _nonfinite_result(torch, x) -> Verdict:
    bad = int((~torch.isfinite(x)).sum())
    return f"gave {bad} non-finite values" if bad else None


def _sqrt_result(torch, x) -> Verdict:
    """``sqrt`` saves its result only: a NaN there is the root of a negative value (or of a NaN an
    op not searched made), an Inf the root of an Inf."""
    nan, inf = int(torch.isnan(x).sum()), int(torch.isinf(x).sum())
    parts = [f"{nan} NaN (roots of negative values, or of NaN)"] if nan else []
    parts += [f"{inf} Inf (roots of Inf)"] if inf else []
    return "gave " + " and ".join(parts) if parts else None


def _rsqrt_result(torch, x) -> Verdict:
    """``rsqrt`` (1/sqrt): an Inf is the root of a zero (an RMSNorm's zero mean square), a NaN of a
    negative value (or of a NaN)."""
    nan, inf = int(torch.isnan(x).sum()), int(torch.isinf(x).sum())
    parts = [f"{inf} Inf (of zeros)"] if inf else []
    parts += [f"{nan} NaN (of negative values, or of NaN)"] if nan else []
    return "gave " + " and ".join(parts) if parts else None


def _softmax_result(torch, x) -> Verdict:
    bad = int(torch.isnan(x).sum())
    return f"gave {bad} NaN (a row of -Inf only, or Inf in its input)" if bad else None


# node type -> (saved operand, op name as the user wrote it, test of the operand)
_RULES: Dict[str, Tuple[str, str, Callable[[Any, Any], Verdict]]] = {
    "LogBackward0": ("_saved_self", "log", _nonpositive),
    "Log2Backward0": ("_saved_self", "log2", _nonpositive),
    "Log10Backward0": ("_saved_self", "log10", _nonpositive),
    "Log1pBackward0": ("_saved_self", "log1p", _below_minus_one),
    "DivBackward0": ("_saved_other", "division", _zero_divisor),
    "ReciprocalBackward0": ("_saved_result", "reciprocal", _nonfinite_result),
    "RsqrtBackward0": ("_saved_result", "rsqrt", _rsqrt_result),
    "SqrtBackward0": ("_saved_result", "sqrt", _sqrt_result),
    "ExpBackward0": ("_saved_result", "exp", _nonfinite_result),
    "SoftmaxBackward0": ("_saved_result", "softmax", _softmax_result),
}


def _overflow(torch, a, b, fn) -> Verdict:
    if not (bool(torch.isfinite(a).all()) and bool(torch.isfinite(b).all())):
        return None  # an operand was already bad: the origin is further up
    bad = int((~torch.isfinite(fn(a, b))).sum())
    return f"gave {bad} Inf/NaN from finite operands" if bad else None


# Ops that overflow (float16 above all): the result is not saved, so it is recomputed from the
# saved operands (once, after something is wrong). node -> ((operands), op name, recompute)
_RECOMPUTE: Dict[str, Tuple[Tuple[str, str], str, Callable[[Any, Any], Any]]] = {
    "BmmBackward0": (("_saved_self", "_saved_mat2"), "matrix product", lambda a, b: a @ b),
    "MmBackward0": (("_saved_self", "_saved_mat2"), "matrix product", lambda a, b: a @ b),
    "AddmmBackward0": (("_saved_mat1", "_saved_mat2"), "matrix product", lambda a, b: a @ b),
    "MulBackward0": (("_saved_self", "_saved_other"), "product", lambda a, b: a * b),
}


def _recompute(torch, node: Any, rule) -> Tuple[Verdict, Optional[str]]:
    (first, second), _, fn = rule
    a, b = _saved(node, first), _saved(node, second)
    if a is None or b is None:
        return None, None
    try:
        detail = _overflow(torch, a, b, fn)
    except Exception:
        return None, None
    if not detail:
        return None, None
    # the result's dtype, not the first operand's: a float32 0-d scale times float16 features is a
    # float16 product (open_clip's `logit_scale * image_features` was told nothing of float16)
    return detail, str(torch.result_type(a, b)).replace("torch.", "")


def _test(torch, node: Any, rule) -> Verdict:
    attr, _, check = rule
    operand = _saved(node, attr)
    if operand is None:
        return None
    if attr == "_saved_other":  # x / y: only a finite numerator makes the division the origin
        numerator = _saved(node, "_saved_self")
        if numerator is not None and not bool(torch.isfinite(numerator).all()):
            return None
    try:
        return check(torch, operand)
    except Exception:
        return None
