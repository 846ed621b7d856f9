"""Loss-health rules (seed 002's check_loss_health, made quiet on healthy noise)."""

from __future__ import annotations

import math
import random

from hypothesis import given, settings, strategies as st

from torchdoctor.runtime.anomaly.loss_health import SPIKE_MIN_HISTORY, LossHealth


def feed(values, factor=10.0):
    health = LossHealth(factor)
    return [[f["rule"] for f in health.observe(v)] for v in values]


def test_nan_and_inf_are_reported_every_time_and_kept_out_of_the_history():
    health = LossHealth()
    assert [f["rule"] for f in health.observe(float("nan"))] == ["nan"]
    assert [f["rule"] for f in health.observe(float("inf"))] == ["nan"]
    assert health.history == []


def test_spike_needs_history_and_a_factor_over_the_running_median():
    assert feed([1.0] * (SPIKE_MIN_HISTORY - 1) + [100.0]) == [[]] * SPIKE_MIN_HISTORY
    rules = feed([1.0] * SPIKE_MIN_HISTORY + [9.9, 10.5])
    assert rules[-2] == [] and rules[-1] == ["spike"]
    health = LossHealth(spike_factor=3)
    for v in [2.0] * 6:
        health.observe(v)
    finding = health.observe(7.0)[0]
    assert finding["rule"] == "spike" and finding["median"] == 2.0 and finding["ratio"] == 3.5


def test_no_spike_against_a_zero_or_negative_level():
    assert feed([0.0] * 6 + [5.0])[-1] == []
    assert feed([-3.0] * 6 + [5.0])[-1] == []


def test_not_decreasing_after_twenty_steps_once():
    rules = feed([0.693] * 30)
    fired = [i for i, r in enumerate(rules) if "notDecreasing" in r]
    assert fired == [19]


def test_decreasing_loss_is_healthy():
    assert all(r == [] for r in feed([2.0 * math.exp(-t / 10) + 0.1 for t in range(60)]))


def test_oscillating_big_swings_without_progress():
    rules = feed([1.0, 3.0] * 10)
    assert "oscillating" in sum(rules, [])
    assert feed([1.0, 3.0] * 10)[9] == ["oscillating"]  # as soon as ten losses are known


def test_small_noise_around_a_plateau_is_not_oscillation():
    rng = random.Random(0)
    rules = feed([1.0 + rng.uniform(-0.1, 0.1) for _ in range(15)])
    assert all("oscillating" not in r for r in rules)


@settings(max_examples=60)
@given(scale=st.floats(0.05, 50), floor=st.floats(0, 0.1), tau=st.floats(5, 20), noise=st.floats(0, 0.1),
       seed=st.integers(0, 10**6))
def test_healthy_noisy_curves_raise_nothing(scale, floor, tau, noise, seed):
    """Exponential decay to a floor, with multiplicative mini-batch noise up to +-10%."""
    rng = random.Random(seed)
    curve = [(scale * math.exp(-t / tau) + floor * scale) * (1 + rng.uniform(-noise, noise)) for t in range(40)]
    assert all(r == [] for r in feed(curve))
