"""The facts a module report gathers after a hit (:mod:`report`), on small loops shaped like the
real programs they were found on: a NaN written into a weight between steps (is an optimizer
update to blame?), an Inf in a buffer (a positional table), a parent whose forward reads its
child's weight directly (an embedding dropout), and a report made while evaluating (BatchNorm's
running statistics lagging behind in a ``test()`` loop)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly import report as R


def accumulating_loop(poison_at: int, micro_steps: int = 8, accumulate: int = 2) -> None:
    """Adapters trained with accumulation over 2 backward calls; one weight poisoned by the loop."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 1))
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for step in range(micro_steps):
        if step == poison_at:
            with torch.no_grad():
                model[2].weight[0, 0] = float("nan")  # the loop writes it, between two forwards
        model(torch.randn(4, 6)).pow(2).mean().backward()
        if step % accumulate == accumulate - 1:
            opt.step()
            opt.zero_grad()


def test_a_nan_the_loop_wrote_with_no_optimizer_step_since_is_not_called_an_update():
    with watching() as seen:
        accumulating_loop(poison_at=3)  # after backward 2; the optimizer stepped after backward 1
    report = seen.reports[0]
    assert report["kind"] == "nonfinite_output" and report["qualname"] == "model.2"
    assert report["backward_calls"] == 3 and report["params_bad"] == ["weight"]
    assert report["params_stepped"] is False
    assert "no optimizer step ran since the last backward: code between the steps" in report["sentence"]
    assert "an earlier update" not in report["sentence"]


def test_an_optimizer_step_since_the_last_backward_is_named():
    with watching() as seen:
        accumulating_loop(poison_at=4)  # the optimizer stepped right after backward 3
    report = seen.reports[0]
    assert report["backward_calls"] == 4 and report["params_stepped"] is True
    assert report["params_stepped_by"] == "opt" and report["params_stepped_named"] is True
    assert "and `opt.step()` ran since the last backward: that update, or code after it" in report["sentence"]


def test_a_nan_there_before_the_first_step_is_still_the_initialisation():
    with watching() as seen:
        accumulating_loop(poison_at=0)
    report = seen.reports[0]
    assert report["backward_calls"] == 0 and "params_stepped" not in report
    assert "before any update: its initialisation or a loaded checkpoint put it there" in report["sentence"]


class Positional(nn.Module):
    """A sinusoid table kept as a buffer and added to the embeddings."""

    def __init__(self, width: int = 8, length: int = 16) -> None:
        super().__init__()
        position = torch.arange(length, dtype=torch.float32)[:, None]
        self.register_buffer("table", torch.sin(position / 10 ** (torch.arange(width) / width)))

    def forward(self, x):
        return x + self.table[: x.size(1)]


def test_an_inf_in_a_buffer_is_named_with_the_module():
    torch.manual_seed(0)
    embed, positional, head = nn.Embedding(10, 8), Positional(), nn.Linear(8, 10)
    positional.table[2, 3] = float("inf")
    ids = torch.randint(0, 10, (4, 6))
    with watching() as seen:
        F.cross_entropy(head(positional(embed(ids))).flatten(0, 1), ids.flatten()).backward()
    report = seen.reports[0]
    assert report["qualname"] == "positional" and report["inputs_bad"] is False
    assert report["buffers_bad"] == ["table"] and report["params_bad"] == []
    assert "its inputs were finite, but its buffers already had Inf (`table`)" in report["sentence"]


def test_a_healthy_buffer_is_not_named():
    torch.manual_seed(0)
    positional, head = Positional(), nn.Linear(8, 1)
    with torch.no_grad():
        head.weight[0, 0] = float("nan")  # the true bug is next to it, in a parameter
    with watching() as seen:
        head(positional(torch.randn(2, 6, 8))).sum().backward()
    report = seen.reports[0]
    assert report["qualname"] == "head" and report["params_bad"] == ["weight"] and "buffers_bad" not in report


class DroppedEmbedding(nn.Module):
    """A language model whose forward reads its embedding's weight itself (an embedding dropout),
    so the embedding module is never called: the NaN first shows in the dropout after it."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Embedding(12, 8)
        self.lockdrop = nn.Dropout(0.0)
        self.decoder = nn.Linear(8, 12)

    def forward(self, ids):
        emb = F.embedding(ids, self.encoder.weight * 1.0)
        return self.decoder(self.lockdrop(emb))


def test_a_parent_whose_own_weights_hold_the_nan_says_so():
    torch.manual_seed(0)
    model = DroppedEmbedding()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    ids = torch.arange(12).view(3, 4)
    with watching() as seen:
        for step in range(3):
            if step == 2:
                with torch.no_grad():
                    model.encoder.weight[5, 0] = float("nan")
            opt.zero_grad()
            F.cross_entropy(model(ids).flatten(0, 1), ids.flatten()).backward()
            opt.step()
    report = seen.reports[0]
    assert report["made_inside"] is True and report["qualname"] == "model"
    assert report["params_bad"] == ["encoder.weight"] and report["params_stepped"] is True
    assert "no module before made any; its parameters already had NaN (`encoder.weight`)" in report["sentence"]


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 16)
        self.norm = nn.BatchNorm1d(16, momentum=0.5)
        self.out = nn.Linear(16, 2)

    def forward(self, x):
        return self.out(self.norm(self.fc(x)))


def fit_and_test():
    """Train on tiny inputs, then test() on inputs 30 000 times larger: in eval mode BatchNorm
    divides by its running statistics (learnt on the tiny ones), not by the batch's."""
    torch.manual_seed(0)
    model = Classifier()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    for _ in range(12):
        x = torch.randn(32, 4) * 1e-3
        opt.zero_grad()
        F.cross_entropy(model(x), (x[:, 0] > 0).long()).backward()
        opt.step()
    model.eval()
    with torch.no_grad():
        model(torch.randn(32, 4) * 30)


def test_a_report_made_in_a_test_loop_says_it_was_evaluation():
    with watching(threshold=1e3) as seen:
        fit_and_test()
    [report] = seen.reports
    assert report["kind"] == "exploding_output" and report["qualname"] == "model.norm" and report["step"] == 12
    assert report["evaluation"] == {"eval_mode": True, "grad_off": "no_grad"}
    assert "at step 12, in evaluation (`model` in eval mode, under no_grad)" in report["sentence"]


def test_the_same_explosion_in_training_is_not_called_evaluation():
    torch.manual_seed(0)
    model = Classifier()
    with torch.no_grad():
        model.out.weight.mul_(1e6)  # the true bug next to it: a training forward explodes
    with watching(threshold=1e3) as seen:
        F.cross_entropy(model(torch.randn(32, 4)), torch.zeros(32, dtype=torch.long)).backward()
    report = seen.reports[0]
    assert report["kind"] == "exploding_output" and report["qualname"] == "model.out"
    assert "evaluation" not in report and "evaluation" not in report["sentence"]


class MaskedSelfAttention(nn.Module):
    """Causal self-attention keeping its additive mask (0 above nothing, -Inf above the diagonal) as
    a buffer, with no 1/sqrt(d) scaling: large activations overflow ``q @ k`` in float16."""

    def __init__(self, width: int = 16, length: int = 8) -> None:
        super().__init__()
        self.qkv, self.out = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.register_buffer("causal", torch.full((length, length), float("-inf")).triu(1))

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = q @ k.transpose(-2, -1)  # unscaled: overflows float16
        return self.out(F.softmax(scores + self.causal, dim=-1) @ v)


def test_a_causal_mask_buffer_does_not_take_the_blame_for_a_float16_overflow():
    torch.manual_seed(1)
    model = nn.Sequential(nn.Linear(16, 16), MaskedSelfAttention()).half()
    with torch.no_grad():
        model[0].weight.mul_(2000.0)
    with watching() as seen:
        model(torch.randn(2, 8, 16).half()).float().pow(2).mean().backward()
    report = seen.reports[0]
    assert report["made_inside"] is True and report["qualname"] == "model.1" and "buffers_bad" not in report
    assert "buffers already had" not in report["sentence"]
    assert report["sentence"].endswith(
        "float16 overflows past 65504: keep the matrix product in float32, scale the attention (q and k by "
        "1/sqrt(head size) before the product, or F.scaled_dot_product_attention), or use bfloat16"
    )


class Decoder(nn.Module):
    """A tiny language model: an attention child holding the usual causal ``mask`` buffer, and its
    own forward turning sharp logits into log-probabilities by hand."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.head = nn.Embedding(20, 16), nn.Linear(16, 20)
        self.attn = MaskedSelfAttention()
        self.attn.register_buffer("mask", torch.full((8, 8), float("-inf")).triu(1))

    def forward(self, ids):
        logits = self.head(self.attn(self.embed(ids)))
        return torch.log(F.softmax(logits * 1e3, dim=-1))  # underflows to 0, then log


def test_a_childs_mask_buffer_does_not_hide_the_parents_own_op():
    torch.manual_seed(0)
    model = Decoder()
    ids = torch.randint(0, 20, (3, 8))
    with watching() as seen:
        F.nll_loss(model(ids).clamp(min=-100).flatten(0, 1), ids.flatten()).backward()
    report = seen.reports[0]
    assert report["qualname"] == "model" and "buffers_bad" not in report and report["own_code"] is True
    assert "its inputs were finite: its own forward made it, at line" in report["sentence"]
    assert report["sentence"].endswith(f"`log` of {report['counts']['neginf']} zeros")


class Normalizer(nn.Module):
    """Running statistics and a table kept as buffers, one of them poisoned with NaN, one with Inf."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("shift", torch.zeros(8))
        self.register_buffer("table", torch.linspace(0.5, 2.0, 8))

    def forward(self, x):
        return (x - self.shift) * self.table


def test_each_buffer_is_named_with_what_it_holds():
    norm = Normalizer()
    norm.shift[1], norm.table[2] = float("nan"), float("inf")
    with watching() as seen:
        norm(torch.randn(4, 8)).sum()
    report = seen.reports[0]
    assert report["buffers_bad"] == ["shift", "table"] and report["buffers_bad_kinds"] == ["NaN", "Inf"]
    assert "its buffers already had NaN (`shift`) and Inf (`table`), set when" in report["sentence"]
    only_inf = Normalizer()
    only_inf.table[0] = float("-inf")  # -Inf, but its other values are no mask's 0 and 1
    with watching() as seen:
        only_inf(torch.randn(4, 8)).sum()
    assert "its buffers already had Inf (`table`)" in seen.reports[0]["sentence"]
    fresh = Normalizer()
    fresh.shift[0] = float("-inf")  # all 0 and -Inf, like a mask, but a vector of statistics: named
    with watching() as seen:
        fresh(torch.randn(4, 8)).sum()
    assert seen.reports[0]["buffers_bad"] == ["shift"]


class Sharpener(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x):
        return torch.log(F.relu(self.lin(x)))


class Unlisted(Sharpener):
    def named_buffers(self, *args, **kwargs):
        raise RuntimeError("this module lists no buffers")


def test_a_module_whose_buffers_cannot_be_listed_is_still_reported():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), Unlisted())
    with watching() as seen:
        torch.nan_to_num(model(torch.randn(8, 4)), neginf=0.0).mean().backward()
    [report] = seen.reports
    assert report["qualname"] == "model.1" and seen.watch.errors == []
    assert "its own forward made it" in report["sentence"]


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.log(F.relu(self.lin(x)))


class Checkpointed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block, self.head = Block(), nn.Linear(8, 1)

    def forward(self, x):
        return self.head(torch.utils.checkpoint.checkpoint(self.block, x, use_reentrant=True))


def test_a_checkpointed_training_forward_is_not_called_evaluation():
    torch.manual_seed(0)
    model = Checkpointed()
    with watching() as seen:
        model(torch.randn(4, 8, requires_grad=True)).nan_to_num(neginf=0.0).mean().backward()
    report = seen.reports[0]
    assert report["qualname"].endswith("block") and "evaluation" not in report
    assert "evaluation" not in report["sentence"] and "no_grad" not in report["sentence"]


def test_fakes_drawn_under_no_grad_in_a_training_step_are_not_called_evaluation():
    torch.manual_seed(0)
    generator, critic = Block(), nn.Linear(8, 1)
    opt_c = torch.optim.Adam(critic.parameters())
    with watching() as seen:
        with torch.no_grad():
            fake = torch.nan_to_num(generator(torch.randn(16, 8)), neginf=0.0)
        F.softplus(critic(fake)).mean().backward()
        opt_c.step()
    report = seen.reports[0]
    assert report["qualname"] == "generator" and report["evaluation"] == {"eval_mode": False, "grad_off": "no_grad"}
    assert "at step 0, under no_grad: " in report["sentence"] and "evaluation" not in report["sentence"]


class GraphMixer(nn.Module):
    """Mixes features through a fixed matrix kept as a buffer (a graph's adjacency, a projection),
    then a Linear: the matrix is the only place a non-finite value can come from."""

    def __init__(self, matrix: torch.Tensor, name: str = "adjacency") -> None:
        super().__init__()
        self.lin, self.name = nn.Linear(4, 1), name
        self.register_buffer(name, matrix)

    def forward(self, x):
        return self.lin(x @ getattr(self, self.name))


def mixer_report(matrix: torch.Tensor, name: str = "adjacency") -> dict:
    torch.manual_seed(0)
    with watching() as seen:
        GraphMixer(matrix, name)(torch.randn(6, 4)).sum()
    return seen.reports[0]


def test_an_identity_adjacency_with_one_minus_inf_is_blamed():
    graph = torch.eye(4)
    graph[2, 0] = float("-inf")  # finite values 0 and 1: no additive mask looks like this
    report = mixer_report(graph)
    assert report["made_inside"] is True and report["buffers_bad"] == ["adjacency"]
    assert report["buffers_bad_kinds"] == ["Inf"]
    assert "its buffers already had Inf (`adjacency`)" in report["sentence"]


def test_a_zero_matrix_with_a_lone_minus_inf_is_blamed_unless_named_as_a_mask():
    lone = torch.zeros(4, 4)
    lone[1, 1] = float("-inf")  # on the diagonal, with finite values beside it: no triangle, no band
    assert mixer_report(lone.clone(), "proj")["buffers_bad"] == ["proj"]
    corner = torch.zeros(4, 4)
    corner[0, 3] = float("-inf")  # a triangle of one: too few to be a causal mask
    assert mixer_report(corner, "proj")["buffers_bad"] == ["proj"]
    for name in ("attn_mask", "rel_bias"):
        assert "buffers_bad" not in mixer_report(lone.clone(), name)


def test_zero_matrices_with_minus_inf_filling_whole_diagonals_are_masks():
    upper = torch.full((5, 5), float("-inf")).triu(1)
    lower = torch.full((5, 5), float("-inf")).tril(-1)
    window = upper + torch.full((5, 5), float("-inf")).tril(-2)  # causal, and at most two back
    prefix = torch.full((3, 5), float("-inf")).triu(3)  # three new tokens after two cached ones
    batched = upper.expand(2, 1, 5, 5).clone()
    no_self = torch.zeros(5, 5).fill_diagonal_(float("-inf"))  # no token attends to itself
    for matrix in (upper, lower, window, prefix, batched, no_self):
        assert R._mask("future", matrix), matrix
    assert not R._mask("future", torch.full((5, 5), float("-inf")))  # nothing finite: not a mask
    uneven = torch.stack([upper, lower])  # not the same pattern in every slice
    assert not R._mask("future", uneven)


def test_a_mask_named_buffer_holding_plus_inf_is_blamed_for_the_softmax_nan():
    pad = torch.zeros(4, 4)
    pad[0, 0] = float("inf")  # +Inf: softmax of the row is NaN, no mask holds +Inf

    class Padded(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 1)
            self.register_buffer("pad_mask", pad)

        def forward(self, x):
            return self.lin(x @ F.softmax(self.pad_mask, dim=-1))

    with watching() as seen:
        Padded()(torch.randn(6, 4)).sum()
    report = seen.reports[0]
    assert report["buffers_bad"] == ["pad_mask"] and report["buffers_bad_kinds"] == ["Inf"]
    assert "its buffers already had Inf (`pad_mask`)" in report["sentence"]
    assert not R._mask("pad_mask", pad) and not R._mask("causal_bias", pad)
