"""Each seed-002 rule on its own: fires past its threshold, names the layer, says what to do."""

from __future__ import annotations

import math

import pytest

from torchdoctor.diagnosis import rules as R
from torchdoctor.diagnosis.words import mag, nice, pct

TH = R.Thresholds()


def grad(name="fc.weight", **kw) -> R.GradRow:
    kw.setdefault("module", name.rpartition(".")[0])
    kw.setdefault("module_type", "Linear")
    return R.GradRow(name=name, **kw)


def act(path="act", type_name="ReLU", **kw) -> R.ActRow:
    return R.ActRow(path=path, type=type_name, **kw)


CLIP = R.ClipAdvice(2.0, 40.0, 1.8)


def test_defaults_are_seed_002s():
    assert TH == R.Thresholds(0.5, 1e-7, 100.0, 100.0, 1e-6, 10.0)
    assert TH.to_json() == {
        "deadFraction": 0.5,
        "vanishingGradient": 1e-7,
        "explodingGradient": 100.0,
        "gradientRatio": 100.0,
        "collapsedStd": 1e-6,
        "explodingActivation": 10.0,
    }


def test_thresholds_from_settings_keep_defaults_for_bad_values():
    values = {
        "diagnosis.deadFraction": 0.8,
        "diagnosis.explodingGradient": "high",
        "diagnosis.gradientRatio": 1,
        "diagnosis.collapsedStd": -1,
        "diagnosis.vanishingGradient": True,
        "diagnosis.explodingActivation": 50,
    }
    th, problems = R.Thresholds.from_settings(lambda key, default: values.get(key, default))
    assert th.dead_fraction == 0.8 and th.exploding_activation == 50.0
    assert th.exploding_gradient == 100.0 and th.gradient_ratio == 100.0 and th.collapsed_std == 1e-6
    assert th.vanishing_gradient == 1e-7
    assert len(problems) == 4 and all(p.startswith("torchDoctor.diagnosis.") for p in problems)
    assert R.Thresholds.from_settings(lambda key, default: default) == (TH, [])
    assert R.Thresholds.from_settings(lambda k, d: 1.5 if k == "diagnosis.deadFraction" else d)[0].dead_fraction == 0.5


@pytest.mark.parametrize("mean_abs, fires", [(1e-8, True), (0.0, True), (1e-7, False), (1e-3, False)])
def test_vanishing_gradient(mean_abs, fires):
    flag = R.grad_vanishing(grad("fc1.weight", mean_abs=mean_abs), TH)
    assert (flag is not None) == fires
    if fires:
        assert flag.rule == R.GRAD_VANISHING and flag.severity == R.WARNING and flag.module == "fc1"
        assert flag.sentence.startswith("`fc1.weight`") and "`fc1` (Linear)" in flag.sentence
        assert ("exactly 0" in flag.sentence) == (mean_abs == 0)
        assert "normalisation" in flag.suggestion or "detach" in flag.suggestion


def test_vanishing_points_at_a_dead_relu_after_or_before():
    after = R.grad_vanishing(grad("fc2.weight", mean_abs=0.0), TH, ("act2", "ReLU", "after"))
    assert "dead ReLU `act2` after it" in after.suggestion
    before = R.grad_vanishing(grad("out.weight", mean_abs=0.0), TH, ("act2", "ReLU", "before"))
    assert "input comes from the dead ReLU `act2`" in before.suggestion


def test_vanishing_skips_frozen_and_changed_parameters():
    assert R.grad_vanishing(grad(mean_abs=0.0, requires_grad=False), TH) is None
    assert R.grad_vanishing(grad(mean_abs=0.0, changed=True), TH) is None


@pytest.mark.parametrize("mean_abs, fires", [(150.0, True), (100.0, False), (1.0, False)])
def test_exploding_gradient_suggests_clipping_with_a_max_norm(mean_abs, fires):
    flag = R.grad_exploding(grad("fc.weight", mean_abs=mean_abs), TH, CLIP)
    assert (flag is not None) == fires
    if fires:
        assert "mean |g| = 150, above 100" in flag.sentence
        assert "clip_grad_norm_(model.parameters(), max_norm=2)" in flag.suggestion
        assert "learning rate 10x" in flag.suggestion and "normalisation" in flag.suggestion


def test_nonfinite_gradient_says_check_the_data_first():
    flag = R.grad_nonfinite(grad("fc.weight", nan=3, inf=1), CLIP)
    assert flag.severity == R.ERROR and "3 NaN and 1 Inf" in flag.sentence
    assert flag.suggestion.startswith("Check the data for NaN/Inf first") and "max_norm=2" in flag.suggestion
    assert "some NaN" in R.grad_nonfinite(grad(nan=-1), CLIP).sentence
    assert R.grad_nonfinite(grad(), CLIP) is None


def test_missing_gradient_and_nonfinite_weights():
    flag = R.grad_missing(grad("head.weight", has_grad=False))
    assert flag.rule == R.GRAD_MISSING and "`head.weight` got no gradient" in flag.sentence
    assert R.grad_missing(grad(has_grad=False, requires_grad=False)) is None
    bad = R.weights_nonfinite(grad("fc.weight", weights_nonfinite=5), CLIP)
    assert bad.severity == R.ERROR and "5 NaN/Inf" in bad.sentence and "diverged" in bad.sentence


def test_gradient_ratio_both_ways():
    layers = [("conv1", "Conv2d", 1e-5), ("conv2", "Conv2d", 1e-4), ("fc", "Linear", 3e-3)]
    flag = R.grad_ratio(layers, TH, CLIP)
    assert flag.rule == R.GRAD_RATIO and "shrink 300x" in flag.sentence and flag.module == "conv1"
    assert "`fc` (Linear)" in flag.sentence and "`conv1` (Conv2d)" in flag.sentence
    assert "residual" in flag.suggestion
    grow = R.grad_ratio(list(reversed([(p, t, m) for p, t, m in layers])), TH, CLIP)
    assert "grow 300x" in grow.sentence and "max_norm=2" in grow.suggestion
    assert R.grad_ratio([("a", "Linear", 1e-3), ("b", "Linear", 5e-2)], TH, CLIP) is None  # 50x
    assert R.grad_ratio([("a", "Linear", 0.0), ("b", "Linear", 5e-2)], TH, CLIP) is None  # vanishing's business
    assert R.grad_ratio([("a", "Linear", 1e-3)], TH, CLIP) is None


def test_dead_units_count_units_not_zeros():
    healthy = act("act", zeros=0.62, dead_units=0.0, units=32, min=0.0, feeder=("fc1", "Linear"))
    assert R.dead_units(healthy, TH) is None
    dead = act("act2", zeros=1.0, dead_units=1.0, units=32, min=0.0, feeder=("fc2", "Linear"))
    flag = R.dead_units(dead, TH)
    assert flag.rule == R.DEAD_UNITS and flag.module == "act2"
    assert flag.sentence.startswith("`act2` (ReLU): 100% of its 32 units output exactly 0 for every sample")
    assert (
        "nn.LeakyReLU(0.01)" in flag.suggestion
        and "kaiming_normal_(fc2.weight, nonlinearity='relu')" in flag.suggestion
    )
    assert "lower the learning rate" in flag.suggestion
    assert R.dead_units(act("act", zeros=0.9, dead_units=0.5, min=0.0), TH) is None  # not above 50%
    # Without unit counts (a batch of one), the fraction of zero outputs stands in, as in the seed.
    assert R.dead_units(act("act", zeros=0.7, min=0.0), TH).sentence.startswith("`act` (ReLU): 70% of its outputs")
    assert R.dead_units(act("act", zeros=0.4, min=0.0), TH) is None
    assert R.dead_units(act("lin", "Linear", zeros=1.0, dead_units=1.0), TH) is None
    assert R.dead_units(act("leaky", "LeakyReLU", zeros=1.0, dead_units=1.0), TH) is None
    assert "(call 2)" in R.dead_units(act("act", zeros=1.0, dead_units=1.0, occurrence=2), TH).sentence


def test_collapsed_and_exploding_activations():
    flag = R.collapsed(act("bn", "BatchNorm1d", std=1e-8, mean=5.0, count=100), TH)
    assert flag.rule == R.ACT_COLLAPSED and "std = 1e-8" in flag.sentence and "(5)" in flag.sentence
    assert R.collapsed(act("bn", "BatchNorm1d", std=1e-5, count=100), TH) is None
    assert R.collapsed(act("bn", "BatchNorm1d", std=0.0, count=1), TH) is None
    big = R.exploding_activation(act("fc1", "Linear", mean=-45.2), TH)
    assert big.rule == R.ACT_EXPLODING and "-45.2" in big.sentence and "normalisation" in big.suggestion
    assert R.exploding_activation(act("fc1", "Linear", mean=9.9), TH) is None


def test_activation_nonfinite_suggestion_follows_where_it_came_from():
    row = act("fc1", "Linear", nonfinite=4, nan=3, inf=1)
    assert "check the data" in R.activation_nonfinite(row, True, False, CLIP).suggestion
    assert "own weights" in R.activation_nonfinite(row, False, True, CLIP).suggestion
    flag = R.activation_nonfinite(row, False, False, CLIP)
    assert flag.severity == R.ERROR and "`fc1` (Linear): 3 NaN and 1 Inf values" in flag.sentence
    assert "log-sum-exp" in flag.suggestion
    assert "holds 2 NaN" in R.input_nonfinite(2, 2, 0, "MLP").sentence
    assert R.input_nonfinite(0, 0, 0, "MLP") is None


def test_clip_advice_uses_the_healthy_norm():
    rows = [grad("a.weight", norm=1.5), grad("b.weight", norm=0.8), grad("c.weight", norm=4000.0)]
    advice = R.clip_advice(rows, ["c.weight"])
    assert advice.max_norm == 2.0 and math.isclose(advice.healthy, 1.7)
    assert math.isclose(advice.total, math.sqrt(1.5**2 + 0.8**2 + 4000.0**2))
    assert R.clip_advice([grad(norm=500.0)], ["fc.weight"]).max_norm == 1.0  # nothing healthy left
    assert R.clip_advice([grad(norm=3.0)], []).max_norm == 2.0  # nothing exploding: about the current norm
    assert "max_norm=2)" in advice.code()


def test_words():
    assert [nice(v) for v in (1.7, 0.03, 7.6, 140.0)] == [2.0, 0.02, 10.0, 100.0]
    assert mag(3.2e-8) == "3.2e-8" and mag(0.0) == "0" and mag(12.5) == "12.5" and mag(None) == "?"
    assert pct(1.0) == "100%" and pct(0.995) == "99.5%" and pct(0.5) == "50%"


def test_verdicts_sort_most_severe_first():
    flags = [R.Flag("a", R.INFO, "", ""), R.Flag("b", R.ERROR, "", ""), R.Flag("c", R.WARNING, "", "")]
    assert [f.rule for f in R.by_severity(flags)] == ["b", "c", "a"]
