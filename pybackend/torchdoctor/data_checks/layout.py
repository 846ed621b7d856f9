"""Layout (channels last against a model's first conv) and dtypes (float64 inputs, class ids as floats)."""

from __future__ import annotations

import numpy as np

from . import findings as F
from .context import Context, Split
from .spell import nums


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        out += _channels_last(ctx, split)
        out += _float64(split)
        out += _float_labels(ctx, split)
    return out


def _channels_last(ctx: Context, split: Split) -> list:
    s, model = split.stats, ctx.model
    if s.layout != "hwc":
        return []
    h, w, c = s.shape
    batch = split.draws.batch_shape
    seen = f"batches of shape {list(batch)}" if batch else f"samples of shape {list(s.shape)} (H, W, C)"
    if model is not None and model.conv_kind == "Conv2d" and model.in_channels is not None:
        if model.in_channels != c:
            return []  # not a channels-last image for this model: its first dim is not the channel count either
        return [
            F.finding(
                F.CHANNELS_LAST,
                F.ERRORS,
                split.name,
                f"{split.name} gives {seen}: channels last, but {model.name}.{model.conv_name} is a Conv2d expecting "
                f"{model.in_channels} channels first (N, C, H, W). Likely cause: images decoded by PIL/OpenCV/numpy "
                "(H, W, C) turned into tensors without ToTensor(). Next step: x.permute(2, 0, 1) per sample (or "
                "permute(0, 3, 1, 2) per batch), or use transforms.ToTensor().",
                source=split.source,
                shape=list(s.shape),
                inChannels=model.in_channels,
            )
        ]
    if model is not None:
        return []  # a model without a Conv2d may well want (H, W, C)
    if h != w and "uint8" not in split.draws.x_dtype:
        return []  # without a model only square or uint8 images: (frames, joints, xyz) pose data is (H, W, 3) too
    return [
        F.finding(
            F.CHANNELS_LAST,
            F.WARNING,
            split.name,
            f"{split.name} gives {seen}: channels last (H={h}, W={w}, C={c}). torch's Conv2d reads (N, C, H, W) "
            "and would take the height as channels. Likely cause: images from PIL/OpenCV/numpy without "
            "ToTensor(). Next step: x.permute(2, 0, 1), or pass the model in torchdoctor_data() to check against "
            "its first layer.",
            source=split.source,
            shape=list(s.shape),
        )
    ]


def _float64(split: Split) -> list:
    d = split.draws
    if "float64" not in d.x_dtype:
        return []
    return [
        F.finding(
            F.FLOAT64,
            F.WARNING,
            split.name,
            f'{split.name} features are {d.x_dtype}. float32 weights reject them ("expected scalar type Double"), '
            "and a model made .double() to accept them runs several times slower with twice the memory. Likely "
            "cause: torch.from_numpy / torch.tensor on a numpy float64 array. Next step: .float() in __getitem__ "
            "or np.float32 when the array is built.",
            source=split.source,
            dtype=d.x_dtype,
        )
    ]


def _float_labels(ctx: Context, split: Split) -> list:
    s, model = split.stats, ctx.model
    if s.label_kind != "float" or s.labels is None or model is None or not model.out_features:
        return []
    y = s.labels[np.isfinite(s.labels)]
    k = model.out_features
    if k < 2 or not y.size or not np.all(y == np.round(y)) or y.min() < 0 or y.max() >= k:
        return []
    if y.min() == y.max():  # one value for every sample: a placeholder (an autoencoder's ``img, 0.0``), no classes
        return []
    return [
        F.finding(
            F.FLOAT_LABELS,
            F.WARNING,
            split.name,
            f"{split.name} labels are {split.draws.y_dtype} holding whole numbers {nums(np.unique(y)[:10])} while "
            f"{model.name} ends in {k} outputs: class indices stored as floats. CrossEntropyLoss needs int64 "
            "indices (float targets mean class probabilities of the output's shape); MSE on them would regress "
            "class ids. Next step: torch.tensor(label, dtype=torch.long) in __getitem__.",
            source=split.source,
            dtype=split.draws.y_dtype,
        )
    ]
