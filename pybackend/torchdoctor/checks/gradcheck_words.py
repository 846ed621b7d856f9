"""The gradient check's table rows, details, verdict and sentences (``gradcheck.py`` measures)."""

from __future__ import annotations

from ..spelling import fmt_num
from . import result as R

OK_BELOW = 1e-5
FAIL_ABOVE = 1e-3


def status(checked: int, max_rel_diff: float) -> str:
    """A parameter's or a custom Function input's verdict from its worst relative difference."""
    if checked == 0:
        return "SKIPPED"
    return "OK" if max_rel_diff < OK_BELOW else "WARN" if max_rel_diff < FAIL_ABOVE else "FAIL"


def _yes_no(value: bool | None) -> str:
    return "n/a" if value is None else "pass" if value else "FAIL"


def param_row(c) -> list:
    return [
        c.name,
        c.shape,
        f"{c.checked}/{c.numel}",
        c.kinks,
        c.max_rel_diff,
        c.status if c.tried else "NOT REACHED",
        _yes_no(c.torch_gradcheck),
        c.analytical,
        c.numerical,
        c.noise,
        c.worst_index,
        c.source or "autograd",
    ]


def function_row(f) -> list:
    return [
        f.label,
        f.shape,
        f"{f.checked}/{f.numel}",
        0,
        f.max_rel_diff,
        f.status,
        _yes_no(f.torch_gradcheck),
        f.analytical,
        f.numerical,
        f.noise,
        f.worst_index,
        f"custom autograd.Function, backward at {f.defined_at}, called at {f.called_at}",
    ]


def details(outcome, options: dict) -> dict:
    from .gradcheck import EPS, SAMPLES, TIME_BUDGET

    checks = outcome.params
    measured = [c for c in checks if c.checked]
    worst = max(measured, key=lambda c: c.max_rel_diff, default=None)
    return {
        "eps": float(options.get("eps", EPS)),
        "samplesPerParameter": int(options.get("samples", SAMPLES)),
        "okBelow": OK_BELOW,
        "failAbove": FAIL_ABOVE,
        "worstParameter": worst.name if worst else None,
        "worstRelDiff": worst.max_rel_diff if worst else None,
        "failingParameters": [c.name for c in checks if c.status == "FAIL"],
        "kinksSkipped": sum(c.kinks for c in checks),
        "skippedParameters": [c.name for c in checks if c.tried and not c.checked],
        "unreachedParameters": outcome.unreached,
        "timeBudgetSeconds": float(options.get("timeBudgetSeconds", TIME_BUDGET)),
        "seconds": round(outcome.seconds, 3),
        "randomLoss": outcome.random_loss,
        "lossDtype": outcome.loss_dtype or "float64",
        "keptFloat64": outcome.kept_double,
        "precision": outcome.precision.lowest or "float64",  # what the finite differences resolve
        "downcasts": list(outcome.precision.casts),  # where the model's code casts float64 down
        "batch": list(outcome.batch) if outcome.batch else None,
        "customFunctions": [
            {
                "name": f.name,
                "definedAt": f.defined_at,
                "calledAt": f.called_at,
                "input": f.input_index,
                "inputName": f.input_name,
                "status": f.status,
                "maxRelDiff": f.max_rel_diff,
                "torchGradcheck": f.torch_gradcheck,
            }
            for f in outcome.functions
        ],
        "failingFunctions": sorted({f.name for f in outcome.functions if f.status == "FAIL"}),
    }


def verdict(outcome, result: dict) -> dict:
    checks, functions = outcome.params, outcome.functions
    rank = {"OK": 0, "SKIPPED": 0, "WARN": 1, "FAIL": 2}
    bad_fn = max(functions, key=lambda f: (rank[f.status], f.max_rel_diff), default=None)
    measured = [c for c in checks if c.checked]
    worst = max(measured, key=lambda c: c.max_rel_diff, default=None)
    notes = _notes(outcome)
    if bad_fn is not None and rank[bad_fn.status] > 0 and rank[bad_fn.status] >= rank[worst.status if worst else "OK"]:
        result["table"]["errorRow"] = functions.index(bad_fn)
        result["verdict"] = R.FAIL if bad_fn.status == "FAIL" else R.WARN
        result["headline"], result["sentences"] = _function_words(bad_fn, checks)
        result["sentences"] += notes
        return result
    if worst is None:
        result["verdict"] = R.WARN
        result["headline"] = (
            "Nothing could be checked: every sampled element sits on a kink (ReLU / max) of the loss."
            if not outcome.unreached
            else "Nothing could be checked within the time budget: one forward of this model takes too long."
        )
        result["sentences"] = notes
        return result
    if worst.status != "OK":
        result["table"]["errorRow"] = len(functions) + checks.index(worst)
    result["verdict"] = {"OK": R.PASS, "WARN": R.WARN, "FAIL": R.FAIL}[worst.status]
    result["headline"], result["sentences"] = _words(checks, worst, outcome)
    result["sentences"] += notes
    skipped = [c.name for c in checks if c.tried and not c.checked]
    if skipped:
        # Not a finding about the model: with a ReLU after every channel of a wide layer, some
        # activation switches inside any step of a bias; the other parameters carry the verdict.
        result["sentences"].append(
            f"Not checked: {', '.join(skipped)} (every sampled element sat on a kink of the loss: a ReLU or max "
            "switched inside every step; common for the biases of wide layers followed by a ReLU)."
        )
    return result


def _notes(outcome) -> list[str]:
    notes = []
    if outcome.random_loss:
        notes.append(
            "The loss is random: two evaluations at the same weights differed (dropout applied in a custom forward, "
            "sampling such as a VAE's reparameterisation). Every evaluation ran under one fixed seed "
            "(torch.random.fork_rng), so the same random draws were used for the analytical and the numerical gradient."
        )
    casts = outcome.precision.casts
    where = f" ({', '.join(casts)})" if casts else ""
    if outcome.kept_double:
        notes.append(
            f"The model's own code casts to a lower precision{where}; during this check "
            "Torch Doctor kept float64 through those casts, so the finite differences are as exact as for any "
            "float64 model. Your training still runs the casts."
        )
    if outcome.loss_dtype:
        notes.append(
            f"The loss comes out in {outcome.loss_dtype} although the model ran in float64: the model's own code casts it"
            f"{where or ' (Hugging Face losses call .float())'}. The finite differences used a step of 1e-3 and can "
            "resolve gradients only to about their fd error (table), so this check sees gross errors only."
        )
    elif outcome.precision.lowest:
        notes.append(
            f"The model's own code computes part of its forward in {outcome.precision.lowest}{where} although the model "
            "ran in float64, and keeping float64 there breaks the forward. The finite differences used a step of 1e-3 "
            "and can resolve gradients only to about their fd error (table), so this check sees gross errors only."
        )
    if outcome.batch:
        notes.append(
            f"The numerical differences ran on the first {outcome.batch[0]} of the {outcome.batch[1]} samples of the batch: "
            "a gradient is right or wrong whatever the batch, and a smaller one makes every forward cheaper."
        )
    kinks = sum(c.kinks for c in outcome.params)
    if kinks:
        notes.append(
            f"{kinks} sampled element(s) sat where the loss is not differentiable (a ReLU or max switching inside the step) and were replaced by others."
        )
    if outcome.unreached:
        names = outcome.unreached
        notes.append(
            f"The time budget ran out ({outcome.seconds:.0f} s) before {len(names)} parameter(s) were reached: "
            f"{', '.join(names[:8])}{' ...' if len(names) > 8 else ''}. Results above are for the parameters checked; "
            "raise the option timeBudgetSeconds (and the time limit) to check all."
        )
    return notes


def _function_words(f, checks) -> tuple[str, list[str]]:
    state = "wrong" if f.status == "FAIL" else "suspicious"
    head = (
        f"The backward of the custom autograd.Function `{f.name}` ({f.defined_at}) is {state} for its input {f.input_index} "
        f"`{f.input_name}`: max rel_diff {fmt_num(f.max_rel_diff, 2)} (analytical {fmt_num(f.analytical, 6)} vs numerical "
        f"{fmt_num(f.numerical, 6)} at index {tuple(f.worst_index)})."
    )
    agree = {
        True: "torch.autograd.gradcheck on the same elements passes",
        False: "torch.autograd.gradcheck on the same elements fails too",
    }
    sentences = [
        f"Checked directly: {f.name}.apply as called at {f.called_at}, with the inputs it received, "
        f"its backward against central differences ({agree.get(f.torch_gradcheck, 'torch.autograd.gradcheck had no opinion')})."
    ]
    inherited = [c.name for c in checks if c.status in ("WARN", "FAIL")]
    if inherited:
        sentences.append(
            f"Parameters whose gradient flows through it inherit its error: {', '.join(inherited[:8])}"
            f"{' ...' if len(inherited) > 8 else ''}. Fix {f.name}.backward first."
        )
    return head, sentences


def _words(checks: list, worst, outcome) -> tuple[str, list]:
    n = sum(c.checked for c in checks)
    reached = len([c for c in checks if c.tried])
    of = f"{reached} of {len(checks)}" if reached < len(checks) else f"{len(checks)}"
    fn_note = (
        [
            f"Custom autograd.Function(s) checked directly and right: {', '.join(sorted({f.name for f in outcome.functions}))}."
        ]
        if outcome.functions
        else []
    )
    if worst.status == "OK":
        how = (
            "within the finite differences' own error"
            if worst.max_rel_diff == 0
            else f"(max rel_diff {fmt_num(worst.max_rel_diff, 2)} < 1e-5)"
        )
        return (
            f"Analytical and numerical gradients agree on {n} sampled elements of {of} parameters {how}.",
            ["The backward pass computes the gradient of the forward: no custom backward bug here."] + fn_note,
        )
    bad = [c for c in checks if c.status == worst.status]
    where = f" Its gradient comes from the backward of {worst.source}: look there first." if worst.source else ""
    head = (
        f"The gradient of `{worst.name}` is {'wrong' if worst.status == 'FAIL' else 'suspicious'}: max rel_diff {fmt_num(worst.max_rel_diff, 2)} "
        f"{'> 1e-3' if worst.status == 'FAIL' else 'between 1e-5 and 1e-3'} (analytical {fmt_num(worst.analytical, 6)} vs numerical {fmt_num(worst.numerical, 6)} at index {tuple(worst.worst_index)})."
    )
    sentences = [f"Seed 002: rel_diff > 1e-3 is almost certainly a bug in the backward pass.{where}"] + fn_note
    if len(bad) > 1:
        sentences.append(
            f"Also {worst.status}: {', '.join(c.name for c in bad if c is not worst)}. Parameters before a wrong backward inherit its error; fix the one closest to the output first."
        )
    disagree = [c.name for c in checks if c.torch_gradcheck is not None and c.torch_gradcheck != (c.status != "FAIL")]
    if disagree:
        sentences.append(f"torch.autograd.gradcheck on the same sampled elements disagrees on {', '.join(disagree)}.")
    return head, sentences
