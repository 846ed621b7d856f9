"""Find the ``nn.Module`` subclasses of a Python file, statically (``ast``, no torch).

What counts as a module class:

- a class whose base is ``torch.nn.Module`` spelled through any import of it:
  ``import torch``, ``import torch as T``, ``import torch.nn as nn``,
  ``from torch import nn``, ``from torch.nn import Module as M``...;
- a class whose base is another torch module class reached the same way
  (``nn.Sequential``, ``nn.Linear``: every capitalised name of ``torch.nn`` except
  the few that are not modules, such as ``nn.Parameter``), or a Lightning module;
- a class whose base is a class of the same file that is already a module class
  (subclasses of subclasses, at any depth and nesting).

Positions are LSP positions: 0-based lines, characters in UTF-16 code units.
"""

from __future__ import annotations

import ast
from dataclasses import asdict, dataclass, field

# Capitalised names in torch.nn that are not nn.Module subclasses.
_NOT_MODULES = {"Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "UninitializedTensorMixin"}
_TORCH_NN = ("torch.nn", "torch.nn.modules", "torch.nn.modules.module")
# Lightning modules are nn.Modules too; people click on them.
_LIGHTNING = {"pytorch_lightning.LightningModule", "lightning.LightningModule", "lightning.pytorch.LightningModule"}
EXAMPLE_FUNCTION = "torchdoctor_example"


@dataclass(frozen=True)
class Position:
    line: int
    character: int


@dataclass(frozen=True)
class Range:
    start: Position
    end: Position

    def contains(self, pos: Position) -> bool:
        after_start = (pos.line, pos.character) >= (self.start.line, self.start.character)
        before_end = (pos.line, pos.character) <= (self.end.line, self.end.character)
        return after_start and before_end


@dataclass(frozen=True)
class ModelClass:
    """One module class found in the source."""

    name: str
    qualname: str  # Outer.Inner for nested classes
    range: Range  # the whole class statement, decorators excluded
    nameRange: Range  # the class name after ``class``
    bases: list = field(default_factory=list)  # base expressions as written
    initRequired: list = field(default_factory=list)  # __init__ parameters without a default
    forwardInputs: list = field(default_factory=list)  # forward parameters after self
    origin: str = "class"  # "class" (defined here), "constructed" (an imported class built at module level), "example"

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Discovery:
    """Everything the editor needs about the model classes of one file."""

    models: list  # of ModelClass, in source order
    hasExample: bool  # the file defines ``torchdoctor_example``
    # imported model classes the file builds at module level, and the class torchdoctor_example()
    # builds: the checks are offered over them too (origin "constructed" / "example")
    constructed: list = field(default_factory=list)

    def find(self, name: str) -> ModelClass | None:
        return next((m for m in self.models if m.name == name or m.qualname == name), None)

    def containing(self, pos: Position) -> ModelClass | None:
        """The innermost model class whose statement contains ``pos``."""
        hits = [m for m in self.models if m.range.contains(pos)]
        return max(hits, key=lambda m: (m.range.start.line, m.range.start.character), default=None)


class SourceSyntaxError(ValueError):
    """The file does not parse; positions are LSP positions."""

    def __init__(self, message: str, line: int, character: int):
        super().__init__(f"{message} (line {line + 1}, column {character + 1})")
        self.message = message
        self.line = line
        self.character = character


def parse_source(source: str, filename: str = "<file>") -> ast.Module:
    """``source`` parsed; a syntax error becomes :class:`SourceSyntaxError` (0-based position)."""
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError as exc:
        line = max((exc.lineno or 1) - 1, 0)
        raise SourceSyntaxError(exc.msg or "invalid syntax", line, max((exc.offset or 1) - 1, 0)) from None


def discover(source: str, filename: str = "<file>") -> Discovery:
    """The module classes of ``source``; raises :class:`SourceSyntaxError` if it does not parse."""
    tree = parse_source(source, filename)
    lines = source.splitlines()
    aliases = _torch_aliases(tree)
    classes = _all_classes(tree)
    module_names = _module_class_names(classes, aliases)
    models = [_describe(node, qual, lines) for qual, node in classes if qual in module_names]
    has_example = any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == EXAMPLE_FUNCTION for n in tree.body
    )
    from .discovery_constructed import constructed_models

    built = constructed_models(tree, aliases, module_names, lines)
    return Discovery(models=models, hasExample=has_example, constructed=built)


def _torch_aliases(tree: ast.AST) -> dict[str, str]:
    """Local name -> dotted import path, for every import in the file (any scope)."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:  # ``import torch.nn`` binds ``torch``
                    top = a.name.split(".")[0]
                    aliases[top] = top
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
    return aliases


def _dotted(expr: ast.expr) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None (calls, subscripts...)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        head = _dotted(expr.value)
        return f"{head}.{expr.attr}" if head else None
    if isinstance(expr, ast.Subscript):  # Generic[T]-style bases: look at the subscripted class
        return _dotted(expr.value)
    return None


def _resolve(dotted: str, aliases: dict[str, str]) -> str:
    """Replace the first segment by what it was imported as."""
    head, _, rest = dotted.partition(".")
    if head not in aliases:
        return dotted
    full = aliases[head]
    return f"{full}.{rest}" if rest else full


def _is_torch_module_path(path: str) -> bool:
    if path in _LIGHTNING:
        return True
    parent, _, name = path.rpartition(".")
    return parent in _TORCH_NN and name[:1].isupper() and name not in _NOT_MODULES


def _all_classes(tree: ast.AST) -> list[tuple[str, ast.ClassDef]]:
    """(qualified name, node) for every class, nested ones included, in source order."""
    found: list[tuple[str, ast.ClassDef]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                qual = f"{prefix}{child.name}"
                found.append((qual, child))
                visit(child, qual + ".")
            else:
                visit(child, prefix)

    visit(tree, "")
    found.sort(key=lambda qn: (qn[1].lineno, qn[1].col_offset))
    return found


def _module_class_names(classes: list[tuple[str, ast.ClassDef]], aliases: dict[str, str]) -> set[str]:
    """Qualified names of the module classes: torch bases first, then local subclasses to a fixed point."""
    result: set[str] = set()
    by_simple_name = {node.name: qual for qual, node in classes}
    qualnames = set(by_simple_name.values()) | {qual for qual, _ in classes}
    changed = True
    while changed:
        changed = False
        for qual, node in classes:
            if qual in result:
                continue
            for base in node.bases:
                dotted = _dotted(base)
                if dotted is None:
                    continue
                local = dotted if dotted in qualnames else by_simple_name.get(dotted)
                if _is_torch_module_path(_resolve(dotted, aliases)) or (local in result and local != qual):
                    result.add(qual)
                    changed = True
                    break
    return result


def _describe(node: ast.ClassDef, qual: str, lines: list[str]) -> ModelClass:
    start = _position(lines, node.lineno, node.col_offset)
    end = _position(lines, node.end_lineno or node.lineno, node.end_col_offset or 0)
    name_start = _class_name_position(lines, node)
    name_end = Position(name_start.line, name_start.character + _utf16_len(node.name))
    return ModelClass(
        name=node.name,
        qualname=qual,
        range=Range(start, end),
        nameRange=Range(name_start, name_end),
        bases=[ast.unparse(b) for b in node.bases],
        initRequired=_required_params(_method(node, "__init__")),
        forwardInputs=_all_params(_method(node, "forward")),
    )


def _method(node: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _required_params(fn: ast.FunctionDef | None) -> list[str]:
    """Parameters after ``self`` that have no default (positional and keyword-only)."""
    if fn is None:
        return []
    a = fn.args
    positional = (a.posonlyargs + a.args)[1:]
    without_default = positional[: len(positional) - len(a.defaults)] if a.defaults else positional
    kwonly = [k for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    return [p.arg for p in without_default + kwonly]


def _all_params(fn: ast.FunctionDef | None) -> list[str]:
    if fn is None:
        return []
    a = fn.args
    return [p.arg for p in (a.posonlyargs + a.args)[1:]]


def _class_name_position(lines: list[str], node: ast.ClassDef) -> Position:
    """Where the class name is written: after ``class`` on the statement's line."""
    line_text = _line(lines, node.lineno)
    byte_line = line_text.encode("utf-8")
    keyword_at = byte_line.find(b"class", node.col_offset)
    name_at = byte_line.find(node.name.encode("utf-8"), keyword_at + 5 if keyword_at >= 0 else 0)
    return _position(lines, node.lineno, max(name_at, 0))


def _line(lines: list[str], lineno: int) -> str:
    return lines[lineno - 1] if 0 < lineno <= len(lines) else ""


def _position(lines: list[str], lineno: int, byte_col: int) -> Position:
    """ast gives 1-based lines and UTF-8 byte columns; LSP wants 0-based lines and UTF-16 units."""
    text = _line(lines, lineno).encode("utf-8")[:byte_col].decode("utf-8", errors="ignore")
    return Position(max(lineno - 1, 0), _utf16_len(text))


def _utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2
