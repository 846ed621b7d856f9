"""Sequences of token ids: ids outside the model's embedding, and the share of padding."""

from __future__ import annotations

from typing import Any, Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .arrays import ATTENTION_MASK, MASKED
from .context import Context, Split, unwrap

PAD_ATTRIBUTES = ("pad_id", "pad_token_id", "padding_idx", "pad_idx", "pad")


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        s = split.stats
        if s.layout != "tokens" or s.vectors is None:
            continue
        columns = _per_column(ctx, split, s.vectors)
        if columns is not None:
            out += columns
            continue
        ranged = _range(ctx, split, s.vectors)
        padding = _padding(ctx, split, s.vectors)
        out += ranged + padding + _second(ctx, split, ranged, padding)
    return out


def _per_column(ctx: Context, split: Split, tok: np.ndarray) -> Optional[list]:
    """The integer rows are categorical codes, one per column, each for an Embedding of its own (a
    tabular model's ``ModuleList([Embedding(cardinality, d) for ...])``): the model has as many
    Embeddings as a row has values, and every column fits its own, or fewer rows hold a code past their
    column's Embedding than an id past the first one, or under half of them (the first Embedding the
    biggest: a code past column 1's is still said). They are not token sequences: the first Embedding
    is not their vocabulary and a 0 code is no padding (a note says so). The findings of the codes past
    their column's Embedding, or None when the rows are read as token sequences."""
    sizes = ctx.model.embedding_sizes if ctx.model is not None else []
    if len(sizes) < 2 or tok.ndim != 2 or tok.shape[1] != len(sizes) or split.stats.ragged or not len(tok):
        return None
    bad = (tok < 0) | (tok >= np.asarray(sizes))
    rows: np.ndarray = np.asarray(bad.any(1))
    first = ((tok < 0) | (tok >= sizes[0])).any(1).sum()  # rows past the first Embedding, read as token ids
    if rows.any() and rows.sum() >= first and 2 * rows.sum() >= len(rows):
        return None
    if rows.any():  # one column's codes past its own Embedding: said per column, not against the first one
        cols = [int(c) for c in np.flatnonzero(bad.any(0))]
        what = "; ".join(
            f"column {c} holds codes {int(tok[:, c].min())}..{int(tok[:, c].max())} for an Embedding of {sizes[c]}"
            for c in cols
        )
        return [
            F.finding(
                F.TOKEN_RANGE,
                F.ERRORS,
                split.name,
                f"{int(rows.sum())} {split.name} rows of categorical codes (one column per Embedding of "
                f"{ctx.model.name if ctx.model is not None else 'the model'}, {len(sizes)} in all) hold a code outside "
                f"[0, size) of their column's Embedding: {what}. Likely cause: a category seen only in this split, "
                "or cardinalities counted before codes were added (an unknown/missing code). Next step: size each "
                "Embedding to its column's codes (max code + 1), with a code for unseen categories.",
                [i for i, b in zip(split.stats.indices, rows) if b],
                source=split.source,
                columns=cols,
                embeddingSizes=list(sizes),
            )
        ]
    ctx.notes.append(
        f"{split.name}: integer rows of {len(sizes)} values for a model with {len(sizes)} Embeddings, each column "
        "within its own: read as categorical codes (one per Embedding), not token sequences; token range and "
        "padding not checked"
    )
    return []


def _second(ctx: Context, split: Split, ranged: list, padding: list) -> list:
    """A pair of token sequences (a translation's ``(src_ids, tgt_ids)``; a language model's inputs and
    next-token targets): the second field's ids against the model's output size (the last Linear: the
    ids it can predict, a decoder's vocabulary; negative ids are left to the loss's ignore index) and
    its share of padding (the input's pad id), said in the first field's padding warning when there is
    one. Only when that output is a vocabulary, a quarter of the embedding's at least: a head of 3
    classes over a pair of sentences, ``(premise_ids, hypothesis_ids)``, predicts no ids, and a tagger's
    tags (``(input_ids, tag_ids)``, 9 tags) are ids of their own, whose commonest (``O``, 0) is no padding
    whatever the input embedding's ``padding_idx``. Without a model nothing is said of the second field."""
    tgt = split.stats.token_labels
    model = ctx.model
    if tgt is None or tgt.ndim != 2 or model is None or not model.num_embeddings or not model.out_features:
        return []
    if 4 * model.out_features < model.num_embeddings:
        return []
    out = []
    past = _target_range(split, tgt, model)
    if past and ranged:  # one vocabulary too small for both fields: one error, which says both
        ranged[0]["message"] += f" The targets (the second field) hold ids past {past[0]['details']['numOutputs']} too."
    else:
        out += past
    pad, known = _pad_id(ctx, split)
    is_pad = tgt == pad
    if not known:
        is_pad = np.cumprod(is_pad[:, ::-1], axis=1)[:, ::-1].astype(bool)
    share = float(is_pad.mean()) if tgt.size else 0.0
    if share < T.PADDING_SHARE:
        return out
    if padding:  # the first field's warning says it: one cause, one warning
        padding[0]["message"] += f" The targets (the second field) are {share:.0%} padding too."
        padding[0]["details"]["targetShare"] = share
        return out
    said = f"{share:.0%} of the {split.name} targets (the second field, sequences of {tgt.shape[1]}) are padding"
    if ctx.ignore_index == pad:
        ctx.notes.append(f"{split.name}: {said}, and the loss ignores id {pad}")
        return out
    out.append(
        F.finding(
            F.PADDING,
            F.WARNING,
            split.name,
            f"{said} (id {pad}{'' if known else ', trailing zeros'}). The decoder runs on the padding, and without "
            "ignore_index the loss teaches the model to predict it. Next step: pad per batch to the longest "
            "sequence (a collate_fn) and give the loss ignore_index=<pad id>.",
            source=split.source,
            padId=pad,
            share=share,
            field=1,
        )
    )
    return out


def _target_range(split: Split, tgt: np.ndarray, model: Any) -> list:
    k = model.out_features
    idx, _, high = _outside(split.stats.label_indices, tgt, split.stats.ragged_labels, k, None)
    if not idx:
        return []
    return [
        F.finding(
            F.TOKEN_RANGE,
            F.ERRORS,
            split.name,
            f"{len(idx)} {split.name} target sequences (the second field) hold ids past the {k} outputs of "
            f"{model.name}.{model.head_name} (ids up to {high}). Likely cause: the target side's "
            "vocabulary is bigger than the decoder's (a source and a target vocabulary swapped, or built from "
            "other data). Next step: size the decoder's embedding and output layer to the target vocabulary.",
            idx,
            source=split.source,
            numOutputs=k,
            maxId=high,
            field=1,
        )
    ]


def _range(ctx: Context, split: Split, tok: np.ndarray) -> list:
    model = ctx.model
    if model is None or not model.num_embeddings:
        return []
    n = model.num_embeddings
    idx, low, high = _outside(split.stats.indices, tok, split.stats.ragged, n, 0)
    if not idx:
        return []
    return [
        F.finding(
            F.TOKEN_RANGE,
            F.ERRORS,
            split.name,
            f"{len(idx)} {split.name} sequences hold token ids outside [0, {n}) of {model.name}."
            f"{model.embedding_name} (ids {low}..{high}). Likely cause: a tokenizer with a "
            "bigger vocabulary than the embedding, added special tokens without resize, or -1/-100 used as "
            "padding in the inputs. Next step: size the embedding to the tokenizer (len(tokenizer)) and pad "
            "inputs with a real id.",
            idx,
            source=split.source,
            numEmbeddings=n,
            maxId=high,
        )
    ]


def _outside(indices: list, rows: np.ndarray, ragged: list, n: int, least: Optional[int]) -> tuple:
    """(the indices, sorted, of the sequences holding an id >= ``n`` or below ``least``; the least id; the
    biggest id): over the rows of the main length and the ``ragged`` ones of other lengths."""
    bad = rows >= n if least is None else (rows >= n) | (rows < least)
    hit: np.ndarray = np.asarray(bad.any(1)) if rows.size else np.zeros(len(rows), bool)
    found = [i for i, b in zip(indices, hit) if b]
    low = int(rows.min()) if rows.size else 0
    high = int(rows.max()) if rows.size else 0
    for i, a in ragged:
        if not a.size:
            continue
        lo, hi = int(a.min()), int(a.max())
        low, high = min(low, lo), max(high, hi)
        if hi >= n or (least is not None and lo < least):
            found.append(i)
    return (sorted(found) if ragged and all(isinstance(i, int) for i in found) else found), low, high


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
    if MASKED in split.draws.how:  # a tokenizer's padding="max_length": correct, only slower
        ctx.notes.append(
            f"{split.name}: {share:.0%} of the tokens are padding, beside the samples' {ATTENTION_MASK}, which "
            "keeps it out of attention: not reported (padding per batch to the longest sequence would save the compute)"
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
