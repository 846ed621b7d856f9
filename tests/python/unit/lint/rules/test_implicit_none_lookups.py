"""TD012 and searches: a method or function named for a search (``find``, ``get``, ``lookup``,
``search``) that returns the match from inside its final loop gives None for "not found" by
falling off after the loop. With no caller in sight that is not reported; a caller that uses the
result as a tensor still is, and so is a function that returns inside a loop without saying it
searches."""

import pytest

from support.lint import code, findings, hits

TEMPLATE = """
    import torch
    from torch import nn
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        def {name}(self, wanted):
            for label, sub in self.body.named_modules():
                if label == wanted:
                    return sub.weight * 1.0
"""


@pytest.mark.parametrize("name", ["find", "find_layer", "get_submodule_weight", "lookup", "_search_by_name"])
def test_a_search_that_falls_off_after_its_loop_is_quiet(name):
    assert hits(code(TEMPLATE.format(name=name)), "TD012") == []


@pytest.mark.parametrize("name", ["scaled", "forward", "output_of"])
def test_the_same_loop_under_a_name_that_is_no_search_is_reported(name):
    assert hits(code(TEMPLATE.format(name=name)), "TD012") == [("TD012", 7)]


def test_a_search_whose_result_a_caller_uses_as_a_tensor_is_still_a_warning():
    caller = "\n        def forward(self, x):\n            return x @ self.find('0')\n"
    (finding,) = findings(code(TEMPLATE.format(name="find") + caller), "TD012")
    assert (finding.line, finding.severity) == (7, "warning")


def test_a_search_that_returns_before_its_loop_and_falls_off_after_an_if_is_reported():
    text = code("""
        import torch
        def get_scale(x, mode):
            for _ in range(3):
                x = x * 2
            if mode == "double":
                return x
    """)
    assert hits(text, "TD012") == [("TD012", 2)]
