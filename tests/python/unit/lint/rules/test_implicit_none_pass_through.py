"""TD012 and two shapes whose None is not a forgotten path: a ``main()`` that returns ``-1``
(a status code, spelled as a unary minus on a constant) on an error and nothing on success,
and a variadic coalesce (``first_set(*values)``: the first value that is not None) whose None
comes from its caller. Their neighbours that may hand back a tensor or None are still reported."""

from __future__ import annotations

from support.lint import hits


def td012(text: str):
    return hits(text, "TD012")


def test_a_negative_status_code_is_no_tensor():
    assert (
        td012("""
import sys

import torch


def main(argv):
    if not argv:
        print("nothing to do")
        return -1
    torch.manual_seed(int(argv[0]))
    print(torch.rand(2))


if __name__ == "__main__":
    main(sys.argv[1:])
""")
        == []
    )


def test_a_negated_tensor_is_still_a_tensor():
    assert td012("""
import torch


def flipped(x):
    if x.dim() == 2:
        return -x
""") == [("TD012", 4)]


def test_a_variadic_coalesce_passes_its_callers_none_on():
    assert (
        td012("""
import torch


def first_set(*values):
    for value in values:
        if value is not None:
            return value


class Sampler:
    def __init__(self, draws=4):
        self.draws = draws

    def sample(self, batch, draws=None):
        draws = first_set(draws, self.draws)
        return torch.rand(batch * draws)
""")
        == []
    )


def test_a_search_over_a_named_list_is_still_reported_when_a_caller_multiplies():
    assert td012("""
import torch


def first_large(values):
    for value in values:
        if value.abs().max() > 1:
            return value


def scaled(values):
    return first_large(values) * 2
""") == [("TD012", 4)]
