"""Masks written on purpose (``masks.py``): the fills real programs use pass, and the bugs of the
same shapes are still reported (found on masked policies and pointer-network heads, 2026-12-07)."""

from __future__ import annotations

import math

import pytest
import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.masks import fill_like, masked_output

THRESHOLD = 1e4


def _passes(t: torch.Tensor, threshold: float = THRESHOLD) -> bool:
    values = t.detach()
    low = float("nan") if torch.isnan(values).any() else float(values.min())
    high = float("nan") if torch.isnan(values).any() else float(values.max())
    return masked_output(t, low, high, threshold)


def _logits_and_legal(rows: int = 4, actions: int = 6):
    torch.manual_seed(0)
    w = torch.randn(rows, actions, requires_grad=True)
    legal = torch.ones(rows, actions, dtype=torch.bool)
    legal[:, 1:3] = False
    return w * 1.0, legal  # a graph: MulBackward0 below the mask, as a Linear's output has


@pytest.mark.parametrize(
    "make",
    [
        lambda w, legal: w.masked_fill(~legal, -1e9),
        lambda w, legal: w.masked_fill(~legal, torch.finfo(w.dtype).min),
        lambda w, legal: torch.where(legal, w, torch.tensor(-1e9)),
        lambda w, legal: w.masked_fill(~legal, float("-inf")),
        lambda w, legal: w + (~legal).float() * -1e9,  # additive: exact, the ulp of 1e9 is 64
        lambda w, legal: w - (~legal).float() * 1e9,
        lambda w, legal: w * legal + (~legal).float() * -1e9,
    ],
    ids=["fill-1e9", "fill-finfo-min", "where-1e9", "fill-inf", "add-1e9", "sub-1e9", "blend-1e9"],
)
def test_the_fills_programs_write_pass(make):
    w, legal = _logits_and_legal()
    assert _passes(make(w, legal))


def test_under_no_grad_a_finite_fill_passes_and_inf_is_still_reported():
    w, legal = _logits_and_legal()
    with torch.no_grad():  # a rollout: no graph, so only the values speak
        assert _passes(w.masked_fill(~legal, -1e9))
        assert not _passes(w.masked_fill(~legal, float("-inf")))  # as a log of zeros would look
        assert not _passes(w * 3e4)  # a real explosion: its values differ
        assert not _passes(w.masked_fill(~legal, -123456.7))  # no one writes that as a fill


@pytest.mark.parametrize(
    "make",
    [
        lambda w, legal: w * 1e9,  # its own arithmetic made the values
        lambda w, legal: w + torch.full_like(w, float("-inf")).masked_fill(legal, 0.0),  # additive Inf
        lambda w, legal: w.masked_fill(~legal, -1e9).masked_fill(legal & (w > 1), -1e8),  # two fills
        lambda w, legal: (w.masked_fill(~legal, -1e9) * 1.0).masked_fill(legal & (w > 1), 0.0) * 2e4,
    ],
    ids=["scaled", "additive-inf", "two-values", "explosion-elsewhere"],
)
def test_what_no_mask_explains_is_reported(make):
    w, legal = _logits_and_legal()
    assert not _passes(make(w, legal))


def test_a_row_with_every_entry_masked_is_reported():
    w, legal = _logits_and_legal()
    legal[2] = False  # a state with no legal action: its softmax is NaN (-inf) or uniform (-1e9)
    assert not _passes(w.masked_fill(~legal, -1e9))
    assert not _passes(w.masked_fill(~legal, float("-inf")))


def test_a_fill_outside_the_masked_places_is_reported():
    w, legal = _logits_and_legal()
    overflowed = w.detach().clone()
    overflowed[0, 0] = -1e9  # the same value, but where no mask wrote it
    x = (overflowed + w - w.detach()).masked_fill(~legal, -1e9)
    assert not _passes(x)


@pytest.mark.parametrize(
    "value, dtype, expected",
    [
        (-1e9, torch.float32, True),
        (-1e4, torch.float16, True),
        (float("-inf"), torch.float32, True),
        (torch.finfo(torch.float32).min, torch.float32, True),
        (torch.finfo(torch.bfloat16).min, torch.bfloat16, True),
        (-65504.0, torch.float16, True),
        (3e38, torch.float32, True),
        (-123456.7, torch.float32, False),
        (-1.0000001e9, torch.float64, False),
        (0.0, torch.float32, False),
    ],
)
def test_fill_like_values(value, dtype, expected):
    stored = float(torch.tensor(value, dtype=dtype)) if math.isfinite(value) else value
    assert fill_like(stored, dtype, torch) is expected


class Pointer(nn.Module):
    """A pointer-network head: the next city among those not visited yet."""

    def __init__(self) -> None:
        super().__init__()
        self.score = nn.Linear(8, 1)

    def forward(self, cities, visited):
        return self.score(cities).squeeze(-1).masked_fill(visited, -1e9)


def test_a_pointer_head_trained_and_rolled_out_is_silent_and_a_dead_end_is_named():
    torch.manual_seed(0)
    head = Pointer()
    optimizer = torch.optim.SGD(head.parameters(), lr=0.1)
    cities = torch.randn(4, 5, 8)
    visited = torch.zeros(4, 5, dtype=torch.bool)
    visited[:, :2] = True
    with watching() as seen:
        for _ in range(3):
            with torch.no_grad():
                head(cities, visited)  # the rollout
            logp = torch.log_softmax(head(cities, visited), -1)
            loss = -logp[:, 3].mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        assert seen.reports == []
        visited[1] = True  # every city visited: no next city
        head(cities, visited)
    assert [r["kind"] for r in seen.reports] == ["exploding_output"]
    assert seen.reports[0]["qualname"] == "head"


class Policy(nn.Module):
    def __init__(self, fill: float) -> None:
        super().__init__()
        self.body, self.fill = nn.Linear(5, 4), fill

    def forward(self, obs, legal):
        return self.body(obs).masked_fill(~legal, self.fill)


@pytest.mark.parametrize("fill", [float("-inf"), -1e9])
def test_on_an_accelerator_a_masked_policy_is_silent_and_a_dead_end_is_reported(fill):
    # deferred=True: the device path (outputs judged after backward from extremes read once)
    torch.manual_seed(0)
    policy = Policy(fill)
    legal = torch.tensor([[True, False, True, False]] * 3)
    with watching(deferred=True) as seen:
        dist = torch.distributions.Categorical(logits=policy(torch.randn(3, 5), legal))
        (-dist.log_prob(torch.zeros(3, dtype=torch.long)).mean()).backward()
        assert seen.reports == []
        legal[2] = False  # a state with no legal action
        dist_logits = policy(torch.randn(3, 5), legal)
        (dist_logits.clamp(min=-1e3) * 0).sum().backward()
    assert [r["kind"] for r in seen.reports][:1] in (["nonfinite_output"], ["exploding_output"])
    assert seen.reports[0]["qualname"] == "policy"


def test_only_outputs_a_mask_may_have_written_are_kept_for_the_device_read():
    from torchdoctor.runtime.anomaly.masks import KEPT_VALUES, mask_candidate

    w, legal = _logits_and_legal()
    residual = w + w.sin()  # both operands have graphs: a residual sum, never kept
    assert mask_candidate(residual, residual._version, 0) is None
    masked = w + (~legal).float() * -1e9
    kept = mask_candidate(masked, masked._version, 0)
    assert kept is not None and kept[:2] == (masked, masked._version) and kept[2][0] == "additive"
    assert mask_candidate(masked, masked._version, KEPT_VALUES) is None  # past the step's bound
    with torch.no_grad():
        assert mask_candidate(w.masked_fill(~legal, -1e9), 0, 0) is None  # no node: not kept
