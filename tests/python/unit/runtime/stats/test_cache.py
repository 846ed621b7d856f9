"""A second stop costs nothing; any change to the data (tracked or not) is seen."""

import gc
import weakref

import pytest
import torch

from torchdoctor.runtime.stats import tensor_stats
from torchdoctor.runtime.stats.cache import VALUE_STATS, IdentityCache
from torchdoctor.runtime.summary.api import stats, summarize


class CountingComputations:
    """Counts real statistics computations by wrapping the function that does them."""

    def __init__(self, monkeypatch):
        self.count = 0
        real = tensor_stats.value_stats

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        import torchdoctor.runtime.summary.tensor_info as tensor_info

        monkeypatch.setattr(tensor_info, "value_stats", counted)


@pytest.fixture
def computations(monkeypatch):
    return CountingComputations(monkeypatch)


def test_second_summary_does_not_recompute(computations):
    t = torch.randn(1000)
    first = summarize(t)
    hits = VALUE_STATS.hits
    assert summarize(t) == first
    assert computations.count == 1 and VALUE_STATS.hits == hits + 1


def test_in_place_change_recomputes(computations):
    t = torch.zeros(100)
    assert "all zeros" in summarize(t)
    t.add_(1)  # bumps t._version
    assert "constant 1" in summarize(t) and computations.count == 2


def test_change_through_data_is_caught_by_the_probe(computations):
    p = torch.nn.Parameter(torch.zeros(10_000))
    summarize(p)
    p.data.add_(1.0)  # an old-style SGD step: p._version does not move
    assert p._version == 0
    assert "constant 1" in summarize(p) and computations.count == 2


def test_views_are_separate_entries_and_grad_is_read_fresh(computations):
    leaf = torch.ones(4, requires_grad=True)
    summarize(leaf)
    assert "grad=None" in summarize(leaf)
    leaf.grad = torch.full((4,), 2.0)
    assert "| grad constant 2" in summarize(leaf)  # .grad changes without a version bump
    assert computations.count == 2  # leaf once, its grad once


def test_cache_holds_no_strong_reference():
    t = torch.randn(10)
    stats(t)
    ref = weakref.ref(t)
    del t
    gc.collect()
    assert ref() is None


def test_identity_cache_is_bounded_and_checks_identity():
    cache = IdentityCache(maxsize=3)
    keep = [torch.zeros(1) for _ in range(5)]
    for i, t in enumerate(keep):
        cache.get_or_compute(t, ("v", 0), lambda i=i: i)
    assert len(cache) == 3
    assert cache.get_or_compute(keep[4], ("v", 0), lambda: "recomputed") == 4
    assert cache.get_or_compute(keep[0], ("v", 0), lambda: "recomputed") == "recomputed"  # evicted
    assert cache.get_or_compute(keep[4], ("v", 1), lambda: "new version") == "new version"
    assert cache.get_or_compute(keep[4], None, lambda: "uncached") == "uncached"


def test_a_walk_over_3000_tensors_never_evicts_itself(computations):
    """The old 512-entry LRU missed on every tensor of a model bigger than itself, every time."""
    VALUE_STATS.clear()
    tensors = [torch.randn(8) for _ in range(3000)]
    for t in tensors:
        summarize(t)
    assert computations.count == 3000
    hits = VALUE_STATS.hits
    for t in tensors:
        summarize(t)
    assert computations.count == 3000 and VALUE_STATS.hits == hits + 3000


def test_an_in_place_change_among_3000_recomputes_only_that_one(computations):
    VALUE_STATS.clear()
    tensors = [torch.zeros(8) for _ in range(3000)]
    for t in tensors:
        summarize(t)
    tensors[1234].add_(1)  # a tracked in-place op: _version moves
    lines = [summarize(t) for t in tensors]
    assert computations.count == 3001
    assert "constant 1" in lines[1234] and all("all zeros" in line for i, line in enumerate(lines) if i != 1234)


def test_freed_objects_leave_the_cache():
    cache = IdentityCache()
    keep = torch.zeros(1)
    gone = [torch.zeros(1) for _ in range(10)]
    for t in gone + [keep]:
        cache.get_or_compute(t, ("v", 0), lambda: {"x": 1})
    assert len(cache) == 11
    del gone, t
    gc.collect()
    cache.get_or_compute(torch.zeros(1), None, lambda: None)  # uncached: drops nothing yet
    other = torch.ones(1)
    cache.get_or_compute(other, ("v", 0), lambda: {"x": 2})  # an insertion drops the freed ones
    assert len(cache) == 2 and cache.get_or_compute(keep, ("v", 0), lambda: "recomputed") == {"x": 1}


def test_the_byte_bound_evicts_oldest_first():
    one = IdentityCache()
    probe = torch.zeros(1)
    one.get_or_compute(probe, ("v", 0), lambda: {"count": 1, "mean": 0.5})
    cache = IdentityCache(max_bytes=one.bytes * 3)
    keep = [torch.zeros(1) for _ in range(5)]
    for t in keep:
        cache.get_or_compute(t, ("v", 0), lambda: {"count": 1, "mean": 0.5})
    assert len(cache) == 3 and cache.bytes <= cache.max_bytes
    assert cache.peek(keep[0], ("v", 0)) is None and cache.peek(keep[4], ("v", 0)) is not None


def test_within_one_stop_a_tensor_is_probed_once_and_a_version_bump_still_seen(monkeypatch):
    from torchdoctor.runtime.stats import budget
    from torchdoctor.runtime.stats import fingerprint as fp

    probes = []
    real = fp.probe
    monkeypatch.setattr(fp, "probe", lambda t: probes.append(1) or real(t))
    t = torch.zeros(1000)
    epoch = object()
    with budget.activate(budget.Budget(None, epoch)):
        first = [fp.fingerprint(t) for _ in range(5)]
        assert len(probes) == 1 and len(set(first)) == 1
        t.add_(1)  # a tracked change at the same stop (from the debug console): seen
        assert fp.fingerprint(t) != first[0] and len(probes) == 2
    with budget.activate(budget.Budget(None, object())):  # the next stop: probed again
        fp.fingerprint(t)
    fp.fingerprint(t)  # no stop at all: always probed
    assert len(probes) == 4


def _quantized(values, scale=0.1):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # quantized tensors are deprecated; still met in the wild
        return torch.quantize_per_tensor(values, scale, 0, torch.qint8)


def test_a_quantized_tensor_is_cached_and_a_write_to_its_bytes_is_seen(computations):
    # ``take`` has no quantized kernel: the probe reads the storage's bytes instead of giving up
    q = _quantized(torch.zeros(64, 64))
    first = summarize(q)
    hits = VALUE_STATS.hits
    assert summarize(q) == first and VALUE_STATS.hits == hits + 1 and computations.count == 1
    q.int_repr()  # a copy: q itself unchanged
    assert summarize(q) == first and computations.count == 1
    torch.empty(0, dtype=torch.uint8).set_(q.untyped_storage()).fill_(10)  # every byte, no version bump
    assert summarize(q) != first and computations.count == 2
