"""TD001: a training loop that never clears gradients.

``loss.backward()`` adds into ``.grad``; without ``optimizer.zero_grad()`` each step applies
the sum of every gradient since the start, and the loss wanders instead of falling.
"""

from __future__ import annotations

import ast
import os
from typing import Dict, List, Optional, Tuple

from ..bindings import FUNCTIONS, Function
from ..context import LintContext
from ..fixes import insert_line_after
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from ..training import Step, Unit, analysis, parameter_owners
from .zero_grad_roles import roles_differ


@rule(
    "TD001",
    "missing-zero-grad",
    "Gradients are never cleared between optimizer steps",
    WARNING,
    """
`loss.backward()` **adds** to each parameter's `.grad`. Without `optimizer.zero_grad()` once per
step, every update applies the sum of all gradients so far: the loss plateaus or diverges and
nothing crashes. Call `optimizer.zero_grad()` once per iteration (before `backward()` or right
after `step()`); with gradient accumulation, right after the `step()`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    training = analysis(ctx)
    for unit in training.units:
        if not _runs_repeatedly(ctx, unit):
            continue
        cleared = training.cleared(unit.node)
        if cleared.everything:
            continue
        if not unit.is_loop and _caller_loops_clear(ctx, training, unit):
            continue
        reported = set()
        for step in unit.steps:
            if step.key in cleared.optimizers or step.key in reported:
                continue
            on_path = [m for m in cleared.modules if _on_the_steps_path(ctx, step, cleared, m)]
            left = _owners_left(ctx, step, on_path)
            if left is None:
                sometimes = _cleared_only_sometimes(ctx, step, unit, cleared, on_path)
                if sometimes is not None and not _distributed(ctx, step):
                    reported.add(step.key)
                    report.report(step.call, _sometimes_message(ctx, step, sometimes))
                continue
            if _distributed(ctx, step) or _fresh_each_pass(ctx, step, unit):
                continue
            reported.add(step.key)
            if left:
                report.report(step.call, _partial_message(step, unit, on_path, left), fix=_fix(ctx, step))
                continue
            if training.closure_of(step.call) is unit.node:
                report.report(step.call, _closure_message(step, unit))  # the fix belongs inside the closure
                continue
            report.report(step.call, _message(step, unit), fix=_fix(ctx, step))


def _on_the_steps_path(ctx: LintContext, step: Step, cleared, module: str) -> bool:
    """Whether some ``module.zero_grad()`` of the unit can run with the step: not when every
    one is in the other branch of the step's test (``if args.use_optimizer: optimizer.step()``
    with ``else: model.zero_grad()``, so the optimizer's path never clears)."""
    calls = cleared.module_calls.get(module)
    if not calls:
        return True  # cleared by a helper: its branches are not ours to judge
    return any(not ctx.never_together(call, step.call) for call in calls)


def _cleared_only_sometimes(ctx: LintContext, step: Step, unit: Unit, cleared, modules: List[str]) -> Optional[ast.If]:
    """The ``if`` around the only ``model.zero_grad()`` of the loop, when the step and a backward
    run on every pass and that clear does not (StyleGAN2's ``if d_regularize:`` block clears,
    backpropagates and steps on its own): on the other passes each ``backward()`` adds to the
    last one's gradients. None when some clear runs every pass, when the ``if`` has an ``else``,
    when the step itself is conditional (gradient accumulation), or when a helper clears."""
    loop = unit.node
    if not unit.is_loop or ctx.enclosing_loops(step.call)[:1] != [loop]:
        return None
    if not _runs_every_pass(ctx, step.call, loop):
        return None
    owners = parameter_owners(ctx, ctx.construction_of(step.optimizer))
    covering = [m for m in modules if any(o == m or o.startswith(m + ".") for o in owners)]
    if not owners or not covering:
        return None
    ifs: List[ast.If] = []
    for module in covering:
        calls = cleared.module_calls.get(module)
        if not calls:
            return None  # cleared by a helper
        for call in calls:
            around = _first_if_within(ctx, call, loop)
            if around is None or around.orelse or _maybe_always(around.test):
                return None
            ifs.append(around)
    if _complementary(ifs):
        return None  # ``if c: clear()`` and ``if not c: clear()``: one of them runs on every pass
    every_pass = [b for b in analysis(ctx).backwards(loop) if not any(ctx.is_inside(b, i) for i in ifs)]
    return ifs[0] if every_pass else None


def _runs_every_pass(ctx: LintContext, node: ast.AST, loop: ast.AST) -> bool:
    """Whether ``node`` surely runs on each pass of ``loop``: nothing but ``with`` blocks between
    them (no ``if``, ``try``, ``match``), and no ``continue``, ``break``, ``return`` or ``raise``
    before it in the loop body, at any depth (``if (i + 1) % accum: continue`` before the step
    is gradient accumulation, as conditional as an ``if`` around the step)."""
    for anc in ctx.ancestors(node):
        if anc is loop:
            break
        if isinstance(anc, (ast.IfExp, ast.BoolOp, ast.Lambda)):
            return False  # ``opt.step() if ready else None``
        if not isinstance(anc, (ast.With, ast.AsyncWith, ast.Expr, ast.expr, ast.withitem)):
            return False
    first = _first_jump(ctx, loop)
    return first is None or first >= (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def _first_jump(ctx: LintContext, loop: ast.AST) -> Optional[Tuple[int, int]]:
    """Where the first ``continue``/``break`` of ``loop`` itself, or ``return``/``raise``, sits
    in its body (not in nested functions or classes); found once per loop."""
    cache: Dict[ast.AST, Optional[Tuple[int, int]]] = ctx.shared("zero_grad.first_jump", dict)
    if loop in cache:
        return cache[loop]
    first: Optional[Tuple[int, int]] = None
    todo: List[Tuple[ast.AST, bool]] = [(stmt, False) for stmt in getattr(loop, "body", [])]
    while todo:
        stmt, inner = todo.pop()
        if isinstance(stmt, (ast.Return, ast.Raise)) or (isinstance(stmt, (ast.Continue, ast.Break)) and not inner):
            at = (stmt.lineno, stmt.col_offset)
            first = at if first is None or at < first else first
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        is_loop = isinstance(stmt, (ast.For, ast.AsyncFor, ast.While))
        orelse = {id(c) for c in getattr(stmt, "orelse", ())} if is_loop else set()
        for child in ast.iter_child_nodes(stmt):
            if isinstance(child, (ast.stmt, ast.excepthandler)) or type(child).__name__ == "match_case":
                todo.append((child, inner or (is_loop and id(child) not in orelse)))  # a loop's else is ours
    cache[loop] = first
    return first


def _maybe_always(test: ast.expr) -> bool:
    """A test we cannot call a real condition: a constant (``if True:``), or one on a module's
    ``training`` flag (``if model.training:`` holds on every training pass)."""
    if isinstance(test, ast.Constant):
        return True
    return any(isinstance(n, ast.Attribute) and n.attr == "training" for n in ast.walk(test))


def _complementary(ifs: List[ast.If]) -> bool:
    """Whether two of ``ifs`` test ``c`` and ``not c``."""
    tests = {ast.dump(i.test) for i in ifs}
    for around in ifs:
        test = around.test
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not) and ast.dump(test.operand) in tests:
            return True
    return False


def _first_if_within(ctx: LintContext, node: ast.AST, loop: ast.AST) -> Optional[ast.If]:
    """The innermost ``if`` around ``node`` inside ``loop``, else None."""
    for anc in ctx.ancestors(node):
        if anc is loop:
            return None
        if isinstance(anc, ast.If):
            return anc
    return None


def _owners_left(ctx: LintContext, step: Step, modules: List[str]) -> Optional[List[str]]:
    """What ``modules.zero_grad()`` leaves uncleared of the parameters ``step`` applies: None when
    they clear it all (or we cannot see what the optimizer was built from and some module is
    cleared: assume it), [] when they clear none of it, else the owners left (``encoder`` when an
    optimizer over encoder and decoder sees only ``decoder.zero_grad()``: its gradients add up)."""
    if not modules:
        return []
    construction = ctx.construction_of(step.optimizer)
    owners = parameter_owners(ctx, construction)
    if not owners:  # not seen here: a model's ``zero_grad()`` is trusted, unless the names disagree
        return [] if roles_differ(step.key, modules) else None

    def covered(owner: str) -> bool:
        return any(owner == m or owner.startswith(m + ".") for m in modules)

    left = sorted(o for o in owners if not covered(o))
    if len(left) == len(owners):
        return []
    # ``model.configure_optimizers()`` names one model by all its aliases (``raw_model``, ``model``)
    func = construction.func if construction is not None else None
    aliases = isinstance(func, ast.Attribute) and func.attr.startswith("configure_optimizer")
    return None if not left or aliases else left


def _fresh_each_pass(ctx: LintContext, step: Step, unit: Unit) -> bool:
    """``x = latent.detach().clone(); opt = SGD([x]); ...; opt.step()`` all in one loop body:
    each pass builds a new optimizer over new tensors, so no gradient carries over to the next
    step. Not when the optimizer holds a persistent model's parameters (their ``.grad`` stays)."""
    built = ctx.construction_of(step.optimizer)
    if not unit.is_loop or built is None or not built.args or not isinstance(built.args[0], (ast.List, ast.Tuple)):
        return False
    loops = ctx.enclosing_loops(built)
    if not loops or loops[0] is not unit.node or ctx.enclosing_loops(step.call)[:1] != [unit.node]:
        return False
    for tensor in built.args[0].elts:
        bound = ctx.binding(tensor) if isinstance(tensor, ast.Name) else None
        if bound is None or not isinstance(bound.value, ast.Call) or unit.node not in ctx.enclosing_loops(bound.stmt):
            return False
    return bool(built.args[0].elts)


_DIST_CONTEXT = "torch.distributed.autograd.context"
_DIST_OPTIMIZER = "torch.distributed.optim.DistributedOptimizer"


def _distributed(ctx: LintContext, step: Step) -> bool:
    """Distributed autograd keeps each iteration's gradients in its own
    ``dist_autograd.context()``: there is nothing to clear (and ``DistributedOptimizer`` has no
    ``zero_grad``)."""
    if ctx.class_of(step.optimizer) == _DIST_OPTIMIZER:
        return True
    for anc in ctx.ancestors(step.call):
        if isinstance(anc, (ast.With, ast.AsyncWith)):
            for item in anc.items:
                expr = item.context_expr
                if isinstance(expr, ast.Call) and ctx.qualname(expr.func) == _DIST_CONTEXT:
                    return True
    return False


def _has_zero_grad(ctx: LintContext, optimizer: ast.expr) -> bool:
    """Whether inserting ``optimizer.zero_grad()`` cannot raise: a torch optimizer, a class of
    this file that derives from one or defines ``zero_grad``, or one we cannot see (every
    optimizer class in common use has the method). Never ``DistributedOptimizer``."""
    cls = ctx.class_of(optimizer)
    if cls is None or cls.startswith("torch.optim."):
        return True
    if cls == _DIST_OPTIMIZER:
        return False
    local = ctx.local_class(cls)
    if local is not None:
        if ctx.method(local, "zero_grad") is not None:
            return True
        return any(base.rsplit(".", 1)[-1].endswith("Optimizer") for base in ctx.base_names(local))
    return "Optimizer" in cls.rsplit(".", 1)[-1] and "Distributed" not in cls


def _runs_repeatedly(ctx: LintContext, unit: Unit) -> bool:
    """A loop repeats; a function repeats when some loop here calls it (``agent.learn()`` too), or
    when it is a Lightning ``training_step`` or per-batch hook (the trainer loops over it: a
    callback training its own probe in ``on_train_batch_end``)."""
    node = unit.node
    if not isinstance(node, FUNCTIONS):
        return True  # a loop
    if node.name in _LIGHTNING_BATCH_HOOKS or any(analysis(ctx).closure_of(step.call) is node for step in unit.steps):
        return True  # the trainer loops over it; an optimizer's closure runs at every step
    return any(ctx.enclosing_loops(site) for site in ctx.call_sites(node)) or _instance_calls_in_a_loop(ctx, node)


_LIGHTNING_BATCH_HOOKS = frozenset(("training_step", "on_train_batch_start", "on_train_batch_end"))


def _instance_calls_in_a_loop(ctx: LintContext, method: Function) -> bool:
    """``agent.learn()`` inside a loop, where ``agent = Agent()`` and ``learn`` is this method of
    a class of this file (a DQN agent learning once per environment step)."""
    cls = ctx.enclosing_class(method)
    if cls is None:
        return False
    for site in ctx.calls_named(method.name):
        func = site.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and ctx.enclosing_loops(site):
            if ctx.class_of(func.value) == "local:" + cls.name:
                return True
    return _imported_instance_calls_in_a_loop(ctx, method, cls)


def _imported_instance_calls_in_a_loop(ctx: LintContext, method: Function, cls: ast.ClassDef) -> bool:
    """``dqn.learn(mem)`` in the loop of another file of the project that imports the class
    (``from agent import Agent; dqn = Agent(args, env)``), a loop that clears no gradients itself
    (2026-12-07, a fetched Rainbow DQN with its ``learn()``'s ``zero_grad()`` removed)."""
    if not ctx.path:
        return False
    for other in ctx.project.importers(ctx.path, method.name):
        for site in other.calls_named(method.name):
            func, loops = site.func, other.enclosing_loops(site)
            if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and loops):
                continue
            qualname = other.class_of(func.value)
            found = other.project.find_class(qualname, other.path) if qualname else None
            if found is None or found[1].name != cls.name or not _same_file(found[0].path, ctx.path):
                continue
            if "zero_grad" not in other.text(loops[-1]) and ".grad = None" not in other.text(loops[-1]):
                return True
    return False


def _same_file(a: Optional[str], b: Optional[str]) -> bool:
    return a is not None and b is not None and os.path.abspath(a) == os.path.abspath(b)


def _caller_loops_clear(ctx: LintContext, training, unit: Unit) -> bool:
    """A ``train_step()`` helper is fine when every loop that calls it clears gradients."""
    if not isinstance(unit.node, FUNCTIONS):
        return False  # only a helper function has callers
    looping_sites = [site for site in ctx.call_sites(unit.node) if ctx.enclosing_loops(site)]
    if not looping_sites:
        return False
    for site in looping_sites:
        # what the loop clears besides the helper itself (whose own clears are judged per step)
        everything, keys = training.clears(ctx.enclosing_loops(site)[0], seen={unit.node})
        if not (everything or keys):
            return False
    return True


def _message(step: Step, unit: Unit) -> str:
    where = f"`{unit.node.name}()`" if isinstance(unit.node, FUNCTIONS) else "this loop"
    return (
        f"`{step.key}` is stepped but {where} never calls `{step.key}.zero_grad()`: "
        f"each `backward()` adds to the previous gradients, so every step applies their running sum."
    )


def _partial_message(step: Step, unit: Unit, cleared: List[str], left: List[str]) -> str:
    where = f"`{unit.node.name}()`" if isinstance(unit.node, FUNCTIONS) else "this loop"
    done = ", ".join(f"`{m}.zero_grad()`" for m in sorted(cleared))
    rest = ", ".join(f"`{o}`" for o in left)
    return (
        f"`{step.key}` also steps the parameters of {rest}, but {where} only calls {done}: their "
        f"gradients add up over the iterations, so every step applies their running sum. "
        f"Call `{step.key}.zero_grad()` instead."
    )


def _sometimes_message(ctx: LintContext, step: Step, around: ast.If) -> str:
    return (
        f"`{step.key}` is stepped on every pass, but its gradients are cleared only when "
        f"`{ctx.text(around.test)}` (line {around.lineno}): on the other passes each `backward()` adds to the "
        f"previous gradients. Call `{step.key}.zero_grad()` before each backward."
    )


def _closure_message(step: Step, unit: Unit) -> str:
    name = getattr(unit.node, "name", "closure")
    return (
        f"`{step.key}` is stepped with `{name}()`, which never calls `{step.key}.zero_grad()`: the "
        f"optimizer runs the closure once or more per step (LBFGS), and each `backward()` adds to "
        f"the previous gradients. Call `{step.key}.zero_grad()` first thing in `{name}()`."
    )


def _fix(ctx: LintContext, step: Step) -> Optional[Fix]:
    if not _has_zero_grad(ctx, step.optimizer):
        return None  # a fix that raises AttributeError is worse than none
    stmt = ctx.statement_of(step.call)
    if not (isinstance(stmt, ast.Expr) and stmt.value is step.call):
        return None
    code = f"{step.key}.zero_grad()"
    return insert_line_after(ctx.source, stmt, code, f"Insert `{code}` after the step")
