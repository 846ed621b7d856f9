"""A request's budget: what does not fit is deferred (never cached), cut short between blocks,
learned per dtype; nothing changes without an active budget."""

import time

import numpy as np
import pytest
import torch

from torchdoctor.runtime.stats import budget
from torchdoctor.runtime.stats.blocks import iter_blocks
from torchdoctor.runtime.stats.cache import PENDING_NOTE, IdentityCache, is_pending
from torchdoctor.runtime.stats.tensor_stats import value_stats

BIG = 4_000_000  # elements: estimated above SMALL_SECONDS at any learned or default rate here


@pytest.fixture(autouse=True)
def default_rates():
    budget.forget_rates()
    yield
    budget.forget_rates()


def expired(seconds: float = 1e-6) -> budget.Budget:
    made = budget.Budget(seconds)
    time.sleep(seconds * 3 + 1e-3)  # past the deadline, and past the grace for small values
    return made


def test_no_budget_computes_everything():
    cache = IdentityCache()
    t = torch.randn(BIG)
    assert budget.current() is None
    assert cache.get_or_compute(t, ("v", 0), lambda: value_stats(t))["count"] == BIG


def test_a_miss_that_does_not_fit_is_deferred_and_not_cached():
    cache = IdentityCache()
    t = torch.randn(BIG)
    with budget.activate(expired()) as active:
        value = cache.get_or_compute(t, ("v", 0), lambda: value_stats(t))
    assert is_pending(value) and value["note"] == PENDING_NOTE
    assert active.deferred == 1 and cache.deferred == 1 and len(cache) == 0
    assert cache.get_or_compute(t, ("v", 0), lambda: value_stats(t))["count"] == BIG  # later: computed


def test_a_hit_is_served_whatever_the_budget():
    cache = IdentityCache()
    t = torch.randn(BIG)
    first = cache.get_or_compute(t, ("v", 0), lambda: value_stats(t))
    with budget.activate(expired()) as active:
        assert cache.get_or_compute(t, ("v", 0), lambda: value_stats(t)) == first
    assert active.deferred == 0


def test_small_values_are_computed_a_little_past_the_deadline_but_not_far_past():
    cache = IdentityCache()
    small = torch.randn(16)
    late = budget.Budget(1.0)
    late.deadline = time.monotonic() - 0.5  # half a budget late: within the grace
    with budget.activate(late):
        assert "count" in cache.get_or_compute(small, ("v", 0), lambda: value_stats(small))
    with budget.activate(expired()):
        assert is_pending(cache.get_or_compute(torch.randn(16), None, lambda: {"count": 16}))


def test_a_computation_running_past_the_deadline_is_cut_between_blocks():
    cache = IdentityCache()
    t = torch.zeros(200_000)
    budget._RATES[("torch.float32", "cpu")] = 1e-15  # the estimate says it fits; it cannot

    walked = []

    def slow_walk():  # 100 blocks of at least 10 ms each: a second in all, unless cut
        return [walked.append(time.sleep(0.01)) for _ in iter_blocks(t, 2000)]

    active = budget.Budget(0.05)
    with budget.activate(active):
        value = cache.get_or_compute(t, ("v", 0), slow_walk)
    # Counted in blocks, not seconds: a loaded machine only makes each sleep longer, so fewer
    # blocks fit before the deadline (and its grace of one more budget): ~10 here at best.
    assert 0 < len(walked) < 100 // 2, len(walked)  # cut after a few blocks, not after all 100
    assert is_pending(value) and active.deferred == 1 and len(cache) == 0
    assert budget._RATES[("torch.float32", "cpu")] > 1e-15  # and the rate learned it was too slow


def test_checkpoint_only_cuts_what_the_cache_runs():
    active = budget.Budget(1e-6)
    time.sleep(1e-3)
    with budget.activate(active):
        budget.checkpoint()  # not inside a budgeted computation: nothing raised
        active.abortable = True
        with pytest.raises(budget.OutOfTime):
            budget.checkpoint()


def test_rates_are_learned_per_dtype_and_device():
    t = torch.randn(BIG)
    before = budget.estimate(t)
    cache = IdentityCache()
    start = time.monotonic()
    cache.get_or_compute(t, ("v", 0), lambda: value_stats(t))
    took = time.monotonic() - start
    after = budget.estimate(t)
    assert after != before and after <= took * 2
    assert budget.estimate(torch.zeros(BIG, dtype=torch.int64)) == before  # another dtype: default


def test_estimates_count_memory_not_the_expanded_view():
    base = torch.randn(1000)
    wide = base.expand(10_000, 1000)
    assert budget.cost_key(wide)[1] == 1000
    assert budget.cost_key(np.broadcast_to(np.ones(10), (1000, 10)))[1] == 10


def test_a_relisting_of_the_same_stop_does_not_try_again_what_it_put_off():
    """Listing a stop twice costs a cache look-up; a hover, an expand or the next stop computes."""
    cache = IdentityCache()
    t = torch.randn(BIG)
    calls = []

    def compute():
        calls.append(1)
        return value_stats(t)

    stop = object()
    with budget.activate(budget.Budget(1e-6, stop, listing=True)):
        time.sleep(1e-3)
        assert is_pending(cache.get_or_compute(t, ("v", 0), compute))
    budget._RATES.clear()
    budget._RATES[("torch.float32", "cpu")] = 1e-15  # it would fit now: a later listing still skips it
    with budget.activate(budget.Budget(10.0, stop, listing=True)) as again:
        assert is_pending(cache.get_or_compute(t, ("v", 0), compute)) and again.deferred == 1
    assert calls == []
    with budget.activate(budget.Budget(10.0, stop)):  # a hover of the same stop computes it
        assert cache.get_or_compute(t, ("v", 0), compute)["count"] == BIG
    assert calls == [1]
    other = torch.randn(BIG)
    with budget.activate(budget.Budget(1e-6, stop, listing=True)):
        time.sleep(1e-3)
        assert is_pending(cache.get_or_compute(other, ("w", 0), lambda: value_stats(other)))
    budget._RATES[("torch.float32", "cpu")] = 1e-15
    with budget.activate(budget.Budget(10.0, object(), listing=True)):  # the next stop computes it
        assert cache.get_or_compute(other, ("w", 0), lambda: value_stats(other))["count"] == BIG
