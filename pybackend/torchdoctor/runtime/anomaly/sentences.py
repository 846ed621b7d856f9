"""The one sentence that says what went wrong, where, and what it points to.

Pure: a report dict (see :mod:`anomaly_report`) in, plain text out, one line, no ANSI. Names are
in backticks (VS Code renders them as code in notifications). Examples::

    NaN in the output of `model.net.2` (Linear) at step 412: 12 of 4096 values; its inputs were finite
    Loss spike at step 5: 981 is 29x the median 34.5 of the last 5 losses (threshold 10x); ...
"""

from __future__ import annotations

from typing import Any, Callable, Dict

from ...spelling import fmt_num
from .norms import zero_spread_text

Report = Dict[str, Any]


def sentence(report: Report) -> str:
    writer = _WRITERS.get(str(report.get("kind")))
    text = writer(report) if writer else f"{report.get('kind')} at step {report.get('step')}"
    at = f"at step {report.get('step')}"
    if report.get("step_optimizer"):  # several optimizers: whose steps these are
        text = text.replace(at, f"{at} of `{report['step_optimizer']}`", 1)
        at += f" of `{report['step_optimizer']}`"
    if report.get("evaluation"):  # a test() loop, not the training step
        text = text.replace(at, f"{at}, {_evaluation(report)}", 1)
    if report.get("worker_id") is not None:
        index = report.get("sample_index")
        text += f" (in DataLoader worker {report['worker_id']}" + (f", sample {index})" if index is not None else ")")
    return " ".join(text.split())  # one line, whatever the names contain


def _evaluation(r: Report) -> str:
    """``in evaluation (`model` in eval mode, under no_grad)``: a forward that was not training
    (BatchNorm's running statistics, not the batch's, are used in eval mode). Gradients off alone
    is ``under no_grad``: a GAN's discriminator step draws its fakes so, and it is training."""
    facts = r["evaluation"]
    if not facts.get("eval_mode"):
        return f"under {facts['grad_off']}"
    parts = [f"`{r.get('root_var') or r.get('root') or 'the model'}` in eval mode"]
    if facts.get("grad_off"):
        parts.append(f"under {facts['grad_off']}")
    return f"in evaluation ({', '.join(parts)})"


def bad_values(counts: Dict[str, int]) -> str:
    """``NaN`` / ``Inf`` / ``NaN and Inf``: what the non-finite values are."""
    nan = counts.get("nan", 0)
    inf = counts.get("posinf", 0) + counts.get("neginf", 0)
    if nan and inf:
        return "NaN and Inf"
    return "Inf" if inf else "NaN"


def _count_text(counts: Dict[str, int]) -> str:
    nan = counts.get("nan", 0)
    inf = counts.get("posinf", 0) + counts.get("neginf", 0)
    numel = counts.get("numel", 0)
    if nan and inf:
        return f"{nan} NaN and {inf} Inf of {numel} values"
    return f"{nan or inf} of {numel} values"


def _where(report: Report) -> str:
    return f"`{report.get('qualname') or report.get('module') or '?'}` ({report.get('module_type', '?')})"


def _nonfinite_output(r: Report) -> str:
    counts = r.get("counts")
    if counts is None:  # the device check keeps only the extremes: NaN wins over Inf there
        what = "NaN" if _is_nan(r.get("min")) or _is_nan(r.get("max")) else "Inf"
        return f"{what} in the output of {_where(r)} at step {r['step']}; " + _inputs_text(r, what)
    what = bad_values(counts)
    if r.get("made_inside"):
        return _made_inside(r, bad_values(r.get("inputs_counts") or counts))
    text = f"{what} in the output of {_where(r)} at step {r['step']}: {_count_text(counts)}"
    text += "; " + _inputs_text(r, what)
    if r.get("inputs_bad") or r.get("params_bad") or r.get("buffers_bad") or not _may_overflow(r):
        return text
    own_op = r.get("own_code") and r.get("origin_dtype") in _LIMITS  # a float16 op in a float32 loss
    dtype = r.get("origin_dtype") if own_op else r.get("dtype")
    if counts.get("posinf") or counts.get("neginf") or dtype == "float16":
        # float16 from finite inputs: NaN too is an overflow inside the op (Inf - Inf, a softmax of Inf)
        nan_only = not (counts.get("posinf") or counts.get("neginf"))
        text += _precision(dtype, "the op", _attention(r.get("module_type")), nan_only, r.get("inputs_max_abs"))
    return text


# Ops whose NaN/Inf is a value out of their domain (log of 0, sqrt of a negative, x / 0), not an
# overflow: no precision advice for them, whatever the dtype.
_DOMAIN = frozenset(("log", "log2", "log10", "log1p", "sqrt", "rsqrt", "division", "reciprocal"))
# Layers that multiply and sum (or exponentiate): a NaN alone in their float16 output is an overflow.
_SUMMING = ("linear", "conv", "attention", "bilinear", "softmax", "lstm", "gru", "rnn", "transformer")


def _may_overflow(r: Report) -> bool:
    """Can the non-finite output be reduced precision's overflow? Not when the op named is a domain
    error (``sqrt`` of negatives in float16 was told "float16 overflows past 65504"); a NaN alone in
    float16 only from an op or a layer that sums or exponentiates, or inputs near float16's limit."""
    op = r.get("origin_op")
    if op in _DOMAIN:
        return False
    counts = r.get("counts") or {}
    if counts.get("posinf") or counts.get("neginf") or r.get("dtype") != "float16" or op:
        return True
    big = r.get("inputs_max_abs")
    if isinstance(big, (int, float)) and big > 256.0:  # 256 squared is 65536: a product overflows
        return True
    return any(word in str(r.get("module_type")).lower() for word in _SUMMING)


def _attention(module_type: Any) -> bool:
    return "attention" in str(module_type).lower()


def _made_inside(r: Report, what: str) -> str:
    """A parent's own forward code made it (``origins.made_inside``)."""
    text = f"{what} made inside the forward of {_where(r)} at step {r['step']}"
    where, code = r.get("origin_where"), r.get("origin_code")
    if where and code:
        text += f", at line {where.rsplit(':', 1)[-1]} `{code}`"
    if r.get("origin_op"):
        dtype = r.get("origin_dtype")
        text += f": the {r['origin_op']} {r.get('origin_detail')}" + (f" in {dtype}" if dtype else "")
    reached = r.get("reached") or {}
    names = r.get("bad_input_names")
    label = f" `{names[0]}`" if names and not str(names[0]).startswith("#") else ""
    text += (
        f"; it reached `{reached.get('qualname', '?')}` ({reached.get('module_type', '?')}) as its input{label} "
        f"({_count_text(r.get('inputs_counts') or {})}), and no module before made any"
    )
    if r.get("params_bad") or r.get("buffers_bad"):  # the parent's own weights held it (awd-lstm's embedded_dropout)
        return text + "; " + _held(r, what)
    if r.get("origin_op") in _DOMAIN:  # log of 0, sqrt of a negative: no overflow
        return text
    attention = r.get("origin_op") == "matrix product" or _attention(r.get("module_type"))
    return text + _precision(r.get("origin_dtype") or r.get("dtype"), f"the {r.get('origin_op') or 'op'}", attention)


_LIMITS = {"float16": "65504", "bfloat16": "3.4e38"}


def _precision(dtype: Any, op: str, attention: bool = True, nan_only: bool = False, inputs_max_abs: Any = None) -> str:
    """What to do when reduced precision overflowed. The attention advice only where there is
    attention (a Conv2d's overflow under autocast was told to scale q and k); a NaN alone from
    finite float16 inputs is an overflow inside the op too; inputs past float16's range (finite in
    float32) overflowed when autocast cast them."""
    if dtype == "float16":
        if isinstance(inputs_max_abs, (int, float)) and inputs_max_abs > float(_LIMITS["float16"]):
            return (
                f"; they reach {fmt_num(inputs_max_abs)}, past float16's largest value {_LIMITS['float16']}, "
                f"so casting them to float16 (autocast) made Inf: scale them down, keep {op} in float32, "
                f"or use bfloat16"
            )
        scale = (
            ", scale the attention (q and k by 1/sqrt(head size) before the product, or F.scaled_dot_product_attention)"
            if attention
            else ""
        )
        made = " (an Inf inside it turns into NaN: Inf - Inf, a softmax of Inf)" if nan_only else ""
        return f"; float16 overflows past {_LIMITS['float16']}{made}: keep {op} in float32{scale}, or use bfloat16"
    if dtype == "bfloat16":
        return f"; bfloat16 overflows past {_LIMITS['bfloat16']}: keep {op} in float32"
    return ""


def _is_nan(value: Any) -> bool:
    return value != value or value == "NaN"


def _inputs_text(r: Report, what: str) -> str:
    if r.get("inputs_counts") is None:
        return "its inputs were not kept (checked at the end of the step)"
    if not r.get("inputs_bad"):
        if r.get("params_bad") or r.get("buffers_bad"):
            return "its inputs were finite, but " + _held(r, what)
        if r.get("own_code") and r.get("origin_op"):  # its forward's own code, not a child
            return "its inputs were finite: its own forward made it" + _origin_text(r)
        return "its inputs were finite" + zero_spread_text(r)
    counts = r["inputs_counts"]
    keywords = [n for n in r.get("bad_input_names") or [] if not str(n).startswith("#")]
    which = f" (`{'`, `'.join(keywords)}`: " if keywords else " ("
    text = f"its inputs already had {bad_values(counts)}{which}{_count_text(counts)})"
    if r.get("first_bad_in_step") and r.get("data_bad"):
        text += (
            ", and no module before it made any: it came from outside the modules, and the data of this step "
            f"already had non-finite values: {_named_data(r)}; {CHECK_DATA}"
        )
    elif r.get("first_bad_in_step"):
        text += ", and no module before it made any: it came from outside the modules (the input data, or code between modules)"
    return text


def _origin_text(r: Report) -> str:
    """``, at line 17 `return torch.log(...)`: `log` of 232 zeros`` (``origins.made_by_own_code``);
    ``, at one of lines 8, 9 (each does `log`)`` when several lines of the forward do the op."""
    where, code, lines = r.get("origin_where"), r.get("origin_code"), r.get("origin_lines")
    if where and code:
        text = f", at line {where.rsplit(':', 1)[-1]} `{code}`"
    elif lines:
        text = f", at one of lines {', '.join(str(n) for n in lines)} (each does `{r['origin_op']}`)"
    else:
        text = ""
    return text + f": `{r['origin_op']}` {r.get('origin_detail')}"


def _names(names: Any) -> str:
    return ", ".join(f"`{p}`" for p in names[:3]) + (", ..." if len(names) > 3 else "")


def _held(r: Report, what: str) -> str:
    """``its parameters already had NaN (`weight`) ...`` / ``its buffers ...``: the module's own state."""
    params, buffers = r.get("params_bad"), r.get("buffers_bad")
    parts = [f"its parameters already had {what} ({_names(params)}){_params_origin(r)}"] if params else []
    if buffers:  # a positional table, BatchNorm's running statistics: not trained, not an update's doing
        parts.append(
            f"its buffers already had {_buffer_kinds(buffers, r.get('buffers_bad_kinds'), what)}, set when the "
            f"model was built or loaded, by the module's own updates (running statistics), or by code that writes them"
        )
    return "; ".join(parts)


def _buffer_kinds(buffers: Any, kinds: Any, what: str) -> str:
    """``Inf (`table`)``, or ``NaN (`running_var`) and Inf (`table`)``: what each buffer holds."""
    if not kinds or len(kinds) != len(buffers):
        return f"{what} ({_names(buffers)})"
    groups: Dict[str, list] = {}
    for name, kind in zip(buffers, kinds):
        groups.setdefault(str(kind), []).append(name)
    return " and ".join(f"{kind} ({_names(names)})" for kind, names in groups.items())


def _params_origin(r: Report) -> str:
    """Where a parameter's NaN came from. Before the first ``backward()`` nothing has updated it
    (real scripts with a NaN planted in a weight were told "an earlier update" before their first
    step); after it, an optimizer update is named only when one of the parameters' optimizers
    stepped since the last ``backward()`` (``params_stepped_by``; ``params_stepped`` False: none
    did, so code between the steps wrote it: a DiT-like loop's ``w[0] = nan`` under no_grad was told
    "an earlier update"); hogwild's workers step weights in shared memory."""
    if r.get("params_shared"):
        return ": an update by a process sharing these weights, or the initialisation, put it there"
    if r.get("backward_calls", r.get("step")) == 0:
        return " before any update: its initialisation or a loaded checkpoint put it there"
    if r.get("params_stepped") is None:  # not known (a report made before this fact existed)
        return " before this step's forward"
    by = r.get("params_stepped_by") or "optimizer"
    step = f"`{by}.step()`" if r.get("params_stepped_named", True) else f"a step of their optimizer (`{by}`)"
    if r.get("params_update") == "under_way":  # an LBFGS closure: the forward runs inside the step
        return (
            f" before this forward, which runs inside {step} (its closure): an update made within that step, "
            f"or code in the closure that writes the weights, put it there"
        )
    if r.get("params_update") == "unknown":  # other models' backwards may have come since: no cause claimed
        return f" before this step's forward: an update by {step}, or code that writes the weights, put it there"
    if r.get("params_update") == "skipped":  # NaN weights made NaN gradients: nothing wrote them since
        return (
            f" before this step's forward, and the GradScaler skipped {step} after the last backward (its "
            "gradients were not finite): the weights kept the values they had at that backward"
        )
    if r.get("params_stepped"):
        return (
            f" before this step's forward, and {step} ran since the last backward: that update, or code after it "
            f"that writes the weights, put it there"
        )
    return (
        " before this step's forward, and no optimizer step ran since the last backward: code between the steps "
        "that writes the weights (an assignment under no_grad, a hand-written update, a loaded state) put it there"
    )


def _exploding_output(r: Report) -> str:
    text = (
        f"Exploding values in the output of {_where(r)} at step {r['step']}: max |x| = {fmt_num(r['max_abs'])}, "
        f"above the threshold {fmt_num(r['threshold'])}"
    )
    inputs = r.get("inputs_max_abs")
    if inputs is None:
        return text
    side = "already above it" if inputs > r["threshold"] else "below it"
    return text + f"; its inputs were {side} (max |x| = {fmt_num(inputs)})"


def _dead_output(r: Report) -> str:
    first, last = r["dead_since"], r["step"]
    steps = f"steps {first}-{last}" if last > first else f"step {last}"
    text = (
        f"Dead output: all {r['counts']['numel']} values of {_where(r)} were 0 for {last - first + 1} steps "
        f"in a row ({steps}) while its inputs were not"
    )
    low, high = r.get("inputs_min"), r.get("inputs_max")
    if low is not None and high is not None:
        text += f" (inputs in [{fmt_num(low)}, {fmt_num(high)}])"
    if r.get("evidence") == "no_flow":
        return text + "; its parameters' gradients are 0 as well: nothing flows through it, forward or backward"
    return text + "; nothing flows past it, forward or backward"


def _param(r: Report) -> str:
    owner = r.get("module_qualname")
    return f"`{r['param']}`" + (f" ({r.get('module_type', '?')} `{owner}`)" if owner else "")


def _nonfinite_grad(r: Report) -> str:
    what = bad_values(r["counts"])
    text = f"{what} in the gradient of {_param(r)} at step {r['step']}: {_count_text(r['counts'])}"
    if r.get("bad_params", 1) > 1:
        text += f"; it is the nearest to the loss of {r['bad_params']} parameters with non-finite gradients"
    loss = r.get("loss")
    if loss is not None:
        text += f"; the loss was {fmt_num(loss)}"
    return text + _data_text(r)


CHECK_DATA = "check the dataset, its transforms and how the batch was built"


def _data_text(r: Report) -> str:
    """The batch of the user's loop already held NaN/Inf (:mod:`data_origin`): the data is the cause."""
    if not r.get("data_bad"):
        return ""
    return (
        f"; the data of this step already had non-finite values: {_named_data(r)}. It came from the input, "
        f"not the model: {CHECK_DATA}"
    )


def _named_data(r: Report) -> str:
    bad = r["data_bad"]
    return ", ".join(f"`{d['name']}` ({bad_values(d['counts'])}: {_count_text(d['counts'])})" for d in bad[:3])


def _exploding_grad(r: Report) -> str:
    text = (
        f"Exploding gradient of {_param(r)} at step {r['step']}: max |g| = {fmt_num(r['max_abs'])}, "
        f"above the threshold {fmt_num(r['threshold'])}"
    )
    if r.get("grad_scale"):
        text += f" (unscaled: the GradScaler's scale {fmt_num(r['grad_scale'])} divided out)"
    if r.get("clipped_by"):
        text += f", after the script's `{r['clipped_by']}`"
    if r.get("bad_params", 1) > 1:
        text += f"; the first of {r['bad_params']} parameters past it, counting back from the loss"
    near, far, first = r.get("nearest_max_abs"), r.get("largest"), r.get("farthest_max_abs")
    if first is not None and first <= r["threshold"] and near is not None and near <= r["threshold"]:
        # Healthy on both sides: the explosion is made in these layers, not grown through depth.
        text += (
            f"; the gradients nearest the loss ({fmt_num(near)}) and nearest the input ({fmt_num(first)}) "
            f"are below it, so these layers make the explosion themselves: look at what their output "
            f"goes through (a division by a small norm or standard deviation, a custom backward)"
        )
    elif near is not None and far is not None and far[1] > 10 * max(near, 1e-30) and r.get("largest_farther", True):
        nearest = f" at `{r['nearest']}`" if r.get("nearest") else ""
        text += (
            f"; gradients grow toward the input, from {fmt_num(near)}{nearest} nearest the loss to "
            f"{fmt_num(far[1])} at `{far[0]}`"
        )
        if not r.get("clipping"):  # never advise what the script already does
            text += " (clip them with torch.nn.utils.clip_grad_norm_)"
    return text


def _scaler_skips(r: Report) -> str:
    skipped, first, last = r["skipped"], r.get("since"), r["step"]
    steps = f"steps {first}-{last}" if first is not None and last > first else f"step {last}"
    scaler = r.get("scaler") or "scaler"
    text = (
        f"The GradScaler `{scaler}` skipped {skipped} optimizer step{'s' if skipped != 1 else ''} in a row "
        f"({steps}): the gradients held Inf/NaN every time"
    )
    before, last_scale, now = r.get("scale_before"), r.get("last_scale"), r.get("scale_now")
    if before is not None and last_scale is not None:
        text += f", and its scale fell from {fmt_num(before)} to {fmt_num(now if now is not None else last_scale)}"
    if r.get("collapsed"):
        text += (
            f"; they overflow even at a scale of {fmt_num(last_scale)} (<= {fmt_num(r.get('min_scale', 1.0))}), "
            f"so this is no float16 overflow the scaler can back off from: look for a NaN/Inf made in the "
            f"backward pass (a division by zero, sqrt or log at 0, a custom backward)"
        )
    else:
        text += (
            f"; backing off is the scaler's job, but not {skipped} times in a row: the gradients are not "
            f"finite in float16 at any scale it tried (keep that part of the model in float32, or use bfloat16)"
        )
    return text


def _stale_grad(r: Report) -> str:
    example = r.get("example_param")
    count = r.get("stale_params")
    what = f"{count} parameters" if count else "its parameters"
    if example:
        what += f", e.g. `{example}`"
    return (
        f"Gradients not zeroed: `{r.get('optimizer', 'optimizer')}.step()` at step {r['step']} applies gradients "
        f"that still hold those of the step before ({what}); call `optimizer.zero_grad()` every step "
        f"before `loss.backward()`"
    )


def _loss_nan(r: Report) -> str:
    what = "NaN" if r.get("loss_text") == "NaN" else "Inf" if r.get("loss_text") in ("+Inf", "-Inf") else "Non-finite"
    text = f"{what} loss at step {r['step']}{_series(r)}"
    origin = r.get("origin")
    if r.get("modules_clean") and r.get("data_bad") and not origin:  # a NaN target: the data, not the loss code
        return text + "; every module output was finite" + _data_text(r)
    if r.get("modules_clean"):
        text += "; every module output was finite, so the loss computation made it"
        if origin:
            text += f": {origin}"
    elif origin:
        text += f"; {origin}"
    return text


def _loss_spike(r: Report) -> str:
    return (
        f"Loss spike at step {r['step']}{_series(r)}: {fmt_num(r['loss'])} is {fmt_num(r['ratio'])}x the median "
        f"{fmt_num(r['median'])} of the last {r['window']} losses (threshold {fmt_num(r['factor'])}x); "
        + _spike_cause(r)
    )


def _spike_cause(r: Report) -> str:
    if r.get("lagging_copy"):  # a DQN's target network, an EMA teacher (lagging.py)
        return (
            "the loop holds a lagging copy of the model (a target network, an EMA teacher): targets "
            "computed from it move when it is synced; if it stays up, lower the learning rate"
        )
    if r.get("advice"):  # a spike is advice only with several losses and optimizers (a GAN)
        return "in adversarial training this is often the other model winning a step; if it stays up, lower the learning rate"
    return "a learning rate too high is the usual cause"


def _series(r: Report) -> str:
    """`` of the loss at `gan.py:41` `` when the run has several losses (one series per backward line)."""
    return f" of the loss at `{r['loss_site']}`" if (r.get("loss_series") or 0) > 1 and r.get("loss_site") else ""


def _loss_not_decreasing(r: Report) -> str:
    average = "median" if r.get("smoothed") == "median" else "mean"
    text = (
        f"Loss not decreasing at step {r['step']}{_series(r)}: the {average} of the last {r['window']} losses "
        f"({fmt_num(r['last_mean'])}) is not below 99% of the {average} of the first {r['window']} "
        f"({fmt_num(r['first_mean'])})"
    )
    zero = r.get("zero_grad_params")
    if zero:
        text += (
            f"; the gradients of {len(zero)} of {r.get('params_with_grad')} parameters are exactly 0 (e.g. `{zero[0]}`)"
        )
    return text


def _loss_oscillating(r: Report) -> str:
    text = (
        f"Loss oscillating at step {r['step']}{_series(r)}: over the last {r['window']} steps it swings by "
        f"{fmt_num(r['swing'])} per step around {fmt_num(r['level'])} with little net progress "
        f"({fmt_num(r['net'])})"
    )
    if r.get("correlation") is not None:
        text += f", up and down in turn (lag-1 autocorrelation {fmt_num(r['correlation'])})"
    return text + "; a learning rate too high is the usual cause"


def _vanished_grad(r: Report) -> str:
    first, last = r.get("dead_since", r["step"]), r["step"]
    steps = f"steps {first}-{last}" if last > first else f"step {last}"
    text = (
        f"No gradient at {steps}: every gradient of the {r['params_with_grad']} parameters that get one "
        f"(e.g. `{r['example_param']}`) was exactly 0 in {r['backwards']} backward passes in a row while the "
        f"loss was {fmt_num(r['loss'])}: nothing learns"
    )
    if r.get("huge"):  # see vanished.HUGE_WEIGHT
        name, size = r["largest_weight"]
        return text + (
            f"; the largest weight is |w| = {fmt_num(size)} (`{name}`): weights that large saturate tanh and "
            "sigmoid units (their slope is exactly 0), usually after a learning rate too high"
        )
    return text + (
        "; the usual causes: tanh/sigmoid units saturated at ±1, ReLUs dead everywhere, or a "
        "non-differentiable op (argmax, round, a comparison) between the parameters and the loss"
    )


_WRITERS: Dict[str, Callable[[Report], str]] = {
    "nonfinite_output": _nonfinite_output,
    "exploding_output": _exploding_output,
    "dead_output": _dead_output,
    "nonfinite_grad": _nonfinite_grad,
    "exploding_grad": _exploding_grad,
    "stale_grad": _stale_grad,
    "vanished_grad": _vanished_grad,
    "scaler_skips": _scaler_skips,
    "loss_nan": _loss_nan,
    "loss_spike": _loss_spike,
    "loss_not_decreasing": _loss_not_decreasing,
    "loss_oscillating": _loss_oscillating,
}
