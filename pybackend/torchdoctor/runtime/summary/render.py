"""Turn a ``stats()`` dict into the one line the debugger shows.

Order: what it is (kind, shape, dtype, device, size), then anything wrong (NaN/Inf, behind a
``⚠`` so it cannot be missed even when the line is cut short), then the statistics, then
autograd. Plain text only: no ANSI colour, no newlines.
"""

from __future__ import annotations

from typing import Any, Dict, List

from ...spelling import fmt_bytes, fmt_num, fmt_scalar, fmt_shape

WARN = "⚠"
LINE_LIMIT = 200  # a line built from the program's own text (a repr, a config's values) is clipped to this
TRAINING_KINDS = ("optimizer", "scheduler", "dataloader", "dataset", "sampler", "grad_scaler", "generator")


def render(info: Dict[str, Any]) -> str:
    kind = info.get("kind")
    if kind in ("tensor", "ndarray"):
        return render_tensor(info)
    if kind == "module":
        return render_module(info)
    if kind == "container":
        return render_container(info)
    if kind == "config":
        from .config_info import render_config

        return render_config(info)
    if kind in TRAINING_KINDS:
        from .training import render_training

        return render_training(info)
    if kind == "error":
        return f"<torchdoctor: cannot summarize {info.get('type')}: {info.get('error')}>"
    return f"<{info.get('type')}>"


def render_tensor(info: Dict[str, Any]) -> str:
    parts = [_tensor_head(info)]
    parts += _value_parts(info)
    parts += _autograd_parts(info)
    return " ".join(p for p in parts if p)


def _tensor_head(info: Dict[str, Any]) -> str:
    shape = info.get("shape")
    words = [f"{info['type']}{fmt_shape(shape) if shape is not None else ''}", str(info.get("dtype", "?"))]
    if info.get("device"):
        words.append(str(info["device"]))
    layout = info.get("layout")
    if layout and layout != "strided":
        words.append(str(layout))
    if info.get("shape"):  # a 0-d tensor is its value; its size says nothing
        words.append(fmt_bytes(info.get("nbytes")))
    if info.get("expanded"):
        stored = info.get("stored_nbytes")
        words.append(f"expanded×{info['expanded']}" + (f" ({fmt_bytes(stored)} stored)" if stored is not None else ""))
    if info.get("memory_format"):
        words.append(str(info["memory_format"]))
    elif info.get("contiguous") is False:
        words.append("non-contiguous")
    quant = info.get("quantization")
    if isinstance(quant, dict):
        words.append(_quant_text(quant))
    if info.get("inference"):
        words.append("inference")
    if "nnz" in info:
        count = info.get("positions")
        positions = f"{count} position{'s' if count != 1 else ''}, " if count is not None else ""
        words.append(f"nnz={info['nnz']} ({positions}{100 * float(info['density']):.3g}%)")
    return " ".join(words)


def _quant_text(quant: Dict[str, Any]) -> str:
    if "scale" in quant:
        return f"q(scale={fmt_num(quant['scale'])}, zero_point={quant['zero_point']})"
    return f"q(per-channel, axis={quant.get('axis')})"


def _value_parts(info: Dict[str, Any]) -> List[str]:
    if info.get("note"):
        return [str(info["note"])]
    parts = _alarm(info)
    if "value" in info:  # 0-d: the value itself, unless it is NaN/Inf (the alarm says so)
        return parts or [_value_text(info["value"])]
    if "true" in info:
        return parts + [_bool_text(info)]
    if info.get("count"):
        parts.append(_spread_text(info))
        parts.append(_zeros_text(info))
    if "values" in info:
        parts.append("x=[" + ", ".join(_value_text(v) for v in info["values"]) + "]")
    if info.get("source"):
        parts.append(f"({info['source']})")
    return parts


# The share of exact zeros is shown from this fraction up (a ReLU output, a pruned weight): a
# float is almost never exactly 0 by chance. Integers are not counted (0 is an ordinary label).
ZEROS_SHOWN_FROM = 0.01


def _zeros_text(info: Dict[str, Any]) -> str:
    zeros, total = int(info.get("zeros") or 0), int(info.get("count") or 0) + int(info.get("nan") or 0)
    total += int(info.get("posinf") or 0) + int(info.get("neginf") or 0)
    low, high = info.get("min"), info.get("max")
    if str(info.get("dtype", "")).startswith(("i", "u", "q")) or "nnz" in info or "values" in info:
        return ""  # integers, sparse (nnz says it) or values on the line (they show the zeros)
    if not total or zeros < ZEROS_SHOWN_FROM * total or (low == 0 and high == 0):
        return ""  # none worth a word, or all zeros (said already)
    return f"zeros={100 * zeros / total:.3g}%"


def _alarm(info: Dict[str, Any]) -> List[str]:
    """``⚠ NaN×12 +Inf×1``: present only when nonzero, first thing after the header."""
    counts = [("NaN", info.get("nan")), ("+Inf", info.get("posinf")), ("-Inf", info.get("neginf"))]
    words = [f"{label}×{n}" for label, n in counts if n]
    if not words:
        return []
    if not info.get("count"):
        words.append("(all)")
    return [WARN + " " + " ".join(words)]


def _spread_text(info: Dict[str, Any]) -> str:
    low, high = info.get("min"), info.get("max")
    prefix = "|z| " if info.get("of") == "abs" else ""
    if low == high and info.get("count", 0) > 1:
        return prefix + ("all zeros" if low == 0 else f"constant {fmt_num(low)}")
    if low == high:
        return ""  # a single value: x=[...] shows it
    digits = _distinct_digits(low, high)
    low_text, high_text = fmt_num(low, digits), fmt_num(high, digits)
    if low_text == high_text and isinstance(low, int) and isinstance(high, int):
        low_text, high_text = str(low), str(high)  # 64-bit integers 2 apart: exact, never "[x, x]"
    return f"{prefix}μ={fmt_num(info.get('mean'), digits)} σ={fmt_num(info.get('std'))} [{low_text}, {high_text}]"


def _distinct_digits(low, high) -> int:
    """Enough significant digits that different min and max never print the same
    (``1000 ± 0.001`` must not read ``[1000, 1000]`` as if constant)."""
    digits = 3
    while digits < 9 and fmt_num(low, digits) == fmt_num(high, digits):
        digits += 1
    return digits


def _bool_text(info: Dict[str, Any]) -> str:
    true, count = int(info["true"]), int(info["count"])
    if true == 0:
        return "all False"
    if true == count:
        return "all True"
    return f"True×{true} ({100 * true / count:.3g}%)"


def _value_text(value: object) -> str:
    if isinstance(value, str):  # NaN/Inf after JSON sanitising, or complex
        return value
    return fmt_scalar(value)


def _autograd_parts(info: Dict[str, Any]) -> List[str]:
    parts = []
    if info.get("grad_fn"):
        parts.append(f"grad_fn={info['grad_fn']}")
    elif info.get("type") == "Parameter":
        if not info.get("requires_grad"):
            parts.append("frozen")
    elif info.get("requires_grad"):
        parts.append("requires_grad")
    if "grad" in info:
        parts.append(_grad_text(info))
    return parts


def _grad_text(info: Dict[str, Any]) -> str:
    grad = info["grad"]
    if grad is None:
        return "grad=None"
    same = grad.get("shape") == info.get("shape") and grad.get("device") == info.get("device")
    head = "" if same else f"{fmt_shape(grad['shape'])} {grad['device']} "
    if grad.get("dtype") != info.get("dtype"):
        head += f"{grad['dtype']} "
    body = " ".join(p for p in _value_parts(grad) if p)
    return f"| grad {head}{body}".rstrip()


def render_module(info: Dict[str, Any]) -> str:
    from .module_info import render_module as module_line  # what is counted is decided there

    return module_line(info)


def render_container(info: Dict[str, Any]) -> str:
    """``list[3 tensors] each [64, 10] f32 cpu 7.5 KiB``. A walk cut short (``complete`` False)
    saw only some leaves: its counts and size are lower bounds (``256+ tensors``, ``≥2 KiB``) and
    no shape is claimed for each."""
    complete = info.get("complete", True)
    more = "" if complete else "+"
    counted = []
    if info.get("tensors"):
        counted.append(f"{info['tensors']}{more} tensor{'s' if info['tensors'] != 1 or more else ''}")
    if info.get("distinct") is not None:
        counted[-1 if counted else 0 :] = [(counted[-1] + " " if counted else "") + f"({info['distinct']} distinct)"]
    if info.get("arrays"):
        counted.append(f"{info['arrays']}{more} array{'s' if info['arrays'] != 1 or more else ''}")
    leaves = int(info.get("tensors") or 0) + int(info.get("arrays") or 0)
    # "[3 tensors]" alone only when the items are those tensors: a 2-layer cache or a checkpoint
    # {model, optimizer} whose nested tensors happen to number as many as its items says both
    if leaves != info.get("len") or info.get("direct", leaves) != leaves:
        counted.insert(0, f"{info['len']} item{'s' if info['len'] != 1 else ''}")
    words = [f"{info['type']}[{', '.join(counted)}]"]
    if info.get("shape") is not None and leaves > 1 and complete:
        words.append("each " + fmt_shape(info["shape"]))
    for field in ("dtypes", "devices"):
        values = info.get(field) or []
        if values:
            words.append("/".join(values[:3]) + ("/…" if len(values) > 3 else ""))
    words.append(("" if complete else "≥") + fmt_bytes(info.get("nbytes")))
    words += _where(info.get("nan_in"), "NaN in")
    words += _where(info.get("inf_in"), "Inf in")
    if not info.get("complete", True):
        words.append("(partly checked)")
    return " ".join(words)


def _where(labels, what: str) -> List[str]:
    """``⚠ NaN in 'logits', 'loss' (+3 more)``."""
    if not labels:
        return []
    shown = ", ".join(labels[:3]) + (f" (+{len(labels) - 3} more)" if len(labels) > 3 else "")
    return [f"{WARN} {what} {shown}"]
