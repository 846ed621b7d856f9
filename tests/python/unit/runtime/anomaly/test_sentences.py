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
    # without the watch's facts about the optimizer, the sentence says when, not who
    assert sentence(report).endswith("parameters already had NaN (`weight`) before this step's forward")
    first = sentence(dict(report, step=0))
    assert first.endswith("(`weight`) before any update: its initialisation or a loaded checkpoint put it there")
    shared = sentence(dict(report, step=0, params_shared=True))  # hogwild: the workers update them
    assert shared.endswith(
        "(`weight`): an update by a process sharing these weights, or the initialisation, put it there"
    )


NAN_WEIGHT = dict(
    MODULE,
    kind="nonfinite_output",
    backward_calls=412,
    counts={"nan": 4, "posinf": 0, "neginf": 0, "numel": 64},
    inputs_counts={"nan": 0, "posinf": 0, "neginf": 0, "numel": 64},
    inputs_bad=False,
    params_bad=["weight"],
)


def test_a_nan_written_into_a_weight_between_steps_is_not_blamed_on_an_update():
    # `with torch.no_grad(): w[0] = nan` between two micro-steps, no optimizer step in between
    text = sentence(dict(NAN_WEIGHT, params_stepped=False))
    assert "update put it there" not in text and "earlier update" not in text
    assert text.endswith(
        "(`weight`) before this step's forward, and no optimizer step ran since the last backward: code between "
        "the steps that writes the weights (an assignment under no_grad, a hand-written update, a loaded state) put it there"
    )


def test_an_optimizer_step_since_the_last_backward_is_named_as_a_possible_cause():
    text = sentence(dict(NAN_WEIGHT, params_stepped=True, params_stepped_by="opt"))
    assert text.endswith(
        "(`weight`) before this step's forward, and `opt.step()` ran since the last backward: that update, "
        "or code after it that writes the weights, put it there"
    )
    # an optimizer the script holds under no name of its own (wrapped in a scheduler object): its class
    wrapped = sentence(dict(NAN_WEIGHT, params_stepped=True, params_stepped_by="Adam", params_stepped_named=False))
    assert "and a step of their optimizer (`Adam`) ran since the last backward" in wrapped
    # the first backward has not run: nothing updated anything yet, whatever an optimizer did
    first = sentence(dict(NAN_WEIGHT, step=0, backward_calls=0, params_stepped=False))
    assert first.endswith("before any update: its initialisation or a loaded checkpoint put it there")


def test_a_buffer_holding_the_inf_is_named():
    # an Inf in a positional table (a buffer, not a parameter): "its inputs were finite" alone hid it
    report = dict(NAN_WEIGHT, counts={"nan": 0, "posinf": 16, "neginf": 0, "numel": 5120}, params_bad=[])
    assert sentence(report).endswith("its inputs were finite")
    text = sentence(dict(report, buffers_bad=["pos_table"]))
    assert text.endswith(
        "its inputs were finite, but its buffers already had Inf (`pos_table`), set when the model was built or "
        "loaded, by the module's own updates (running statistics), or by code that writes them"
    )


def test_a_report_made_in_evaluation_says_so():
    report = dict(NAN_WEIGHT, kind="exploding_output", root_var="model", max_abs=2e4, threshold=1e4)
    assert "evaluation" not in sentence(report)
    text = sentence(dict(report, evaluation={"eval_mode": True, "grad_off": "no_grad"}))
    assert text.startswith(
        "Exploding values in the output of `model.encoder.layers.3.attn.proj` (Linear) at step 412, "
        "in evaluation (`model` in eval mode, under no_grad): max |x| = 20000"
    )
    # gradients off alone is no evaluation (a GAN's discriminator step draws its fakes under no_grad)
    several = sentence(dict(report, step_optimizer="opt_d", evaluation={"eval_mode": False, "grad_off": "no_grad"}))
    assert "at step 412 of `opt_d`, under no_grad: max" in several and "evaluation" not in several


FP16 = dict(
    MODULE,
    kind="nonfinite_output",
    dtype="float16",
    inputs_counts={"nan": 0, "posinf": 0, "neginf": 0, "numel": 64},
    inputs_bad=False,
    params_bad=[],
)


def test_float16_advice_speaks_of_attention_only_for_attention():
    conv = sentence(dict(FP16, module_type="Conv2d", counts={"nan": 0, "posinf": 3, "neginf": 0, "numel": 64}))
    assert conv.endswith(
        "its inputs were finite; float16 overflows past 65504: keep the op in float32, or use bfloat16"
    )
    attention = dict(FP16, module_type="MultiheadAttention", counts={"nan": 64, "posinf": 0, "neginf": 0, "numel": 64})
    assert sentence(attention).endswith(
        "its inputs were finite; float16 overflows past 65504 (an Inf inside it turns into NaN: Inf - Inf, a softmax "
        "of Inf): keep the op in float32, scale the attention (q and k by 1/sqrt(head size) before the product, or "
        "F.scaled_dot_product_attention), or use bfloat16"
    )
    # a NaN alone in float32 from finite inputs is no overflow: no advice
    assert sentence(dict(attention, dtype="float32")).endswith("its inputs were finite")


def test_float32_inputs_past_the_float16_range_are_named_as_the_overflow():
    report = dict(FP16, module_type="Conv2d", counts={"nan": 2, "posinf": 5, "neginf": 0, "numel": 64})
    assert sentence(dict(report, inputs_max_abs=96455.0)).endswith(
        "its inputs were finite; they reach 96455, past float16's largest value 65504, so casting them to float16 "
        "(autocast) made Inf: scale them down, keep the op in float32, or use bfloat16"
    )


def test_a_parent_whose_own_weights_held_the_nan_says_so():
    report = dict(
        MODULE,
        kind="nonfinite_output",
        qualname="model",
        module_type="RNNModel",
        step=5,
        backward_calls=5,
        made_inside=True,
        counts={"nan": 2, "posinf": 0, "neginf": 0, "numel": 100},
        inputs_counts={"nan": 2, "posinf": 0, "neginf": 0, "numel": 100},
        reached={"qualname": "model.lockdrop", "module_type": "LockedDropout"},
    )
    assert sentence(report).endswith("and no module before made any")
    text = sentence(dict(report, params_bad=["encoder.weight"], params_stepped=False))
    assert text.endswith(
        "and no module before made any; its parameters already had NaN (`encoder.weight`) before this step's "
        "forward, and no optimizer step ran since the last backward: code between the steps that writes the weights "
        "(an assignment under no_grad, a hand-written update, a loaded state) put it there"
    )


def test_a_domain_error_in_float16_gets_no_overflow_advice():
    # an own forward's log of zeros in float16: -Inf, but no overflow
    log = dict(
        FP16,
        module_type="Scorer",
        counts={"nan": 0, "posinf": 0, "neginf": 5, "numel": 64},
        own_code=True,
        origin_op="log",
        origin_detail="of 5 zeros",
    )
    assert sentence(log).endswith("its inputs were finite: its own forward made it: `log` of 5 zeros")
    # a NaN alone in float16 from a module that neither sums nor exponentiates, op not known: no advice
    plain = dict(FP16, module_type="Scorer", counts={"nan": 5, "posinf": 0, "neginf": 0, "numel": 64})
    assert sentence(plain).endswith("its inputs were finite")
    # the same NaN from inputs near float16's limit, or from a product: the advice stays
    assert "float16 overflows past 65504" in sentence(dict(plain, inputs_max_abs=3000.0))
    product = dict(
        plain, own_code=True, origin_op="matrix product", origin_detail="gave 5 Inf/NaN from finite operands"
    )
    assert "float16 overflows past 65504" in sentence(product)


def test_buffers_are_named_with_their_own_kind():
    report = dict(NAN_WEIGHT, params_bad=[], buffers_bad=["running_var", "pos"], buffers_bad_kinds=["NaN", "Inf"])
    assert "its buffers already had NaN (`running_var`) and Inf (`pos`), set when" in sentence(report)
