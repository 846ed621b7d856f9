"""TD012 and functions torch calls back: hooks and ``Module.apply`` initialisers.

A forward hook that returns nothing keeps the module's output, a pre-hook keeps the input, a
gradient hook keeps the gradient, and ``Module.apply`` ignores what its function returns: a
None on some paths of such a function is the contract, not a bug. A function handed to none of
them, or whose result a caller uses as a tensor, is still reported.
"""

import pytest

from support.lint import code, hits

MODULE = """
    import functools
    import torch
    from torch import nn
    class Tap(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.inner = inner
            {register}
        def scale_out(self, module, inputs, output):
            if self.training:
                return output * 0.5
        def forward(self, x):
            return self.inner(x)
"""


@pytest.mark.parametrize(
    "register",
    [
        "inner.register_forward_hook(self.scale_out)",
        "self.inner.register_forward_pre_hook(self.scale_out)",
        "inner.register_full_backward_hook(hook=self.scale_out)",
        "inner.register_forward_hook(functools.partial(self.scale_out))",
        "inner.register_forward_hook(lambda m, i, o: self.scale_out(m, i, o))",
        "self.apply(self.scale_out)",
    ],
)
def test_a_module_method_handed_to_a_hook_registration_is_quiet(register):
    assert hits(code(MODULE.format(register=register)), "TD012") == []


def test_the_same_method_handed_to_nothing_is_still_reported():
    assert hits(code(MODULE.format(register="pass")), "TD012") == [("TD012", 9)]


def test_a_module_method_given_to_apply_from_outside_the_class_is_quiet():
    text = code("""
        import torch
        from torch import nn
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 4)
            def reset(self, m):
                if isinstance(m, nn.Linear):
                    return nn.init.kaiming_normal_(m.weight)
        net = Net()
        net.apply(net.reset)
    """)
    assert hits(text, "TD012") == []


def test_a_plain_gradient_hook_function_is_quiet_and_an_unregistered_one_reported():
    template = """
        import torch
        def clean(g):
            if torch.isnan(g).any():
                return torch.nan_to_num(g)
        w = torch.randn(3, requires_grad=True)
        {register}
    """
    assert hits(code(template.format(register="w.register_hook(clean)")), "TD012") == []
    assert hits(code(template.format(register="pass")), "TD012") == [("TD012", 2)]


def test_a_callback_whose_result_a_caller_uses_as_a_tensor_is_still_a_warning():
    text = code("""
        import torch
        def clean(g):
            if torch.isnan(g).any():
                return torch.nan_to_num(g)
        w = torch.randn(3, requires_grad=True)
        w.register_hook(clean)
        total = clean(w).sum()
    """)
    assert hits(text, "TD012") == [("TD012", 2)]


def test_a_dataframe_apply_with_more_arguments_does_not_make_a_callback():
    text = code("""
        import torch
        from torch import nn
        class Rows(nn.Module):
            def to_tensor(self, row):
                if row.ok:
                    return torch.tensor(row.values)
        import pandas as pd
        rows = Rows()
        out = pd.DataFrame().apply(rows.to_tensor, axis=1)
    """)
    assert hits(text, "TD012") == [("TD012", 4)]
