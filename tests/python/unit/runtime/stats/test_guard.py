"""Threads for a statistics pass: the cores that OTHER processes leave idle. This process's own
share of the load average (a debuggee that just trained, a bench that just ran) is taken off
first; load from others still counts. Load figures are injected: no timing digits."""

import time

import pytest
import torch

from torchdoctor.runtime.stats import guard
from torchdoctor.runtime.stats.cpu_use import ForeignUse
from torchdoctor.runtime.stats.guard import OwnLoad, threads_for


class Clock:
    """A wall clock and a CPU clock the test moves by hand."""

    def __init__(self):
        self.wall = self.cpu = 0.0

    def run(self, seconds, busy):
        """``seconds`` of wall time with ``busy`` threads of this process on a CPU."""
        self.wall += seconds
        self.cpu += seconds * busy


def tracker(clock):
    return OwnLoad(clock=lambda: clock.wall, cpu=lambda: clock.cpu)


# /proc/stat unread: these tests are about the load average (test_cpu_use.py: the measured cores)
UNKNOWN = ForeignUse(busy=lambda: None)


def test_our_own_load_is_not_taken_for_a_busy_machine():
    # 2 cores, the load is all ours: every core; the same load from others: one thread
    assert threads_for(2, 2, load=1.9, own=1.9) == 2
    assert threads_for(2, 2, load=1.9, own=0.0) == 1
    # ours on top of others': only the others' part counts
    assert threads_for(4, 4, load=5.0, own=2.0) == 1
    assert threads_for(4, 4, load=3.0, own=2.0) == 3


@pytest.mark.parametrize("load", [0.0, 0.7, 1.5, 2.5, 9.0])
def test_more_of_the_load_ours_never_means_fewer_threads(load):
    counts = [threads_for(8, 8, load, own) for own in (0.0, 0.5, 1.0, 4.0, 9.0, 20.0)]
    assert counts == sorted(counts) and all(1 <= c <= 8 for c in counts)
    assert threads_for(3, 8, load, own=load) == 3  # never more than asked for


def test_a_process_busy_on_one_core_for_minutes_owns_about_one_unit_of_load():
    clock = Clock()
    own = tracker(clock)
    for _ in range(60):  # 5 minutes, sampled every 5 s, one thread busy
        clock.run(5.0, busy=1.0)
        level = own.sample(cores=2)
    assert 0.9 < level <= 1.0
    clock.run(300.0, busy=0.0)  # then paused 5 minutes: its share fades as the load does
    assert own.sample(cores=2) < 0.01


def test_a_share_is_never_overestimated_when_the_spread_is_unknown():
    """One sample after a long interval: the CPU time counts as if spent at its start, the
    smallest share it could have left in the load (fewer threads, the safe side)."""
    steady, sparse = Clock(), Clock()
    often, once = tracker(steady), tracker(sparse)
    for _ in range(24):
        steady.run(5.0, busy=1.0)
        often.sample(cores=2)
    sparse.run(120.0, busy=1.0)
    assert 0 < once.sample(cores=2) <= often.level


def test_idle_threads_discounts_this_process_and_counts_others(monkeypatch):
    clock = Clock()
    own = tracker(clock)
    for _ in range(60):
        clock.run(5.0, busy=2.0)  # both cores ours for five minutes (training, a bench)
        own.sample(cores=2)
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(guard.os, "getloadavg", lambda: (own.level, own.level, own.level))
    assert guard.idle_threads(2, own, UNKNOWN) == 2  # load ~2, all of it ours: the cores are idle now
    monkeypatch.setattr(guard.os, "getloadavg", lambda: (own.level + 1.8, 0.0, 0.0))
    assert guard.idle_threads(2, own, UNKNOWN) == 1  # another process keeps a core busy


def test_idle_threads_follows_foreign_load(monkeypatch):
    idle = tracker(Clock())  # nothing of ours
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 4)
    for load, expected in ((9.0, 1), (0.2, 4), (2.0, 2)):
        monkeypatch.setattr(guard.os, "getloadavg", lambda load=load: (load, load, load))
        assert guard.idle_threads(4, idle, UNKNOWN) == expected
    assert guard.idle_threads(2, idle, UNKNOWN) == 2


def test_the_real_tracker_sees_this_process_work():
    own = OwnLoad()
    end = time.process_time() + 0.3
    while time.process_time() < end:  # CPU time of our own
        pass
    assert own.sample(cores=1) > 0


def test_cpu_used_before_the_stats_were_imported_counts_from_the_process_start():
    """The stats are imported at the first summary, maybe after minutes of training: with the
    process's age, that CPU time is ours; without it, only what follows is."""
    clock = Clock()
    clock.run(600.0, busy=2.0)  # ten minutes of training before the import
    knows, forgets = OwnLoad(lambda: clock.wall, lambda: clock.cpu, age=600.0), tracker(clock)
    clock.run(1.0, busy=0.0)  # the breakpoint, then a hover
    assert knows.sample(cores=2) > 1.0 > forgets.sample(cores=2) == 0.0


def test_the_process_age_is_read_where_the_system_tells_it():
    age = guard.process_age()
    assert age is None or 0 < age < time.monotonic() + 1


def test_a_pass_knows_whether_other_processes_left_every_core_idle(monkeypatch):
    big = torch.zeros(guard.PARALLEL_FROM)
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 2)
    for free, quiet in ((2, True), (1, False)):
        monkeypatch.setattr(guard, "idle_threads", lambda current, free=free: min(current, free))
        threads = torch.get_num_threads()  # the pass runs torch on one thread inside
        with guard.cpu_threads(torch, big) as workers:
            assert guard.machine_quiet() is quiet and workers == min(threads, free)
        assert guard.machine_quiet() is False  # outside a pass: the busy machine's rule
    with guard.cpu_threads(torch, torch.zeros(4)):  # a small tensor: no pass of blocks, no sample
        assert guard.machine_quiet() is False
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 1)  # one core: loaded or not, it is "free"
    with guard.cpu_threads(torch, big):
        assert guard.machine_quiet() is False


def test_a_quiet_machine_reads_the_float_pass_with_intra_op_threads(monkeypatch):
    """Quiet: one reader, torch on the workers' threads during the pass, restored after; loaded:
    the readers, torch's count untouched; one worker: nothing to share either way."""
    big = torch.zeros(guard.PARALLEL_FROM)
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 2)
    threads = [2]  # torch's count, as a 2-core machine sets it, whatever this host has
    monkeypatch.setattr(torch, "get_num_threads", lambda: threads[-1])
    monkeypatch.setattr(torch, "set_num_threads", threads.append)
    for free, quiet in ((2, True), (1, False)):
        monkeypatch.setattr(guard, "idle_threads", lambda current, free=free: min(current, free))
        with guard.cpu_threads(torch, big) as workers:
            assert torch.get_num_threads() == 1  # the pass's rule: one intra-op thread
            with guard.intra_op_when_quiet(torch, workers) as readers:
                assert (readers, torch.get_num_threads()) == ((1, 2) if quiet else (free, 1))
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    with guard.intra_op_when_quiet(torch, 1) as readers:
        assert readers == 1 and torch.get_num_threads() == 2
