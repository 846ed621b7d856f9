"""Reference statistics for the runtime tests: plain float64 torch, the obvious way."""

from __future__ import annotations

import math
import warnings

import torch


def reference(t: torch.Tensor) -> dict:
    """Counts, finite min/max, mean and sample std of ``t`` computed densely in float64."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if t.layout != torch.strided:
            t = t.to_dense()
        if t.dtype.is_complex:  # magnitudes, rounded to the tensor's own precision as ours are
            values = (t.to(torch.complex64) if t.dtype == torch.complex32 else t).abs().to(torch.float64)
        elif t.dtype == torch.bool:
            return {"count": t.numel(), "true": int(t.sum())}
        else:
            values = t.to(torch.float64)
    values = values.reshape(-1)
    finite = values[torch.isfinite(values)]
    out = {
        "count": int(finite.numel()),
        "nan": int(torch.isnan(values).sum()),
        "posinf": int((values == math.inf).sum()),
        "neginf": int((values == -math.inf).sum()),
        "min": float(finite.min()) if finite.numel() else None,
        "max": float(finite.max()) if finite.numel() else None,
        "mean": float(finite.mean()) if finite.numel() else None,
        "std": float(finite.std()) if finite.numel() > 1 else None,
        "scale": float(finite.abs().max()) if finite.numel() else 0.0,
        "spread": float((finite - finite.mean()).abs().max()) if finite.numel() else 0.0,
    }
    return out


def assert_matches(got: dict, ref: dict, rtol: float) -> None:
    """Counts and extremes exactly; mean and std within ``rtol`` of the data's own scale."""
    if "true" in ref:
        assert got["true"] == ref["true"] and got["count"] == ref["count"]
        return
    for key in ("count", "nan", "posinf", "neginf", "min", "max"):
        assert got[key] == ref[key], (key, got[key], ref[key])
    if ref["mean"] is None:
        assert got["mean"] is None
    else:
        assert abs(got["mean"] - ref["mean"]) <= rtol * ref["scale"] + 1e-300, (got["mean"], ref["mean"])
    if ref["std"] is None:
        assert got["std"] is None
    else:
        # the reference itself rounds: three equal values may give a std of 1e-14 * scale
        assert abs(got["std"] - ref["std"]) <= rtol * ref["spread"] + 1e-12 * ref["scale"], (got["std"], ref["std"])
