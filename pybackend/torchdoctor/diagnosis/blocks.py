"""Folding by block: the repeated blocks of a model (``transformer.h.0`` ... ``h.11``) as one
foldable group each, in both views, so that a 12-block transformer reads as 12 lines.

A *stack* is a module path whose children ``<path>.0``, ``<path>.1``, ... (two or more) were called
with one module type and have submodules of their own (a ``ModuleList`` of blocks, never a
``Sequential`` of ``Linear``/``ReLU``); its children are the *blocks*. Only the outermost stacks
count (the layers inside a block are not folded again). Known from the pass's calls; with no
calls, from the parameter names (``<path>.<i>.<rest>``).

- gradient flow: ``groups`` ``[{"path", "type", "first", "count", "folded", "flagged", "tone",
  "meanAbs", "maxAbs", "norm"}]`` (rows ``first`` .. ``first + count - 1``, each with
  ``"group": i``; the others ``"group": None``). ``meanAbs`` weights each parameter by its size;
  ``norm`` is the block's gradient norm.
- shape trace: per row, ``"fold": {"rows": n, "folded": bool} | None``: a block's call, with the
  ``n`` rows of its submodules' calls that follow it.

``folded``: the default when the view opens: folded when the view has ``FOLD_ROWS`` rows or more
and nothing inside the group is flagged (a flagged row is never hidden). The page keeps the
user's own choice from then on.
"""

from __future__ import annotations

import math
import re
from typing import Any, Dict, List, Optional, Sequence, Tuple

FOLD_ROWS = 50

_INDEX = re.compile(r"^(.*)\.(\d+)$")
_SEVERITY = ("error", "warning", "info")


def block_paths(calls: Sequence[Dict[str, Any]], names: Sequence[str] = ()) -> List[str]:
    """The blocks' module paths, in model order."""
    stacks: Dict[str, Dict[int, Tuple[str, bool]]] = {}
    for c in calls:
        m = _INDEX.match(str(c.get("path") or ""))
        if m:
            stacks.setdefault(m.group(1), {})[int(m.group(2))] = (str(c.get("type") or ""), not c.get("leaf"))
    if not calls:
        for name in names:
            parts = str(name).split(".")
            for i in range(1, len(parts) - 1):
                if parts[i].isdigit():
                    stacks.setdefault(".".join(parts[:i]), {})[int(parts[i])] = ("", True)
                    break
    found = [
        path
        for path, kids in stacks.items()
        if len(kids) >= 2 and len({t for t, _ in kids.values()}) == 1 and all(inner for _, inner in kids.values())
    ]
    outer = [p for p in found if not any(p != q and _inside(p, q) for q in found)]
    blocks: List[str] = []
    for path in outer:
        blocks += [f"{path}.{i}" for i in sorted(stacks[path])]
    return blocks


def _inside(path: str, stack: str) -> bool:
    """``path`` lies within one of ``stack``'s blocks (``h.0.mlp.layers`` inside ``h``)."""
    return bool(re.match(re.escape(stack) + r"\.\d+\.", path + "."))


def _block_of(module: str, blocks: Sequence[str]) -> Optional[str]:
    for b in blocks:
        if module == b or module.startswith(b + "."):
            return b
    return None


def gradient_groups(rows: List[Dict[str, Any]], blocks: Sequence[str], types: Dict[str, str]) -> List[Dict[str, Any]]:
    """Group consecutive rows of one block (sets each row's ``group``); the groups."""
    groups: List[Dict[str, Any]] = []
    current: Optional[str] = None
    seen = set()
    for i, row in enumerate(rows):
        block = _block_of(str(row.get("module") or row.get("name") or ""), blocks)
        if block is not None and block == current:
            groups[-1]["count"] += 1
        elif block is not None and block not in seen:
            seen.add(block)
            groups.append({"path": block, "type": types.get(block, ""), "first": i, "count": 1})
        else:
            block = None  # not a block's, or a block's rows apart from its others: left unfolded
        current = block
        row["group"] = len(groups) - 1 if block is not None else None
    for g in groups:
        _summarize(g, rows[g["first"] : g["first"] + g["count"]], len(rows))
    return groups


def _summarize(group: Dict[str, Any], members: List[Dict[str, Any]], total_rows: int) -> None:
    tones = [str(f.get("severity")) for r in members for f in (r.get("flags") or [])]
    flagged = sum(1 for r in members if r.get("flags"))
    means = [(r["meanAbs"], max(int(r.get("numel") or 1), 1)) for r in members if _finite(r.get("meanAbs"))]
    maxes = [r["maxAbs"] for r in members if _finite(r.get("maxAbs"))]
    norms = [r["norm"] for r in members if _finite(r.get("norm"))]
    weight = sum(n for _, n in means)
    group.update(
        flagged=flagged,
        tone=next((s for s in _SEVERITY if s in tones), None),
        meanAbs=sum(v * n for v, n in means) / weight if weight else None,
        maxAbs=max(maxes) if maxes else None,
        norm=math.sqrt(sum(n * n for n in norms)) if norms else None,
        folded=total_rows >= FOLD_ROWS and not flagged,
    )


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def shape_folds(rows: List[Dict[str, Any]], blocks: Sequence[str]) -> None:
    """Set each row's ``fold``: a block's call folds the calls of its submodules after it."""
    wanted = set(blocks)
    for i, row in enumerate(rows):
        row["fold"] = None
        if row.get("path") not in wanted:
            continue
        depth = int(row.get("depth") or 0)
        end = i + 1
        while end < len(rows) and int(rows[end].get("depth") or 0) > depth:
            end += 1
        inner = rows[i:end]
        if end - i - 1 < 1:
            continue
        marked = any(r.get("flags") or r.get("failed") or r.get("status") == "running" for r in inner)
        row["fold"] = {"rows": end - i - 1, "folded": len(rows) >= FOLD_ROWS and not marked}
