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
from operator import attrgetter
from typing import Callable, Dict, List, Optional, Set, Tuple, Union

Pos = Tuple[int, int]
# What a binding comes from: a statement, a lambda or walrus (expressions), or an ``except``.
BindingNode = Union[ast.stmt, ast.expr, ast.excepthandler]
Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]

SCOPES = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@dataclass
class Binding:
    """One assignment of one name."""

    name: str
    pos: Pos  # the name holds this value from this position on
    value: Optional[ast.expr]  # what was assigned; None when it cannot be followed
    kind: str  # assign | param | for | with | unpack | aug | def | class | other
    stmt: BindingNode
    # For ``for`` and ``unpack`` bindings: the iterated / unpacked expression.
    source: Optional[ast.expr] = None
    # For ``unpack`` bindings of a flat tuple target (``logits, loss = model(x)``): the position.
    index: Optional[int] = None


@dataclass
class _Scope:
    node: ast.AST
    names: Dict[str, List[Binding]] = field(default_factory=dict)
    globals: Set[str] = field(default_factory=set)
    _positions: Dict[str, List[Pos]] = field(default_factory=dict)

    def add(self, binding: Binding) -> None:
        self.names.setdefault(binding.name, []).append(binding)
        self._positions.pop(binding.name, None)

    def positions(self, name: str) -> List[Pos]:
        """Where each binding of ``name`` starts, sorted (kept: a name rebound in every block of
        a long script would otherwise cost a list per lookup, quadratic in the file)."""
        found = self._positions.get(name)
        if found is None:
            found = self._positions[name] = [b.pos for b in self.names[name]]
        return found


_POS = attrgetter("pos")


def _end(node: BindingNode) -> Pos:
    return (node.end_lineno or node.lineno, node.end_col_offset or 0)


def _start(node: BindingNode) -> Pos:
    return (node.lineno, node.col_offset)


class Bindings:
    """Bindings of every scope of a module, fed node by node by the context's single walk
    over the tree (``record``), then sorted (``finish``); query with ``lookup``."""

    def __init__(self) -> None:
        self.scopes: Dict[ast.AST, _Scope] = {}
        # class node -> attribute -> bindings made through ``self.attr = ...`` in its methods
        self.class_attrs: Dict[ast.ClassDef, Dict[str, List[Binding]]] = {}

    # -- collection -----------------------------------------------------------------

    def record(self, node: ast.AST, owner: ast.AST, parent: Optional[ast.AST]) -> None:
        """Note what ``node`` binds. ``owner`` is the innermost function, lambda, class or
        module around it; ``parent`` is the owner's parent (to recognise methods)."""
        handler = _HANDLERS.get(type(node))
        if handler is not None:
            handler(self, self._scope_for(owner), node)
        if (
            isinstance(node, (ast.Assign, ast.AnnAssign))
            and isinstance(owner, FUNCTIONS)
            and isinstance(parent, ast.ClassDef)
        ):
            args = owner.args.args
            if args:
                self._record_self_attr(node, args[0].arg, parent)

    def begin_scope(self, node: Union[Function, ast.Lambda]) -> None:
        """A function or lambda starts: bind its parameters in its own scope."""
        scope = self._scope_for(node)
        args = node.args
        params = list(getattr(args, "posonlyargs", [])) + list(args.args) + list(args.kwonlyargs)
        params += [a for a in (args.vararg, args.kwarg) if a is not None]
        for arg in params:
            scope.add(Binding(arg.arg, _start(node), None, "param", node))

    def finish(self) -> None:
        for scope in self.scopes.values():
            for bindings in scope.names.values():
                bindings.sort(key=_POS)  # C-level key: a long script rebinds ``loss`` in every block
            scope._positions.clear()

    def _scope_for(self, owner: ast.AST) -> _Scope:
        scope = self.scopes.get(owner)
        if scope is None:
            # Class bodies bind into their own namespace, which methods do not see: they get
            # a scope of their own that lookups never search.
            scope = self.scopes[owner] = _Scope(owner)
        return scope

    def _record_self_attr(self, node: Union[ast.Assign, ast.AnnAssign], self_name: str, owner: ast.ClassDef) -> None:
        if isinstance(node, ast.Assign):
            targets, value = node.targets, node.value
        elif node.value is not None:
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

    def _def(self, scope: _Scope, node: Function) -> None:
        scope.add(Binding(node.name, _start(node), None, "def", node))

    def _class(self, scope: _Scope, node: ast.ClassDef) -> None:
        scope.add(Binding(node.name, _start(node), None, "class", node))

    def _global(self, scope: _Scope, node: Union[ast.Global, ast.Nonlocal]) -> None:
        scope.globals.update(node.names)

    def _assign(self, scope: _Scope, node: ast.Assign) -> None:
        for target in node.targets:
            self._bind_target(scope, target, node.value, node, "assign")

    def _ann_assign(self, scope: _Scope, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self._bind_target(scope, node.target, node.value, node, "assign")

    def _aug_assign(self, scope: _Scope, node: ast.AugAssign) -> None:
        if isinstance(node.target, ast.Name):
            scope.add(Binding(node.target.id, _end(node), None, "aug", node))

    def _named(self, scope: _Scope, node: ast.NamedExpr) -> None:
        scope.add(Binding(node.target.id, _end(node), node.value, "assign", node))

    def _for(self, scope: _Scope, node: Union[ast.For, ast.AsyncFor]) -> None:
        self._bind_target(scope, node.target, None, node, "for", source=node.iter, pos=_end(node.iter))

    def _with(self, scope: _Scope, node: Union[ast.With, ast.AsyncWith]) -> None:
        for item in node.items:
            if item.optional_vars is not None:
                self._bind_target(
                    scope,
                    item.optional_vars,
                    None,
                    node,
                    "with",
                    source=item.context_expr,
                    pos=_end(item.context_expr),
                )

    def _except(self, scope: _Scope, node: ast.ExceptHandler) -> None:
        if node.name:
            scope.add(Binding(node.name, _start(node), None, "other", node))

    def _bind_target(
        self,
        scope: _Scope,
        target: ast.expr,
        value: Optional[ast.expr],
        stmt: BindingNode,
        kind: str,
        source: Optional[ast.expr] = None,
        pos: Optional[Pos] = None,
        index: Optional[int] = None,
    ) -> None:
        pos = pos or _end(stmt)
        if isinstance(target, ast.Name):
            scope.add(Binding(target.id, pos, value, kind, stmt, source, index))
        elif isinstance(target, ast.Starred):
            self._bind_target(scope, target.value, None, stmt, "unpack", source, pos)
        elif isinstance(target, (ast.Tuple, ast.List)):
            # ``a, b = x, y`` binds pairwise; anything else (a call, a starred side) unpacks.
            paired = value.elts if isinstance(value, (ast.Tuple, ast.List)) else None
            if paired is not None and (
                len(paired) != len(target.elts) or any(isinstance(e, ast.Starred) for e in target.elts + paired)
            ):
                paired = None
            flat = not any(isinstance(e, ast.Starred) for e in target.elts)
            for index, elt in enumerate(target.elts):
                if paired is not None:
                    self._bind_target(scope, elt, paired[index], stmt, kind, source, pos)
                else:
                    sub_kind = kind if kind in ("for", "with") else "unpack"
                    position = index if flat and sub_kind == "unpack" and source is None else None
                    self._bind_target(
                        scope, elt, None, stmt, sub_kind, source if source is not None else value, pos, position
                    )

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
                index = bisect.bisect_right(scope.positions(name), at)
                return bindings[index - 1] if index else bindings[-1]
            return bindings[-1]
        return None

    def binds_here(self, name: str, scope_node: ast.AST) -> bool:
        """Whether ``name`` is a local of ``scope_node`` (bound there, not declared global)."""
        scope = self.scopes.get(scope_node)
        return scope is not None and name in scope.names and name not in scope.globals

    def reaching(
        self, name: str, scope_chain: List[ast.AST], at: Pos, dominates: Callable[[Binding], bool]
    ) -> List[Binding]:
        """Every binding of ``name`` that may hold at ``at``, the one ``lookup`` gives first.

        In the innermost scope: the latest binding before ``at``, then earlier ones until one
        that ``dominates`` ``at`` (``dominates(b)``: every path to ``at`` runs ``b``): a name bound
        in both branches of an ``if`` has two values after it. In an outer scope, any binding
        may be the current one when the inner function runs.
        """
        for depth, scope_node in enumerate(scope_chain):
            scope = self.scopes.get(scope_node)
            if scope is None or name in scope.globals:
                continue
            bindings = scope.names.get(name)
            if not bindings:
                continue
            if depth > 0:
                return list(reversed(bindings))
            index = bisect.bisect_right(scope.positions(name), at)
            if not index:
                return [bindings[-1]]
            found: List[Binding] = []
            for position in range(index - 1, -1, -1):  # no slice: a name bound in every block of a long script
                found.append(bindings[position])
                if dominates(bindings[position]):
                    break
            return found
        return []

    def self_attr(self, owner: ast.ClassDef, attr: str) -> Optional[Binding]:
        """What ``self.attr`` was set to in ``owner``'s methods (``__init__`` preferred)."""
        bindings = self.class_attrs.get(owner, {}).get(attr)
        if not bindings:
            return None
        return bindings[0]

    def in_range(self, scope_node: ast.AST, name: str, after: Optional[Pos], through: Pos) -> List[Binding]:
        """The bindings of ``name`` in ``scope_node`` with ``after < pos <= through`` (from the
        first with ``after`` None), in order: found by bisection, not by a scan of every binding
        (a name rebound in every block of a long script)."""
        scope = self.scopes.get(scope_node)
        bindings = scope.names.get(name) if scope is not None else None
        if not bindings:
            return []
        positions = scope.positions(name)  # type: ignore[union-attr]  # not None: it has bindings
        low = 0 if after is None else bisect.bisect_right(positions, after)
        return bindings[low : bisect.bisect_right(positions, through)]

    def latest(self, scope_node: ast.AST, name: str, at: Pos, count: int) -> List[Binding]:
        """``sorted(bindings with pos <= at, key=pos, reverse=True)[:count]`` (equal positions
        in source order), sorting only the last ``count`` of them and any tied with those."""
        scope = self.scopes.get(scope_node)
        bindings = scope.names.get(name) if scope is not None else None
        if not bindings:
            return []
        positions = scope.positions(name)  # type: ignore[union-attr]  # not None: it has bindings
        high = bisect.bisect_right(positions, at)
        low = max(0, high - count)
        while 0 < low < high and positions[low - 1] == positions[low]:
            low -= 1
        return sorted(bindings[low:high], key=lambda b: b.pos, reverse=True)[:count]

    def all_bindings(self, scope_node: ast.AST, name: str) -> List[Binding]:
        scope = self.scopes.get(scope_node)
        return list(scope.names.get(name, [])) if scope else []


_HANDLERS: Dict[type, Callable[..., None]] = {
    ast.FunctionDef: Bindings._def,
    ast.AsyncFunctionDef: Bindings._def,
    ast.ClassDef: Bindings._class,
    ast.Global: Bindings._global,
    ast.Nonlocal: Bindings._global,
    ast.Assign: Bindings._assign,
    ast.AnnAssign: Bindings._ann_assign,
    ast.AugAssign: Bindings._aug_assign,
    ast.NamedExpr: Bindings._named,
    ast.For: Bindings._for,
    ast.AsyncFor: Bindings._for,
    ast.With: Bindings._with,
    ast.AsyncWith: Bindings._with,
    ast.ExceptHandler: Bindings._except,
}
BINDING_KINDS = frozenset(_HANDLERS)
