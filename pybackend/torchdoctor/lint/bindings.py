"""Where each name got its value: simple assignments, per scope, in source order.

This is deliberately small, not a type checker. It answers "what was ``crit`` last
assigned before this line?" so that ``crit = nn.CrossEntropyLoss(); crit(F.softmax(x), y)``
is recognised, and it says "unknown" (``Binding.value is None``) for anything it cannot
follow: parameters, tuple unpacking from calls, ``with ... as``, augmented assignments.
``self.attr = value`` inside methods is recorded per class, so ``self.criterion`` in
``training_step`` resolves to what ``__init__`` built.
"""

from __future__ import annotations

import ast
import bisect
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

Pos = Tuple[int, int]

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Binding:
    """One assignment of one name."""

    name: str
    pos: Pos  # the name holds this value from this position on
    value: Optional[ast.expr]  # what was assigned; None when it cannot be followed
    kind: str  # assign | param | for | with | unpack | aug | def | class | other
    stmt: ast.AST
    # For ``for`` and ``unpack`` bindings: the iterated / unpacked expression.
    source: Optional[ast.expr] = None


@dataclass
class _Scope:
    node: ast.AST
    names: Dict[str, List[Binding]] = field(default_factory=dict)
    globals: set = field(default_factory=set)

    def add(self, binding: Binding) -> None:
        self.names.setdefault(binding.name, []).append(binding)


def _end(node: ast.AST) -> Pos:
    return (getattr(node, "end_lineno", None) or node.lineno, getattr(node, "end_col_offset", None) or 0)


def _start(node: ast.AST) -> Pos:
    return (node.lineno, node.col_offset)


class Bindings(ast.NodeVisitor):
    """Collects bindings for every scope of a module; query with ``lookup``."""

    def __init__(self, tree: ast.Module) -> None:
        self.scopes: Dict[ast.AST, _Scope] = {}
        # class node -> attribute -> bindings made through ``self.attr = ...`` in its methods
        self.class_attrs: Dict[ast.ClassDef, Dict[str, List[Binding]]] = {}
        self._stack: List[_Scope] = []
        self._class_stack: List[Optional[ast.ClassDef]] = []
        self.visit(tree)
        for scope in self.scopes.values():
            for bindings in scope.names.values():
                bindings.sort(key=lambda b: b.pos)

    # -- collection -----------------------------------------------------------------

    @property
    def _scope(self) -> _Scope:
        return self._stack[-1]

    def _push(self, node: ast.AST) -> _Scope:
        scope = _Scope(node)
        self.scopes[node] = scope
        self._stack.append(scope)
        return scope

    def visit_Module(self, node: ast.Module) -> None:
        self._push(node)
        self._class_stack.append(None)
        self.generic_visit(node)

    def _visit_function(self, node) -> None:
        for deco in node.decorator_list:
            self.visit(deco)
        self.visit(node.args)
        if node.returns is not None:
            self.visit(node.returns)
        self._scope.add(Binding(node.name, _start(node), None, "def", node))
        owner = self._class_stack[-1]
        scope = self._push(node)
        self._class_stack.append(None)
        args = node.args
        params = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in params:
            scope.add(Binding(arg.arg, _start(node), None, "param", node))
        for stmt in node.body:
            self._visit_in_method(stmt, node, owner)
        self._class_stack.pop()
        self._stack.pop()

    def _visit_in_method(self, stmt: ast.stmt, func, owner: Optional[ast.ClassDef]) -> None:
        """Visit a function body statement, noting ``self.x = ...`` when ``func`` is a method."""
        if owner is not None and func.args.args:
            self_name = func.args.args[0].arg
            for node in _own_assignments(stmt):
                self._record_self_attr(node, self_name, owner)
        self.visit(stmt)

    def _record_self_attr(self, node: ast.AST, self_name: str, owner: ast.ClassDef) -> None:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            targets, value = [node.target], node.value
        else:
            return
        for target in targets:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
            ):
                attrs = self.class_attrs.setdefault(owner, {})
                attrs.setdefault(target.attr, []).append(Binding(target.attr, _end(node), value, "assign", node))

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.visit(node.args)
        scope = self._push(node)
        args = node.args
        for arg in list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs):
            scope.add(Binding(arg.arg, _start(node), None, "param", node))
        self.visit(node.body)
        self._stack.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expr in list(node.bases) + list(node.decorator_list) + [k.value for k in node.keywords]:
            self.visit(expr)
        self._scope.add(Binding(node.name, _start(node), None, "class", node))
        # Class bodies bind into their own namespace, which methods do not see; recording
        # them in a throwaway scope keeps them out of the enclosing one.
        self._stack.append(_Scope(node))
        self._class_stack.append(node)
        for stmt in node.body:
            self.visit(stmt)
        self._class_stack.pop()
        self._stack.pop()

    def visit_Global(self, node: ast.Global) -> None:
        self._scope.globals.update(node.names)

    visit_Nonlocal = visit_Global

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._bind_target(target, node.value, node, "assign")
            self._visit_target_parts(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._bind_target(node.target, node.value, node, "assign")
        self._visit_target_parts(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._scope.add(Binding(node.target.id, _end(node), None, "aug", node))
        self._visit_target_parts(node.target)

    def visit_NamedExpr(self, node) -> None:
        self.visit(node.value)
        self._scope.add(Binding(node.target.id, _end(node), node.value, "assign", node))

    def _visit_for(self, node) -> None:
        self.visit(node.iter)
        self._bind_target(node.target, None, node, "for", source=node.iter, pos=_end(node.iter))
        for stmt in node.body + node.orelse:
            self.visit(stmt)

    visit_For = _visit_for
    visit_AsyncFor = _visit_for

    def _visit_with(self, node) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if item.optional_vars is not None:
                self._bind_target(item.optional_vars, None, node, "with", source=item.context_expr,
                                  pos=_end(item.context_expr))
        for stmt in node.body:
            self.visit(stmt)

    visit_With = _visit_with
    visit_AsyncWith = _visit_with

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._scope.add(Binding(node.name, _start(node), None, "other", node))
        for stmt in node.body:
            self.visit(stmt)

    def _visit_comprehension_scope(self, node) -> None:
        # Comprehension variables live in their own scope; we do not track them, and we
        # must not let them shadow the enclosing function's names.
        for gen in node.generators:
            self.visit(gen.iter)
            for cond in gen.ifs:
                self.visit(cond)
        for attr in ("elt", "key", "value"):
            child = getattr(node, attr, None)
            if child is not None:
                self.visit(child)

    visit_ListComp = _visit_comprehension_scope
    visit_SetComp = _visit_comprehension_scope
    visit_GeneratorExp = _visit_comprehension_scope
    visit_DictComp = _visit_comprehension_scope

    def _visit_target_parts(self, target: ast.AST) -> None:
        """Visit the expressions inside a target (``a[i] = ...`` reads ``a`` and ``i``)."""
        if isinstance(target, (ast.Attribute, ast.Subscript)):
            self.visit(target)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for elt in target.elts:
                self._visit_target_parts(elt)

    def _bind_target(self, target, value, stmt, kind, source=None, pos=None) -> None:
        pos = pos or _end(stmt)
        if isinstance(target, ast.Name):
            self._scope.add(Binding(target.id, pos, value, kind, stmt, source))
        elif isinstance(target, ast.Starred):
            self._bind_target(target.value, None, stmt, "unpack", source, pos)
        elif isinstance(target, (ast.Tuple, ast.List)):
            pairwise = (
                isinstance(value, (ast.Tuple, ast.List))
                and len(value.elts) == len(target.elts)
                and not any(isinstance(e, ast.Starred) for e in target.elts + value.elts)
            )
            for index, elt in enumerate(target.elts):
                if pairwise:
                    self._bind_target(elt, value.elts[index], stmt, kind, source, pos)
                else:
                    sub_kind = kind if kind in ("for", "with") else "unpack"
                    self._bind_target(elt, None, stmt, sub_kind, source if source is not None else value, pos)

    # -- queries --------------------------------------------------------------------

    def lookup(self, name: str, scope_chain: List[ast.AST], at: Pos) -> Optional[Binding]:
        """The binding of ``name`` visible at ``at``, searching ``scope_chain`` (innermost first).

        In the innermost scope the latest binding before ``at`` wins; if every binding comes
        later (a loop-carried value), the last one does. Outer scopes are read as they stand
        when the inner function runs, which for a script means after all of them: the last.
        """
        for depth, scope_node in enumerate(scope_chain):
            scope = self.scopes.get(scope_node)
            if scope is None or name in scope.globals:
                continue
            bindings = scope.names.get(name)
            if not bindings:
                continue
            if depth == 0:
                index = bisect.bisect_right([b.pos for b in bindings], at)
                return bindings[index - 1] if index else bindings[-1]
            return bindings[-1]
        return None

    def self_attr(self, owner: ast.ClassDef, attr: str) -> Optional[Binding]:
        """What ``self.attr`` was set to in ``owner``'s methods (``__init__`` preferred)."""
        bindings = self.class_attrs.get(owner, {}).get(attr)
        if not bindings:
            return None
        return bindings[0]

    def all_bindings(self, scope_node: ast.AST, name: str) -> List[Binding]:
        scope = self.scopes.get(scope_node)
        return list(scope.names.get(name, [])) if scope else []


def _own_assignments(stmt: ast.stmt):
    """Assignment statements in ``stmt`` that belong to the same function (not nested defs)."""
    stack = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.expr)):
                stack.append(child)
