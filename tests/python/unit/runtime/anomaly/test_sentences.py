"""The sentence for every kind, and the text report: one line, plain text, the numbers that matter."""

from __future__ import annotations

import pytest

from torchdoctor.runtime.anomaly.render import render_report
from torchdoctor.runtime.anomaly.sentences import sentence

MODULE = {"step": 412, "module": "encoder.layers.3.attn.proj", "module_type": "Linear",
          "qualname": "model.encoder.layers.3.attn.proj"}


@pytest.mark.parametrize("report, expected", [
    (dict(MODULE, kind="nonfinite_output", counts={"nan": 12, "posinf": 0, "neginf": 0, "numel": 4096},
          inputs_counts={"nan": 0, "posinf": 0, "neginf": 0, "numel": 512}, inputs_bad=False),
     "NaN in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: 12 of 4096 values; its inputs were finite"),
    (dict(MODULE, kind="nonfinite_output", counts={"nan": 2, "posinf": 3, "neginf": 0, "numel": 10},
          inputs_counts={"nan": 0, "posinf": 1, "neginf": 0, "numel": 10}, inputs_bad=True, first_bad_in_step=False),
     "NaN and Inf in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: 2 NaN and 3 Inf of 10 values; "
     "its inputs already had Inf (1 of 10 values)"),
    (dict(MODULE, kind="nonfinite_output", counts=None, inputs_counts=None, min=float("nan"), max=1.0),
     "NaN in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412; its inputs were not kept (checked at the end of the step)"),
    (dict(MODULE, kind="exploding_output", max_abs=3.2e5, threshold=1e4, inputs_max_abs=2e4),
     "Exploding values in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412: max |x| = 320000, "
     "above the threshold 10000; its inputs were already above it (max |x| = 20000)"),
    (dict(kind="loss_oscillating", step=14, window=10, swing=1.2, level=0.9, net=0.1),
     "Loss oscillating at step 14: over the last 10 steps it swings by 1.2 per step around 0.9 with little net "
     "progress (0.1); a learning rate too high is the usual cause"),
    (dict(kind="loss_not_decreasing", step=19, window=10, first_mean=0.6935, last_mean=0.6931,
          zero_grad_params=["model.fc1.weight", "model.fc1.bias"], params_with_grad=6),
     "Loss not decreasing at step 19: the mean of the last 10 losses (0.693) is not below 99% of the first 10's "
     "(0.694); the gradients of 2 of 6 parameters are exactly 0 (e.g. `model.fc1.weight`)"),
    (dict(kind="loss_nan", step=3, loss_text="+Inf", modules_clean=False, origin=None), "Inf loss at step 3"),
    (dict(kind="something_new", step=1), "something_new at step 1"),
])
def test_sentences(report, expected):
    assert sentence(report) == expected


def test_names_with_newlines_still_make_one_line():
    text = sentence(dict(MODULE, kind="exploding_output", module_type="Odd\nName", max_abs=2e4, threshold=1e4))
    assert "\n" not in text and "(Odd Name)" in text


def test_render_report_lists_the_facts_under_the_sentence():
    report = dict(MODULE, kind="nonfinite_output", phase="forward", sentence="NaN in ...", root="Encoder",
                  input_summaries=["tensor[8, 4] f32 cpu 128 B"], output_summary="tensor[8, 4] f32 cpu 128 B ⚠ NaN×3",
                  user_stack=["/w/train.py:22:forward", "/w/train.py:40:train"], exact=True)
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
