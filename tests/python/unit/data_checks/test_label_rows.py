"""The labels of a split read in one go (plain numbers, 0-d tensors) or one by one (anything
else): the statistics are the same either way."""

from __future__ import annotations

import numpy as np
import torch

from torchdoctor.data_checks.reduce import SplitStats, _labels
from torchdoctor.data_checks.sampling import Draws


def stats_of(ys: list) -> SplitStats:
    d = Draws("train", "dataset", None)
    d.indices, d.ys = list(range(10, 10 + len(ys))), ys
    s = SplitStats("train")
    _labels(s, d)
    return s


def same(a: SplitStats, b: SplitStats) -> None:
    assert a.label_kind == b.label_kind and a.label_float == b.label_float
    assert a.label_indices == b.label_indices and a.label_nonfinite == b.label_nonfinite
    assert a.labels is not None and b.labels is not None and np.array_equal(a.labels, b.labels, equal_nan=True)


def test_class_indices_as_ints_tensors_and_numpy_scalars_agree():
    values = [3, 1, 0, 2, 2, 1, 0, 3]
    as_ints = stats_of(values)
    assert as_ints.label_kind == "index" and as_ints.label_indices == list(range(10, 18))
    same(as_ints, stats_of([torch.tensor(v) for v in values]))
    same(as_ints, stats_of([np.int64(v) for v in values]))
    same(as_ints, stats_of([torch.tensor([v]) for v in values]))  # 1-element tensors: one by one


def test_float_targets_with_a_nan_agree_in_one_go_and_one_by_one():
    values = [0.5, float("nan"), 2.0, -1.0]
    fast = stats_of(values)
    assert fast.label_kind == "float" and fast.label_nonfinite == [11]
    same(fast, stats_of([np.array(v) for v in values]))  # 0-d arrays: not plain numbers


def test_a_missing_label_leaves_that_sample_out():
    s = stats_of([1, None, 0, 1])
    assert s.label_kind == "index" and s.label_indices == [10, 12, 13]
    assert s.labels is not None and s.labels.tolist() == [1.0, 0.0, 1.0]


def test_labels_of_two_shapes_keep_the_most_common():
    s = stats_of([torch.tensor([0, 1]), torch.tensor([1, 0]), torch.tensor([1, 0, 0])])
    assert s.label_kind == "onehot" and s.label_indices == [10, 11] and s.label_width == 2
