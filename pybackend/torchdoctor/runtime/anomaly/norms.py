"""Why a normalisation layer built with ``eps=0`` made NaN from finite inputs: 0/0 on a constant group.

LayerNorm and GroupNorm divide each group of their input, less its mean, by the
group's standard deviation plus ``eps``; RMSNorm divides each row by its root mean square plus
``eps``. With ``eps=0`` a constant group (a padded row, an image of one colour, a feature map a
dead ReLU zeroed) is 0 / 0: NaN, from finite inputs and weights. The sentence said only "its inputs
were finite" (torch's own layers are no forward code to search, :func:`origins.made_by_own_code`);
the layer's ``eps`` and its input say exactly when. Runs once a NaN output is reported: it may read
the whole input.
"""

from __future__ import annotations

import math
import sys
from typing import Any, Dict, Optional

from .detect import iter_tensors

Finding = Dict[str, Any]


def zero_spread(module: Any, inputs: Any) -> Optional[Finding]:
    """``{"layer", "eps", "constant", "groups", "unit", "rms"}`` when ``module`` is one of torch's
    normalisation layers built with ``eps=0`` and groups of its first input are constant (all
    zeros for RMSNorm); else None."""
    if getattr(module, "eps", None) != 0:  # RMSNorm's default eps is None: its dtype's epsilon
        return None
    x = next(iter(iter_tensors(inputs)), None)
    torch = sys.modules["torch"]
    if x is None or not x.numel() or not x.dtype.is_floating_point:
        return None
    grouped = _groups(torch.nn, module, x.detach())
    if grouped is None:
        return None
    rms = type(module).__name__ == "RMSNorm"
    with torch.no_grad():
        rows, unit = grouped
        flat = rows == 0 if rms else rows == rows[:, :1]
        constant = int(flat.all(dim=1).sum())
    if not constant:
        return None
    return {"layer": type(module).__name__, "constant": constant, "groups": rows.shape[0], "unit": unit, "rms": rms}


def _groups(nn: Any, module: Any, x: Any) -> Optional[tuple]:
    """The input as one row per normalised group, and what a group is called; None for a layer
    that is not a per-sample normalisation (BatchNorm refuses eps=0 in training; InstanceNorm
    gives 0 for a constant channel on the CPU)."""
    if isinstance(module, nn.LayerNorm) or type(module).__name__ == "RMSNorm":
        size = math.prod(module.normalized_shape)
        return x.reshape(-1, size), "rows"
    if isinstance(module, nn.GroupNorm):
        return x.reshape(x.shape[0] * module.num_groups, -1), "groups"
    return None


def zero_spread_text(r: Dict[str, Any]) -> str:
    """``: built with eps=0, it divides each of its 4 rows by their standard deviation, and 4 are
    constant: 0/0 ...``; empty without the finding."""
    found = r.get("zero_spread")
    if not found:
        return ""
    measure, flat = ("root mean square", "all zeros") if found["rms"] else ("standard deviation", "constant")
    return (
        f": `{found['layer']}` built with eps=0 divides each of its {found['groups']} {found['unit']} by that {found['unit'][:-1]}'s {measure}, "
        f"and {found['constant']} of them are {flat} ({measure} 0): 0/0 is NaN; give it an eps above 0 "
        + ("(torch's default, eps=None, is the dtype's epsilon)" if found["rms"] else "(torch's default is 1e-5)")
    )
