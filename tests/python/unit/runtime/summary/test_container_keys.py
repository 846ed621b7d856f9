"""A dict's keys name the field that holds a NaN; a user object's key is named by its type,
never by running its ``__repr__`` (which may be slow, print, or raise)."""

import math

import pytest
import torch

from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


class _Watched:
    calls = 0

    def __repr__(self):
        _Watched.calls += 1
        return "watched"

    def __hash__(self):
        return 7


def test_a_user_object_key_is_named_by_type_without_its_repr():
    _Watched.calls = 0
    d = {_Watched(): torch.tensor([math.nan]), "ok": torch.ones(2)}
    assert stats(d)["nan_in"] == ["<_Watched>"]
    assert "⚠ NaN in <_Watched>" in summarize(d)
    assert _Watched.calls == 0


def test_plain_keys_keep_their_repr():
    d = {("layer", 3): torch.tensor([math.nan]), 5: torch.tensor([math.inf]), "w": torch.ones(1)}
    info = stats(d)
    assert info["nan_in"] == ["('layer', 3)"] and info["inf_in"] == ["5"]


def test_a_tuple_key_holding_a_user_object_is_not_printed():
    _Watched.calls = 0
    assert stats({(1, _Watched()): torch.tensor([math.nan])})["nan_in"] == ["<tuple>"]
    assert _Watched.calls == 0


def test_an_int_key_past_the_digit_limit_still_gets_a_label():
    assert stats({10**5000: torch.tensor([math.nan])})["nan_in"] == ["<int>"]
