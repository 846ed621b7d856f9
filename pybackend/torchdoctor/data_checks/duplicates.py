"""Duplicates within a split and across splits, by a digest of each sample's bytes.

Two ways to see a sample, the same for every split compared:

- ``raw``: the stored rows, when the dataset behind the split (through ``Subset``s) keeps them in an
  array: ``TensorDataset.tensors[0]`` or an attribute ``data``/``images``/``x``/``X``/``inputs``
  with one row per index. Every row is hashed (up to ``MAX_RAW_ROWS``), so a leak is found even
  when only a sample of the split was drawn, and augmentation does not hide it.
- ``drawn``: the features as drawn; for a dataset whose transforms are random, drawn again with
  every generator seeded alike (``sampling.seeded_draws``), so equal stored samples draw equal.

Samples with fewer than ``DUP_MIN_ELEMENTS`` values and blank samples are not hashed: they repeat
by chance.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Optional

import numpy as np

from . import findings as F
from . import stuck
from . import thresholds as T
from .arrays import to_array
from .context import Context, Split, unwrap
from .fingerprint import fingerprints, quick
from .raw_rows import base_of, raw_store
from .reduce import blank_rows
from .sampling import is_map_style, sample_indices, seeded_draws

MAX_RAW_ROWS = 200_000


def _stored(split: Split) -> Optional[tuple]:
    """(the stored rows, the base row of each split index or None: the same) behind the split, or None."""
    d = split.draws
    ds = d.dataset if d.kind == "loader" else d.obj if d.kind == "dataset" else None
    if ds is None:
        return None
    base, mapping = base_of(ds)
    store = raw_store(base)
    return None if store is None else (store, mapping)


def _whole(store: Any) -> Optional[np.ndarray]:
    """The store as one array of rows (a tensor, an array), or None (a list of rows: one at a time)."""
    whole = to_array(store) if hasattr(store, "shape") else None
    return whole if whole is not None and whole.ndim >= 2 else None


def _rows_per_chunk(whole: np.ndarray) -> int:
    """Rows of ``whole`` read at a time: about 4 Mi elements."""
    return max(1, (1 << 22) // max(1, whole[0].size))


def _raw(split: Split) -> Optional[dict]:
    """{index in the split: quick digest} of the stored rows, or None. The digests are ``quick``'s
    linear hashes (one pass): ``_refine`` fingerprints again the rows whose digests are shared."""
    found = _stored(split)
    if found is None:
        return None
    store, mapping = found
    n = len(mapping) if mapping is not None else len(store)
    idx = list(range(n)) if n <= MAX_RAW_ROWS else sample_indices(n, MAX_RAW_ROWS)
    rows = [mapping[i] for i in idx] if mapping is not None else idx
    whole = _whole(store)
    if whole is None:
        return dict(zip(idx, _listed_digests(store, rows, quick)))
    out: dict = {}
    in_order = mapping is None and n <= MAX_RAW_ROWS  # every row in order: views of the store, not copies
    step = _rows_per_chunk(whole)
    for start in range(0, len(idx), step):
        part = whole[start : start + step] if in_order else whole[rows[start : start + step]]
        flat = part.reshape(len(part), -1)
        constant = constant_rows(flat)
        prints = quick(part).tolist() if flat.shape[1] >= T.DUP_MIN_ELEMENTS else [None] * len(part)
        names = idx[start : start + step]
        out.update(zip(names, prints))
        for k in np.flatnonzero(constant).tolist():  # blank rows repeat by chance: not compared
            out[names[k]] = None
    return out


def constant_rows(flat: np.ndarray) -> np.ndarray:
    """Which rows hold one value throughout (as ``min == max`` says): only the rows whose first value
    equals their second and their last are read whole, so distinct rows cost three columns, not a
    min and a max pass (0.6 ms of 2,000 CIFAR rows)."""
    k, per = flat.shape
    if per < 2:
        return np.ones(k, bool)
    maybe = np.flatnonzero((flat[:, 0] == flat[:, 1]) & (flat[:, 0] == flat[:, -1]))
    constant = np.zeros(k, bool)
    if maybe.size:
        rows = flat[maybe]
        constant[maybe] = rows.min(1) == rows.max(1)
    return constant


REFINED = 1 << 128  # set in a refined digest: never equal to a quick one (< 2**64)


def _refine(splits: list, raws: dict) -> None:
    """Each quick digest held by two stored rows or more (in one split or across splits) replaced by
    the rows' full fingerprints: rows are then called equal exactly as if every row had been
    fingerprinted, for about a tenth of the time on distinct rows."""
    seen: set = set()
    shared: set = set()
    for hashes in raws.values():
        for h in hashes.values():
            if h is not None:
                (shared if h in seen else seen).add(h)
    if not shared:
        return
    for split in splits:
        hashes = raws[split.name]
        names = [i for i, h in hashes.items() if h in shared]
        if names:
            hashes.update(zip(names, (None if p is None else p | REFINED for p in _row_prints(split, names))))


def _row_prints(split: Split, names: list) -> list:
    """The full fingerprints of the stored rows of split indices ``names``."""
    found = _stored(split)
    assert found is not None  # _raw found them
    store, mapping = found
    rows = [mapping[i] for i in names] if mapping is not None else names
    whole = _whole(store)
    if whole is not None:
        step = _rows_per_chunk(whole)
        return [p for at in range(0, len(rows), step) for p in fingerprints(whole[rows[at : at + step]])]
    return _listed_digests(store, rows)


def _drawn(split: Split) -> dict:
    d, s = split.draws, split.stats
    if d.kind == "dataset" and (d.random or not s.hashed) and is_map_style(d.obj):
        # fewer when the time budget runs out, or when a draw never returns (stuck.py)
        xs = stuck.bounded_list(split.name, len(d.indices), seeded_draws, d.obj, s.indices, 0, split.name)
        return dict(zip(s.indices, _digests(xs)))
    # all-NaN placeholders repeat by construction (nonfinite says them); a sample with one NaN pixel is
    # still compared: its copy in another split is a leak (review, 2026-12-06)
    blank = set(s.blank) | set(s.no_finite)
    if s.shape is not None and int(np.prod(s.shape)) < T.DUP_MIN_ELEMENTS:
        blank = set(s.indices)  # a few values (4 categorical codes) repeat by chance, as in _digests and _raw
    out = {i: None if i in blank else h for i, h in zip(s.indices, s.digests)}
    if s.hashed and s.ragged:  # token sequences of other lengths (unpadded sentences): as a chunk's rows are
        out.update((i, fingerprints(a[None])[0] if a.size >= T.DUP_MIN_ELEMENTS else None) for i, a in s.ragged)
        if all(isinstance(i, int) for i in out):
            out = dict(sorted(out.items()))  # in index order, as the pairs are listed
    return out


def _noise(split: Split, hashes: dict) -> bool:
    """The split's features do not depend on the sample: its transforms are random and, with every
    generator seeded alike (``_drawn``), 3 or more samples all drew the same features. Copies of
    stored images give equal features under one seed; distinct images do not, but noise drawn from
    the generator (``torch.rand`` in ``__getitem__``) is the same for every index."""
    if not split.draws.random:
        return False
    values = [h for h in hashes.values() if h is not None]
    return len(values) >= 3 and len(set(values)) == 1


def _same_for_every_index(split: Split, hashes: dict) -> dict:
    """A WARNING for a split whose features do not depend on the index (``_noise``): a
    ``__getitem__`` that ignores its index (``self.x[0]``) and one drawing noise look alike here."""
    seen = [i for i, h in hashes.items() if h is not None]
    return F.finding(
        F.DUP_WITHIN,
        F.WARNING,
        split.name,
        f"{split.name}: the features do not depend on the index: drawn with every random generator seeded alike, "
        f"the {len(seen)} samples drawn again all gave the same features. Likely cause: __getitem__ returns one "
        "stored sample for every index (e.g. `self.x[0]` for `self.x[i]`, a fixed path), or the dataset generates "
        "its features from the random generator (synthetic noise, which is fine). Next step: draw two indices "
        "with `torch.manual_seed(0)` before each and compare; if they are equal and the data is stored, make "
        "__getitem__ use its index. (Byte copies are not reported for this split: every sample would repeat "
        "every other.)",
        seen[: T.MAX_INDICES],
        source=split.source,
        cause="features-ignore-index",
        method="drawn",
    )


DIGEST_ROWS = 256  # arrays of one shape stacked at a time by _digests (bounded memory)


def _digests(xs: list, how: Callable = fingerprints) -> list:
    """The digest of each array by ``how`` (``fingerprints``, ``quick``), or None: None, fewer than
    ``DUP_MIN_ELEMENTS`` values, blank (``is_blank``: blank samples repeat by chance). The arrays of one
    shape and dtype are stacked, tested and hashed together: one by one, the blank test and the hash
    cost ~45 us a sample, 90 ms of the 2,000 seeded draws of an augmented split. A row's digest is the
    same either way."""
    out: list = [None] * len(xs)
    groups: dict = {}
    for k, x in enumerate(xs):
        if x is not None and x.size >= T.DUP_MIN_ELEMENTS:
            groups.setdefault((x.shape, x.dtype.str), []).append(k)
    for ks in groups.values():
        for at in range(0, len(ks), DIGEST_ROWS):
            part = ks[at : at + DIGEST_ROWS]
            rows = np.stack([xs[k] for k in part])
            kept = ~blank_rows(rows)
            for k, h in zip([k for k, keep in zip(part, kept) if keep], how(rows[kept])):
                out[k] = int(h)
    return out


def _listed_digests(store: Any, rows: list, how: Callable = fingerprints) -> list:
    """``_digests`` of rows of a store that is a list (of arrays, tensors, images), DIGEST_ROWS at a time:
    never every row converted at once (a list of images would then be held whole as arrays)."""
    out: list = []
    for at in range(0, len(rows), DIGEST_ROWS):
        out += _digests([to_array(store[r]) for r in rows[at : at + DIGEST_ROWS]], how)
    return out


def check(ctx: Context) -> list:
    splits = [s for s in ctx.splits if s.stats.sampled and s.stats.layout != "none"]
    if not splits:
        return []
    raws = {s.name: _raw(s) for s in splits}
    method = "raw" if all(r is not None for r in raws.values()) else "drawn"
    if method == "raw":
        _refine(splits, raws)
    hashes: dict = {s.name: (raws[s.name] if method == "raw" else _drawn(s)) for s in splits}
    out = []
    for s in splits:
        if method == "drawn" and _noise(s, hashes[s.name]):
            out.append(_same_for_every_index(s, hashes[s.name]))
            hashes[s.name] = {}  # every sample would 'repeat' every other: the byte copies are not reported
    for s in splits:
        out += _within(ctx, s, _with_captions(ctx, s, hashes[s.name], method), method)
    for a_pos, a in enumerate(splits):
        for b in splits[a_pos + 1 :]:
            out += _across(a, b, hashes[a.name], hashes[b.name], method)
    return out


def _sequence_labels(split: Split, method: str) -> Optional[dict]:
    """{index: the label's bytes} when every drawn label is a token sequence (a 1-D integer array of
    2 ids or more: a caption, a target sentence), else None. The stored rows of a loader are not
    numbered by its stream positions, so there its labels cannot be matched to them."""
    d = split.draws
    if split.stats.label_kind != "other" or (method == "raw" and d.kind == "loader"):
        return None
    out = {}
    for i, y in zip(d.indices, d.ys):
        a = None if y is None else to_array(y)
        if a is None or a.ndim != 1 or a.size < 2 or a.dtype.kind not in "iu":
            return None
        out[i] = a.tobytes()
    return out or None


def _with_captions(ctx: Context, split: Split, hashes: dict, method: str) -> dict:
    """``hashes`` keyed by features and label when the labels are sequences: one image with several
    captions (COCO, Flickr, VQA) is the dataset's design, not a copy; the same image with the same
    caption still is. Rows whose label was not drawn are left out (their captions are unknown).
    Class labels are left alone: equal features with different classes are conflicting labels."""
    labels = _sequence_labels(split, method)
    if labels is None:
        return hashes
    keyed = {i: None if h is None or i not in labels else (h, labels[i]) for i, h in hashes.items()}
    captions: dict = {}
    for key in keyed.values():
        if key is not None:
            captions.setdefault(key[0], set()).add(key[1])
    several = sum(1 for c in captions.values() if len(c) > 1)
    if several:
        ctx.notes.append(
            f"{split.name}: {several} images appear with several captions (sequence labels that differ): "
            "not compared as duplicates within the split"
        )
    return keyed


def _within(ctx: Context, split: Split, hashes: dict, method: str) -> list:
    first: dict = {}
    dups = []
    for i, h in hashes.items():
        if h is None:
            continue
        j = first.setdefault(h, i)
        if j != i:
            dups.append((i, j))
    n = len(first) + len(dups)  # the samples hashed
    if len(dups) < max(T.DUP_WITHIN_MIN, T.DUP_WITHIN_SHARE * n) or _wraps(ctx, split, hashes, dups):
        return []
    pairs = ", ".join(f"{i} = {j}" for i, j in dups[:5])
    return [
        F.finding(
            F.DUP_WITHIN,
            F.WARNING,
            split.name,
            f"{len(dups)} of {n} {split.name} samples repeat another sample of {split.name} byte for byte"
            f"{_among([(split, hashes)], method)} ({pairs}; {_how(method)}). Likely cause: files copied twice, rows appended twice, oversampling "
            "before the split. Next step: deduplicate before splitting, or they weigh double in the loss and "
            "leak if the split separates copies.",
            [i for i, _ in dups],
            source=split.source,
            pairs=[[i, j] for i, j in dups[: T.MAX_INDICES]],
            method=method,
        )
    ]


def _wraps(ctx: Context, split: Split, hashes: dict, dups: list) -> bool:
    """The repeats are an index taken modulo ``m`` in a dict sample without a label: every sample drawn at
    ``i >= m`` is sample ``i - m``, ``m`` is more than half the length, and the dataset's ``__getitem__``
    takes its index modulo something (a ``%`` in its source). A dataset of two unpaired parts of
    different sizes (CycleGAN's unaligned ``{"A", "B"}``, B drawn at random) is as long as its bigger
    part and wraps the smaller one by design; that part is seen more often per epoch, which a note
    says. The same rows from data appended again (an overlapping shard) look alike but their
    ``__getitem__`` reads its index as it is: they are reported, as are labelled samples given again."""
    offsets = {i - j for i, j in dups}
    length = split.draws.length
    unlabelled_dict = split.stats.label_kind is None and split.draws.how.startswith("sample[")
    if len(offsets) != 1 or not isinstance(length, int) or not unlabelled_dict:
        return False
    m = offsets.pop()
    tail = [i for i, h in hashes.items() if h is not None and isinstance(i, int) and i >= m]
    if not (2 * m > length and len(tail) == len(dups) and all(j < m <= i for i, j in dups)):
        return False
    if not _index_modulo(split.draws.obj):
        return False
    ctx.notes.append(
        f"{split.name}: samples {m}..{length - 1} repeat samples 0..{length - m - 1} (the index wraps around "
        f"modulo {m}, as a dataset of two unpaired parts does for its smaller part): not reported as duplicates"
    )
    return True


def _index_modulo(obj: Any) -> bool:
    """The split's dataset's ``__getitem__`` takes its index modulo something (``self.a[index % self.n]``):
    its source holds the index's name before a ``%`` (not after it: ``"%05d.png" % index`` is a name)."""
    getitem: Any = getattr(type(unwrap(obj)), "__getitem__", None)
    if getitem is None:
        return False
    try:
        code = inspect.getsource(getitem)
        names = list(inspect.signature(getitem).parameters)
    except (OSError, TypeError, ValueError):
        return False
    return len(names) >= 2 and re.search(rf"\b{re.escape(names[1])}\s*%", code) is not None


def _across(a: Split, b: Split, ha: dict, hb: dict, method: str) -> list:
    where: dict = {}
    for i, h in ha.items():
        if h is not None:
            where.setdefault(h, i)
    shared = [(i, where[h]) for i, h in hb.items() if h is not None and h in where]
    if not shared:
        return []
    n = sum(1 for h in hb.values() if h is not None)
    pairs = ", ".join(f"{b.name} {i} = {a.name} {j}" for i, j in shared[:5])
    return [
        F.finding(
            F.DUP_ACROSS,
            F.ERRORS,
            b.name,
            f"{len(shared)} of {n} {b.name} samples are also in {a.name}{_among([(b, hb), (a, ha)], method)} "
            f"({pairs}; {_how(method)}): the "
            f"{b.name} score measures memory, not generalisation. Likely cause: duplicates in the source data "
            "split apart, overlapping index lists, or augmented copies made before the split. Next step: "
            "deduplicate first, then split (by group or id when rows share one).",
            [i for i, _ in shared],
            source=b.source,
            pairs=[[i, j] for i, j in shared[: T.MAX_INDICES]],
            method=method,
            other=a.name,
        )
    ]


def _among(compared: list, method: str) -> str:
    """``, among the 400 samples drawn of 50,000`` for each (split, hashes) compared on fewer samples
    than it has (a budget, maxSamples, MAX_RAW_ROWS): the counts are of those, not of the split."""
    seen = "stored rows hashed" if method == "raw" else "samples drawn"
    parts = [
        f"the {len(h):,} {s.name} {seen} of {s.draws.length:,}"
        for s, h in compared
        if s.draws.length and len(h) < s.draws.length
    ]
    if not parts:
        return ""
    return f", among {' and '.join(parts)} (copies among the others are not seen)"


def _how(method: str) -> str:
    return "compared on the stored rows" if method == "raw" else "compared on the samples as drawn"
