"""The index keeps positions as ints (``line << 32 | column``) so that it sorts and bisects
faster: these pin that what it answers is what a walk sorted by ``(line, column)`` gives,
nested calls that start together, a line far longer than 65,536 columns, and nested defs
included. Also ``TrainingAnalysis.steps``, the cached ``any(stepped_optimizer(...))``.
"""

import ast

from support.lint import code
from torchdoctor.lint import torchapi
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.source import SourceText
from torchdoctor.lint.training import analysis

WIDE = "x" * 70_000  # columns past 16 bits: an int key that dropped them would misorder

SOURCE = code(
    f"""
    import torch

    for batch in loader:
        a = f(g(h(batch)))(batch); b = k(batch)
        {WIDE} = f(1); late = g(2)
        def helper():
            return inner(batch)
        lam = lambda v: twice(v)
        optimizer.zero_grad()
        optimizer.step()

    def train(model, loader, optimizer):
        for x in loader:
            loss = model(x).sum()
            loss.backward()
            optimizer.step()
        for x in loader:
            print(x)
    """
)


def _context() -> LintContext:
    return LintContext(ast.parse(SOURCE), SourceText(SOURCE))


def _sorted(nodes):
    return sorted(nodes, key=lambda n: (n.lineno, n.col_offset))


def _own_by_walk(ctx: LintContext, node: ast.AST, kinds):
    """``own_nodes`` by definition: the nodes of ``kinds`` under ``node`` (itself included)
    whose innermost def, lambda or class is ``node``'s own, in source order."""
    owner = node if isinstance(node, (ast.FunctionDef, ast.Lambda)) or node is ctx.tree else ctx.owner_of(node)
    return _sorted(n for n in ast.walk(node) if isinstance(n, kinds) and ctx.owner_of(n) is owner)


def test_calls_are_in_source_order():
    ctx = _context()
    assert ctx.calls == _sorted(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Call))


def test_own_nodes_are_what_a_sorted_walk_gives():
    ctx = _context()
    kinds = (ast.Call, ast.Assign)
    for node in [ctx.tree, *ctx.loops, *ctx.functions, *ast.walk(ctx.tree)]:
        if node is ctx.tree or isinstance(node, (ast.stmt, ast.Lambda)):
            for group in [(ast.Call,), kinds]:
                found = ctx.own_nodes(node, *group)
                assert found == _own_by_walk(ctx, node, group), ast.dump(node)[:80]
                assert set(found) == set(_own_by_walk(ctx, node, group))


def test_all_nodes_are_every_node_of_the_kind_in_source_order():
    ctx = _context()
    assert ctx.all_nodes(ast.Assign) == _sorted(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Assign))


def test_a_wide_line_orders_by_column():
    ctx = _context()
    line = [c for c in ctx.calls if c.lineno == 5]
    assert [c.func.id for c in line] == ["f", "g"]  # type: ignore[attr-defined]
    assert line[1].col_offset > 70_000


def test_steps_is_whether_some_own_call_steps_an_optimizer():
    ctx = _context()
    training = analysis(ctx)
    for node in [ctx.tree, *ctx.loops, *ctx.functions]:
        expected = any(torchapi.stepped_optimizer(ctx, c) is not None for c in training.own_calls(node))
        assert training.steps(node) is expected
    assert [training.steps(loop) for loop in ctx.loops] == [True, True, False]


CLEARS = code(
    """
    import torch

    for x in loader:
        opt.zero_grad(set_to_none=True)
        net.zero_grad()
        w.grad.zero_()
        w.grad.data.fill_(0)
        x.fill_(0)
        model.clear_grads()
        zero_grad_all(opt)
        getattr(opt, "zero_grad")()
        w.grad = None
        loss.backward()
        opt.step()
    """
)


def test_clearing_calls_hold_every_call_zero_grad_target_accepts():
    ctx = LintContext(ast.parse(CLEARS), SourceText(CLEARS))
    training = analysis(ctx)
    accepted = {c for c in ctx.calls if torchapi.zero_grad_target(ctx, c)[0]}
    assert len(accepted) == 6
    assert accepted <= training.clearing_calls()
    loop = ctx.loops[0]
    assert training.cleared(loop).optimizers == {"opt"}
    assert training.cleared(loop).everything
    assert training.clears(loop) == (True, {"opt"})
