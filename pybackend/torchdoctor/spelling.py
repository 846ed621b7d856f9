"""How Torch Doctor writes numbers, sizes, shapes and dtypes, everywhere it writes them.

One spelling for the runtime's summaries and anomaly sentences, the diagnosis verdicts and the
checks' results: ``0.139``, ``10000``, ``1.92e6``, ``3.2e-8`` (:func:`fmt_num`), never
``2.5e+05`` or ``1e-08``. Pure stdlib: it sees only Python numbers and strings, never a tensor,
so the runtime, the checks' workers and the torch-free backend (server, diagnosis) all import
it. May import: the standard library only. No ANSI colour, ever: the text lands in VS Code
hovers, the Variables view and the webviews.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Optional

# torch and numpy spell dtypes at length; a hover has no room for "torch.float32".
_DTYPE_SHORT = {
    "float16": "f16",
    "bfloat16": "bf16",
    "float32": "f32",
    "float64": "f64",
    "complex32": "c32",
    "complex64": "c64",
    "complex128": "c128",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bool": "bool",
    "half": "f16",
    "float": "f32",
    "double": "f64",
}


def short_dtype(name: str) -> str:
    """``torch.float32`` / ``float32`` -> ``f32``; ``float8_e4m3fn`` -> ``f8e4m3fn``."""
    name = name.replace("torch.", "")
    if name in _DTYPE_SHORT:
        return _DTYPE_SHORT[name]
    if name.startswith("float8_"):
        return "f8" + name[len("float8_") :]
    return name


def fmt_num(value: Optional[float], digits: int = 3) -> str:
    """A number in at most ~6 characters: ``0.0123``, ``-4.12``, ``1234``, ``1.2e-05`` -> ``1.2e-5``."""
    if value is None:
        return "?"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value) if abs(value) < 10**6 else _compact_exp(f"{value:.{digits - 1}e}")
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "0"
    if value == int(value) and abs(value) < 10**6:
        return str(int(value))
    mag = abs(value)
    if 1e-3 <= mag < 10**digits:
        text = f"{value:.{digits}g}"
        if "e" not in text:
            return text
        mag = 10**digits  # 999.96 rounds up to 1e+03 in %g: spell it 1000
    if 10**digits <= mag < 1e5:
        return f"{value:.0f}"
    return _compact_exp(f"{value:.{digits - 1}e}")


def _compact_exp(text: str) -> str:
    """``1.23e+05`` -> ``1.23e5``, ``1.20e-07`` -> ``1.2e-7``: shorter, same meaning."""
    mantissa, _, exponent = text.partition("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    sign = "-" if exponent.startswith("-") else ""
    return f"{mantissa}e{sign}{exponent.lstrip('+-').lstrip('0') or '0'}"


def fmt_scalar(value) -> str:
    """A single value shown in full-ish precision (a loss, a 0-d tensor): six significant digits."""
    if isinstance(value, bool) or isinstance(value, int):
        return str(value)
    if isinstance(value, complex):
        return f"{fmt_scalar(value.real)}{'+' if value.imag >= 0 else '-'}{fmt_scalar(abs(value.imag))}j"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return fmt_num(value)
        return f"{value:.6g}"
    return str(value)


def fmt_bytes(nbytes: Optional[int]) -> str:
    """``786432`` -> ``768 KiB``: binary units, three significant digits."""
    if nbytes is None:
        return "?"
    size = float(nbytes)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            if unit == "B":
                return f"{int(size)} B"
            return f"{size:.3g} {unit}" if size < 100 else f"{size:.0f} {unit}"
        size /= 1024
    return f"{nbytes} B"  # unreachable; keeps type checkers calm


def fmt_count(count: int) -> str:
    """``12345`` -> ``12.3K``, ``7_000_000`` -> ``7M``: parameter counts."""
    for factor, suffix in ((10**12, "T"), (10**9, "B"), (10**6, "M"), (10**3, "K")):
        if count >= factor:
            return f"{count / factor:.3g}{suffix}"
    return str(int(count))


def fmt_shape(shape: Iterable[int]) -> str:
    """``(64, 3, 32, 32)`` -> ``[64, 3, 32, 32]``; a 0-d shape is ``[]``; ragged sizes are ``*``."""
    return "[" + ", ".join("*" if d is None else str(int(d)) for d in shape) + "]"


def fmt_dims(dims: Any) -> str:
    """A shape in a sentence, as Python prints a tuple: ``(8, 3, 32, 32)``; ``?`` when unknown.

    (A summary line writes the shape as part of the type instead: ``tensor[8, 3, 32, 32]``,
    :func:`fmt_shape`.)"""
    if not isinstance(dims, (list, tuple)):
        return "?"
    return "(" + ", ".join(str(d) for d in dims) + ")"


def clip(text: str, limit: int = 120) -> str:
    """Keep error messages and labels to one short line."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
