"""Name resolution: import aliases, assignments, ``self`` attributes, activations."""

import ast

import pytest

from support.lint import code
from torchdoctor.lint.activations import ActivationAnalysis
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.source import SourceText


def context(text):
    text = code(text)
    return LintContext(ast.parse(text), SourceText(text))


def expr_at(ctx, source_text):
    for node in ast.walk(ctx.tree):
        if isinstance(node, ast.expr) and ctx.text(node) == source_text:
            return node
    raise AssertionError(source_text)


@pytest.mark.parametrize(
    "imports, expr, expected",
    [
        ("import torch.nn.functional as F", "F.softmax", "torch.nn.functional.softmax"),
        ("from torch import nn", "nn.CrossEntropyLoss", "torch.nn.CrossEntropyLoss"),
        ("import torch.nn", "torch.nn.MSELoss", "torch.nn.MSELoss"),
        ("from torch.nn import CrossEntropyLoss as CE", "CE", "torch.nn.CrossEntropyLoss"),
        ("from torch.nn.modules.loss import NLLLoss", "NLLLoss", "torch.nn.NLLLoss"),
        ("from torch.cuda.amp import GradScaler", "GradScaler", "torch.amp.GradScaler"),
        ("import torch as T", "T.optim.Adam", "torch.optim.Adam"),
        ("from . import nn", "nn.Linear", ".nn.Linear"),  # the project's own nn module, never torch.nn
    ],
)
def test_qualified_names_through_aliases(imports, expr, expected):
    ctx = context(f"{imports}\nvalue = {expr}\n")
    assert ctx.qualname(expr_at(ctx, expr)) == expected


def test_class_of_follows_assignments_and_module_methods():
    ctx = context("""
        import torch.nn as nn
        crit = nn.CrossEntropyLoss()
        alias = crit
        model = nn.Linear(2, 2).to("cuda").float()
        use = (alias, model)
    """)
    assert ctx.class_of(expr_at(ctx, "alias")) == "torch.nn.CrossEntropyLoss"
    assert ctx.class_of(expr_at(ctx, "model")) == "torch.nn.Linear"


def test_latest_assignment_before_the_use_wins():
    ctx = context("""
        import torch.nn as nn
        crit = nn.MSELoss()
        first = crit
        crit = nn.L1Loss()
        second = crit
    """)
    uses = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Name) and n.id == "crit" and isinstance(n.ctx, ast.Load)]
    assert sorted(ctx.class_of(u) for u in uses) == ["torch.nn.L1Loss", "torch.nn.MSELoss"]


def test_self_attributes_resolve_to_init_assignments():
    ctx = context("""
        import torch.nn as nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.head = nn.Linear(3, 3)
            def forward(self, x):
                return self.head(x)
    """)
    assert ctx.class_of(expr_at(ctx, "self.head")) == "torch.nn.Linear"


def test_parameters_and_unpacked_names_are_unknown():
    ctx = context("""
        def f(crit, pair):
            a, b = pair
            return crit(a), b
    """)
    assert ctx.value_of(expr_at(ctx, "crit(a)").func) is None
    assert ctx.value_of(expr_at(ctx, "b")) is None


def test_self_reassignment_does_not_loop():
    ctx = context("""
        import torch
        x = torch.randn(2)
        x = x.to("cuda")
        y = x
    """)
    assert ctx.text(ctx.value_of(expr_at(ctx, "y"))) == 'x.to("cuda")'


def test_activation_through_model_forward_and_shape_ops():
    ctx = context("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)
            def forward(self, x):
                h = self.fc(x)
                return F.log_softmax(h, dim=1)
        net = Net()
        out = net(inp).view(-1, 3)
        raw = net.fc(inp)
        probs = torch.log(F.softmax(raw, 1))
    """)
    acts = ActivationAnalysis(ctx)
    assert acts.output_of(expr_at(ctx, "out")).kind == "log_softmax"
    assert acts.output_of(expr_at(ctx, "raw")).kind == "logits"
    assert acts.output_of(expr_at(ctx, "probs")).kind == "log_softmax"


def test_calls_named_any_lists_what_a_filtered_loop_over_every_call_lists():
    # Calls sharing a start position (``x.to(d).cuda()``: both start at ``x``) keep the order
    # of ``ctx.calls``; a name asked twice, or a callee that is neither a name nor an attribute,
    # changes nothing.
    ctx = context(
        """
        import torch
        x = torch.zeros(2).to("cuda").cuda()
        y = cuda(to(x))
        def f(to):
            return to(x), x.cuda(), (lambda: x)()
        z = [x.to(d) for d in "ab"]
        """
    )
    names = ("cuda", "to", "cuda")
    expected = [c for c in ctx.calls if getattr(c.func, "attr", getattr(c.func, "id", None)) in names]
    assert len(expected) == 7
    assert ctx.calls_named_any(names) == expected
    assert ctx.calls_named_any(()) == []
    assert ctx.calls_named_any(["nothing"]) == []
