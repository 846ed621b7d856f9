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
