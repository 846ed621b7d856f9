"""TD012 on real code (diffusers): what falls off is not a tensor, or cannot fall off.

- a factory of layers (``get_down_block`` returning ``DownBlock2D(...)`` for each known name)
  or a function annotated with a scalar type (``-> torch.dtype``, ``-> bool``) gives no
  information notice; a caller using the result as a tensor still gets the warning; one layer
  returned (``conv3x3`` giving ``nn.Conv2d``) is still reported;
- a result kept as ``self.x`` that the class checks for None (``if self.mid_block is not
  None``) is checked;
- a search that returns the loop's own item (``for level in levels: if x >= level: return
  level``), or a ``find_*`` function ending with a ``while`` loop, means "not found" by None;
- a dispatch on a value whose parameter is typed ``Literal["a", "b"]`` with a branch for each
  cannot fall through (diffusers' schedulers, ``time_shift_type``)."""

import pytest

from support.lint import code, findings, hits

T = "import torch\nfrom torch import nn\n"


def test_a_factory_of_layers_is_quiet():
    assert (
        hits(
            T
            + code("""
        class Down(nn.Module):
            def forward(self, x):
                return x

        def get_block(kind, width):
            if kind == "down":
                return Down()
            elif kind == "linear":
                return nn.Linear(width, width)
    """),
            "TD012",
        )
        == []
    )


@pytest.mark.parametrize("note", ["torch.dtype", "bool", '"torch.device"', "int"])
def test_a_return_annotation_that_is_no_tensor_is_quiet(note):
    assert (
        hits(
            T
            + code(f"""
        def dtype_of(module) -> {note}:
            for p in module.parameters():
                if p.is_floating_point():
                    return p.dtype
            last = module.weight
            if last is not None:
                return last.dtype
    """),
            "TD012",
        )
        == []
    )


@pytest.mark.parametrize("note", ["torch.Tensor", "Tuple[torch.Tensor, int]", "Any", "nn.Module"])
def test_a_return_annotation_that_may_be_a_tensor_is_still_reported(note):
    text = (
        T
        + "from typing import Any, Tuple\n"
        + code(f"""
        def scaled(x, mode) -> {note}:
            if mode == "double":
                return x * 2
    """)
    )
    assert hits(text, "TD012") == [("TD012", 4)]


def test_a_caller_using_a_factorys_result_still_gets_the_warning():
    text = T + code("""
        def get_block(kind, width):
            if kind == "linear":
                return nn.Linear(width, width)

        y = get_block("conv", 4).weight
    """)
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and "line 7" in finding.message


def test_a_search_returning_its_loop_item_is_quiet():
    assert (
        hits(
            T
            + code("""
        LEVELS = {"piano": 0, "bass": 32, "strings": 40}

        def level_of(program):
            for level in sorted(LEVELS.values(), reverse=True):
                if program >= level:
                    return level
    """),
            "TD012",
        )
        == []
    )


def test_a_find_function_ending_with_a_while_loop_is_quiet():
    assert (
        hits(
            T
            + code("""
        def find_largest_factor(number, max_factor):
            factor = max_factor
            if factor >= number:
                return number
            while factor != 0:
                if number % factor == 0:
                    return factor
                factor -= 1
    """),
            "TD012",
        )
        == []
    )


def test_a_loop_returning_something_else_than_its_item_is_reported():
    assert hits(
        T
        + code("""
        def first_scaled(xs):
            for x in xs:
                if x.sum() > 0:
                    return x * 2
    """),
        "TD012",
    ) == [("TD012", 3)]


SCHEDULER = (
    T
    + "from typing import Literal\n"
    + code("""
    class Scheduler:
        def __init__(self, time_shift_type: Literal[{allowed}] = "exponential"):
            self.time_shift_type = time_shift_type

        def time_shift(self, t):
            if self.time_shift_type == "exponential":
                return torch.exp(t)
            elif self.time_shift_type == "linear":
                return t * 2

        def timesteps(self, t):
            return self.time_shift(t) * 1000
""")
)


def test_a_dispatch_on_a_literal_typed_value_with_every_branch_is_quiet():
    assert hits(SCHEDULER.format(allowed='"exponential", "linear"'), "TD012") == []


def test_a_literal_allowing_a_value_without_a_branch_is_still_reported():
    (finding,) = findings(SCHEDULER.format(allowed='"exponential", "linear", "cubic"'), "TD012")
    assert finding.severity == "warning"


def test_a_single_layer_returned_is_still_reported():
    assert hits(
        T
        + code("""
        def conv3x3(cin, cout, stride=1):
            if stride in (1, 2):
                return nn.Conv2d(cin, cout, 3, stride, 1)
    """),
        "TD012",
    ) == [("TD012", 3)]


def test_a_result_kept_on_self_and_checked_for_none_is_quiet():
    text = T + code("""
        def get_mid_block(kind, width):
            if kind == "cross":
                return torch.nn.Linear(width, width).weight * 1.0

        class UNet(nn.Module):
            def __init__(self, kind):
                super().__init__()
                self.mid_block = get_mid_block(kind, 4)

            def forward(self, x):
                if self.mid_block is not None:
                    x = x @ self.mid_block
                return x
    """)
    assert hits(text, "TD012") == []
    unchecked = text.replace("if self.mid_block is not None:", "if True:")
    assert hits(unchecked, "TD012") == [("TD012", 3)]


def test_a_result_copied_elsewhere_and_then_used_as_a_tensor_is_a_warning():
    text = T + code("""
        class Finder:
            def _train_batch(self, x, mode):
                if mode == "sgd":
                    return (x * 2).mean()

            def run(self, x, mode):
                loss = self._train_batch(x, mode)
                self.best_loss = loss
                return 0.9 * loss
    """)
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and "`0.9 * loss` (line 11)" in finding.message
