"""Cores other processes keep busy, from /proc/stat between two passes: our own CPU time is not
theirs, short windows keep the last figure, old ones give none. Counters are injected: no
timing digits."""

import os
import time

import pytest

from torchdoctor.runtime.stats import cpu_use, guard
from torchdoctor.runtime.stats.cpu_use import MAX_WINDOW, MIN_WINDOW, ForeignUse, read_busy


class Machine:
    """A wall clock, the CPUs' busy seconds and this process's CPU seconds, moved by hand."""

    def __init__(self):
        self.wall = self.busy = self.ours = 0.0
        self.readable = True

    def run(self, seconds, others=0.0, ours=0.0):
        self.wall += seconds
        self.busy += seconds * (others + ours)
        self.ours += seconds * ours

    def use(self):
        return ForeignUse(
            busy=lambda: self.busy if self.readable else None, clock=lambda: self.wall, cpu=lambda: self.ours
        )


def test_the_busy_fields_are_summed_and_idle_ones_left_out(tmp_path):
    stat = tmp_path / "stat"
    hz = os.sysconf("SC_CLK_TCK")
    # user nice system idle iowait irq softirq steal guest guest_nice
    stat.write_text(f"cpu  {hz} {hz} {hz} {50 * hz} {7 * hz} {hz} {hz} {hz} {3 * hz} 0\ncpu0 1 2 3 4\n")
    assert read_busy(str(stat)) == pytest.approx(6.0)  # guest is inside user: not counted twice


def test_an_unreadable_or_odd_stat_file_is_unknown(tmp_path):
    assert read_busy(str(tmp_path / "missing")) is None
    odd = tmp_path / "odd"
    odd.write_text("intr 1 2 3\n")
    assert read_busy(str(odd)) is None


def test_another_process_busy_on_one_core_counts_one_core():
    m = Machine()
    use = m.use()
    m.run(2.0, others=1.0)
    assert use.sample() == pytest.approx(1.0)


def test_our_own_work_is_not_taken_for_others():
    m = Machine()
    use = m.use()
    m.run(2.0, ours=2.0)  # a training step, a bench: both cores ours
    assert use.sample() == pytest.approx(0.0)
    m.run(2.0, others=0.5, ours=1.5)
    assert use.sample() == pytest.approx(0.5)


def test_a_short_window_keeps_the_last_figure_and_its_origin():
    m = Machine()
    use = m.use()
    assert use.sample() is None  # no window yet: the caller uses the load average
    m.run(MIN_WINDOW * 2, others=1.0)
    assert use.sample() == pytest.approx(1.0)
    m.run(MIN_WINDOW / 4, others=1.0)
    assert use.sample() == pytest.approx(1.0)  # too short to say: the last figure
    m.run(MIN_WINDOW, others=0.0)  # the window runs from the last real sample: 1/5 of it busy
    assert use.sample() == pytest.approx(0.2)


def test_a_window_longer_than_the_horizon_gives_no_figure_and_restarts():
    m = Machine()
    use = m.use()
    m.run(MAX_WINDOW * 2, others=0.0)
    assert use.sample() is None
    m.run(1.0, others=1.0)
    assert use.sample() == pytest.approx(1.0)


def test_without_proc_stat_nothing_is_known():
    m = Machine()
    m.readable = False
    use = m.use()
    m.run(2.0, others=1.0)
    assert use.sample() is None


def test_idle_threads_trusts_the_measured_cores_over_the_load_average(monkeypatch):
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 2)
    own = guard.OwnLoad(clock=lambda: 0.0, cpu=lambda: 0.0)
    m = Machine()
    use = m.use()
    m.run(1.0, others=0.0)
    # a phantom load (tasks that use no CPU) with idle cores: every core
    monkeypatch.setattr(guard.os, "getloadavg", lambda: (0.9, 0.9, 0.9))
    assert guard.idle_threads(2, own, use) == 2
    # a process that just took a core, before the load average shows it: one thread
    m.run(1.0, others=1.0)
    monkeypatch.setattr(guard.os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert guard.idle_threads(2, own, use) == 1


def test_idle_threads_falls_back_to_the_load_average_without_a_figure(monkeypatch):
    monkeypatch.setattr(guard.os, "cpu_count", lambda: 2)
    own = guard.OwnLoad(clock=lambda: 0.0, cpu=lambda: 0.0)
    m = Machine()
    m.readable = False
    monkeypatch.setattr(guard.os, "getloadavg", lambda: (1.9, 1.9, 1.9))
    assert guard.idle_threads(2, own, m.use()) == 1


@pytest.mark.skipif(read_busy() is None, reason="no /proc/stat here")
def test_the_real_counters_see_this_process_work():
    before = read_busy()
    ours = cpu_use.process_cpu()
    end = time.process_time() + 0.3
    while time.process_time() < end:
        pass
    # every busy tick of ours is a busy tick of the machine (both count at 100 Hz: a tick of slack)
    assert read_busy() - before >= cpu_use.process_cpu() - ours - 0.05
