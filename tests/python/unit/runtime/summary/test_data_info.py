"""Lines of DataLoaders, datasets and samplers: counts, order and parts read from attributes;
nothing is iterated, no ``__getitem__`` runs, no RNG moves, a failing or slow ``__len__`` is said."""

import json
import math
import random
import warnings

import numpy as np
import pytest
import torch
from torch.utils.data import (
    BatchSampler,
    ConcatDataset,
    DataLoader,
    Dataset,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
    Subset,
    SubsetRandomSampler,
    TensorDataset,
    WeightedRandomSampler,
    random_split,
)

from torchdoctor.runtime.summary import data_info
from torchdoctor.runtime.summary.api import stats, summarize
from torchdoctor.runtime.summary.kinds import TRAINING, classify

pytestmark = pytest.mark.filterwarnings("error")


def _tensors(n=1000):
    return TensorDataset(torch.zeros(n, 3, 8, 8), torch.zeros(n, dtype=torch.long))


class Untouchable(Dataset):
    """A user dataset that fails any read of a sample or an iteration."""

    def __init__(self, n=100):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        raise AssertionError("__getitem__ was called")

    def __iter__(self):
        raise AssertionError("the dataset was iterated")


def test_a_shuffled_loader_with_workers_and_drop_last():
    with warnings.catch_warnings():  # torch's own, where fewer CPUs than workers are free (taskset, a container)
        warnings.filterwarnings("ignore", "This DataLoader will create", UserWarning)
        loader = DataLoader(_tensors(), batch_size=64, shuffle=True, num_workers=2, drop_last=True)
    assert (
        summarize(loader)
        == "DataLoader 15 batches of 64 · 1,000 samples of TensorDataset · shuffle · 2 workers · drop_last"
    )
    plain = DataLoader(_tensors(), batch_size=64)
    assert summarize(plain) == "DataLoader 16 batches of 64 · 1,000 samples of TensorDataset · in order · 0 workers"
    assert summarize(plain).count("batches") == 1 and len(plain) == 16  # the same count as torch's
    json.dumps(stats(loader))


def test_batch_sampler_given_and_no_batching():
    data = _tensors(100)
    given = DataLoader(data, batch_sampler=BatchSampler(SequentialSampler(data), 30, drop_last=False))
    assert summarize(given).startswith("DataLoader 4 batches of 30 · 100 samples of TensorDataset · in order")
    assert summarize(DataLoader(data, batch_size=None)).startswith("DataLoader unbatched · 100 samples")


def test_nothing_is_iterated_read_or_drawn():
    rng = torch.get_rng_state(), random.getstate(), np.random.get_state()[1].copy()
    data = Untouchable()
    loader = DataLoader(data, batch_size=8, shuffle=True, num_workers=0)
    line = summarize(loader)
    assert line == "DataLoader 13 batches of 8 · 100 samples of Untouchable · shuffle · 0 workers"
    assert summarize(data) == "Untouchable dataset 100 samples"
    assert summarize(RandomSampler(data)) == "RandomSampler 100 samples of Untouchable · shuffle"
    assert torch.equal(torch.get_rng_state(), rng[0]) and random.getstate() == rng[1]
    assert (np.random.get_state()[1] == rng[2]).all()


def test_a_dataset_whose_len_raises():
    class Broken(Untouchable):
        def __len__(self):
            raise RuntimeError("no index yet")

    assert summarize(Broken()) == "Broken dataset (len failed: RuntimeError)"
    line = summarize(DataLoader(Broken(), batch_size=4))
    assert line.startswith("DataLoader batches of 4 · (len failed: RuntimeError) of Broken · in order")


def test_an_iterable_dataset_has_no_len_and_its_loader_no_batch_count():
    class Stream(IterableDataset):
        def __iter__(self):
            raise AssertionError("iterated")

    assert summarize(Stream()) == "iterable Stream dataset (no len)"
    loader = DataLoader(Stream(), batch_size=16, num_workers=1)
    assert summarize(loader) == "DataLoader batches of 16 · iterable Stream dataset (no len) · 1 worker"
    assert not getattr(loader, "_IterableDataset_len_called", None)  # torch's len() would set it


def test_a_slow_len_is_called_once(monkeypatch):
    calls = []

    class Slow(Untouchable):
        def __len__(self):
            calls.append(1)
            return 5

    monkeypatch.setattr(data_info, "SLOW_LEN_SECONDS", -1.0)  # every call counts as slow
    first = Slow()
    assert summarize(first) == "Slow dataset 5 samples"
    assert summarize(first) == "Slow dataset 5 samples"  # the value read once, not asked again
    assert summarize(Slow()) == "Slow dataset (len not read: slow)" and len(calls) == 1


def test_tensor_subset_and_concat_datasets():
    data = _tensors()
    assert summarize(data) == "TensorDataset 1,000 samples: [1000, 3, 8, 8] f32, [1000] i64"
    train, _ = random_split(data, [800, 200], generator=torch.Generator().manual_seed(0))
    assert summarize(train) == "Subset 800 of TensorDataset (1,000)"
    assert summarize(Subset(train, range(10))) == "Subset 10 of Subset (800)"
    both = ConcatDataset([data, Untouchable(5)])
    assert summarize(both) == "ConcatDataset 1,005 samples: TensorDataset 1,000 + Untouchable 5"
    assert classify(data) == TRAINING and classify(Untouchable()) == TRAINING


def test_samplers():
    data = Untouchable(1000)
    assert summarize(SequentialSampler(data)) == "SequentialSampler 1,000 samples of Untouchable · in order"
    line = summarize(RandomSampler(data, replacement=True, num_samples=50))
    assert line == "RandomSampler 50 samples of Untouchable (1,000) · shuffle with replacement"
    assert summarize(SubsetRandomSampler([3, 1, 2])) == "SubsetRandomSampler 3 samples · shuffle"
    assert (
        summarize(WeightedRandomSampler([0.1, 0.9], 20))
        == "WeightedRandomSampler 20 samples · weighted with replacement"
    )
    batches = BatchSampler(RandomSampler(data), 32, drop_last=True)
    expected = "BatchSampler 31 batches of 32 · RandomSampler 1,000 samples of Untouchable · shuffle · drop_last"
    assert summarize(batches) == expected


def test_a_distributed_sampler_and_its_loader():
    data = Untouchable(1000)
    sampler = DistributedSampler(data, num_replicas=8, rank=3, seed=7)
    sampler.set_epoch(2)
    expected = "DistributedSampler 125 samples/rank of Untouchable (1,000) · rank 3 of 8 · shuffle · epoch 2 · seed 7"
    assert summarize(sampler) == expected
    line = summarize(DataLoader(data, batch_size=16, sampler=sampler))
    assert line.startswith("DataLoader 8 batches of 16 · 125 samples/rank of Untouchable (1,000) · DistributedSampler")


def test_a_user_sampler_is_named_and_its_len_asked():
    class EveryOther(torch.utils.data.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            raise AssertionError("iterated")

        def __len__(self):
            return self.n // 2

    assert summarize(EveryOther(10)) == "EveryOther 5 samples"
    line = summarize(DataLoader(_tensors(10), batch_size=2, sampler=EveryOther(10)))
    assert line == "DataLoader 3 batches of 2 · 5 samples of TensorDataset (10) · EveryOther · 0 workers"


def test_indices_given_as_the_sampler_are_counted_not_the_dataset():
    # any iterable of indices may be a sampler; the loader draws those, not the whole dataset
    line = summarize(DataLoader(_tensors(100), batch_size=4, sampler=list(range(10))))
    assert line == "DataLoader 3 batches of 4 · 10 samples of TensorDataset (100) · list · 0 workers"
    line = summarize(DataLoader(_tensors(100), batch_size=4, sampler=iter(range(10))))
    assert line == "DataLoader batches of 4 · (no len) of TensorDataset (100) · range_iterator · 0 workers"


def test_a_user_batch_sampler_decides_the_batches_and_the_order():
    class Buckets:
        """Not a Sampler subclass: any iterable of index lists with a len will do."""

        def __iter__(self):
            raise AssertionError("iterated")

        def __len__(self):
            return 7

    line = summarize(DataLoader(_tensors(100), batch_sampler=Buckets()))
    assert (
        line == "DataLoader 7 batches (Buckets) · TensorDataset 100 samples: [100, 3, 8, 8] f32, [100] i64 · 0 workers"
    )
    assert "in order" not in line  # the loader's default SequentialSampler is not what runs


def test_a_users_len_runs_once_per_line_and_leaves_the_generators_as_they_were():
    import dataclasses
    import gc
    import weakref

    class Counted(torch.utils.data.Dataset):
        calls = 0

        def __len__(self):
            Counted.calls += 1
            torch.rand(1)  # a __len__ that draws: its draw must not move the user's generator
            return 100

        def __getitem__(self, i):
            raise AssertionError("never drawn")

    dataset = Counted()
    loader = torch.utils.data.DataLoader(dataset, batch_size=10, shuffle=True)
    before, Counted.calls = torch.get_rng_state(), 0  # building the RandomSampler asked already
    assert summarize(loader).startswith("DataLoader 10 batches of 10 · 100 samples of Counted")
    assert Counted.calls == 1  # the loader, its sampler and the sampler's source ask the same object
    assert torch.equal(torch.get_rng_state(), before)

    @dataclasses.dataclass
    class Pairs(torch.utils.data.Dataset):  # a dataclass dataset: its tensors' line, NaN shown
        x: torch.Tensor
        y: torch.Tensor

    assert "⚠ NaN in x" in summarize(Pairs(torch.tensor([math.nan, 1.0]), torch.zeros(2)))

    made = type("Made", (torch.utils.data.Dataset,), {"__len__": lambda self: 3})
    summarize(made())
    kept = weakref.ref(made)
    del made
    gc.collect()
    assert kept() is None  # a class shown once is not kept alive by the summary


def test_many_parts_and_self_holding_samplers_stay_cheap_and_finite():
    parts = [torch.utils.data.TensorDataset(torch.zeros(10, 1)) for _ in range(10_000)]
    line = summarize(torch.utils.data.ConcatDataset(parts))
    assert line.endswith("TensorDataset 10 + TensorDataset 10 + TensorDataset 10 + 9,997 more"), line
    batches = torch.utils.data.BatchSampler(range(4), batch_size=2, drop_last=False)
    batches.sampler = batches  # holds itself: described once, never recursed into
    assert summarize(batches).startswith("BatchSampler ")
