"""The words of the sample-mixing probe (``sample_mixing.py``): the WARN's sentences and the facts."""

from __future__ import annotations

ADVICE = (
    "look for a reduction or softmax over dim 0 (statistics of the batch such as x.mean(0) or x.std(0); "
    "h + h.mean(0) where h.mean(1, keepdim=True) was meant broadcasts silently), or a view or reshape across the "
    "batch (scores.view(-1), or x.view(T, B, E) where x.transpose(0, 1) was meant)."
)


def warnings(found, ex) -> list[str]:
    """The sentences of a WARN, or [] (no mixing, mixing by design, or only where the layout was Torch
    Doctor's own guess)."""
    if not found.mixes or found.by_design or (found.seq_first and ex.source == "inferred"):
        return []
    first = (
        f"The samples of the batch mix: replacing only sample {found.changed + 1}'s inputs (with sample "
        f"{found.source + 1}'s) changed the prediction for {_samples(found.moved)} too. Each sample's prediction should "
        "depend on its own input alone, unless the model compares samples on purpose (contrastive logits, in-batch "
        "negatives, experts with a capacity shared by the batch): trained so, it leans on the other samples of its batch and predicts differently without them."
    )
    return [first, _where(found, type(ex.model).__name__)]


def _samples(rows: list) -> str:
    shown = [r + 1 for r in rows]
    if len(shown) == 1:
        return f"sample {shown[0]}"
    if shown == list(range(shown[0], shown[-1] + 1)):
        return f"samples {shown[0]}-{shown[-1]}"
    return "samples " + ", ".join(map(str, shown))


def _place(call, model_name: str) -> str:
    return f"`{call.name}` ({call.kind}" if call.name else f"the model's own forward ({model_name}"


def _where(found, model_name: str) -> str:
    """Where the mixing starts, in words."""
    call = found.origin
    if call is not None and found.seq_first:
        shape = "(" + ", ".join(map(str, call.input_shape or [])) + ")"
        return (
            f"It starts in {_place(call, model_name)}, batch_first=False), which reads dim 0 of its {shape} input as "
            "the sequence and so mixes the rows of dim 0. Pass batch_first=True if your batches are (batch, sequence, "
            "features), as a DataLoader and Hugging Face give them; if dim 0 is the sequence by design, its rows are "
            "time steps, not samples, and this is expected."
        )
    if call is not None:
        return (
            f"It starts in {_place(call, model_name)}): its output moved for the other samples while its inputs did "
            f"not. In its forward, {ADVICE}"
        )
    before = found.before
    if before is not None:
        owner = f"`{before.parent}`" if before.parent else model_name
        return (
            f"It happens in the forward of {owner} itself, before it calls `{before.name}` ({before.kind}), whose input "
            f"already mixes the samples: {ADVICE}"
        )
    return f"It happens in the forward's own code, after the last module call that kept the samples apart: {ADVICE}"


def batch_statistics(call) -> str:
    """The fact said (no WARN) when a batch norm without running statistics is where mixing starts."""
    return (
        f"The samples mix in `{call.name}` ({call.kind}) by design: with track_running_stats=False it normalises "
        "with the statistics of the batch, in eval mode too (no warning)."
    )


PAIRWISE = (
    "Dim 1 of the prediction has the batch's size (a pairwise matrix such as contrastive logits a @ b.T, or "
    "positions when the sequence is as long as the batch): the other samples' rows moved only at the changed "
    "sample's index of dim 1, a pairwise column, which the comparison excluded; elsewhere they stayed apart."
)


def seq_first_apart(call, model_name: str) -> str:
    return (
        f"{_place(call, model_name)}, batch_first=False) reads dim 0 of the example as the sequence; changing one "
        "column of dim 1 of the first input (a sample, in that reading) moved no other column: with dim 1 as the "
        "batch, the samples stay apart. If your batches are (batch, sequence, ...) instead, pass batch_first=True."
    )


def ambiguous(batch: int, sure: list, unsure: list) -> str:
    return (
        f"Replacing the last sample's row of every argument whose first dimension is {batch} moved other samples; "
        f"replacing it in {', '.join(sure)} alone did not. {', '.join(unsure)} may have a first dimension of {batch} "
        "by chance (a mask shared by all samples, (T, T) with T equal to the batch size): which it is cannot be told."
    )
