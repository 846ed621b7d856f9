"""Blocks shared among threads: torch on one intra-op thread inside a pass, every block read once
by some thread, results in block order, the request's budget and errors seen as on one thread."""

import threading
import time

import pytest
import torch

from support.stats_reference import assert_matches, reference
from torchdoctor.runtime.stats import budget, guard, raw_pass, tensor_stats
from torchdoctor.runtime.stats.blocks import iter_blocks
from torchdoctor.runtime.stats.parallel import map_blocks
from torchdoctor.runtime.stats.tensor_stats import value_stats

pytestmark = pytest.mark.filterwarnings("error")


def test_every_block_is_read_once_and_results_keep_block_order():
    blocks = [torch.full((3,), float(i)) for i in range(50)]
    readers = []

    def make_reader():
        seen = []
        readers.append(seen)
        return lambda block: (seen.append(1), float(block[0]))[1]

    assert map_blocks(iter(blocks), make_reader, 3) == [float(i) for i in range(50)]
    assert len(readers) == 3 and sum(len(seen) for seen in readers) == 50


def test_each_thread_reads_with_its_own_reader():
    """Two threads wait for each other inside their first block: both really run at once."""
    meet = threading.Barrier(2, timeout=10)
    idents = set()

    def make_reader():
        first = [True]

        def read(block):
            if first[0]:
                first[0] = False
                meet.wait()
            idents.add(threading.get_ident())
            return int(block)

        return read

    assert map_blocks(iter(range(10)), make_reader, 2) == list(range(10))
    assert len(idents) == 2


def test_an_error_in_any_thread_is_raised_to_the_caller():
    def make_reader():
        def read(block):
            if block == 7:
                raise ValueError("block 7")
            return block

        return read

    with pytest.raises(ValueError, match="block 7"):
        map_blocks(iter(range(40)), make_reader, 2)


def test_the_request_budget_cuts_the_blocks_in_every_thread():
    active = budget.Budget(1e-6)
    time.sleep(1e-3)
    with budget.activate(active):
        active.abortable = True
        with pytest.raises(budget.OutOfTime):
            map_blocks(iter_blocks(torch.zeros(100), 10), lambda: lambda block: block.sum(), 2)


def _a_pass_on_two_of(monkeypatch, cores: int, dtype):
    """Summarize a tensor of many blocks with two idle threads out of ``cores`` (torch set to two),
    spying on its sums: ``(tensor, stats, torch's thread counts seen, reader threads seen)``."""
    monkeypatch.setattr(guard, "idle_threads", lambda current: 2)
    monkeypatch.setattr(guard.os, "cpu_count", lambda: cores)
    monkeypatch.setattr(tensor_stats, "BLOCK_CPU", 4096)  # many blocks
    monkeypatch.setattr(raw_pass, "PRECISE_BELOW", 0)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    threads_seen, readers = set(), set()
    real_sum = torch.Tensor.sum

    def spying_sum(self, *args, **kwargs):
        threads_seen.add(torch.get_num_threads())
        readers.add(threading.get_ident())
        return real_sum(self, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "sum", spying_sum)
    try:
        t = (torch.randn(guard.PARALLEL_FROM * 4, generator=torch.Generator().manual_seed(0)) * 100).to(dtype)
        got = value_stats(t)
        assert torch.get_num_threads() == 2  # restored
    finally:
        torch.set_num_threads(before)
    return t, got, threads_seen, readers


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64])
def test_a_big_cpu_pass_runs_torch_on_one_thread_and_shares_its_blocks(monkeypatch, dtype):
    """Two intra-op threads made every short op of a pass wait for a descheduled thread on a busy
    machine (1-3 s instead of 0.2 s at 1e8): ops see one intra-op thread, blocks go to readers."""
    t, got, threads_seen, readers = _a_pass_on_two_of(monkeypatch, 4, dtype)  # others load 2 of 4 cores
    assert threads_seen == {1}
    assert readers  # the blocks were read (by one thread or two: the scheduler decides)
    assert_matches(got, reference(t), 2e-5)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_a_quiet_machine_runs_the_float_pass_as_one_reader_on_intra_op_threads(monkeypatch, dtype):
    """Every core idle (guard.intra_op_when_quiet): the float pass's ops see both threads, one
    reader takes every block, and torch's count is restored after."""
    t, got, threads_seen, readers = _a_pass_on_two_of(monkeypatch, 2, dtype)
    assert threads_seen == {2} and len(readers) == 1
    assert_matches(got, reference(t), 2e-5)


def test_the_pass_about_the_mean_shares_its_blocks_too(monkeypatch):
    """1000 + noise: the second pass (about the mean) runs on the readers as well, exactly."""
    monkeypatch.setattr(guard, "idle_threads", lambda current: 2)
    monkeypatch.setattr(tensor_stats, "BLOCK_CPU", 4096)
    monkeypatch.setattr(raw_pass, "PRECISE_BELOW", 0)
    calls = []
    real = tensor_stats._fast_rows
    monkeypatch.setattr(tensor_stats, "_fast_rows", lambda *a, **k: (calls.append(1), real(*a, **k))[1])
    t = torch.randn(guard.PARALLEL_FROM * 2, generator=torch.Generator().manual_seed(1)) * 1e-3 + 1000
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        got = value_stats(t)
    finally:
        torch.set_num_threads(before)
    assert calls == [1]
    assert_matches(got, reference(t), 2e-5)
