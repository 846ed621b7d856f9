"""The model's one line: parameters once by storage, blocks and modules counted, buffers checked."""

import math
import warnings

import pytest
import torch
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm, weight_norm

from torchdoctor.runtime.summary.api import stats, summarize
from torchdoctor.runtime.summary.module_info import storage_key, unique_parameters

pytestmark = pytest.mark.filterwarnings("error")


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(width)
        self.fc = nn.Linear(width, width)
        self.act = nn.GELU()
        self.drop = nn.Dropout(0.0)


class TiedLM(nn.Module):
    """nanoGPT's shape: embeddings, a ModuleList of blocks, a head tied to the token embedding."""

    def __init__(self, blocks: int = 4, width: int = 8, vocab: int = 50) -> None:
        super().__init__()
        self.transformer = nn.ModuleDict(
            dict(
                wte=nn.Embedding(vocab, width),
                wpe=nn.Embedding(16, width),
                h=nn.ModuleList([Block(width) for _ in range(blocks)]),
                ln_f=nn.LayerNorm(width),
            )
        )
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight


def test_tied_weights_count_once():
    model = TiedLM()
    info = stats(model)
    by_name = sum(p.numel() for _, p in model.named_parameters(remove_duplicate=False))
    once = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    assert info["params"] == once < by_name  # the head's 400 elements are the embedding's
    assert info["trainable"] == info["params"]


def test_two_parameters_over_one_storage_count_once():
    a = nn.Linear(4, 4, bias=False)
    b = nn.Linear(4, 4, bias=False)
    b.weight = nn.Parameter(a.weight.data)  # a new Parameter, the same memory
    pair = nn.Sequential(a, b)
    assert storage_key(a.weight) == storage_key(b.weight)
    assert stats(pair)["params"] == 16
    assert len(unique_parameters(pair.named_parameters())) == 1


def test_views_of_one_storage_are_different_elements():
    base = torch.zeros(10)
    assert storage_key(base[:5]) != storage_key(base[5:])


def test_blocks_and_modules_are_counted_and_named():
    model = TiedLM(blocks=4)
    info = stats(model)
    assert info["blocks"] == 4
    assert info["modules"] == len(list(model.modules())) - 1
    line = summarize(model)
    assert line.startswith(f"TiedLM 4 blocks, {info['modules']} modules, ")
    assert "layer" not in line


def test_a_stack_of_layers_is_not_blocks():
    mlp = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))
    assert stats(mlp)["blocks"] is None
    assert summarize(mlp).startswith("Sequential 5 modules, 130 params ")


def test_the_trunk_is_the_stack_with_most_parameters():
    class Head(Block):  # another class: not a stage of the trunk
        pass

    class TwoStacks(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.small = nn.ModuleList([Head(2) for _ in range(6)])
            self.big = nn.ModuleList([Block(16) for _ in range(3)])

    assert stats(TwoStacks())["blocks"] == 3


def test_sibling_stages_of_one_block_class_are_one_trunk():
    class Stages(nn.Module):  # ResNet-50's shape: layer1..layer4 of one block class, 3+4+6+3
        def __init__(self) -> None:
            super().__init__()
            for i, (n, width) in enumerate([(3, 2), (4, 4), (6, 8), (3, 16)], 1):
                setattr(self, f"layer{i}", nn.Sequential(*[Block(width) for _ in range(n)]))

    info = stats(Stages())
    assert info["blocks"] == 16 and "stacks" not in info
    assert summarize(Stages()).startswith("Stages 16 blocks, ")


class Towers(nn.Module):
    """CLIP's shape: a text and a vision encoder, each a stack of 2 layers, and small projections.
    The line said "2 blocks", as if there were one stack of 2 (issue: CLIPModel, WhisperModel)."""

    def __init__(self) -> None:
        super().__init__()
        self.text = nn.ModuleDict(dict(layers=nn.ModuleList([Block(8) for _ in range(2)])))
        self.vision = nn.ModuleDict(dict(layers=nn.ModuleList([Block(12) for _ in range(3)])))
        self.heads = nn.ModuleList([nn.Sequential(nn.Linear(2, 2)) for _ in range(2)])  # a few % of a tower


def test_each_tower_of_a_model_is_counted_in_order_and_small_stacks_are_not():
    info = stats(Towers())
    assert info["stacks"] == [2, 3] and info["blocks"] == 5
    assert summarize(Towers()).startswith("Towers 2+3 blocks, ")


def test_a_stack_inside_a_block_is_part_of_it_not_another_tower():
    class Nested(nn.Module):  # Funnel's shape: a list of lists of layers, stacks of stacks
        def __init__(self) -> None:
            super().__init__()
            self.blocks = nn.ModuleList([nn.ModuleList([Block(8), Block(8)]) for _ in range(3)])

    info = stats(Nested())
    assert info["blocks"] == 3 and "stacks" not in info


def test_leaves_say_no_module_count():
    assert summarize(nn.Dropout(0.1)) == "Dropout 0 params train"
    assert summarize(nn.Linear(1, 1)) == "Linear 2 params cpu train"


def test_parametrized_modules_count_their_parameters_not_their_machinery():
    model = nn.Sequential(weight_norm(nn.Linear(4, 4)), spectral_norm(nn.Linear(4, 3)))
    info = stats(model)
    assert info["modules"] == 2  # the parametrizations dicts and lists are not the model's modules
    # weight_norm: g (4x1) and v (4x4) plus the bias; spectral_norm: the original 3x4 and the bias
    assert info["params"] == 4 + 16 + 4 + 12 + 3
    assert "⚠" not in summarize(model)  # its _u/_v buffers are finite


def test_nan_in_a_buffer_marks_the_line():
    bn = nn.BatchNorm1d(3)
    with torch.no_grad():
        bn.running_mean[1] = math.nan
    net = nn.Sequential(nn.Linear(3, 3), bn)
    assert summarize(net).endswith("⚠ NaN/Inf in 1.running_mean")
    assert "1.running_mean" in stats(net)["nan_in"]


def test_integer_buffers_are_not_checked():
    bn = nn.BatchNorm1d(3)  # num_batches_tracked is an int64 buffer
    assert stats(bn)["nan_in"] == []


def test_quantized_layers_say_their_weights_are_not_counted():
    model = nn.Sequential(nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4)).eval()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch deprecates the quantization API it still ships
        quantized = torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)
    # the weights are packed in C++ objects: no parameter, no buffer; "0 params" alone reads empty
    line = summarize(quantized)
    assert line.startswith("Sequential 3 modules, 0 params (+2 quantized layers, weights not counted) eval"), line
    assert summarize(quantized[0]).startswith("Linear 0 params (quantized, weights not counted)")
    assert "quantized" not in stats(model)


def test_quantization_observers_before_any_data_are_no_nan_alarm():
    from torch.ao.quantization import get_default_qat_qconfig, prepare_qat

    model = nn.Sequential(nn.Linear(4, 4), nn.ReLU()).train()
    model.qconfig = get_default_qat_qconfig("fbgemm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch.ao.quantization is deprecated; still met in the wild
        prepared = prepare_qat(model)
    # observers start at min_val=+Inf, max_val=-Inf until they see data: their normal state
    assert "NaN/Inf" not in summarize(prepared)
    observer = next(m for m in prepared.modules() if hasattr(m, "min_val") and m.min_val.numel() == 1)
    observer.min_val.fill_(math.nan)  # a NaN is still one
    assert "NaN/Inf in" in summarize(prepared)


def test_a_fused_quantized_layer_says_its_weights_are_packed():
    from torch.ao.nn.intrinsic.quantized import ConvReLU2d

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        layer = ConvReLU2d(3, 4, 3)
    assert "(quantized, weights not counted)" in summarize(layer)
