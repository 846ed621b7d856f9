"""TD012 on the methods of ``nn.Module`` subclasses, and on recursive helpers.

A module's ``forward`` is reached through ``module(x)``, which no call site names, so a forward
that falls off its end had no caller in sight and was never reported (913 of the 1,309 bugs the
TD012 bench missed, bench/lint_mutants.py --implicit-none-only). Methods of other classes without
a caller in sight stay quiet (dispatchers use None for "not handled").
"""

import pytest

from support.lint import code, findings, hits


@pytest.mark.parametrize(
    "base",
    ["nn.Module", "torch.nn.Module", "nn.Sequential"],
)
def test_a_forward_that_falls_off_is_reported_as_information(base):
    text = code(f"""
        import torch
        from torch import nn
        class Gate({base}):
            def __init__(self):
                super().__init__()
                self.proj = nn.Linear(4, 4)
            def forward(self, x, mask=None):
                if mask is not None:
                    return self.proj(x) * mask
    """)
    (finding,) = findings(text, "TD012")
    assert (finding.line, finding.severity) == (7, "information")
    assert "`forward()`" in finding.message and "`module(x)`" in finding.message


def test_a_helper_method_of_a_module_that_falls_off_in_a_try_is_reported():
    text = code("""
        import torch
        from torch import nn
        class Head(nn.Module):
            def pool(self, feats):
                try:
                    return torch.stack(feats).mean(0)
                except RuntimeError as err:
                    print(f"cannot pool: {err}")
    """)
    (finding,) = findings(text, "TD012")
    assert (finding.line, finding.severity) == (4, "information")


def test_module_methods_that_end_every_path_are_quiet():
    text = code("""
        import torch
        from torch import nn
        class Router(nn.Module):
            def forward(self, x, route):
                if route == "a":
                    return torch.relu(x)
                elif route == "b":
                    return torch.tanh(x)
                raise ValueError(route)
            def scores(self, x):
                for row in x:
                    if row.sum() > 0:
                        return row
                return x[0]
            def extra_repr(self):
                if self.training:
                    return "training"
    """)
    assert hits(text, "TD012") == []


def test_a_plain_class_without_caller_stays_quiet():
    text = code("""
        import torch
        class Registry:
            def lookup(self, key, x):
                if key == "relu":
                    return torch.relu(x)
    """)
    assert hits(text, "TD012") == []


def test_a_function_whose_only_value_is_its_own_recursive_call_returns_none_everywhere():
    # A validator that recurses into nested lists: every path ends in None.
    text = code("""
        import torch
        def check_sizes(sizes):
            if isinstance(sizes, (list, tuple)):
                for s in sizes:
                    return check_sizes(s)
            assert sizes > 0
    """)
    assert hits(text, "TD012") == []


def test_super_forward_is_not_a_recursive_call():
    text = code("""
        import torch
        from torch import nn
        class Masked(nn.Linear):
            def forward(self, x):
                if x.dim() == 2:
                    return super().forward(x)
    """)
    (finding,) = findings(text, "TD012")
    assert finding.line == 4 and "`super().forward(x)`" in finding.message


GUARDED_FORWARD = """
    import torch
    from torch import nn
    class ChannelNorm(nn.Module):
        def __init__(self, layout="nhwc"):
            super().__init__()
            self.layout = layout
            if layout not in ("nhwc", "nchw"):
                raise ValueError(f"unknown layout {layout}")
        def forward(self, x):
            if self.layout == "nhwc":
                return torch.nn.functional.layer_norm(x, x.shape[-1:])
            elif self.layout == "nchw":
                return (x - x.mean(1, keepdim=True)) / x.std(1, keepdim=True)
"""


def test_a_dispatch_made_exhaustive_by_a_guard_in_init_is_quiet():
    assert hits(GUARDED_FORWARD, "TD012") == []


def test_a_dispatch_made_exhaustive_by_an_assert_is_quiet():
    text = code("""
        import torch
        def moment(power, t):
            assert power in (1, 2), "power must be 1 or 2"
            if power == 1:
                return t.mean()
            elif power == 2:
                return (t * t).mean()
        print(moment(2, torch.ones(3)).item())
    """)
    assert hits(text, "TD012") == []


@pytest.mark.parametrize(
    "change",
    [
        # the guard allows a value the chain has no branch for
        ('("nhwc", "nchw")', '("nhwc", "nchw", "nc")'),
        # the guard does not raise
        ('raise ValueError(f"unknown layout {layout}")', 'print("unknown layout")'),
        # the guard checks another value
        ("if layout not in", "if mode not in"),
    ],
)
def test_a_guard_that_does_not_cover_the_chain_leaves_the_finding(change):
    text = GUARDED_FORWARD.replace(*change)
    assert text != GUARDED_FORWARD
    (finding,) = findings(text, "TD012")
    assert finding.line == 9


def test_an_autograd_function_backward_may_give_none_for_no_gradient():
    # ``is_module_class`` counts any class with a ``forward``; an autograd Function's backward
    # returning None means "no gradient for this input", which autograd accepts.
    text = code("""
        import torch
        class ClampGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()
            @staticmethod
            def backward(ctx, grad):
                if ctx.needs_input_grad[0]:
                    return grad.clamp(-1, 1)
    """)
    assert hits(text, "TD012") == []
    as_module = text.replace("torch.autograd.Function", "torch.nn.Module")
    assert hits(as_module, "TD012") == [("TD012", 7)]
