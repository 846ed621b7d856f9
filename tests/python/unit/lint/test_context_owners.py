"""The index's owner of every node, leaves included.

Leaves (``Name``, ``Constant``, ``pass``) are not stored in the owner map: ``owner_of`` reads
them through their parent. These pin that the answer is the one a full walk gives: the
innermost def, lambda or class strictly around a node (decorators, defaults and class bases
belong to the def or class they are written on, as the index has always said), and the module
at top level.
"""

import ast

from support.lint import code
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.source import SourceText

SOURCE = """
import torch

LIMIT = 3

@register(LIMIT)
def train(model, lr=LIMIT, *, scale=2.0):
    pass
    step = lambda x: x * scale
    for epoch in range(LIMIT):
        if epoch:
            break
        continue
    return model

class Net(Base, metaclass=Meta):
    size = 4

    def forward(self, x):
        return x
"""

_OWNERS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def _expected_owners(tree):
    """node -> its innermost def/lambda/class, by a plain recursive walk (the definition)."""
    found = {}

    def visit(node, owner):
        found[node] = owner
        inner = node if isinstance(node, _OWNERS) else owner
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, tree)
    return found


def test_every_node_has_the_owner_a_full_walk_gives():
    text = code(SOURCE)
    tree = ast.parse(text)
    ctx = LintContext(tree, SourceText(text))
    expected = _expected_owners(tree)
    leaves = [n for n in expected if isinstance(n, (ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue))]
    assert len(leaves) > 20  # the case covers many leaves, under every kind of owner
    wrong = [
        (type(n).__name__, getattr(n, "lineno", None), ctx.owner_of(n), owner)
        for n, owner in expected.items()
        if isinstance(n, (ast.expr, ast.stmt)) and ctx.owner_of(n) is not owner
    ]
    assert not wrong


def test_names_resolve_in_the_scope_their_owner_gives():
    text = code(SOURCE)
    ctx = LintContext(ast.parse(text), SourceText(text))
    names = {(n.id, n.lineno): n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name)}
    scale_in_lambda = next(n for (name, _), n in names.items() if name == "scale")
    lam = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.Lambda))
    train = next(n for n in ast.walk(ctx.tree) if isinstance(n, ast.FunctionDef) and n.name == "train")
    assert ctx.scope_chain(scale_in_lambda) == [lam, train, ctx.tree]
    assert ctx.enclosing_function(scale_in_lambda) is None  # through a lambda: no def
    bound = ctx.binding(scale_in_lambda)
    assert bound is not None and bound.kind == "param"
    # a default value is evaluated where the def is written, but the index files it under the def
    default = train.args.defaults[0]
    assert ctx.owner_of(default) is train and ctx.enclosing_function(default) is train
    stray = ast.Name(id="x", ctx=ast.Load())  # a node from no tree of this context
    assert ctx.owner_of(stray) is ctx.tree and ctx.enclosing_function(stray) is None
