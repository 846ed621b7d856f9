"""The outermost module calls: timed and read as before, their submodules run with no monitor hook."""

from __future__ import annotations

import copy
import pickle

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from support.monitor import recording  # noqa: E402
from torchdoctor.runtime.monitor import recorder  # noqa: E402
from torchdoctor.runtime.monitor.config import MonitorConfig  # noqa: E402
from torchdoctor.runtime.monitor.outermost import Outermost  # noqa: E402

GLOBAL = torch.nn.modules.module


def ours(monitor):
    return next(h for h in monitor._handles if isinstance(h, Outermost))


def hooks_in_torch(outermost):
    """Which of our two global hooks torch would call now."""
    return (
        outermost._pre_hook in GLOBAL._global_forward_pre_hooks.values(),
        outermost._post_hook in GLOBAL._global_forward_hooks.values(),
    )


class Spy(nn.Module):
    """A submodule that notes whether our global hooks are armed while it runs."""

    def __init__(self, outermost_of, fail=False):
        super().__init__()
        self.linear, self.outermost_of, self.fail, self.seen = nn.Linear(4, 1), outermost_of, fail, []

    def forward(self, x):
        self.seen.append(hooks_in_torch(self.outermost_of()))
        if self.fail:
            raise ValueError("a forward that raises")
        return self.linear(x)


@pytest.fixture
def monitor():
    with recording() as m:
        yield m


def test_submodules_run_without_our_hooks_and_the_step_is_recorded(monitor):
    outermost = ours(monitor)
    spy = Spy(lambda: outermost)
    model = nn.Sequential(spy, nn.ReLU())
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    for _ in range(3):
        optimizer.zero_grad()
        nn.functional.mse_loss(model(torch.randn(6, 4)), torch.zeros(6, 1)).backward()
        optimizer.step()
    assert spy.seen == [(False, False)] * 3  # off while the outermost call ran
    assert hooks_in_torch(outermost) == (True, True)  # and back for the next one
    assert not model._forward_hooks and not model._forward_hooks_always_called
    steps = [p for k, p in monitor.events if k == "step"]
    assert len(steps) == 3 and all(s["time"]["forward"] > 0 for s in steps)
    assert steps[-1]["samples_per_s"] > 0  # the batch size came from the model's input
    copy.deepcopy(model)  # nothing of the monitor stays on the program's modules
    assert monitor.errors == []


def test_a_forward_that_raises_leaves_the_hooks_as_they_were(monitor):
    outermost = ours(monitor)
    failing = Spy(lambda: outermost, fail=True)
    with pytest.raises(ValueError):
        failing(torch.randn(2, 4))
    assert hooks_in_torch(outermost) == (True, True) and not failing._forward_hooks and monitor.root is None
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    optimizer.zero_grad()
    model(torch.randn(3, 4)).sum().backward()
    optimizer.step()
    steps = [p for k, p in monitor.events if k == "step"]
    assert len(steps) == 1 and steps[0]["time"]["forward"] > 0 and monitor.errors == []
    pickle.loads(pickle.dumps(model))  # torch.save(model) pickles it: no hook of ours on it


def test_uninstalled_inside_a_forward_puts_nothing_back():
    m = recorder.install(MonitorConfig())
    outermost = ours(m)

    class Quits(nn.Module):
        def forward(self, x):
            recorder.uninstall()
            return x

    Quits()(torch.ones(1))
    assert hooks_in_torch(outermost) == (False, False) and recorder.current() is None
