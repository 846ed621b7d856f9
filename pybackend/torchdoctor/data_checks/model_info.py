"""What the data checks read from a model: first conv, first embedding, output size, from its modules
without running it; and the conv that gives its output, from one run on a zero input (``output_conv``)."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from . import budget
from .rng import preserved_rng


@dataclass
class ModelInfo:
    name: str
    conv_name: Optional[str] = None
    conv_kind: Optional[str] = None  # "Conv1d" | "Conv2d" | "Conv3d"
    in_channels: Optional[int] = None
    embedding_name: Optional[str] = None
    num_embeddings: Optional[int] = None
    padding_idx: Optional[int] = None
    head_name: Optional[str] = None
    out_features: Optional[int] = None  # the last Linear's output size: the number of classes, or 1
    # the last conv when no Linear comes after it (a segmentation head: its output channels are the classes)
    conv_head_name: Optional[str] = None
    out_channels: Optional[int] = None
    # a normalisation layer met before any conv, Linear or embedding: the model standardises its own
    # input (audio CNNs put a BatchNorm2d first over log-mel dB values), so the input's scale is not judged
    input_norm: Optional[str] = None
    module: Any = field(default=None, repr=False, compare=False)  # the model itself, for ``output_conv``
    runs: dict = field(default_factory=dict, repr=False, compare=False)  # input shape -> output_conv's answer

    def describe(self) -> str:
        parts = []
        if self.conv_name:
            parts.append(f"first conv {self.conv_name} ({self.conv_kind}, {self.in_channels} input channels)")
        if self.embedding_name:
            parts.append(f"embedding {self.embedding_name} ({self.num_embeddings} ids)")
        if self.head_name:
            parts.append(f"last Linear {self.head_name} ({self.out_features} outputs)")
        if self.conv_head_name:
            parts.append(f"last conv {self.conv_head_name} ({self.out_channels} output channels)")
        return f"model {self.name}: " + (", ".join(parts) if parts else "no conv, embedding or Linear found")


_INPUT_NORMS = frozenset(
    {
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LayerNorm",
        "GroupNorm",
    }
)


def inspect_model(model: Any) -> Optional[ModelInfo]:
    named = getattr(model, "named_modules", None)
    if named is None:
        return None
    info = ModelInfo(type(model).__name__, module=model)
    for name, mod in named():
        kind = type(mod).__name__
        if kind in _INPUT_NORMS and info.conv_name is None and info.embedding_name is None and info.head_name is None:
            info.input_norm = info.input_norm or f"{name or kind} ({kind})"
        if (
            info.conv_name is None
            and kind in ("Conv1d", "Conv2d", "Conv3d", "LazyConv2d")
            and hasattr(mod, "in_channels")
        ):
            info.conv_name, info.conv_kind, info.in_channels = name or kind, kind, int(mod.in_channels or 0) or None
        if info.embedding_name is None and kind == "Embedding":
            info.embedding_name, info.num_embeddings = name or kind, int(mod.num_embeddings)
            info.padding_idx = mod.padding_idx
        if kind == "Linear":
            info.head_name, info.out_features = name or kind, int(mod.out_features)
            info.conv_head_name = info.out_channels = None
        if kind in _CONVS and isinstance(getattr(mod, "out_channels", None), int):
            info.conv_head_name, info.out_channels = name or kind, int(mod.out_channels)
    return info


_CONVS = frozenset({"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})


def output_conv(info: ModelInfo, shape: tuple) -> Optional[tuple]:
    """(name, output channels, the output's channels) of the last conv that ran in one forward of the
    model on a zero input of one sample of ``shape``; the output's channels are its dimension 1 when it
    is a map of the input's dimensions (N x C x H x W for C x H x W samples; a dict's ``"out"`` or a
    tuple's first tensor), else None. None when the model cannot run on it (other inputs, a time
    budget spent or a draw stuck). Run once per shape in eval mode without gradients, every
    module's training flag and every random generator put back after."""
    key = tuple(int(d) for d in shape)
    if key not in info.runs:
        torch = sys.modules.get("torch")
        ok = info.module is not None and torch is not None and bool(key)
        info.runs[key] = _run(info.module, torch, key) if ok and not budget.stuck() and not budget.spent() else None
    return info.runs[key]


def _run(model: Any, torch: Any, shape: tuple) -> Optional[tuple]:
    ran: list = []
    hooks: list = []
    modes = [(m, m.training) for m in model.modules()]
    try:
        for name, mod in model.named_modules():
            if type(mod).__name__ in _CONVS and isinstance(getattr(mod, "out_channels", None), int):
                hooks.append(mod.register_forward_hook(lambda m, i, o, name=name: ran.append((name, m.out_channels))))
        param = next(model.parameters(), None)
        if not hooks or param is None:
            return None
        dtype = param.dtype if param.dtype.is_floating_point else torch.float32
        model.eval()
        with torch.no_grad(), preserved_rng():
            out = model(torch.zeros((1, *shape), dtype=dtype, device=param.device))
    except Exception:  # noqa: BLE001 - a model that does not run on one zero sample is read by its modules
        return None
    finally:
        for hook in hooks:
            hook.remove()
        for mod, training in modes:
            mod.training = training
    if not ran:
        return None
    out = _first_tensor(out, torch)
    channels = int(out.shape[1]) if out is not None and out.ndim == len(shape) + 1 else None
    # the last that ran with the output's channels (an auxiliary head may run after the main one), else the last
    name, k = next((r for r in reversed(ran) if r[1] == channels), ran[-1])
    return name or type(model).__name__, int(k), channels


def _first_tensor(out: Any, torch: Any) -> Any:
    if isinstance(out, dict):
        out = out.get("out", next(iter(out.values()), None))
    if isinstance(out, (list, tuple)) and out:
        out = out[0]
    return out if isinstance(out, torch.Tensor) else None
