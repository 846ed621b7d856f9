"""Training-step structure: where gradients are computed, applied and cleared.

A *training unit* is the code that runs once per optimizer update: the innermost loop
around an ``optimizer.step()`` that also computes gradients (``.backward()``), or the
function holding both when no such loop exists (a ``train_step(batch)`` helper). The rules
about ``zero_grad`` and about step order reason per unit.

Calls to functions defined in the same file are followed (a few levels deep), so a loop
that clears gradients through ``reset(optimizer)`` or trains through ``train_one_epoch(...)``
is understood.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Callable, Dict, List, Optional, Set, Tuple, Union

from . import torchapi
from .bindings import Function
from .context import LintContext, Loop, walk

_FOLLOW_DEPTH = 3
_START = attrgetter("lineno", "col_offset")


@dataclass
class Step:
    call: ast.Call
    optimizer: ast.expr
    key: str  # the optimizer's source text: how steps and zero_grads are matched


@dataclass
class Unit:
    node: Union[Loop, Function]
    steps: List[Step] = field(default_factory=list)

    @property
    def is_loop(self) -> bool:
        return isinstance(self.node, (ast.For, ast.AsyncFor, ast.While))


class TrainingAnalysis:
    """Per-module facts about training steps, computed once and shared by rules."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self._own_calls: Dict[ast.AST, List[ast.Call]] = {}
        self._backwards: Dict[ast.AST, List[ast.Call]] = {}
        self._steps: Dict[ast.AST, bool] = {}
        self._clearing: Optional[Set[ast.Call]] = None
        self.units = self._find_units()

    def own_calls(self, node: ast.AST) -> List[ast.Call]:
        found = self._own_calls.get(node)
        if found is None:
            found = self._own_calls[node] = self.ctx.own_calls(node)
        return found

    def backwards(self, node: ast.AST) -> List[ast.Call]:
        """The backward calls among ``own_calls(node)``; found once per node (several rules
        ask it of every loop). Callers must not change the list."""
        found = self._backwards.get(node)
        if found is None:
            found = self._backwards[node] = [c for c in self.own_calls(node) if torchapi.is_backward(self.ctx, c)]
        return found

    def steps(self, node: ast.AST) -> bool:
        """Whether some call among ``own_calls(node)`` steps an optimizer; answered once per node
        (TD008, TD010 and the loader demo check ask it of every loop)."""
        found = self._steps.get(node)
        if found is None:
            ctx, attribute = self.ctx, ast.Attribute
            found = self._steps[node] = any(
                torchapi.stepped_optimizer(ctx, c) is not None
                for c in self.own_calls(node)
                # only ``x.step...()`` can be one: most calls are not asked at all
                if c.func.__class__ is attribute and c.func.attr.startswith("step")  # type: ignore[attr-defined]
            )
        return found

    def clearing_calls(self) -> Set[ast.Call]:
        """The calls of the file named so that ``torchapi.zero_grad_target`` may accept them,
        from the index of callee names: the others are skipped without asking (each loop of a
        long script has a dozen calls and clears through one)."""
        found = self._clearing
        if found is None:
            names = [name for name in self.ctx.call_names() if torchapi.may_clear_by_name(name)]
            found = self._clearing = set(self.ctx.calls_named_any(names))
        return found

    def _clearing_nodes(self, node: ast.AST) -> List[Any]:
        """``node``'s own calls and assignments that may clear gradients, in source order: what
        ``own_nodes(node, Call, Assign, AnnAssign)`` lists, less the calls that cannot (a call
        and an assignment starting together stay in that order: the sort is stable)."""
        clearing = self.clearing_calls()
        found: List[Any] = [call for call in self.own_calls(node) if call in clearing]
        assignments = self.ctx.own_nodes(node, ast.Assign, ast.AnnAssign)
        if not found:
            return assignments
        found += assignments
        found.sort(key=_START)
        return found

    def _find_units(self) -> List[Unit]:
        units: Dict[ast.AST, Unit] = {}
        for call in torchapi.step_calls(self.ctx):
            optimizer = torchapi.stepped_optimizer(self.ctx, call)
            if optimizer is None:
                continue
            home = self._unit_node(call)
            if home is None:
                continue
            unit = units.setdefault(home, Unit(home))
            unit.steps.append(Step(call, optimizer, self.ctx.text(optimizer)))
        return sorted(units.values(), key=lambda u: (u.node.lineno, u.node.col_offset))

    def _unit_node(self, step: ast.Call) -> Optional[Union[Loop, Function]]:
        """The innermost loop around ``step`` that computes gradients, else its function. A
        step handed a closure of this file that computes gradients (``optimizer.step(closure)``,
        LBFGS) runs that closure once or more per step: the closure is the unit."""
        closure = self.closure_of(step)
        if closure is not None:
            return closure
        for loop in self.ctx.enclosing_loops(step):
            if self.backwards(loop) or self._calls_local(loop, self._has_backward):
                return loop
        func = self.ctx.enclosing_function(step)
        if func is not None and self.backwards(func):
            return func
        return None

    def closure_of(self, step: ast.Call) -> Optional[Function]:
        """The local function ``step`` is given (``optimizer.step(closure)``) when it computes
        gradients, else None."""
        if len(step.args) != 1 or not isinstance(step.args[0], ast.Name):
            return None
        bound = self.ctx.binding(step.args[0])
        if bound is None or bound.kind != "def" or not isinstance(bound.stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        return bound.stmt if self.backwards(bound.stmt) else None

    def _has_backward(self, func: ast.AST) -> bool:
        return bool(self.backwards(func))

    def backpropagates(self, node: ast.AST) -> bool:
        """``node`` calls ``backward()`` itself or through a function of this file it calls
        (``optimizer_step(loss, optimizer)`` that backpropagates the loss it is handed)."""
        return bool(self.backwards(node)) or self._calls_local(node, self._has_backward)

    # -- following local calls ------------------------------------------------------

    def _calls_local(
        self, node: ast.AST, predicate: Callable[[ast.AST], bool], depth: int = 0, seen: Optional[Set[ast.AST]] = None
    ) -> bool:
        """Whether ``node`` calls (transitively) a function of this file satisfying ``predicate``."""
        if depth >= _FOLLOW_DEPTH:
            return False
        seen = seen if seen is not None else set()
        for call in self.own_calls(node):
            target = self.ctx.local_function_called(call)
            if target is None or target in seen:
                continue
            seen.add(target)
            if predicate(target) or self._calls_local(target, predicate, depth + 1, seen):
                return True
        return False

    def clears(self, node: ast.AST, depth: int = 0, seen: Optional[Set[ast.AST]] = None) -> Tuple[bool, Set[str]]:
        """``(clears_everything, optimizer keys cleared)`` for the code that runs in ``node``,
        following calls to local functions."""
        seen = seen if seen is not None else set()
        everything, keys = False, set()
        for sub in self._clearing_nodes(node):
            cleared, receiver = torchapi.zero_grad_target(self.ctx, sub)
            if cleared:
                if receiver is None:
                    everything = True
                else:
                    keys.add(self.ctx.text(receiver))
        if depth < _FOLLOW_DEPTH:
            for call in self.own_calls(node):
                target = self.ctx.local_function_called(call)
                if target is not None and target not in seen:
                    seen.add(target)
                    sub_all, sub_keys = self.clears(target, depth + 1, seen)
                    everything = everything or sub_all or bool(sub_keys and _passes_optimizer(call))
                    keys |= sub_keys
        return everything, keys

    def _one_tensor(self, node: ast.AST) -> Optional[str]:
        """``w.grad.zero_()`` / ``w.grad.fill_(0)`` / ``w.grad = None`` where ``w`` is a name
        assigned one tensor (``w = init.detach().requires_grad_()``): that name. None for a loop
        variable (``for p in model.parameters(): p.grad.zero_()`` clears them all) or anything
        we cannot see assigned once."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            holder: ast.AST = node.func.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            holder = node.targets[0]  # ``w.grad = None``: the target is the ``.grad`` itself
        else:
            return None
        while isinstance(holder, ast.Attribute) and holder.attr != "grad":
            holder = holder.value  # ``w.grad.data.zero_()``
        if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)):
            return None
        value = self.ctx.value_of(holder.value)
        if value is None or isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
            return None
        return holder.value.id

    def cleared(self, node: ast.AST, depth: int = 0, seen: Optional[Set[ast.AST]] = None) -> "Cleared":
        """Like ``clears``, but keeps ``model.zero_grad()`` apart: its receivers are listed in
        ``modules`` instead of counting as clearing every optimizer, so a rule can ask whether
        that model's parameters are the ones a given optimizer steps."""
        seen = seen if seen is not None else set()
        result = Cleared()
        for sub in self._clearing_nodes(node):
            cleared, receiver = torchapi.zero_grad_target(self.ctx, sub)
            if not cleared:
                continue
            # a model's ``zero_grad()``, or one named tensor's ``.grad`` (MAML's
            # ``output_weight.grad.fill_(0)``): only what that name holds is cleared
            name = self.ctx.text(sub.func.value) if _is_module_zero_grad(sub) else self._one_tensor(sub)
            if receiver is not None:
                result.optimizers.add(self.ctx.text(receiver))
            elif name is not None:
                result.modules.add(name)
                if depth == 0:
                    result.module_calls.setdefault(name, []).append(sub)
            else:
                result.everything = True
        if depth < _FOLLOW_DEPTH:
            for call in self.own_calls(node):
                target = self.ctx.local_function_called(call)
                if target is not None and target not in seen:
                    seen.add(target)
                    inner = self.cleared(target, depth + 1, seen)
                    handed = _passes_optimizer(call) and bool(inner.optimizers or inner.modules)
                    result.everything = result.everything or inner.everything or handed
                    result.optimizers |= inner.optimizers
                    result.modules |= inner.modules
        return result


@dataclass
class Cleared:
    """What the code of a unit clears: everything (``p.grad = None``, a helper handed the
    optimizer), these optimizers (``opt.zero_grad()``), these modules' parameters
    (``model.zero_grad()``)."""

    everything: bool = False
    optimizers: Set[str] = field(default_factory=set)
    modules: Set[str] = field(default_factory=set)
    # The ``model.zero_grad()`` calls made by the unit itself (not by helpers), per receiver.
    module_calls: Dict[str, List[ast.Call]] = field(default_factory=dict)


def _is_module_zero_grad(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "zero_grad"
        and isinstance(node.func.value, (ast.Name, ast.Attribute))
    )


def parameter_owners(ctx: LintContext, construction: Optional[ast.Call]) -> Set[str]:
    """The receivers of ``.parameters()`` in an optimizer's arguments (``Adam(netG.parameters())``,
    ``SGD([{"params": enc.parameters()}, ...])``, ``params = list(model.parameters())``), as
    source text; empty when the construction is unknown or names no module."""
    if construction is None:
        return set()
    func = construction.func
    if isinstance(func, ast.Attribute) and func.attr in ("configure_optimizers", "configure_optimizer"):
        return _unwrapped_names(ctx, func.value)  # ``model.configure_optimizers(...)``: its own parameters
    owners: Set[str] = set()
    for arg in list(construction.args) + [k.value for k in construction.keywords]:
        value = ctx.value_of(arg) if isinstance(arg, ast.Name) else arg
        if value is not None:
            owners |= parameters_taken(ctx, value)
    return owners


def _unwrapped_names(ctx: LintContext, expr: ast.expr) -> Set[str]:
    """``raw_model`` and the model it names: ``raw_model = model.module if ddp else model``
    (build-nanogpt) is ``model`` unwrapped from DDP, with the same parameters."""
    names = {ctx.text(expr)}
    value = ctx.value_of(expr) if isinstance(expr, ast.Name) else None
    options = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value] if value is not None else []
    for option in options:
        while isinstance(option, ast.Attribute) and option.attr == "module":
            option = option.value
        if isinstance(option, (ast.Name, ast.Attribute)):
            names.add(ctx.text(option))
    return names


def parameters_taken(ctx: LintContext, node: ast.AST) -> Set[str]:
    """The receivers of ``.parameters()`` / ``.named_parameters()`` anywhere in ``node``, as
    source text (``Adam(netG.parameters())`` -> ``{"netG"}``)."""
    return {
        ctx.text(sub.func.value)
        for sub in walk(node)
        if isinstance(sub, ast.Call)
        and isinstance(sub.func, ast.Attribute)
        and sub.func.attr in ("parameters", "named_parameters")
    }


def _passes_optimizer(call: ast.Call) -> bool:
    """A helper that clears a parameter it was given (``reset(opt)``) clears the caller's
    optimizer whatever the names: treat it as clearing everything it was handed."""
    return bool(call.args or call.keywords)


def analysis(ctx: LintContext) -> TrainingAnalysis:
    return ctx.shared("training", lambda: TrainingAnalysis(ctx))
