"""Find what the data check can run on in a Python file, statically (``ast``; backend side, no torch).

The editor puts a **Check data** CodeLens over each target; the target's ``name`` is the
``FILE::NAME`` the check resolves (``load.py``):

- ``torchdoctor_data()`` at top level (``kind: "hook"``);
- a ``torch.utils.data`` Dataset subclass (``Dataset``, ``IterableDataset``, ``TensorDataset``...
  spelled through any import of ``torch``), or a subclass of one in the same file, at top level
  (``kind: "class"``). A class whose constructor needs arguments is left out when the file has
  ``torchdoctor_data()`` (that hook says how to build it); otherwise it is offered, and the check
  answers with the ``torchdoctor_data()`` snippet to write;
- a top-level function without required parameters (and not a pytest fixture) that returns a Dataset or a DataLoader, or
  several (a tuple, a list, a dict): its return annotation names one, or a ``return`` gives a call
  of ``DataLoader``/a Dataset class (directly, in a tuple/dict, or through a local variable)
  (``kind: "function"``).

Positions are LSP positions (0-based lines, UTF-16 characters), as in ``checks/discovery.py``.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field
from typing import Optional

from ..checks.discovery import (
    Position,
    Range,
    _dotted,
    _position,
    _required_params,
    _resolve,
    _torch_aliases,
    _utf16_len,
    parse_source,
)

HOOK = "torchdoctor_data"
DATASET_BASES = {"Dataset", "IterableDataset", "TensorDataset", "ConcatDataset", "ChainDataset", "StackDataset"}
LOADERS = {"DataLoader"}


@dataclass(frozen=True)
class DataTarget:
    name: str
    kind: str  # "hook" | "class" | "function"
    range: Range  # the whole statement
    nameRange: Range  # the name after ``class`` / ``def``
    initRequired: list = field(default_factory=list)  # a class's constructor parameters without a default

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class DataDiscovery:
    targets: list  # of DataTarget, in source order
    hasHook: bool

    def containing(self, pos: Position) -> Optional[DataTarget]:
        hits = [t for t in self.targets if t.range.contains(pos)]
        return max(hits, key=lambda t: (t.range.start.line, t.range.start.character), default=None)


def discover_data(source: str, filename: str = "<file>") -> DataDiscovery:
    """The data targets of ``source``; raises ``SourceSyntaxError`` if it does not parse."""
    tree = parse_source(source, filename)
    lines = source.splitlines()
    aliases = _torch_aliases(tree)
    classes = _dataset_classes(tree, aliases)
    has_hook = any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == HOOK for n in tree.body)
    targets = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name in classes:
            init = next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"), None)
            required = _required_params(init)
            if not (required and has_hook):
                targets.append(_target(node, "class", lines, required))
        elif isinstance(node, ast.FunctionDef) and not _needs_arguments(node) and not _is_fixture(node):
            if node.name == HOOK:
                targets.append(_target(node, "hook", lines))
            elif _returns_data(node, classes, aliases):
                targets.append(_target(node, "function", lines))
    return DataDiscovery(targets, has_hook)


def _is_torch_data(dotted: str, aliases: dict, names: set) -> bool:
    path = _resolve(dotted, aliases)
    parent, _, last = path.rpartition(".")
    return last in names and parent.startswith("torch")


def _dataset_classes(tree: ast.Module, aliases: dict) -> set:
    """Names of the top-level classes that are Dataset subclasses (local subclasses to a fixed point)."""
    top = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    found: set = set()
    changed = True
    while changed:
        changed = False
        for node in top:
            if node.name in found:
                continue
            for base in node.bases:
                dotted = _dotted(base)
                if dotted and (_is_torch_data(dotted, aliases, DATASET_BASES) or dotted in found):
                    found.add(node.name)
                    changed = True
                    break
    return found


def _needs_arguments(fn: ast.FunctionDef) -> bool:
    a = fn.args
    positional = a.posonlyargs + a.args
    without_default = positional[: len(positional) - len(a.defaults)]
    return bool(without_default) or any(d is None for d in a.kw_defaults)


def _is_fixture(fn: ast.FunctionDef) -> bool:
    """A pytest fixture returning a loader: pytest refuses a direct call, so no lens."""
    for deco in fn.decorator_list:
        target = deco.func if isinstance(deco, ast.Call) else deco
        if (_dotted(target) or "").split(".")[-1] == "fixture":
            return True
    return False


def _returns_data(fn: ast.FunctionDef, classes: set, aliases: dict) -> bool:
    if fn.returns is not None and _annotation_names(fn.returns) & (DATASET_BASES | LOADERS | classes):
        return True
    assigned: dict = {}
    returns: list = []
    for node in _own_nodes(fn):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                for name in _names(t):
                    assigned.setdefault(name, []).append(node.value)
        elif isinstance(node, ast.Return) and node.value is not None:
            returns.append(node.value)

    def data(expr: ast.expr, depth: int = 0) -> bool:
        if depth > 4:
            return False
        if isinstance(expr, ast.Call):
            dotted = _dotted(expr.func) or ""
            return dotted.split(".")[-1] in classes or _is_torch_data(dotted, aliases, DATASET_BASES | LOADERS)
        if isinstance(expr, (ast.Tuple, ast.List)):
            return any(data(e, depth + 1) for e in expr.elts)
        if isinstance(expr, ast.Dict):
            return any(v is not None and data(v, depth + 1) for v in expr.values)
        if isinstance(expr, ast.Name):
            return any(data(v, depth + 1) for v in assigned.get(expr.id, []))
        return False

    return any(data(r) for r in returns)


def _annotation_names(annotation: ast.expr) -> set:
    """The names a return annotation is made of (``Tuple[DataLoader, DataLoader]``, ``"Dataset"``,
    ``data.Dataset``): whole names, since a substring match put a lens on ``-> DataLoaderConfig``."""
    names: set = set()
    for node in ast.walk(annotation):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                names |= _annotation_names(ast.parse(node.value, mode="eval").body)
            except (SyntaxError, ValueError, RecursionError):
                pass
    return names


def _own_nodes(fn: ast.FunctionDef):
    """The function's statements and expressions, not those of nested functions or classes."""
    scopes = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
    stack: list = [n for n in fn.body if not isinstance(n, scopes)]
    while stack:
        node = stack.pop()
        yield node
        stack += [c for c in ast.iter_child_nodes(node) if not isinstance(c, scopes)]


def _names(target: ast.expr) -> list:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for e in target.elts for n in _names(e)]
    return []


def _target(node, kind: str, lines: list, required: Optional[list] = None) -> DataTarget:
    start = _position(lines, node.lineno, node.col_offset)
    end = _position(lines, node.end_lineno or node.lineno, node.end_col_offset or 0)
    text = lines[node.lineno - 1].encode("utf-8") if 0 < node.lineno <= len(lines) else b""
    keyword = b"class" if isinstance(node, ast.ClassDef) else b"def"
    at = text.find(keyword, node.col_offset)
    name_at = text.find(node.name.encode("utf-8"), at + len(keyword) if at >= 0 else 0)
    name_start = _position(lines, node.lineno, max(name_at, 0))
    name_end = Position(name_start.line, name_start.character + _utf16_len(node.name))
    return DataTarget(node.name, kind, Range(start, end), Range(name_start, name_end), list(required or []))
