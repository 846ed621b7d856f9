"""Everything rules share about one parsed module: the tree, parents, scopes, and name
resolution through imports and simple assignments.

Built once per lint; indexes are computed in a single walk so that each rule stays a
linear pass even on a 5,000-line file.
"""

from __future__ import annotations

import ast
from typing import Dict, Iterator, List, Optional

from .bindings import FUNCTIONS, SCOPES, Binding, Bindings
from .names import ImportMap
from .source import SourceText

# Methods of nn.Module that return the module itself: ``Net().to(device)`` is still a Net.
_SELF_RETURNING = frozenset(
    {"to", "cuda", "cpu", "float", "double", "half", "bfloat16", "train", "eval", "requires_grad_",
     "share_memory", "to_empty", "xpu", "mps"}
)
# Wrappers whose instances behave like the module they wrap.
_WRAPPERS = frozenset(
    {"torch.compile", "torch.nn.DataParallel", "torch.nn.parallel.DistributedDataParallel",
     "torch.nn.parallel.DataParallel", "torch.jit.script"}
)
_MAX_DEPTH = 12


class LintContext:
    """Shared, read-only facts about one module, for the rules."""

    def __init__(self, tree: ast.Module, source: SourceText, path: Optional[str] = None) -> None:
        self.tree = tree
        self.source = source
        self.path = path
        self.imports = ImportMap(tree)
        self.parents: Dict[ast.AST, ast.AST] = {}
        self.calls: List[ast.Call] = []
        self.loops: List[ast.stmt] = []
        self.functions: List[ast.AST] = []
        self.classes: Dict[str, ast.ClassDef] = {}
        self.withs: List[ast.stmt] = []
        self._index(tree)
        self.bindings = Bindings(tree)
        self._shared: Dict[str, object] = {}

    def shared(self, key: str, factory):
        """An analysis several rules use (training structure, activations), built once."""
        if key not in self._shared:
            self._shared[key] = factory()
        return self._shared[key]

    # -- indexing -------------------------------------------------------------------

    def _index(self, tree: ast.AST) -> None:
        stack = [tree]
        while stack:
            node = stack.pop()
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
                stack.append(child)
            if isinstance(node, ast.Call):
                self.calls.append(node)
            elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
                self.loops.append(node)
            elif isinstance(node, FUNCTIONS):
                self.functions.append(node)
            elif isinstance(node, ast.ClassDef):
                self.classes.setdefault(node.name, node)
            elif isinstance(node, (ast.With, ast.AsyncWith)):
                self.withs.append(node)
        key = lambda n: (n.lineno, n.col_offset)  # noqa: E731 - sort key
        self.calls.sort(key=key)
        self.loops.sort(key=key)
        self.functions.sort(key=key)

    # -- tree navigation ------------------------------------------------------------

    def parent(self, node: ast.AST) -> Optional[ast.AST]:
        return self.parents.get(node)

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function, lambda or module whose namespace ``node`` evaluates in."""
        for anc in self.ancestors(node):
            if isinstance(anc, SCOPES):
                return anc
        return self.tree

    def scope_chain(self, node: ast.AST) -> List[ast.AST]:
        return [anc for anc in self.ancestors(node) if isinstance(anc, SCOPES)] or [self.tree]

    def enclosing_function(self, node: ast.AST):
        for anc in self.ancestors(node):
            if isinstance(anc, FUNCTIONS):
                return anc
            if isinstance(anc, ast.Lambda):
                return None
        return None

    def enclosing_class(self, func: ast.AST) -> Optional[ast.ClassDef]:
        """The class ``func`` is a method of (directly), or None."""
        parent = self.parents.get(func)
        return parent if isinstance(parent, ast.ClassDef) else None

    def statement_of(self, node: ast.AST) -> ast.stmt:
        """The statement that contains ``node`` (itself when it is one)."""
        current = node
        while not isinstance(current, ast.stmt):
            parent = self.parents.get(current)
            if parent is None:
                break
            current = parent
        return current  # type: ignore[return-value]

    def walk_own(self, node: ast.AST) -> Iterator[ast.AST]:
        """``ast.walk`` that does not enter nested functions, lambdas or classes: the code that
        runs when ``node`` runs, not code it merely defines."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            for child in ast.iter_child_nodes(current):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                    continue
                stack.append(child)

    def own_calls(self, node: ast.AST) -> List[ast.Call]:
        """Calls that run when ``node`` runs, in source order."""
        calls = [n for n in self.walk_own(node) if isinstance(n, ast.Call)]
        calls.sort(key=lambda n: (n.lineno, n.col_offset))
        return calls

    def enclosing_loops(self, node: ast.AST) -> List[ast.stmt]:
        """Loops around ``node`` within its function, innermost first."""
        loops = []
        for anc in self.ancestors(node):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                break
            if isinstance(anc, (ast.For, ast.AsyncFor, ast.While)) and _in_loop_body(anc, node, self):
                loops.append(anc)
        return loops

    # -- names and values -----------------------------------------------------------

    def qualname(self, expr: ast.AST) -> Optional[str]:
        return self.imports.qualname(expr)

    def binding(self, name: ast.Name) -> Optional[Binding]:
        return self.bindings.lookup(name.id, self.scope_chain(name), (name.lineno, name.col_offset))

    def self_attr_binding(self, attr: ast.Attribute) -> Optional[Binding]:
        """Resolve ``self.x`` inside a method to the assignment made in the class."""
        if not isinstance(attr.value, ast.Name):
            return None
        func = self.enclosing_function(attr)
        while func is not None:
            owner = self.enclosing_class(func)
            if owner is not None:
                args = func.args.args
                if args and args[0].arg == attr.value.id:
                    return self.bindings.self_attr(owner, attr.attr)
                return None
            func = self.enclosing_function(func)
        return None

    def _instance_attr_binding(self, attr: ast.Attribute, depth: int) -> Optional[Binding]:
        """``net.fc`` where ``net = Net()`` and ``Net.__init__`` sets ``self.fc``."""
        if self.imports.is_module_alias(attr.value.id) or depth >= _MAX_DEPTH:
            return None
        owner = self.local_class(self.class_of(attr.value))
        if owner is None:
            return None
        return self.bindings.self_attr(owner, attr.attr)

    def value_of(self, expr: Optional[ast.AST], depth: int = 0) -> Optional[ast.AST]:
        """Follow names and ``self.x`` to the expression last assigned to them.

        Returns ``expr`` itself when it is not a name, and None when the trail is lost.
        """
        while depth < _MAX_DEPTH:
            if isinstance(expr, ast.Name):
                bound = self.binding(expr)
            elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
                bound = self.self_attr_binding(expr) or self._instance_attr_binding(expr, depth)
                if bound is None:
                    return expr
            else:
                return expr
            if bound is None or bound.value is None:
                return None
            expr = bound.value
            depth += 1
        return None

    def construction_of(self, expr: Optional[ast.AST], depth: int = 0) -> Optional[ast.Call]:
        """The call that built the object ``expr`` refers to, through names, ``self.x``,
        module methods that return ``self`` (``.to(device)``) and wrappers (``torch.compile``)."""
        if depth > _MAX_DEPTH or expr is None:
            return None
        value = self.value_of(expr)
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _SELF_RETURNING and self.qualname(func) is None:
            inner = self.construction_of(func.value, depth + 1)
            if inner is not None:
                return inner
        if self.qualname(func) in _WRAPPERS and value.args:
            return self.construction_of(value.args[0], depth + 1)
        return value

    def class_of(self, expr: Optional[ast.AST]) -> Optional[str]:
        """The class of the object ``expr`` refers to: a qualified name for imported classes
        (``torch.nn.CrossEntropyLoss``), ``local:Net`` for classes defined in this file."""
        call = self.construction_of(expr)
        if call is None:
            return None
        return self.callee_class(call)

    def callee_class(self, call: ast.Call) -> Optional[str]:
        """What ``call`` instantiates, if its callee names a class we can identify."""
        qual = self.qualname(call.func)
        if qual is not None:
            return qual
        if isinstance(call.func, ast.Name) and call.func.id in self.classes:
            return "local:" + call.func.id
        return None

    def local_class(self, class_name: Optional[str]) -> Optional[ast.ClassDef]:
        if class_name and class_name.startswith("local:"):
            return self.classes.get(class_name[len("local:"):])
        return None

    def base_names(self, cls: ast.ClassDef) -> List[str]:
        """Qualified names of a class's bases, local bases as ``local:Name``, transitively."""
        names: List[str] = []
        seen = set()
        stack = [cls]
        while stack:
            current = stack.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            for base in current.bases:
                qual = self.qualname(base)
                if qual:
                    names.append(qual)
                elif isinstance(base, ast.Name) and base.id in self.classes:
                    names.append("local:" + base.id)
                    stack.append(self.classes[base.id])
                elif isinstance(base, (ast.Name, ast.Attribute)):
                    names.append(base.id if isinstance(base, ast.Name) else base.attr)
        return names

    def is_module_class(self, cls: ast.ClassDef) -> bool:
        """Whether ``cls`` derives from ``nn.Module`` (or a Lightning module), as far as we see."""
        for base in self.base_names(cls):
            last = base.rsplit(".", 1)[-1]
            if last in ("Module", "LightningModule", "Sequential", "ModuleList"):
                return True
        return any(
            isinstance(item, ast.FunctionDef) and item.name == "forward" for item in cls.body
        )

    def method(self, cls: ast.ClassDef, name: str):
        for item in cls.body:
            if isinstance(item, FUNCTIONS) and item.name == name:
                return item
        return None

    def local_function_called(self, call: ast.Call):
        """The function defined in this file that ``call`` runs: ``helper(...)`` for a
        module-level or enclosing-scope def, ``self.helper(...)`` for a method of the class."""
        func = call.func
        if isinstance(func, ast.Name):
            bound = self.binding(func)
            if bound is not None and bound.kind == "def":
                return bound.stmt
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            method_owner = self.enclosing_function(call)
            while method_owner is not None:
                owner = self.enclosing_class(method_owner)
                if owner is not None:
                    if method_owner.args.args and method_owner.args.args[0].arg == func.value.id:
                        return self.method(owner, func.attr)
                    return None
                method_owner = self.enclosing_function(method_owner)
        return None

    def call_sites(self, func) -> List[ast.Call]:
        """Calls in this file that run ``func`` (by the rules of ``local_function_called``)."""
        return [c for c in self.calls if _names_function(c, func) and self.local_function_called(c) is func]

    def text(self, node: ast.AST) -> str:
        return self.source.segment(node)


def _names_function(call: ast.Call, func) -> bool:
    target = call.func
    if isinstance(target, ast.Name):
        return target.id == func.name
    return isinstance(target, ast.Attribute) and target.attr == func.name


def _in_loop_body(loop: ast.stmt, node: ast.AST, ctx: LintContext) -> bool:
    """Whether ``node`` sits in ``loop``'s body (not in its header: ``for x in f():``)."""
    child = node
    for anc in ctx.ancestors(node):
        if anc is loop:
            return child in loop.body or child in getattr(loop, "orelse", [])
        child = anc
    return False


def terminal_name(expr: Optional[ast.AST]) -> str:
    """The last identifier of a name chain: ``self.train_loader`` -> ``train_loader``."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call):
        return terminal_name(expr.func)
    return ""
