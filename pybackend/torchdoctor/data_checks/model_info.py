"""What the data checks read from a model without running it: first conv, first embedding, output size."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


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
    info = ModelInfo(type(model).__name__)
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
