"""For TD007 (loss_accumulation.py only): per-scope indexes of what the rule asks of a whole
scope for each accumulator.

A long script (an exported notebook) accumulates a loss at module level in every block, each
block with its own accumulator name (``running_12``) or rebinding the same ones. Reading the
module's assignments, backward calls or text once per accumulator made the rule quadratic in
the file; these indexes read each scope once, and answer each accumulator from what mentions
it. Each answer is the one the plain scan over the scope gave.
"""

from __future__ import annotations

import ast
import heapq
import re
from typing import Callable, Dict, List, Optional, Set, Tuple

from ..context import LintContext, walk
from ..training import analysis
from .loss_handoffs import backward_subjects

_DERIVE_ROUNDS = 3


class _Assigns:
    """The assignments of one scope with a value, in source order, and for each name the
    assignments whose value mentions it (by position in that order)."""

    def __init__(self, ctx: LintContext, scope: ast.AST, kinds: Tuple[type, ...], parts: Callable) -> None:
        self.ctx = ctx
        self.nodes = [n for n in ctx.own_nodes(scope, *kinds) if getattr(n, "value", None) is not None]
        self.targets: List[List[str]] = []
        self.parts: List[List[ast.AST]] = []
        self.readers: Dict[str, List[int]] = {}
        for index, node in enumerate(self.nodes):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            self.targets.append([t.id for t in targets if isinstance(t, ast.Name)])
            found = parts(node.value)
            self.parts.append(found)
            for name in {sub.id for sub in found if isinstance(sub, ast.Name)}:
                self.readers.setdefault(name, []).append(index)
        self._attr_readers: Optional[Dict[str, List[int]]] = None

    def attr_readers(self, attr: str) -> List[int]:
        """The assignments whose value reads the attribute spelled ``attr`` (``self.total``);
        every attribute's readers are found on the first question (once per scope)."""
        if self._attr_readers is None:
            self._attr_readers = {}
            for index, parts in enumerate(self.parts):
                for text in {self.ctx.text(s) for s in parts if isinstance(s, ast.Attribute)}:
                    self._attr_readers.setdefault(text, []).append(index)
        return self._attr_readers.get(attr, [])


def derived_names(
    ctx: LintContext, start: Set[str], attr: Optional[str], scope: ast.AST, kinds: Tuple[type, ...], live: bool
) -> Set[str]:
    """``start`` and the names assigned in ``scope`` from expressions mentioning one of them (or
    ``attr``), or a name so derived: the fixpoint of up to three passes over the assignments in
    source order, where a name derived by one assignment counts for the later ones of the same
    pass. Computed as the time (pass, position) each assignment first sees a derived name, from
    the assignments that read it, so only those are looked at."""
    assigns = _assigns(ctx, scope, kinds, live)
    derived = set(start)
    queue: List[Tuple[int, int]] = [(1, i) for name in start for i in assigns.readers.get(name, ())]
    if attr is not None:
        queue += [(1, i) for i in assigns.attr_readers(attr)]
    heapq.heapify(queue)
    done: Set[int] = set()
    while queue:
        round_, index = heapq.heappop(queue)
        if index in done:
            continue
        done.add(index)
        for name in assigns.targets[index]:
            if name in derived:
                continue
            derived.add(name)
            for reader in assigns.readers.get(name, ()):
                later = round_ if reader > index else round_ + 1
                if later <= _DERIVE_ROUNDS and reader not in done:
                    heapq.heappush(queue, (later, reader))
    return derived


def _assigns(ctx: LintContext, scope: ast.AST, kinds: Tuple[type, ...], live: bool) -> _Assigns:
    cache: Dict[Tuple[ast.AST, Tuple[type, ...], bool], _Assigns] = ctx.shared("loss_scopes.assigns", dict)
    key = (scope, kinds, live)
    found = cache.get(key)
    if found is None:
        found = cache[key] = _Assigns(ctx, scope, kinds, live_parts if live else walk)
    return found


def live_parts(expr: ast.AST) -> List[ast.AST]:
    """The nodes of ``expr`` outside ``x.item()``, ``x.detach()``, ``float(x)`` and the like."""
    found: List[ast.AST] = []
    pending = [expr]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Call) and releases(node):
            continue
        found.append(node)
        pending.extend(ast.iter_child_nodes(node))
    return found


_RELEASES = frozenset({"item", "detach", "tolist", "numpy", "cpu_item"})
_NUMBER_CALLS = frozenset({"float", "int", "round"})


def releases(call: ast.Call) -> bool:
    """``x.item()``, ``x.detach()``, ``float(x)``...: a number or a graph-free tensor."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return func.attr in _RELEASES
    return isinstance(func, ast.Name) and func.id in _NUMBER_CALLS


class _Backwards:
    """What the backward calls of one scope read: every name and attribute inside them, and
    their subjects (``loss`` of ``loss.backward()``) with the names copied into those."""

    def __init__(self, ctx: LintContext, scope: ast.AST) -> None:
        self.names: Set[str] = set()
        self.attrs: Set[str] = set()  # the text of every attribute inside a backward call
        self.subject_names: Set[str] = set()
        self.subject_attrs: Set[str] = set()  # ``self.loss`` of ``self.loss.backward()``
        self.copied_into: Dict[str, Set[str]] = {}  # ``x`` -> subjects assigned ``x`` (``loss = x``)
        self.term_names: Set[str] = set()  # the losses a subject sums (``(v * c + a).backward()``)
        for call in analysis(ctx).backwards(scope):
            for sub in walk(call):
                if isinstance(sub, ast.Name):
                    self.names.add(sub.id)
                elif isinstance(sub, ast.Attribute):
                    self.attrs.add(ctx.text(sub))
            for subject in backward_subjects(call):
                self.term_names.update(t.id for t in _terms(subject))
                if isinstance(subject, ast.Name):
                    self.subject_names.add(subject.id)
                elif isinstance(subject, ast.Attribute) and isinstance(subject.value, ast.Name):
                    self.subject_attrs.add(ctx.text(subject))
        for name in self.subject_names:
            for bound in ctx.bindings.all_bindings(scope, name):
                if isinstance(bound.value, ast.Name):
                    self.copied_into.setdefault(bound.value.id, set()).add(name)


def _terms(expr: ast.expr) -> List[ast.Name]:
    """The losses a backward subject adds up: ``value_loss * coef + policy_loss - entropy * beta``
    -> ``value_loss``, ``policy_loss``. A name added or subtracted is a term; in a product either
    side may be the weight (``coef * loss``, ``n * ce / 256``, ``ramp * kl``: a count or a number
    whose ``.item()`` would raise), so only a name that says it is a loss is taken from one."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub)):
        return _terms(expr.left) + _terms(expr.right)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return [n for n in _product_names(expr) if "loss" in n.id.lower()]
    return [expr] if isinstance(expr, ast.Name) else []


def _product_names(expr: ast.expr) -> List[ast.Name]:
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Mult, ast.Div)):
        return _product_names(expr.left) + _product_names(expr.right)
    return [expr] if isinstance(expr, ast.Name) else []


def backwards_of(ctx: LintContext, scope: ast.AST) -> _Backwards:
    cache: Dict[ast.AST, _Backwards] = ctx.shared("loss_scopes.backwards", dict)
    found = cache.get(scope)
    if found is None:
        found = cache[scope] = _Backwards(ctx, scope)
    return found


def backpropagated_ref(ctx: LintContext, ref: ast.expr, scope: ast.AST) -> bool:
    """``ref`` (a name or ``self.attr``) is the subject of a backward call of ``scope``, or a
    name is copied into one (``loss = raw_loss; loss.backward()``)."""
    found = backwards_of(ctx, scope)
    if isinstance(ref, ast.Name):
        if ref.id in found.subject_names or ref.id in found.term_names:
            return True
        return any(subject != ref.id for subject in found.copied_into.get(ref.id, ()))
    return isinstance(ref, ast.Attribute) and ctx.text(ref) in found.subject_attrs


# Word runs followed by a method call or attribute (not ``.append``), and the first argument
# of ``.stack(`` / ``.cat(`` / ``.sum(`` / ``.mean(``: the names ``_used_in_text`` looks for.
_DOTTED = re.compile(r"\b(\w+)(?=\.(?!append\b)\w)")
_STACKED = re.compile(r"\.(?:stack|cat|sum|mean)\(\s*(\w+)")
_WORD = re.compile(r"\w+")


def used_as_tensor_in(ctx: LintContext, scope: ast.AST, acc_text: str) -> bool:
    """``acc_text.method`` (not ``.append``) or ``torch.stack(acc_text`` in the text of ``scope``.
    The names so used are found in one pass per scope; another spelling (``self.total``) is
    searched for, once per scope and spelling."""
    if _WORD.fullmatch(acc_text):
        names: Dict[ast.AST, Set[str]] = ctx.shared("loss_scopes.tensor_names", dict)
        found = names.get(scope)
        if found is None:
            text = _text_of(ctx, scope)
            found = names[scope] = set(_DOTTED.findall(text)) | set(_STACKED.findall(text))
        return acc_text in found
    searched: Dict[Tuple[ast.AST, str], bool] = ctx.shared("loss_scopes.used_as_tensor", dict)
    key = (scope, acc_text)
    if key not in searched:
        searched[key] = _used_in_text(_text_of(ctx, scope), acc_text)
    return searched[key]


def _text_of(ctx: LintContext, scope: ast.AST) -> str:
    return ctx.source.text if scope is ctx.tree else ctx.text(scope)


def _used_in_text(text: str, acc_text: str) -> bool:
    name = re.escape(acc_text)
    method = re.search(rf"\b{name}\.(?!append\b)\w+", text)
    stacked = re.search(rf"\.(stack|cat|sum|mean)\(\s*{name}\b", text)
    return bool(method or stacked)
