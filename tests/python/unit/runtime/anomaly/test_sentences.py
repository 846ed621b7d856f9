"""The sentence for every kind, and the text report: one line, plain text, the numbers that matter."""

from __future__ import annotations

import pytest

from torchdoctor.runtime.anomaly.render import render_report
from torchdoctor.runtime.anomaly.sentences import sentence

MODULE = {
    "step": 412,
    "module": "encoder.layers.3.attn.proj",
    "module_type": "Linear",
    "qualname": "model.encoder.layers.3.attn.proj",
}


@pytest.mark.parametrize(
    "report, expected",
    [
        (
            dict(
                MODULE,
                kind="nonfinite_output",
                counts={"nan": 12, "posinf": 0, "neginf": 0, "numel": 4096},
                inputs_counts={"nan": 0, "posinf": 0, "neginf": 0, "numel": 512},
                inputs_bad=False,
            ),
            "NaN in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: 12 of 4096 values; its inputs were finite",
        ),
        (
            dict(
                MODULE,
                kind="nonfinite_output",
                counts={"nan": 2, "posinf": 3, "neginf": 0, "numel": 10},
                inputs_counts={"nan": 0, "posinf": 1, "neginf": 0, "numel": 10},
                inputs_bad=True,
                first_bad_in_step=False,
            ),
            "NaN and Inf in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: 2 NaN and 3 Inf of 10 values; "
            "its inputs already had Inf (1 of 10 values)",
        ),
        (
            dict(MODULE, kind="nonfinite_output", counts=None, inputs_counts=None, min=float("nan"), max=1.0),
            "NaN in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412; its inputs were not kept (checked at the end of the step)",
        ),
        (
            dict(MODULE, kind="exploding_output", max_abs=3.2e5, threshold=1e4, inputs_max_abs=2e4),
            "Exploding values in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: max |x| = 320000, "
            "above the threshold 10000; its inputs were already above it (max |x| = 20000)",
        ),
        (
            dict(kind="loss_oscillating", step=14, window=10, swing=1.2, level=0.9, net=0.1),
            "Loss oscillating at step 14: over the last 10 steps it swings by 1.2 per step around 0.9 with little net "
            "progress (0.1); a learning rate too high is the usual cause",
        ),
        (
            dict(
                kind="loss_not_decreasing",
                step=19,
                window=10,
                first_mean=0.6935,
                last_mean=0.6931,
                zero_grad_params=["model.fc1.weight", "model.fc1.bias"],
                params_with_grad=6,
            ),
            "Loss not decreasing at step 19: the mean of the last 10 losses (0.693) is not below 99% of the mean of the "
            "first 10 (0.694); the gradients of 2 of 6 parameters are exactly 0 (e.g. `model.fc1.weight`)",
        ),
        (
            dict(
                kind="loss_not_decreasing",
                step=59,
                window=25,
                first_mean=0.7,
                last_mean=0.9,
                smoothed="median",
                loss_site="gan.py:41",
                loss_series=3,
            ),
            "Loss not decreasing at step 59 of the loss at `gan.py:41`: the median of the last 25 losses (0.9) is not "
            "below 99% of the median of the first 25 (0.7)",
        ),
        (
            dict(
                kind="loss_oscillating",
                step=49,
                window=50,
                swing=2.0,
                level=2.0,
                net=0.0,
                correlation=-1.0,
                loss_site="train.py:9",
                loss_series=1,
            ),
            "Loss oscillating at step 49: over the last 50 steps it swings by 2 per step around 2 with little net "
            "progress (0), up and down in turn (lag-1 autocorrelation -1); a learning rate too high is the usual cause",
        ),
        (
            dict(
                kind="scaler_skips",
                step=19,
                skipped=17,
                since=3,
                scale_before=65536.0,
                last_scale=1.0,
                scale_now=0.5,
                collapsed=True,
                min_scale=1.0,
                scaler="scaler",
            ),
            "The GradScaler `scaler` skipped 17 optimizer steps in a row (steps 3-19): the gradients held Inf/NaN every "
            "time, and its scale fell from 65536 to 0.5; they overflow even at a scale of 1 (<= 1), so this is no float16 "
            "overflow the scaler can back off from: look for a NaN/Inf made in the backward pass (a division by zero, "
            "sqrt or log at 0, a custom backward)",
        ),
        (
            dict(
                kind="scaler_skips",
                step=30,
                skipped=25,
                since=6,
                scale_before=2.0**40,
                last_scale=2.0**16,
                scale_now=32768.0,
                collapsed=False,
                scaler="amp",
            ),
            "The GradScaler `amp` skipped 25 optimizer steps in a row (steps 6-30): the gradients held Inf/NaN every "
            "time, and its scale fell from 1.1e12 to 32768; backing off is the scaler's job, but not 25 times in a row: "
            "the gradients are not finite in float16 at any scale it tried (keep that part of the model in float32, or "
            "use bfloat16)",
        ),
        (dict(kind="loss_nan", step=3, loss_text="+Inf", modules_clean=False, origin=None), "Inf loss at step 3"),
        (dict(kind="something_new", step=1), "something_new at step 1"),
    ],
)
def test_sentences(report, expected):
    assert sentence(report) == expected


def test_names_with_newlines_still_make_one_line():
    text = sentence(dict(MODULE, kind="exploding_output", module_type="Odd\nName", max_abs=2e4, threshold=1e4))
    assert "\n" not in text and "(Odd Name)" in text


def test_render_report_lists_the_facts_under_the_sentence():
    report = dict(
        MODULE,
        kind="nonfinite_output",
        phase="forward",
        sentence="NaN in ...",
        root="Encoder",
        input_summaries=["tensor[8, 4] f32 cpu 128 B"],
        output_summary="tensor[8, 4] f32 cpu 128 B ⚠ NaN×3",
        user_stack=["/w/train.py:22:forward", "/w/train.py:40:train"],
        exact=True,
    )
    assert render_report(report).splitlines() == [
        "[torchdoctor] anomaly: NaN in ...",
        "  kind:     nonfinite_output (forward, step 412)",
        "  module:   model.encoder.layers.3.attn.proj (Linear, in Encoder)",
        "  input:    tensor[8, 4] f32 cpu 128 B",
        "  output:   tensor[8, 4] f32 cpu 128 B ⚠ NaN×3",
        "  stack:    /w/train.py:22 in forward",
        "            /w/train.py:40 in train",
    ]
    assert render_report(report, with_sentence=False).splitlines()[0].startswith("  kind:")


GROWTH = dict(
    kind="exploding_grad",
    step=3,
    param="model.0.weight",
    module_qualname="model.0",
    module_type="Linear",
    max_abs=6e4,
    threshold=1e4,
    nearest_max_abs=10.0,
    farthest_max_abs=6e4,
    largest=["model.0.weight", 6e4],
)


def test_clipping_is_advised_only_when_the_script_does_not_clip():
    assert sentence(GROWTH).endswith("(clip them with torch.nn.utils.clip_grad_norm_)")
    clipped = sentence(dict(GROWTH, clipping=True, clipped_by="clip_grad_value_"))
    assert "clip them" not in clipped
    assert "above the threshold 10000, after the script's `clip_grad_value_`; gradients grow toward" in clipped


def test_an_unscaled_gradient_says_the_scale_was_divided_out():
    text = sentence(dict(GROWTH, grad_scale=65536.0))
    assert "max |g| = 60000, above the threshold 10000 (unscaled: the GradScaler's scale 65536 divided out)" in text


def test_a_dead_module_with_parameters_says_their_gradients_are_zero_too():
    report = dict(
        MODULE, kind="dead_output", step=4, dead_since=2, counts={"numel": 64}, inputs_min=-1.0, inputs_max=1.0
    )
    assert sentence(report).endswith("; nothing flows past it, forward or backward")
    assert sentence(dict(report, evidence="no_flow")).endswith(
        "were 0 for 3 steps in a row (steps 2-4) while its inputs were not (inputs in [-1, 1]); its parameters' "
        "gradients are 0 as well: nothing flows through it, forward or backward"
    )


def test_a_parameters_nan_is_blamed_on_an_update_only_after_one():
    report = dict(
        MODULE,
        kind="nonfinite_output",
        counts={"nan": 4, "posinf": 0, "neginf": 0, "numel": 64},
        inputs_counts={"nan": 0, "posinf": 0, "neginf": 0, "numel": 64},
        inputs_bad=False,
        params_bad=["weight"],
    )
    assert sentence(report).endswith("parameters already had NaN (`weight`): an earlier update put it there")
    first = sentence(dict(report, step=0))
    assert first.endswith("(`weight`) before any update: its initialisation or a loaded checkpoint put it there")
    shared = sentence(dict(report, step=0, params_shared=True))  # hogwild: the workers update them
    assert shared.endswith(
        "(`weight`): an update by a process sharing these weights, or the initialisation, put it there"
    )
