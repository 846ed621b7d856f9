"""Qualified names through import aliases.

``import torch.nn.functional as F`` makes ``F.softmax`` mean ``torch.nn.functional.softmax``;
``from torch import nn`` makes ``nn.CrossEntropyLoss`` mean ``torch.nn.CrossEntropyLoss``.
Rules compare qualified names, never the text the user happened to type.

Imports are collected from the whole module regardless of scope: a training script that
imports inside ``main()`` means the same thing, and a name imported twice under different
meanings is rare enough that the last import wins.
"""

from __future__ import annotations

import ast
import functools
import re
from typing import Dict, Optional, Set

_DATA_LOADER = "torch.utils.data.DataLoader"

# Public torch classes are also reachable through their defining module
# (``torch.nn.modules.loss.CrossEntropyLoss``); rules only know the public spelling.
_PRIVATE_PATHS = (
    (re.compile(r"^torch\.nn\.modules(\.\w+)*\.(?=\w+$)"), "torch.nn."),
    (
        re.compile(r"^torch\.optim\.(adam|adamw|sgd|rmsprop|adagrad|adadelta|adamax|nadam|radam|lbfgs)\.(?=\w+$)"),
        "torch.optim.",
    ),
    (re.compile(r"^torch\.utils\.data\.dataloader\.(?=\w+$)"), "torch.utils.data."),
    (re.compile(r"^torch\.autograd\.grad_mode\.(?=\w+$)"), "torch."),
    (re.compile(r"^torch\.autograd\.(?=(no_grad|enable_grad|set_grad_enabled|inference_mode)$)"), "torch."),
    (re.compile(r"^torch\.cuda\.amp\.(grad_scaler\.)?(?=GradScaler$)"), "torch.amp."),
    (re.compile(r"^torch\.amp\.grad_scaler\.(?=GradScaler$)"), "torch.amp."),
    (re.compile(r"^torch\.functional\.(?=\w+$)"), "torch."),
    # PyTorch Geometric's graph loaders subclass DataLoader and pass it its arguments (``shuffle``
    # defaults to False, ``sampler`` excludes it): the loader rules treat them as one (2026-12-07,
    # a fetched project's unshuffled training loaders went unreported). The neighbour and cluster
    # loaders take a graph, not a dataset, first: the rules' dataset checks just find nothing there.
    (
        re.compile(
            r"^torch_geometric\.(loader|data)\.(DataLoader|DenseDataLoader|DataListLoader"
            r"|NeighborLoader|LinkNeighborLoader|HGTLoader|ClusterLoader)$"
        ),
        _DATA_LOADER,
    ),
)


# Class methods that build an instance of their class: ``GPT.from_pretrained("gpt2")``.
ALTERNATIVE_CONSTRUCTORS = frozenset({"from_pretrained", "from_config", "load_from_checkpoint"})


@functools.lru_cache(maxsize=4096)
def canonical(qualname: str) -> str:
    """Map private or legacy spellings of a torch name onto the public one."""
    for pattern, public in _PRIVATE_PATHS:
        if pattern.search(qualname):
            return pattern.sub(public, qualname)
    return qualname


class ImportMap:
    """Local names bound by imports, mapped to what they import."""

    def __init__(self, import_nodes) -> None:
        """``import_nodes``: every ``Import`` / ``ImportFrom`` of the module (any scope), in any
        order: they are read in source order, so the last import of a name wins, as when the
        module runs (the context's walk collects them last statement first)."""
        self.aliases: Dict[str, str] = {}
        for node in sorted(import_nodes, key=_position):
            if isinstance(node, ast.Import):
                self._add_import(node)
            elif isinstance(node, ast.ImportFrom):
                self._add_import_from(node)

    def _add_import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                # ``import torch.nn`` binds ``torch``; attribute access spells the rest.
                top = alias.name.split(".")[0]
                self.aliases[top] = top

    def _add_import_from(self, node: ast.ImportFrom) -> None:
        # Relative imports name the user's own modules: kept with their leading dots
        # (``from .model import GPT`` -> ``.model.GPT``) for the project index, never a torch name.
        module = "." * (node.level or 0) + (node.module or "")
        if not module:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            joiner = "" if module.endswith(".") else "."
            self.aliases[alias.asname or alias.name] = f"{module}{joiner}{alias.name}"

    def aliases_of(self, qualname: str) -> Set[str]:
        """The local names bound to ``qualname`` itself (``from torch.autograd import backward as bw``)."""
        return {local for local, imported in self.aliases.items() if imported == qualname}

    def qualname(self, expr: ast.AST) -> Optional[str]:
        """``F.softmax`` -> ``torch.nn.functional.softmax``; None for anything not imported."""
        # Asked of most calls by most rules: exact class tests and one alias lookup.
        parts = []
        while expr.__class__ is ast.Attribute:
            parts.append(expr.attr)  # type: ignore[attr-defined]
            expr = expr.value  # type: ignore[attr-defined]
        imported = self.aliases.get(expr.id) if expr.__class__ is ast.Name else None  # type: ignore[attr-defined]
        if imported is None:
            return None
        if not parts:
            return canonical(imported)
        parts.reverse()
        return canonical(imported + "." + ".".join(parts))

    def is_module_alias(self, name: str) -> bool:
        """Whether ``name`` is bound by an import (so ``name.softmax`` is a function, not a method)."""
        return name in self.aliases


def _position(node: ast.AST) -> tuple:
    """Where a statement starts; (0, 0) for one made here (a star import's names), which has none."""
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
