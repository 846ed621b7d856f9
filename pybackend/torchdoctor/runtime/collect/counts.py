"""Parameter counts of a snapshot's modules: each storage once, as the model's one-line summary.

A head tied to the embedding (``lm_head.weight is wte.weight``) counts in both modules' rows
and once in every module that holds both: the shape trace says the same number of parameters
as the Variables view (``runtime/summary/module_info.py`` owns the key).
"""

from __future__ import annotations

from typing import Any, Dict, List, Tuple

from ..summary.module_info import unique_parameters


def unique(module: Any) -> List[Tuple[str, Any]]:
    """The named parameters of ``module`` and its submodules, each storage once."""
    return unique_parameters(module.named_parameters())


def elements(named: List[Tuple[str, Any]]) -> int:
    return sum(int(p.numel()) for _, p in named)


def param_count(module: Any) -> int:
    try:
        return elements(unique(module))
    except Exception:
        return 0


def param_counts(named: Dict[str, Any]) -> Tuple[Dict[str, int], Dict[str, int]]:
    """Per module path: its own parameter elements, and those of its subtree."""
    own = {name: elements(unique_parameters(m.named_parameters(recurse=False))) for name, m in named.items()}
    total = {name: elements(unique(m)) for name, m in named.items()}
    return own, total
