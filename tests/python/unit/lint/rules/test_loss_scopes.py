"""TD007's per-scope indexes (loss_scopes.py) give the answers of the plain scans they replace:
the derived names of an accumulator (three passes over the scope's assignments in source
order), the names a text uses as tensors, and the bindings found by bisection."""

from __future__ import annotations

import ast
import random
import re
from typing import Optional, Set

import pytest

from torchdoctor.lint.context import LintContext, walk
from torchdoctor.lint.rules.loss_scopes import derived_names, live_parts, used_as_tensor_in
from torchdoctor.lint.source import SourceText

NAMES = ["a", "b", "c", "d", "e", "f"]
KINDS = (ast.Assign, ast.AnnAssign, ast.AugAssign)


def context(text: str) -> LintContext:
    return LintContext(ast.parse(text), SourceText(text), "script.py")


def passes(ctx: LintContext, start: Set[str], attr: Optional[str], live: bool) -> Set[str]:
    """The scan ``derived_names`` replaces: up to three passes in source order."""
    derived = set(start)
    assigns = [n for n in ctx.own_nodes(ctx.tree, *KINDS) if getattr(n, "value", None) is not None]
    for _ in range(3):
        grown = False
        for node in assigns:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name) and t.id not in derived]
            parts = live_parts(node.value) if live else walk(node.value)
            mentions = any(isinstance(s, ast.Name) and s.id in derived for s in parts) or any(
                attr is not None and isinstance(s, ast.Attribute) and ctx.text(s) == attr for s in parts
            )
            if names and mentions:
                derived.update(names)
                grown = True
        if not grown:
            break
    return derived


def random_script(rng: random.Random, lines: int) -> str:
    out = []
    for _ in range(lines):
        target = rng.choice(NAMES + ["x, " + rng.choice(NAMES)])
        reads = [rng.choice(NAMES + ["self.t"]) for _ in range(rng.randint(0, 2))]
        value = " + ".join(r if rng.random() < 0.7 else f"{r}.item()" for r in reads) or "0"
        out.append(
            f"{target} {rng.choice(['=', '+=', '='])} {value}" if "," not in target else f"{target} = 1, {value}"
        )
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("seed", range(40))
def test_derived_names_are_those_of_three_passes_in_source_order(seed):
    rng = random.Random(seed)
    ctx = context(random_script(rng, rng.randint(1, 30)))
    for start, attr in [({"a"}, None), ({"b", "c"}, None), (set(), "self.t")]:
        for live in (False, True):
            assert derived_names(ctx, start, attr, ctx.tree, KINDS, live) == passes(ctx, start, attr, live)


def test_names_used_as_tensors_are_those_the_searches_find():
    text = "x.item()\nlosses.append(l)\ntorch.stack( losses2 )\ny2.z\nab.append\nq .w\n_u.v\n"
    ctx = context(text)
    for name in ["x", "losses", "losses2", "y2", "z", "ab", "q", "_u", "stack", "torch", "losses2x"]:
        method = re.search(rf"\b{re.escape(name)}\.(?!append\b)\w+", text)
        stacked = re.search(rf"\.(stack|cat|sum|mean)\(\s*{re.escape(name)}\b", text)
        assert used_as_tensor_in(ctx, ctx.tree, name) == bool(method or stacked), name


def test_bindings_in_range_and_latest_match_a_scan():
    ctx = context("t = 0\nt = 1\nt += 2\nu = 3\nt = t = 4\nt = 5\n")
    bindings = ctx.bindings.all_bindings(ctx.tree, "t")
    for at in [(1, 0), (2, 5), (3, 6), (5, 9), (9, 0)]:
        assert ctx.bindings.in_range(ctx.tree, "t", None, at) == [b for b in bindings if b.pos <= at]
        assert ctx.bindings.in_range(ctx.tree, "t", (1, 0), at) == [b for b in bindings if (1, 0) < b.pos <= at]
        for count in (1, 2, 6):
            expected = sorted([b for b in bindings if b.pos <= at], key=lambda b: b.pos, reverse=True)[:count]
            assert [id(b) for b in ctx.bindings.latest(ctx.tree, "t", at, count)] == [id(b) for b in expected]
