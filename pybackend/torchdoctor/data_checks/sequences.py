"""Sequences of token ids: ids outside the model's embedding, and the share of padding."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split, unwrap

PAD_ATTRIBUTES = ("pad_id", "pad_token_id", "padding_idx", "pad_idx", "pad")


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        s = split.stats
        if s.layout != "tokens" or s.vectors is None:
            continue
        out += _range(ctx, split, s.vectors)
        out += _padding(ctx, split, s.vectors)
    return out


def _range(ctx: Context, split: Split, tok: np.ndarray) -> list:
    model = ctx.model
    if model is None or not model.num_embeddings:
        return []
    n = model.num_embeddings
    bad_rows: np.ndarray = np.asarray(((tok >= n) | (tok < 0)).any(1))
    if not bad_rows.any():
        return []
    idx = [i for i, b in zip(split.stats.indices, bad_rows) if b]
    return [
        F.finding(
            F.TOKEN_RANGE,
            F.ERRORS,
            split.name,
            f"{len(idx)} {split.name} sequences hold token ids outside [0, {n}) of {model.name}."
            f"{model.embedding_name} (ids {int(tok.min())}..{int(tok.max())}). Likely cause: a tokenizer with a "
            "bigger vocabulary than the embedding, added special tokens without resize, or -1/-100 used as "
            "padding in the inputs. Next step: size the embedding to the tokenizer (len(tokenizer)) and pad "
            "inputs with a real id.",
            idx,
            source=split.source,
            numEmbeddings=n,
            maxId=int(tok.max()),
        )
    ]


def _pad_id(ctx: Context, split: Split) -> tuple[Optional[int], bool]:
    """(pad id, known) - known when the model or the dataset names it; else 0 is guessed."""
    if ctx.model is not None and ctx.model.padding_idx is not None:
        return int(ctx.model.padding_idx), True
    ds: Any = unwrap(split.draws.obj)
    for name in PAD_ATTRIBUTES:
        value = getattr(ds, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value, True
    return 0, False


def _padding(ctx: Context, split: Split, tok: np.ndarray) -> list:
    pad, known = _pad_id(ctx, split)
    is_pad = tok == pad
    if not known:  # a guessed 0 counts only as trailing runs (right padding)
        is_pad = np.cumprod(is_pad[:, ::-1], axis=1)[:, ::-1].astype(bool)
    count = int(is_pad.sum())
    share = count / max(1, tok.size)
    if share < T.PADDING_SHARE:
        return []
    if _masked_by_targets(split, is_pad):
        ctx.notes.append(
            f"{split.name}: {share:.0%} of the tokens are padding, and every padded position's target is an ignore "
            "index (negative): the loss skips them"
        )
        return []
    return [
        F.finding(
            F.PADDING,
            F.WARNING,
            split.name,
            f"{share:.0%} of the {split.name} tokens are padding (id {pad}{'' if known else ', trailing zeros'}; "
            f"sequences of {tok.shape[1]}). Most of the compute goes to padding, and without an attention mask "
            "or ignore_index the model learns it. Next step: pad per batch to the longest sequence "
            "(a collate_fn), bucket by length, and mask padding in attention and the loss.",
            source=split.source,
            padId=pad,
            share=share,
        )
    ]


def _masked_by_targets(split: Split, is_pad: np.ndarray) -> bool:
    """The split's targets are one id per token (makemore's ``y``: the next characters, then -1) and
    every padded position's target is negative, an ignore index (``cross_entropy(...,
    ignore_index=-1)``): the padding is already kept out of the loss."""
    labels = split.stats.token_labels
    if labels is None or labels.shape != is_pad.shape:
        return False
    return bool(np.all(labels[is_pad] < 0))
