"""Inferring what the user did not give: one input batch from the first layer, then targets and loss."""

from __future__ import annotations

import inspect

from .. import result as R
from ..discovery import EXAMPLE_FUNCTION
from ..preconditions import unregistered_layers
from .construct import forward_params
from .core import OUTPUT, Example, ExampleError, class_dim, cross_entropy, pick_output
from .infer_targets import infer_targets
from .load import user_traceback
from .snippet import example_snippet

DEFAULT_BATCH = 8
DEFAULT_SPATIAL = {1: 64, 2: 32, 3: 16}  # Conv1d length, Conv2d HxW, Conv3d DxHxW
DEFAULT_SEQ_LEN = 16


def _required_forward_inputs(model) -> list[str]:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return ["x"]
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _generator(options: dict):
    import torch

    return torch.Generator().manual_seed(int(options.get("seed", 0)))


def infer_inputs(model, cls, options: dict) -> tuple[tuple, str]:
    """One batch for ``model`` from its first layer; the sentence says what was assumed."""
    import torch.nn as nn

    required = _required_forward_inputs(model)
    if len(required) > 1:
        raise ExampleError(
            R.ERR_NEEDS_EXAMPLE,
            f"{cls.__name__}.forward takes {len(required)} inputs ({', '.join(required)}): Torch Doctor infers a single input only. "
            f"Add a {EXAMPLE_FUNCTION}() function that returns the inputs as a tuple.",
            snippet=example_snippet(cls.__name__, [], required),
        )
    batch = int(options.get("batchSize", DEFAULT_BATCH))
    found = _first_layer(model)
    if found is None:
        raise _no_layer_error(cls, model)
    name, layer = found
    g = _generator(options)
    dtype, device = _float_dtype_and_device(model)
    where = f"first layer {name} ({type(layer).__name__}"
    if isinstance(layer, (nn.Embedding, nn.EmbeddingBag)):
        seq = int(options.get("seqLen", DEFAULT_SEQ_LEN))
        x = _randint(layer.num_embeddings, (batch, seq), g, device)
        return (
            (x,),
            f"Input: integer indices of shape {tuple(x.shape)} in [0, {layer.num_embeddings}) from the {where}, num_embeddings={layer.num_embeddings}).",
        )
    if isinstance(layer, nn.RNNBase):
        seq = int(options.get("seqLen", DEFAULT_SEQ_LEN))
        shape: tuple[int, ...] = (batch, seq, layer.input_size) if layer.batch_first else (seq, batch, layer.input_size)
        order = "batch_first" if layer.batch_first else "sequence first, batch_first=False"
        return (
            _randn(shape, g, dtype, device),
        ), f"Input: {shape} ({order}) from the {where}, input_size={layer.input_size})."
    if isinstance(layer, nn.modules.conv._ConvNd):
        dims = len(layer.kernel_size)
        if layer.in_channels == 0:
            raise _no_layer_error(cls, model)
        sizes, why = _spatial(model, layer, dims, options, dtype, device)
        shape = (batch, layer.in_channels) + sizes
        return (_randn(shape, g, dtype, device),), (
            f"Input: {shape} (N, C{', L' if dims == 1 else ', H, W' if dims == 2 else ', D, H, W'}) from the {where}, "
            f"in_channels={layer.in_channels}); {why}."
        )
    if layer.in_features == 0:  # a lazy Linear decides its size on the first batch
        raise _no_layer_error(cls, model)
    shape = (batch, layer.in_features)
    return (_randn(shape, g, dtype, device),), f"Input: {shape} from the {where}, in_features={layer.in_features})."


def _spatial(model, conv, dims: int, options: dict, dtype, device) -> tuple[tuple[int, ...], str]:
    """The given spatialSize (an int, or one size per axis: [H, W]), else the one the first Linear after
    the convs fixes, else our default."""
    from .spatial import forward_runs, solve

    given = options.get("spatialSize")
    if given is not None:
        sizes = _given_sizes(given, dims)
        return sizes, f"spatial size {'x'.join(map(str, sizes))} from the option spatialSize"
    default = DEFAULT_SPATIAL[dims]
    solved = solve(model, conv, dims, default, dtype, device)
    if solved is not None and solved[1]:
        return solved[0], solved[1] + " (option spatialSize to choose another)"
    if solved is not None:
        return solved[0], f"spatial size {default} is Torch Doctor's default and fits the Linear after the convolutions"
    if _latent_first(conv) and forward_runs(model, conv.in_channels, (1,) * dims, dtype, device):
        return (1,) * dims, (
            "spatial size 1: a model that starts with a transposed convolution (a DCGAN-style generator) takes a latent "
            f"vector as (N, {conv.in_channels}{', 1' * dims}) (option spatialSize to choose another)"
        )
    return (default,) * dims, f"spatial size {default} is Torch Doctor's default, an assumption (option spatialSize)"


def _latent_first(conv) -> bool:
    """A first transposed convolution that a 1x1 input suits (kernel > 2 x padding on every axis):
    a generator's latent (N, nz, 1, 1), when the whole forward then runs (a decoder or a U-Net's
    upsampling block takes feature maps, and a convolution further on rejects 1x1: the default stays). Guessing 32x32 there asked it to paint images 35 times larger
    from random noise, and the overfit test called a correct DCGAN generator a FAIL."""
    import torch.nn as nn

    if not isinstance(conv, nn.modules.conv._ConvTransposeNd):
        return False
    padding = conv.padding if isinstance(conv.padding, tuple) else ()  # a str ('same') on plain convs only
    return len(padding) == len(conv.kernel_size) and all(k - 2 * int(p) >= 1 for k, p in zip(conv.kernel_size, padding))


def _given_sizes(given, dims: int) -> tuple[int, ...]:
    """``spatialSize`` as one size per axis: 28 -> (28, 28); [64, 128] -> (64, 128) for a Conv2d."""
    if isinstance(given, (list, tuple)):
        if len(given) != dims:
            raise ExampleError(
                R.ERR_USAGE,
                f"the option spatialSize {list(given)} has {len(given)} sizes, and the first convolution takes {dims} "
                f"spatial dimensions: give {dims} sizes, or one number for all of them",
            )
        return tuple(int(v) for v in given)
    return (int(given),) * dims


def assumed_spatial(ex, options: dict) -> bool:
    """True when the input's spatial size is Torch Doctor's guess, not the user's."""
    import torch.nn as nn

    if ex.source != "inferred" or options.get("spatialSize") is not None:
        return False
    found = _first_layer(ex.model)
    return found is not None and isinstance(found[1], nn.modules.conv._ConvNd)


def assumed_size_failure(ex, options: dict) -> str | None:
    """The sentence for a forward that fails at a Linear after the convolutions when the spatial size
    was our assumption: the mismatch may be ours, so no bug is claimed. None in any other case."""
    import torch.nn as nn

    from ..shape_trace import trace

    if not assumed_spatial(ex, options):
        return None
    failure = trace(ex.model, ex.inputs, ex.kwargs).failure
    if failure is None or not isinstance(failure.module, nn.Linear):
        return None
    got = failure.input_shapes[0][-1] if failure.input_shapes and isinstance(failure.input_shapes[0], list) else "?"
    shape = tuple(ex.inputs[0].shape)
    tried = "square or height and width apart" if len(shape) == 4 else "the same size on every axis"
    return (
        f"At the input size Torch Doctor assumed, {shape}, the features reaching `{failure.module_name}` are {got}, not its "
        f"in_features={failure.module.in_features}, and no input size up to 512 ({tried}) gives "
        f"{failure.module.in_features}. "
        f"That may be our assumption rather than a bug: give the size with the option spatialSize, or add a "
        f"{EXAMPLE_FUNCTION}() that builds one real batch."
    )


def _assumption_error(ex, options: dict) -> ExampleError | None:
    text = assumed_size_failure(ex, options)
    if text is None:
        return None
    cls = type(ex.model)
    return ExampleError(
        R.ERR_NEEDS_EXAMPLE, text, snippet=example_snippet(cls.__name__, [], forward_params(cls)), inferred=ex.inferred
    )


def _first_layer(model):
    """The first layer (registration order) whose constructor says what input it takes."""
    import torch.nn as nn

    known = (nn.Linear, nn.modules.conv._ConvNd, nn.Embedding, nn.EmbeddingBag, nn.RNNBase)
    for name, m in model.named_modules():
        if isinstance(m, known) and not isinstance(m, nn.modules.lazy.LazyModuleMixin):
            return name, m
        if isinstance(m, nn.modules.lazy.LazyModuleMixin):
            return None
    return None


def _no_layer_error(cls, model) -> ExampleError:
    hidden = unregistered_layers(model)
    if hidden:  # the real bug, and the reason nothing is visible
        return ExampleError(
            R.ERR_NEEDS_EXAMPLE, " ".join(hidden), snippet=example_snippet(cls.__name__, [], forward_params(cls))
        )
    leaves = [type(m).__name__ for m in model.modules() if not list(m.children())]
    first = leaves[0] if leaves else "none"
    return ExampleError(
        R.ERR_NEEDS_EXAMPLE,
        f"No layer of {cls.__name__} tells the input size (Torch Doctor reads it from a first Linear, Conv, Embedding or RNN layer; "
        f"the first layer here is {first}). Add a {EXAMPLE_FUNCTION}() function that builds one batch.",
        snippet=example_snippet(cls.__name__, [], forward_params(cls)),
    )


def _float_dtype_and_device(model):
    import torch

    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype, p.device
    return torch.float32, torch.device("cpu")


def _randn(shape, g, dtype, device):
    import torch

    return torch.randn(shape, generator=g).to(dtype=dtype, device=device)


def _randint(high, shape, g, device):
    import torch

    return torch.randint(0, high, shape, generator=g).to(device)


def complete(ex: Example, options: dict) -> Example:
    """Targets and loss, inferred from one forward when the user gave none."""
    if ex.loss_fn is not None and (ex.targets is not None or ex.loss_sees != "output"):
        return ex  # the user's loss (or the model's own) needs no targets of ours
    import torch

    try:
        with torch.no_grad():
            raw = ex.forward()
            out = pick_output(raw) if ex.loss_sees == OUTPUT else raw
    except ExampleError:
        raise
    except Exception as exc:
        from ..shape_trace import explain_forward_failure

        assumed = _assumption_error(ex, options)
        if assumed is not None:
            raise assumed from None
        why = explain_forward_failure(ex.model, ex.inputs) or f"{type(exc).__name__}: {exc}"
        raise ExampleError(
            R.ERR_FORWARD,
            f"The forward of {type(ex.model).__name__} raises, so this check cannot run: {why} Run the Shape trace to see where.",
            detail=user_traceback(exc),
            inferred=ex.inferred,
        ) from None
    if ex.targets is not None:  # user targets, no loss: pick one from their types
        ex.loss_fn, ex.loss_name = _loss_for_targets(out, ex.targets)
        ex.inferred.append(
            f"Loss: {ex.loss_name}, chosen from the output {tuple(out.shape)} and targets {tuple(ex.targets.shape)} {ex.targets.dtype}."
        )
        return ex
    infer_targets(ex, raw, _generator({"seed": int(options.get("seed", 0)) + 1}))
    return ex


def _loss_for_targets(out, targets):
    import torch.nn.functional as F

    if not targets.is_floating_point() and class_dim(out, targets) is not None:
        return cross_entropy, "cross-entropy"  # (B, C, ...) or a language model's (B, T, V)
    return F.mse_loss, "mse"
