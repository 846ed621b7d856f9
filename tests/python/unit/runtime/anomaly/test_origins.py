"""Origins: the innermost module whose own forward code made a NaN/Inf, the line, keyword inputs,
reduced precision, and gradients ordered by their distance from the loss.

The models are small, written for these tests in the shapes real code has: a GPT attention block
(query/key/value from one projection, a causal mask, softmax, dropout), a DETR-like decoder
layer calling ``nn.MultiheadAttention`` by keyword.
"""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.nn import functional as F

from support.anomaly import watching


def line_of(marker: str, path: str) -> str:
    for number, text in enumerate(open(path, encoding="utf-8"), 1):
        if marker in text and "line_of(" not in text:
            return f"{path}:{number}"
    raise AssertionError(marker)


class CausalAttention(nn.Module):
    def __init__(self, width: int = 32, heads: int = 4, length: int = 8) -> None:
        super().__init__()
        self.heads = heads
        self.to_qkv = nn.Linear(width, 3 * width)
        self.out = nn.Linear(width, width)
        self.attn_dropout = nn.Dropout(0.0)
        self.register_buffer("causal", torch.tril(torch.ones(length, length)).view(1, 1, length, length))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in self.to_qkv(x).split(c, 2))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))  # the product that overflows
        scores = scores.masked_fill(self.causal[:, :, :t, :t] == 0, float("-inf"))
        weights = self.attn_dropout(F.softmax(scores, dim=-1))
        y = weights @ v
        return self.out(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm, self.attn = nn.LayerNorm(32), CausalAttention()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.attn(self.norm(x))


def test_a_float16_attention_overflow_names_the_attention_module_and_its_line():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), nn.Linear(32, 5)).half()
    with torch.no_grad():
        model[0].attn.to_qkv.weight.mul_(300)  # scores past float16's 65504
    with watching() as seen:
        model(torch.randn(2, 8, 32).half()).float().sum().backward()
    report = seen.reports[0]
    assert report["kind"] == "nonfinite_output" and report["made_inside"]
    assert report["qualname"] == "model.0.attn" and report["module_type"] == "CausalAttention"
    assert report["reached"]["qualname"] == "model.0.attn.attn_dropout"
    assert report["origin_op"] == "matrix product" and report["origin_dtype"] == "float16"
    assert report["origin_where"] == line_of("# the product that overflows", __file__)
    assert report["origin_code"] == "scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))"
    text = report["sentence"]
    assert "made inside the forward of `model.0.attn` (CausalAttention)" in text
    assert "float16" in text and "float32" in text and "bfloat16" in text
    assert "outside the modules" not in text


def test_the_same_block_in_float32_is_silent():
    torch.manual_seed(0)
    model = nn.Sequential(Block(), nn.Linear(32, 5))
    with watching() as seen:
        model(torch.randn(2, 8, 32)).sum().backward()
    assert seen.reports == []


class Normalise(nn.Module):
    """Calls its child on a value its own code made: a log of a non-positive number."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        shifted = x - x.max() - 1.0
        logged = torch.log(shifted)  # log of negatives
        return self.scale(logged)


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = Normalise()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x * 2)


def test_the_innermost_parent_with_finite_arguments_is_named_with_the_op():
    torch.manual_seed(0)
    model = Outer()
    x = torch.randn(3, 4, requires_grad=True)
    with watching() as seen:
        model(x).sum().backward()
    report = seen.reports[0]
    assert report["qualname"] == "model.inner" and report["module_type"] == "Normalise"
    assert report["origin_op"] == "log" and report["origin_where"] == line_of("# log of negatives", __file__)
    assert "made inside the forward of `model.inner` (Normalise)" in report["sentence"]
    assert "it reached `model.inner.scale` (Linear)" in report["sentence"]


class Passes(nn.Module):
    """Forwards what it was given: a NaN in its argument is not its own."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = Normalise()
        self.first = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.first(x)
        broken = h * float("nan")  # made here, then passed on
        return self.inner.scale(broken)


def test_a_nan_in_the_data_is_not_blamed_on_a_module():
    torch.manual_seed(0)
    model = Outer()
    x = torch.randn(3, 4)
    x[0, 0] = float("nan")
    with watching() as seen:
        model(torch.exp(x)).sum().backward()
    report = seen.reports[0]
    assert not report.get("made_inside")
    assert "it came from outside the modules" in report["sentence"]


def test_a_parent_whose_child_made_nothing_is_named_even_without_a_known_op():
    torch.manual_seed(0)
    model = Passes()
    with watching() as seen:
        model(torch.randn(3, 4)).sum().backward()
    report = seen.reports[0]
    assert report["qualname"] == "model" and report["made_inside"]
    assert report["reached"]["qualname"] == "model.inner.scale"


class DecoderLayer(nn.Module):
    """DETR's shape: cross-attention called with keyword arguments only."""

    def __init__(self, width: int = 16) -> None:
        super().__init__()
        self.multihead_attn = nn.MultiheadAttention(width, 2)
        self.norm = nn.LayerNorm(width)

    def forward(self, tgt: torch.Tensor, memory: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
        out = self.multihead_attn(query=tgt, key=memory + pos, value=memory)[0]
        return self.norm(tgt + out)


def test_a_nan_passed_by_keyword_is_seen_in_the_inputs():
    torch.manual_seed(0)
    layer = DecoderLayer()
    memory = torch.randn(6, 2, 16)
    memory[2, 1, 3] = float("nan")  # a NaN in `value` (and so in `key`)
    with watching() as seen:
        layer(torch.randn(4, 2, 16), memory, torch.randn(6, 2, 16)).sum().backward()
    report = seen.reports[0]
    assert report["qualname"] == "layer.multihead_attn" and report["inputs_bad"]
    assert set(report["bad_input_names"]) == {"key", "value"}
    assert "its inputs already had NaN (`key`, `value`:" in report["sentence"]
    assert "inputs were finite" not in report["sentence"]


def test_keyword_only_value_nan_is_seen():
    torch.manual_seed(0)
    attention = nn.MultiheadAttention(8, 2)
    q, k, v = torch.randn(3, 1, 8), torch.randn(5, 1, 8), torch.randn(5, 1, 8)
    v[1, 0, 0] = float("nan")
    with watching() as seen:
        attention(query=q, key=k, value=v)[0].sum().backward()
    report = seen.reports[0]
    assert report["bad_input_names"] == ["value"] and report["inputs_counts"]["nan"] == 1


class HeadFirst(nn.Module):
    """Registers its last layer first: registration order is not distance from the loss."""

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Linear(8, 1)
        self.body = nn.Sequential(nn.Linear(4, 8), nn.Linear(8, 8))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def test_gradients_are_ordered_by_distance_from_the_loss():
    torch.manual_seed(0)
    model = HeadFirst()
    with watching(threshold=50.0, checks=["backward"]) as seen:
        (model(torch.randn(16, 4)) * 1e3).sum().backward()
    [report] = seen.reports
    assert report["kind"] == "exploding_grad" and report["bad_params"] == 6
    # registration order reversed would start at `model.body.1.bias`, two layers from the loss
    assert report["param"].startswith("model.head.") and report["nearest"].startswith("model.head.")


class GraphNet(nn.Module):
    """A two-layer classifier returning log-probabilities, written as ``log(softmax)`` by hand."""

    def __init__(self, sharp: float = 1.0) -> None:
        super().__init__()
        self.layer1, self.layer2, self.sharp = nn.Linear(6, 8), nn.Linear(8, 3), sharp

    def forward(self, x):
        h = F.relu(self.layer1(x))
        return torch.log(F.softmax(self.layer2(h) * self.sharp, dim=1))  # log of a softmax that underflows


def test_a_modules_own_forward_code_is_named_when_its_children_were_finite():
    torch.manual_seed(0)
    model = GraphNet(sharp=1e4)
    with watching() as seen:
        F.nll_loss(model(torch.randn(16, 6)), torch.zeros(16, dtype=torch.long)).backward()
    report = seen.reports[0]
    assert report["qualname"] == "model" and report["own_code"] is True and report["origin_op"] == "log"
    assert report["origin_where"] == line_of("# log of a softmax that underflows", __file__)
    assert "its inputs were finite: its own forward made it, at line" in report["sentence"]
    assert report["sentence"].endswith(
        "`return torch.log(F.softmax(self.layer2(h) * self.sharp, dim=1))`: `log` of "
        + f"{report['counts']['neginf']} zeros"
    )


def test_a_childs_nan_weight_is_still_named_at_the_child():
    torch.manual_seed(0)
    model = GraphNet()
    with torch.no_grad():
        model.layer2.weight[1, 2] = float("nan")
    with watching() as seen:
        F.nll_loss(model(torch.randn(16, 6)), torch.zeros(16, dtype=torch.long)).backward()
    report = seen.reports[0]
    assert report["qualname"] == "model.layer2" and report["params_bad"] == ["weight"] and "own_code" not in report


class Policy(nn.Module):
    """A policy head returning log-probabilities, with a guarded entropy term computed beside them."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 6)

    def forward(self, x):
        p = F.softmax(self.lin(x) * 1e3, dim=-1)
        logp = torch.log(p)  # the unguarded one
        self.entropy = -(p * torch.log(p + 1e-9)).sum(-1).mean()
        return logp


def test_when_several_lines_do_the_op_none_is_asserted():
    torch.manual_seed(0)
    model = Policy()
    with watching() as seen:
        torch.nan_to_num(model(torch.randn(8, 4)), neginf=0.0).mean().backward()
    report = seen.reports[0]
    first = int(line_of("# the unguarded one", __file__).rsplit(":", 1)[1])
    assert report["own_code"] is True and report["origin_lines"] == [first, first + 1]
    assert "origin_where" not in report
    assert (
        f"its own forward made it, at one of lines {first}, {first + 1} (each does `log`): `log` of"
        in (report["sentence"])
    )


class HalfRoot(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        return torch.sqrt(self.lin(x))  # negative values: NaN


def test_a_float16_sqrt_of_negatives_is_no_overflow():
    torch.manual_seed(0)
    model = HalfRoot().half()
    with watching() as seen:
        torch.nan_to_num(model(torch.randn(4, 8).half())).float().mean().backward()
    report = seen.reports[0]
    assert report["origin_op"] == "sqrt" and report["origin_where"] == line_of("# negative values: NaN", __file__)
    nan = report["counts"]["nan"]
    assert report["sentence"].endswith(f"`sqrt` gave {nan} NaN (roots of negative values, or of NaN)")
    assert "overflow" not in report["sentence"]


class ScaledSimilarityLoss(nn.Module):
    """A contrastive loss of CLIP's shape: a float32 0-d temperature times float16 features."""

    def forward(self, image, text, scale):
        logits = scale * image @ text.T
        labels = torch.arange(image.shape[0])
        return F.cross_entropy(logits.float(), labels)


def test_a_float16_product_with_a_float32_scalar_is_named_in_float16_with_its_advice():
    """``scale * features``: a float32 scalar (an unclamped CLIP logit scale, 1.6e5) times float16
    features is a float16 product, and overflows there. The op's dtype was read from its first
    operand (the float32 scalar), so the report of open_clip's loss said nothing of float16."""
    torch.manual_seed(0)
    image = F.normalize(torch.randn(8, 16), dim=1).half().requires_grad_()
    text = F.normalize(torch.randn(8, 16), dim=1).half().requires_grad_()
    with watching(mode="log") as seen:
        ScaledSimilarityLoss()(image, text, torch.tensor(1.6e5, requires_grad=True))  # a learnt scale
    report = seen.reports[0]
    assert report["own_code"] and report["origin_op"] == "product"
    assert report["origin_dtype"] == "float16"
    assert "float16" in report["sentence"] and "keep the op in float32" in report["sentence"]


class Standardise(nn.Module):
    """Normalises its input in its own forward, rebinding the argument, as vq-vae-2-style code does,
    with an eps of 0, then calls a child."""

    def __init__(self) -> None:
        super().__init__()
        self.embed, self.head = nn.Linear(6, 6), nn.Linear(6, 2)
        self.eps = 0.0

    def forward(self, x):
        x = self.embed(x) * 0  # constant rows, finite: the NaN is made below
        x = (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + self.eps)  # the zero std
        return self.head(x)


def test_a_forward_that_rebinds_its_argument_to_the_nan_it_made_is_named():
    """The frame's ``x`` now holds the NaN, but the forward received a finite ``x``: the NaN was made
    there (it read as "from outside the modules" before, since the argument was read from the locals)."""
    torch.manual_seed(0)
    model = nn.Sequential(Standardise())
    with watching(mode="log") as seen:
        model(torch.randn(4, 6)).sum().backward()
    report = seen.reports[0]
    assert report["kind"] == "nonfinite_output" and report["made_inside"] and report["module"] == "0"
    assert report["reached"]["module"] == "0.head" and not report.get("data_bad")
    assert report["origin_op"] == "division" and "x.std(1, keepdim=True) + self.eps" in report["origin_code"]
    assert "NaN made inside the forward of `model.0` (Standardise)" in report["sentence"]
    assert "a standard deviation of 0" in report["sentence"] and "outside the modules" not in report["sentence"]
