"""Summaries under a request's budget: the header always, ``stats…`` for what did not fit (never
dropped), a model's line once per stop epoch, numpy arrays cached as far as can be trusted."""

import time

import numpy as np
import pytest
import torch

import torchdoctor.runtime.summary.array_stats as array_stats
import torchdoctor.runtime.summary.module_info as module_info
from support.summaries import cold_summaries
from torchdoctor.runtime.stats import budget
from torchdoctor.runtime.stats.cache import PENDING_NOTE
from torchdoctor.runtime.stats.tensor_stats import value_stats
from torchdoctor.runtime.summary import aggregates
from torchdoctor.runtime.summary.api import stats, summarize

BIG = 4_000_000


@pytest.fixture(autouse=True)
def cold():
    with cold_summaries():
        yield


def spent(epoch=None) -> budget.Budget:
    """A budget already far past its deadline and its grace."""
    made = budget.Budget(1e-6, epoch)
    time.sleep(2e-3)
    return made


class Counter:
    def __init__(self, monkeypatch, module, name):
        self.count = 0
        real = getattr(module, name)

        def counted(*args, **kwargs):
            self.count += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)


def test_a_deferred_tensor_keeps_its_header_and_says_stats_pending():
    t = torch.randn(BIG, requires_grad=True)
    with budget.activate(spent()):
        line, info = summarize(t), stats(t)
    assert line == f"tensor[{BIG}] f32 cpu 15.3 MiB {PENDING_NOTE} requires_grad grad=None"
    assert info["pending"] is True and info["shape"] == [BIG] and info["requires_grad"] is True
    assert "μ=" in summarize(t)  # no budget (or expanded): computed


def test_a_deferred_grad_says_so_too():
    p = torch.nn.Parameter(torch.randn(BIG))
    summarize(p)  # the weight's statistics are cached; its grad is new
    p.grad = torch.randn(BIG)
    with budget.activate(spent()):
        line = summarize(p)
    assert "μ=" in line.split("|")[0] and line.endswith(f"| grad {PENDING_NOTE}")


def test_a_model_line_is_computed_once_per_epoch(monkeypatch):
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(50)])
    calls = Counter(monkeypatch, module_info, "describe_module")
    epoch = object()
    with budget.activate(budget.Budget(None, epoch)):
        first = summarize(model)
        assert [summarize(model) for _ in range(3)] == [first] * 3
    assert calls.count == 1
    with budget.activate(budget.Budget(None, object())):  # the next stop, or after a REPL line
        summarize(model)
    summarize(model)  # no epoch: always described afresh
    assert calls.count == 3


def test_a_nan_written_between_stops_is_seen():
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.Linear(4, 2))
    with budget.activate(budget.Budget(None, object())):
        assert "NaN" not in summarize(model)
    with torch.no_grad():
        model[1].weight[0, 0] = float("nan")
    with budget.activate(budget.Budget(None, object())):
        assert "NaN/Inf in" in summarize(model)


def test_a_model_whose_check_did_not_fit_says_so_and_is_not_cached():
    model = torch.nn.Sequential(torch.nn.Linear(2000, 2000), torch.nn.Linear(2000, 2))
    epoch = object()
    with budget.activate(spent(epoch)):
        pending = summarize(model)
    assert pending.endswith(PENDING_NOTE) and stats(model).get("pending") is None
    with budget.activate(budget.Budget(None, epoch)):
        done = summarize(model)
    assert PENDING_NOTE not in done and done.startswith(pending[: -len(PENDING_NOTE)].strip()[:20])


def test_a_container_with_deferred_leaves_says_so():
    batch = {"x": torch.randn(BIG), "y": torch.randn(3)}
    with budget.activate(spent()):
        line = summarize(batch)
    assert line.startswith("dict[2 tensors]") and line.endswith(PENDING_NOTE)
    assert PENDING_NOTE not in summarize(batch)
    arrays = [np.ones(BIG), np.zeros(3)]  # arrays in a container go through the budget too
    with budget.activate(spent(object())):
        assert summarize(arrays).endswith(PENDING_NOTE)
    assert PENDING_NOTE not in summarize(arrays)


def test_arrays_are_cached_within_a_stop_only_when_writable(monkeypatch):
    calls = Counter(monkeypatch, array_stats, "describe_array")
    a = np.arange(1000, dtype=np.float32)
    epoch = object()
    with budget.activate(budget.Budget(None, epoch)):
        first = summarize(a)
        assert summarize(a) == first and calls.count == 1
    with budget.activate(budget.Budget(None, object())):
        a[500] = 1e6  # a write numpy records nowhere: a new stop must look again
        assert summarize(a) != first and calls.count == 2
    summarize(a)
    summarize(a)
    assert calls.count == 4  # no epoch: a writable array is never trusted


def test_read_only_arrays_are_cached_across_stops(monkeypatch):
    calls = Counter(monkeypatch, array_stats, "describe_array")
    frozen = np.frombuffer(bytes(range(200)) * 10, dtype=np.uint8)
    first = summarize(frozen)
    with budget.activate(budget.Budget(None, object())):
        assert summarize(frozen) == first
    assert summarize(frozen) == first and calls.count == 1


def test_a_deferred_array_keeps_its_header():
    a = np.ones((2000, 2000), dtype=np.float64)
    with budget.activate(spent(object())):
        line = summarize(a)
    assert line == f"ndarray[2000, 2000] f64 30.5 MiB {PENDING_NOTE}"
    assert summarize(a) == "ndarray[2000, 2000] f64 30.5 MiB constant 1"


def test_a_model_walk_resumes_across_requests_at_one_stop_until_complete():
    """Each request walks what fits and the next resumes: a NaN in the last tensor is found,
    and the line says stats… until then (never a clean line before the walk is done)."""
    # 1000 layers: their walk takes 8-16 requests of 5 ms here (200 took 3), so a machine several
    # times faster still cannot walk it all in the first one.
    model = torch.nn.Sequential(*[torch.nn.Linear(4, 4) for _ in range(1000)])
    with torch.no_grad():
        model[-1].bias[0] = float("nan")
    epoch, lines = object(), []
    for _ in range(2000):
        request = budget.Budget(0.005, epoch)
        with budget.activate(request):
            lines.append(summarize(model))
        if PENDING_NOTE not in lines[-1]:
            break
    assert len(lines) > 1 and all(PENDING_NOTE in line for line in lines[:-1])
    assert "NaN/Inf in 999.bias" in lines[-1] and PENDING_NOTE not in lines[-1]
    found = [i for i, line in enumerate(lines) if "NaN" in line]
    assert found == list(range(found[0], len(lines)))  # once found (late: the last layer), kept
    hits = aggregates.MODULE_LINES.hits
    with budget.activate(budget.Budget(0.005, epoch)):
        assert summarize(model) == lines[-1]
    assert aggregates.MODULE_LINES.hits == hits + 1


def test_a_pending_model_leaves_time_for_the_values_after_it():
    def layers():
        # Weights above finite_check.BATCH_ELEMENTS: each is checked by its own statistics, so
        # the walk costs far more than the header (small ones are proven finite in batches).
        return torch.nn.Sequential(*[torch.nn.Linear(300, 300) for _ in range(40)])

    # The budget is sized from timings measured here, so a load spike during the measurement
    # can size it wrongly: the relation must hold in one of three fresh trials (a walk that is
    # never put off, or a value after it never given time, fails all three).
    seen = []
    for _trial in range(3):
        twin, model, after = layers(), layers(), torch.randn(100)
        start = time.monotonic()
        module_info.describe_module(twin, check=False)  # what the line costs without its walk, here
        header = time.monotonic() - start
        value_stats(twin[0].weight)  # warm
        one = 0.0  # one weight's check, at its slowest of three here: the walk needs 40 of them
        for layer in twin[1:4]:
            start = time.monotonic()
            value_stats(layer.weight)
            one = max(one, time.monotonic() - start)
        with budget.activate(budget.Budget(3 * header + 10 * one, object())):  # far less than the walk needs
            first, second = summarize(model), summarize(after)
        seen.append((first, second))
        if PENDING_NOTE in first and "μ=" in second:
            break
    assert PENDING_NOTE in first and "μ=" in second, seen


def test_a_model_walk_goes_on_at_hovers_but_not_at_relistings_of_the_stop():
    model = torch.nn.Sequential(*[torch.nn.Linear(8, 8) for _ in range(40)])
    stop = object()
    first = budget.Budget(1e-4, stop, listing=True)
    with budget.activate(first):
        time.sleep(2e-4)
        assert stats(model).get("pending")  # out of time at once: its walk is put off
    with budget.activate(budget.Budget(10.0, stop, listing=True)):
        assert stats(model).get("pending")  # a re-listing of the same stop shows the line as it stands
    with budget.activate(budget.Budget(10.0, stop)):
        assert not stats(model).get("pending")  # a hover walks on to the end
