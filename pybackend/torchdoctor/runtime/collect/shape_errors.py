"""Say in plain words why a forward raised: the shape trace check (worker) and the views' snapshot (debuggee) both use it.

Input: the exception, the module that was running when it was raised (the
innermost one the shape trace saw enter and not leave), the shapes it received,
and the output of the last module that finished. Output: one or two sentences
that name the layer, what it expected and what it got, and the usual fix. The
seeds' two classics get their own words: channels-last images (NHWC) fed to a
Conv that wants NCHW, and a flatten size that does not match the next Linear.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable, Optional

_MATMUL = re.compile(r"mat1 and mat2 shapes cannot be multiplied \((\d+)x(\d+) and (\d+)x(\d+)\)")
_VIEW = re.compile(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)")
_CONV_CHANNELS = re.compile(r"expected input\[([\d, ]+)\] to have (\d+) channels, but got (\d+) channels")
_CONV_DIMS = re.compile(
    r"Expected (\d)D \(unbatched\) or (\d)D \(batched\) input to (conv\w+), but got input of size: \[([\d, ]+)\]"
)
_RNN_SIZE = re.compile(r"input.size\(-1\) must be equal to input_size. Expected (\d+), got (\d+)")
_RUNNING = re.compile(r"running_mean should contain (\d+) elements not (\d+)")


@dataclass
class Failure:
    """Where a forward failed, as the shape trace saw it."""

    exc: BaseException
    module_name: str  # "" for the model itself
    module: Any  # the nn.Module that was running (the model when the error is in its own code)
    input_shapes: list  # shapes of the tensors that module received
    last_name: str | None = None  # the last module that finished before the error
    last_output: list | None = None  # its output shape


_Rule = Callable[[Failure, str], Optional[str]]


def _when(pattern: re.Pattern[str]) -> Callable[[Callable[[Failure, re.Match[str]], str]], _Rule]:
    """A rule for the messages ``pattern`` finds: it is given the match, and says nothing otherwise."""

    def wrap(rule: Callable[[Failure, re.Match[str]], str]) -> _Rule:
        def matched(f: Failure, msg: str) -> Optional[str]:
            m = pattern.search(msg)
            return rule(f, m) if m else None

        return matched

    return wrap


def explain(f: Failure) -> str:
    """One plain sentence (or two) about the failure."""
    msg = str(f.exc)
    for rule in (
        _flatten_into_linear,
        _bad_view,
        _conv_channels,
        _conv_dims,
        _rnn_size,
        _batchnorm,
        _embedding_dtype,
        _dtype,
        _device,
    ):
        text = rule(f, msg)
        if text:
            return text
    return f"{_who(f)} raised {type(f.exc).__name__}: {_first_line(msg)}"


def _who(f: Failure) -> str:
    kind = type(f.module).__name__
    return f"`{f.module_name}` ({kind})" if f.module_name else f"the forward of {kind} itself (not one of its layers)"


def _first_line(msg: str) -> str:
    return msg.strip().splitlines()[0] if msg.strip() else "(no message)"


def _shape(s) -> str:
    return "(" + ", ".join(str(d) for d in s) + ")" if s is not None else "?"


def _per_sample(shape) -> int | None:
    if not shape or len(shape) < 2:
        return None
    n = 1
    for d in shape[1:]:
        n *= d
    return n


@_when(_MATMUL)
def _flatten_into_linear(f: Failure, m: re.Match[str]) -> str:
    got, expected = int(m.group(2)), int(m.group(3))
    import torch.nn as nn

    if isinstance(f.module, nn.Linear) and f.module_name:
        shape = f.input_shapes[0] if f.input_shapes else None
        text = (
            f"Layer `{f.module_name}` (Linear) expects {expected} input features (in_features={expected}) but the tensor "
            f"reaching it has shape {_shape(shape)}: {got} features per sample."
        )
        if f.last_name and _per_sample(f.last_output) == got:
            text += f" `{f.last_name}` before it produced {_shape(f.last_output)}."
        return text + (
            f" This is the flatten-size mistake: the size written for the flattened features does not match what the layers "
            f"before produce. Use nn.Linear({got}, ...) for `{f.module_name}` (or nn.LazyLinear), or fix the reshape before it."
        )
    return (
        f"A matrix multiply in {_who(f)} got a {m.group(1)}x{got} and a {expected}x{m.group(4)} matrix: the inner sizes "
        f"{got} and {expected} must be equal."
    )


@_when(_VIEW)
def _bad_view(f: Failure, m: re.Match[str]) -> str:
    target, size = m.group(1).replace(" ", ""), int(m.group(2))
    text = f"The reshape to [{target}] in {_who(f)} cannot work: the tensor has {size} elements."
    per = _per_sample(f.last_output)
    if f.last_name and f.last_output and per and per * f.last_output[0] == size:
        text += (
            f" The last layer that ran, `{f.last_name}`, produced {_shape(f.last_output)}, that is {per} features per sample: "
            f"flatten with x.flatten(1) (or view(x.size(0), -1)) and give the next Linear in_features={per}."
        )
    return text + " This is the flatten-size mistake."


@_when(_CONV_CHANNELS)
def _conv_channels(f: Failure, m: re.Match[str]) -> str:
    shape = [int(d) for d in m.group(1).split(",")]
    want, got = int(m.group(2)), int(m.group(3))
    who = _who(f)
    if len(shape) >= 3 and shape[-1] == want:  # channels sit last: NHWC data into an NCHW layer
        perm = "(0, 3, 1, 2)" if len(shape) == 4 else "(0, 2, 1)" if len(shape) == 3 else "(0, 4, 1, 2, 3)"
        return (
            f"{who} expects {want} channels in dimension 1 but the input {_shape(shape)} has them last: the images are "
            f"channels-last (NHWC), PyTorch convolutions want NCHW. Permute the batch with x.permute{perm} "
            f"(for numpy images: torch.from_numpy(a).permute{perm})."
        )
    return (
        f"{who} expects {want} input channels (in_channels={want}) but the input {_shape(shape)} has {got}. "
        f"Make in_channels={got}, or check the layer before it."
    )


@_when(_CONV_DIMS)
def _conv_dims(f: Failure, m: re.Match[str]) -> str:
    batched, shape = int(m.group(2)), [int(d) for d in m.group(4).split(",")]
    layout = {3: "(N, C, L)", 4: "(N, C, H, W)", 5: "(N, C, D, H, W)"}.get(batched, f"{batched}D")
    return (
        f"{_who(f)} wants a batch shaped {layout} but got {_shape(shape)}. If these are flattened images, "
        f"reshape them first (for example x.view(-1, 1, 28, 28)); if images are (N, H, W, C), permute them to NCHW."
    )


@_when(_RNN_SIZE)
def _rnn_size(f: Failure, m: re.Match[str]) -> str:
    return (
        f"{_who(f)} expects {m.group(1)} features per time step (input_size={m.group(1)}) but got {m.group(2)}. "
        f"Check the last dimension of its input and batch_first."
    )


@_when(_RUNNING)
def _batchnorm(f: Failure, m: re.Match[str]) -> str:
    return (
        f"{_who(f)} was built for {m.group(1)} features/channels (num_features={m.group(1)}) but its input "
        f"{_shape(f.input_shapes[0] if f.input_shapes else None)} has {m.group(2)} in dimension 1."
    )


def _embedding_dtype(f: Failure, msg: str) -> str | None:
    if "'indices'" not in msg or "Long, Int" not in msg:
        return None
    return (
        f"{_who(f)} takes integer token indices (torch.long), but got floats. Pass x.long() or check the data pipeline."
    )


def _dtype(f: Failure, msg: str) -> str | None:
    if "must have the same dtype" not in msg and "expected scalar type" not in msg.lower():
        return None
    return (
        f"{_who(f)} got a tensor whose dtype differs from its weights ({_first_line(msg)}). Convert the batch, "
        f"for example x.float(), where the data is loaded: numeric data read as float64 or as integers is a common cause."
    )


def _device(f: Failure, msg: str) -> str | None:
    if "Expected all tensors to be on the same device" not in msg:
        return None
    return f"{_who(f)} mixes devices: {_first_line(msg)}. Move the batch to the model's device (x.to(device))."
