"""TD012 and the None checks a caller writes on a copy of the result or on a ``self``
attribute: a check of the copy (``prev = vec``, ``if prev is None: return``) guards the
original; a check of ``self.x`` in one method does not guard another method's unchecked use."""

from support.lint import findings

HELPER = """
import torch
import torch.nn as nn
def style_vector(meta):
    if "text" in meta:
        return torch.tanh(encoder(meta["text"]))
"""


def severities(text):
    return [f.severity for f in findings(text, "TD012")]


def test_a_check_of_a_local_copy_guards_the_original():
    assert (
        severities(
            HELPER
            + """
def embed(meta):
    vec = style_vector(meta)
    kept = vec
    if kept is None:
        return None
    return vec.unsqueeze(0)
"""
        )
        == []
    )


def test_a_check_of_a_self_copy_guards_the_original():
    assert (
        severities(
            HELPER
            + """
class Styler:
    def embed(self, meta):
        vec = style_vector(meta)
        self.last = vec
        if self.last is None:
            return None
        return vec.unsqueeze(0)
"""
        )
        == []
    )


def test_a_copy_checked_only_after_the_use_guards_nothing():
    assert severities(
        HELPER
        + """
def embed(meta):
    vec = style_vector(meta)
    kept = vec
    out = vec.unsqueeze(0)
    if kept is None:
        return None
    return out
"""
    ) == ["warning"]


def test_a_check_in_one_method_does_not_guard_another():
    (finding,) = findings(
        HELPER
        + """
class Styler(nn.Module):
    def __init__(self, meta):
        super().__init__()
        self.vec = style_vector(meta)

    def describe(self):
        return "styled" if self.vec is not None else "plain"

    def forward(self, x):
        return x + self.vec.sum()
""",
        "TD012",
    )
    assert finding.severity == "information"


def test_every_use_checked_stays_quiet():
    assert (
        severities(
            HELPER
            + """
class Styler(nn.Module):
    def __init__(self, meta):
        super().__init__()
        self.vec = style_vector(meta)

    def describe(self):
        return "styled" if self.vec is not None else "plain"

    def forward(self, x):
        if self.vec is not None:
            x = x + self.vec.sum()
        return x * (self.vec.mean() if self.vec is not None else 1)
"""
        )
        == []
    )
