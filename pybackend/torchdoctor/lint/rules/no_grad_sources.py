"""For TD013 (no_grad_backward.py only): the model calls run under ``no_grad`` that a loss is
built from, followed back from the loss through what may carry a value:

- assignments, tuple unpacking and walruses (``logits = model(x)``; ``out, h = rnn(x)``);
- an accumulating ``total += crit(out, y)``, a ``for`` loop's target (``for out in outputs``),
  a ``with ... as`` target (the managed expression);
- an attribute of ``self`` set in a method of the same class (``self.out = self.net(x)``);
- a module-level name that a function sets under ``global``;
- a helper function of the file: what it returns (``def predict(x): with torch.no_grad():
  return net(x)``), its parameters read as the caller's arguments (``predict(net, x)``), and a
  helper or lambda that runs a model, called inside a no-grad block (``run(x)``).

Each found call comes with the model's text as the backward's scope spells it (``net`` for a
helper's parameter ``model``), which is what the optimizers' owners are matched against.
"""

from __future__ import annotations

import ast
from typing import Dict, List, Optional, Set, Tuple, Union

from .. import torchapi
from ..bindings import Binding, Function
from ..context import LintContext, walk
from ..training import parameter_owners

WithBlock = Union[ast.With, ast.AsyncWith]
# (a model call, the no-grad block it runs under or None when it runs with grad, the model's
# text in the backward's scope). The calls with grad are kept so that TD013 can tell a model
# that also gets gradients through the same loss (Double DQN, FixMatch, stop-gradient).
Source = Tuple[ast.Call, Optional[WithBlock], str]
Memo = Dict[ast.AST, List[Source]]

_FOLLOWED = ("assign", "unpack", "aug", "for", "with")


def sources(ctx: LintContext, expr: ast.expr, memo: Memo, depth: int) -> List[Source]:
    """The no-grad model calls ``expr``'s value may be built from, ``depth`` steps back."""
    found: List[Source] = []
    in_no_grad = calls_in_no_grad_withs(ctx)
    for sub in walk(expr):
        if isinstance(sub, ast.Call):
            if sub in in_no_grad:  # most calls are in no no-grad block: no ancestor walk for them
                model = runs_model(ctx, sub)
                block = no_grad_with(ctx, sub) if model is not None else None
                if model is not None and block is not None:
                    _add(found, [(sub, block, model)])
                    continue
            if torchapi.is_model(ctx, sub.func) or _stepped_name(ctx, sub.func):  # a forward pass with grad
                _add(found, [(sub, None, ctx.text(sub.func))])
            if depth > 1:
                _add(found, _through_helper(ctx, sub, memo, depth))
        elif depth > 1 and isinstance(sub, (ast.Name, ast.Attribute)) and isinstance(sub.ctx, ast.Load):
            for value in _values_of(ctx, sub):
                if value not in memo:
                    memo[value] = []  # a name rebound from itself (``loss = loss / n``) ends here
                    memo[value] = sources(ctx, value, memo, depth - 1)
                _add(found, memo[value])
    return found


def _add(found: List[Source], items: List[Source]) -> None:
    found.extend(item for item in items if item not in found)


def _values_of(ctx: LintContext, node: Union[ast.Name, ast.Attribute]) -> List[ast.expr]:
    """What ``node`` may hold, as expressions to search: its bindings' values (an ``aug``'s
    right side, a ``for``'s iterable, a ``with``'s managed expression), the values a function
    sets it to under ``global``, or for ``self.x`` the values set in the class's methods."""
    if isinstance(node, ast.Attribute):
        return _self_attribute_values(ctx, node)
    if ctx.imports.is_module_alias(node.id):
        return []
    values = [v for b in ctx.alternatives(node) if (v := _bound_value(b)) is not None]
    bound = ctx.binding(node)
    if bound is None or ctx.scope_of(bound.stmt) is ctx.tree or bound.kind not in _FOLLOWED:
        values.extend(_set_before(ctx, node, _global_values(ctx).get(node.id, [])))
    return values


def _set_before(ctx: LintContext, read: ast.expr, assigned: List[Tuple[ast.Assign, ast.expr]]) -> List[ast.expr]:
    """The values of ``assigned`` that ``read`` may see: only those its own function assigns
    before it when there are some (``self.out = net(x)`` then ``loss(self.out)``: what another
    method stored under ``no_grad`` is overwritten), else all of them."""
    func = ctx.enclosing_function(read)
    local = [
        value
        for stmt, value in assigned
        if func is not None and ctx.enclosing_function(stmt) is func and stmt.lineno < read.lineno
    ]
    return local or [value for _, value in assigned]


def _bound_value(bound: Binding) -> Optional[ast.expr]:
    if bound.kind not in _FOLLOWED or isinstance(bound.value, ast.Lambda):
        return None  # a lambda's body runs where it is called: ``_through_helper`` follows that
    if bound.kind == "aug":
        return getattr(bound.stmt, "value", None)
    return bound.value if bound.value is not None else bound.source


def _global_values(ctx: LintContext) -> Dict[str, List[Tuple[ast.Assign, ast.expr]]]:
    """Assignments to a name inside a function that declares it ``global``, found once."""

    def build() -> Dict[str, List[Tuple[ast.Assign, ast.expr]]]:
        found: Dict[str, List[Tuple[ast.Assign, ast.expr]]] = {}
        for func in ctx.functions:  # ``global`` is written in the function's own body
            names = {n for stmt in func.body if isinstance(stmt, ast.Global) for n in stmt.names}
            for stmt in ctx.own_nodes(func, ast.Assign) if names else ():
                for target in stmt.targets:
                    if isinstance(target, ast.Name) and target.id in names:
                        found.setdefault(target.id, []).append((stmt, stmt.value))
        return found

    return ctx.shared("no_grad_global_values", build)


def _self_attribute_values(ctx: LintContext, node: ast.Attribute) -> List[ast.expr]:
    """``self.out`` read in a method: the values assigned to ``self.out`` in its class."""
    if not (isinstance(node.value, ast.Name) and node.value.id == "self"):
        return []
    func = ctx.enclosing_function(node)
    owner = ctx.enclosing_class(func) if func is not None else None
    return _set_before(ctx, node, _attribute_values(ctx).get((owner, node.attr), [])) if owner is not None else []


def _attribute_values(ctx: LintContext) -> Dict[Tuple[ast.AST, str], List[Tuple[ast.Assign, ast.expr]]]:
    """``(class, attribute) -> assignments`` of every ``self.x = value`` in a method, found once."""

    def build() -> Dict[Tuple[ast.AST, str], List[Tuple[ast.Assign, ast.expr]]]:
        found: Dict[Tuple[ast.AST, str], List[Tuple[ast.Assign, ast.expr]]] = {}
        for stmt in ctx.all_nodes(ast.Assign):
            for target in stmt.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == "self"
                ):
                    func = ctx.enclosing_function(stmt)
                    owner = ctx.enclosing_class(func) if func is not None else None
                    if owner is not None:
                        found.setdefault((owner, target.attr), []).append((stmt, stmt.value))
        return found

    return ctx.shared("no_grad_self_attributes", build)


def _through_helper(ctx: LintContext, call: ast.Call, memo: Memo, depth: int) -> List[Source]:
    """The sources of what a helper of the file returns, its parameters spelled as ``call``'s
    arguments (``predict(net, x)``: the helper's ``model`` is ``net``)."""
    helper = called_function(ctx, call)
    if helper is None:
        return []
    returned: List[Source] = []
    for value in returned_values(ctx, helper):
        if value not in memo:
            memo[value] = []
            memo[value] = sources(ctx, value, memo, depth - 1)
        _add(returned, memo[value])
    if not returned:
        return []
    arguments = _arguments(helper, call)
    return [(c, b, _respelled(model, arguments)) for c, b, model in returned]


def _arguments(helper: Union[Function, ast.Lambda], call: ast.Call) -> Dict[str, str]:
    params = [a.arg for a in [*helper.args.posonlyargs, *helper.args.args]]
    if params and params[0] in ("self", "cls") and isinstance(call.func, ast.Attribute):
        params = params[1:]
    spelled = {p: ast.unparse(arg) for p, arg in zip(params, call.args) if not isinstance(arg, ast.Starred)}
    spelled.update({k.arg: ast.unparse(k.value) for k in call.keywords if k.arg is not None})
    return spelled


def _respelled(model: str, arguments: Dict[str, str]) -> str:
    head, dot, rest = model.partition(".")
    return arguments[head] + dot + rest if head in arguments else model


def called_function(ctx: LintContext, call: ast.Call) -> Optional[Union[Function, ast.Lambda]]:
    """The function of this file ``call`` runs, or the lambda a name it calls is bound to."""
    found = ctx.local_function_called(call)
    if found is not None:
        return found
    if isinstance(call.func, ast.Name):
        bound = ctx.binding(call.func)
        if bound is not None and bound.kind == "assign" and isinstance(bound.value, ast.Lambda):
            return bound.value
    return None


def returned_values(ctx: LintContext, helper: Union[Function, ast.Lambda]) -> List[ast.expr]:
    if isinstance(helper, ast.Lambda):
        return [helper.body]
    return [r.value for r in ctx.own_nodes(helper, ast.Return) if r.value is not None]


def runs_model(ctx: LintContext, call: ast.Call) -> Optional[str]:
    """The model ``call`` runs, as the caller spells it: the callee when it is a model, or the
    model a helper or lambda of the file returns the output of (``run(x)``, ``run = lambda b:
    net(b)``), with the helper's parameters spelled as ``call``'s arguments."""
    if torchapi.is_model(ctx, call.func) or _stepped_name(ctx, call.func):
        return ctx.text(call.func)
    helper = called_function(ctx, call)
    if helper is None:
        return None
    arguments: Optional[Dict[str, str]] = None
    for value in returned_values(ctx, helper):
        for sub in walk(value):
            if isinstance(sub, ast.Call) and torchapi.is_model(ctx, sub.func):
                arguments = _arguments(helper, call) if arguments is None else arguments
                return _respelled(ctx.text(sub.func), arguments)
    return None


def _stepped_name(ctx: LintContext, func: ast.expr) -> bool:
    """``model(**batch)`` where an optimizer of the file steps ``model.parameters()``: a model,
    though the file builds it in a way ``is_model`` does not know (``get_peft_model(...)``,
    2026-12-07, a fetched fine-tuning example)."""
    return isinstance(func, (ast.Name, ast.Attribute)) and ctx.text(func) in _stepped_models(ctx)


def _stepped_models(ctx: LintContext) -> Set[str]:
    """The modules whose parameters some optimizer of the file steps, as written; found once."""

    return ctx.shared(
        "no_grad_sources.stepped_models",
        lambda: {o for step in torchapi.step_calls(ctx) for o in step_owners(ctx, step)},
    )


def step_owners(ctx: LintContext, step: ast.Call) -> List[str]:
    """The modules whose parameters the optimizer of ``step`` (``opt.step()``) steps, sorted;
    [] when the file does not show what it was built from. Each step is looked up once."""
    cache: Dict[ast.AST, List[str]] = ctx.shared("stepped_owners", dict)
    if step not in cache:
        optimizer = torchapi.stepped_optimizer(ctx, step)
        cache[step] = sorted(parameter_owners(ctx, ctx.construction_of(optimizer))) if optimizer else []
    return cache[step]


def calls_in_no_grad_withs(ctx: LintContext) -> Set[ast.AST]:
    """The calls inside some no-grad ``with`` of the file, found once (a superset of those
    ``no_grad_with`` accepts: an ``enable_grad`` block or a function may come between)."""

    def build() -> Set[ast.AST]:
        inside: Set[ast.AST] = set()
        for block in ctx.withs:
            if any(torchapi.grad_mode_of(ctx, item.context_expr) == torchapi.NO_GRAD for item in block.items):
                inside.update(node for node in walk(block) if isinstance(node, ast.Call))
        return inside

    return ctx.shared("calls_in_no_grad_withs", build)


def no_grad_with(ctx: LintContext, node: ast.AST) -> Optional[WithBlock]:
    """The no-grad ``with`` around ``node`` in its function (not decorators: a decorated
    function is an evaluation helper whose result nobody backpropagates through)."""
    for anc in ctx.ancestors(node):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            for item in anc.items:
                mode = torchapi.grad_mode_of(ctx, item.context_expr)
                if mode == torchapi.NO_GRAD:
                    return anc
                if mode == torchapi.ENABLE_GRAD:
                    return None
        if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            return None
    return None
