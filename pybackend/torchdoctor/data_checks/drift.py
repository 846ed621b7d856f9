"""Drift between the training split and each other split: mean/std shift and a two-sample KS test.

Images are compared per channel on each sample's channel mean; feature vectors per feature (the
first ``MAX_DRIFT_FEATURES``). A feature drifts when the KS statistic is above ``DRIFT_KS`` with a
p-value below ``DRIFT_P`` *and* the effect is large: the mean moved by more than
``DRIFT_MEAN_SHIFT`` training standard deviations, or the std changed by more than
``DRIFT_STD_RATIO`` times. The KS test alone flags tiny shifts on big samples; the effect size alone
flags noise on small ones.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from . import findings as F
from . import thresholds as T
from .context import Context, Split
from .loader_failures import sequential
from .shuffling import in_runs


def ks_2samp(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(statistic, asymptotic two-sided p-value) of the two-sample Kolmogorov-Smirnov test."""
    a, b = np.sort(a), np.sort(b)
    n, m = len(a), len(b)
    if not n or not m:
        return 0.0, 1.0
    both = np.concatenate([a, b])
    d = float(np.max(np.abs(np.searchsorted(a, both, "right") / n - np.searchsorted(b, both, "right") / m)))
    en = math.sqrt(n * m / (n + m))
    lam = (en + 0.12 + 0.11 / en) * d
    if lam < 1e-3:
        return d, 1.0
    p = 2.0 * sum((-1) ** (j - 1) * math.exp(-2.0 * j * j * lam * lam) for j in range(1, 101))
    return d, float(min(1.0, max(0.0, p)))


def _features(split: Split) -> Optional[tuple[np.ndarray, str]]:
    """(samples, features) values compared, and what one feature is called."""
    s = split.stats
    if s.layout in ("chw", "hwc", "hw", "other") and s.sample_means is not None:
        return s.sample_means.astype(np.float64), "channel"
    if s.layout == "vector" and s.vectors is not None and s.float_kind:
        return s.vectors[:, : T.MAX_DRIFT_FEATURES].astype(np.float64), "feature"
    return None


def check(ctx: Context) -> list:
    train = ctx.train
    if train is None:
        return []
    base = _features(train)
    if base is None or len(base[0]) < T.DRIFT_MIN_SAMPLES:
        return []
    out = []
    for split in ctx.others():
        other = _features(split)
        if other is None or other[0].shape[1:] != base[0].shape[1:] or len(other[0]) < T.DRIFT_MIN_SAMPLES:
            continue
        weights = [_weights(s) for s in (train, split)]
        weighted = [s.name for s, w in zip((train, split), weights) if w is not None]
        prefixes = [s.name for s in (train, split) if _ordered_prefix(s)]
        augmented = bool(train.draws.random and not split.draws.random)
        shift = T.DRIFT_MEAN_SHIFT_AUGMENTED if augmented else T.DRIFT_MEAN_SHIFT
        if weighted or prefixes:
            found = _within_classes(train, split, base[0], other[0], shift, weights)
            if not found:
                ctx.notes.append(_weighted_note(weighted, train, split, prefixes))
                continue
        else:
            found = _compare(base[0], other[0], shift)
        if found:
            out.append(_finding(train, split, found, base[1], augmented))
    return out


def _weights(split: Split) -> Optional[np.ndarray]:
    """The unequal weights of the sampler that drew ``split`` (``WeightedRandomSampler``), or None.
    Such draws follow the weights on purpose (a rebalanced minority class moves every feature's
    mean): they are not the data's distribution, and a shift from another split is not drift."""
    d = split.draws
    if d.kind != "loader":
        return None
    inner = getattr(getattr(d.obj, "batch_sampler", None), "sampler", None)
    for sampler in (getattr(d.obj, "sampler", None), inner):
        weights = getattr(sampler, "weights", None)
        if weights is not None:
            w = np.asarray(weights, dtype=np.float64).ravel()
            if w.size and float(w.max()) > float(w.min()):
                return w
    return None


def _ordered_prefix(split: Split) -> bool:
    """The split's draws are the first batches of a DataLoader in index order (a SequentialSampler), not
    all of it, and it has class labels: a validation folder stored class by class (an ImageFolder's)
    then gives its first classes only, whose features differ from the training split's mix of every
    class without any drift. Judged within each class, as a weighted sampler's draws are."""
    d, s = split.draws, split.stats
    if d.kind != "loader" or not sequential(d.obj) or not d.length or len(d.indices) >= d.length:
        return False
    # only when the labels drawn come in class runs: a val set stored in random order (CIFAR-100's, 100
    # classes, a few samples of each drawn) is a random subset, and judged whole (review, 2026-12-07)
    return s.label_kind in ("index", "onehot") and s.labels is not None and in_runs(s.labels)


def _within_classes(train: Split, split: Split, x: np.ndarray, y: np.ndarray, shift: float, weights: list) -> list:
    """Drift judged within each class both splits hold ``DRIFT_MIN_SAMPLES`` of (the commonest first):
    a sampler weighted by class moves the classes' shares, not a class's own features, so a val split
    left unnormalised still drifts beside a rebalanced training loader (it was skipped whole: review,
    2026-12-06). No class labels, or too few of a class: [] (the note says drift was not judged)."""
    a, b = _class_of_rows(train, len(x)), _class_of_rows(split, len(y))
    if a is None or b is None:
        return []
    classes, counts = np.unique(a[np.isfinite(a)], return_counts=True)
    # weights per sample (more distinct values than classes: recency, difficulty) move a class's own
    # features too: only weights by class are undone this way
    if any(w is not None and np.unique(w).size > len(classes) for w in weights):
        return []
    for c in classes[np.argsort(-counts)]:
        if (a == c).sum() >= T.DRIFT_MIN_SAMPLES and (b == c).sum() >= T.DRIFT_MIN_SAMPLES:
            found = _compare(x[a == c], y[b == c], shift)
            if found:
                return found
    return []


def _class_of_rows(split: Split, rows: int) -> Optional[np.ndarray]:
    """The class label of each compared sample (NaN: none drawn), or None when the labels are no classes
    or the samples are not one per drawn index."""
    s = split.stats
    if s.label_kind not in ("index", "onehot") or s.labels is None or len(s.indices) != rows:
        return None
    by_index = dict(zip(s.label_indices, s.labels.tolist()))
    return np.array([by_index.get(i, np.nan) for i in s.indices], dtype=np.float64)


def _weighted_note(weighted: list, train: Split, split: Split, prefixes: Optional[list] = None) -> str:
    prefixes = prefixes or []
    why = [
        f"{' and '.join(weighted)} {'is' if len(weighted) == 1 else 'are'} drawn by a sampler with unequal weights "
        "(WeightedRandomSampler), whose draws are rebalanced on purpose"
    ] * bool(weighted)
    why += [
        f"{' and '.join(prefixes)} {'is' if len(prefixes) == 1 else 'are'} drawn as the first batches of a "
        "DataLoader in index order, not a random subset (a split stored class by class gives its first classes only)"
    ] * bool(prefixes)
    return f"{split.name}: drift against {train.name} not judged (beyond each class's own): {'; '.join(why)}"


def _compare(x: np.ndarray, y: np.ndarray, mean_shift: float = T.DRIFT_MEAN_SHIFT) -> list:
    found = []
    for j in range(x.shape[1]):
        a, b = x[:, j], y[:, j]
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        if len(a) < T.DRIFT_MIN_SAMPLES or len(b) < T.DRIFT_MIN_SAMPLES:
            continue
        sa, sb = float(a.std()), float(b.std())
        if sa == 0 and sb == 0:
            continue
        shift = abs(float(b.mean() - a.mean())) / max(sa, 1e-12)
        ratio = (sb + 1e-12) / (sa + 1e-12)
        if shift <= mean_shift and 1 / T.DRIFT_STD_RATIO <= ratio <= T.DRIFT_STD_RATIO:
            continue
        d, p = ks_2samp(a, b)
        if d > T.DRIFT_KS and p < T.DRIFT_P:
            found.append(
                {
                    "feature": j,
                    "ks": d,
                    "p": p,
                    "shift": shift,
                    "stdRatio": ratio,
                    "trainMean": float(a.mean()),
                    "mean": float(b.mean()),
                    "trainStd": sa,
                    "std": sb,
                }
            )
    return found


def _finding(train: Split, split: Split, found: list, what: str, augmented: bool = False) -> dict:
    worst = sorted(found, key=lambda f: -f["ks"])[:3]
    listed = "; ".join(
        f"{what} {f['feature']}: mean {f['trainMean']:.3g} -> {f['mean']:.3g} ({f['shift']:.1f} train std), "
        f"std {f['trainStd']:.3g} -> {f['std']:.3g}, KS {f['ks']:.2f} (p {f['p']:.1e})"
        for f in worst
    )
    return F.finding(
        F.DRIFT,
        F.WARNING,
        split.name,
        f"{split.name} differs from {train.name} in {len(found)} {what}{'s' if len(found) != 1 else ''} ({listed}). "
        + (
            f"Only {train.name} has random transforms, and this is more than augmentation alone usually moves. "
            if augmented
            else ""
        )
        + f"A model tuned on {train.name} is scored on other data. Likely cause: a split by time, site or device; "
        f"different preprocessing per split (normalisation fitted or applied to one only); or real drift. "
        "Next step: apply the same transforms to every split, or split at random/stratified if the "
        "difference is not the point.",
        source=split.source,
        features=worst,
        other=train.name,
    )
