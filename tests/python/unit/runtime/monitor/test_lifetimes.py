"""What the recorder must not keep alive, and what it must not choke on (issue 17).

A sweep trains model after model under ``--monitor``: a model the script deleted must be freed,
however many steps the recorder saw. A lazy parameter (``nn.LazyLinear`` not called yet) in the
optimizer has no value: the update ratio leaves it out, with no error.
"""

from __future__ import annotations

import gc
import warnings
import weakref

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from support.monitor import recording  # noqa: E402


@pytest.fixture
def monitor():
    with recording(every=2) as m:
        yield m


def _train(model, optimizer, n):
    torch.manual_seed(0)
    for _ in range(n):
        optimizer.zero_grad()
        loss = model(torch.randn(8, 4)).pow(2).mean()
        loss.backward()
        optimizer.step()


def _sweep_one(lr):
    """One run of a sweep: the model and its optimizer live only in this call."""
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1))
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    _train(model, optimizer, 3)
    return weakref.ref(model), weakref.ref(model[0].weight), weakref.ref(optimizer)


def test_a_deleted_model_is_freed_under_the_monitor(monitor):
    refs = _sweep_one(1e-3)
    gc.collect()
    assert [ref() is None for ref in refs] == [True, True, True]  # model, a parameter, the optimizer
    assert monitor.errors == []
    steps = [p for k, p in monitor.events if k == "step"]
    assert [s["step"] for s in steps] == [1, 2, 3]
    assert steps[1]["grad_norm"] is not None and steps[1]["update_ratio"][0] > 0  # every=2: step 2


def test_the_next_model_of_a_sweep_is_recorded_after_the_first_is_freed(monitor):
    first = _sweep_one(1e-3)
    gc.collect()
    second = _sweep_one(1e-2)
    gc.collect()
    assert all(ref() is None for ref in first + second)
    steps = [p for k, p in monitor.events if k == "step"]
    # six steps, the second run's ratios from its own parameters, in its own series even when its
    # optimizer reused the dead one's id (test_sweep_series.py makes sure of a reuse)
    assert [(s["series"], s["step"]) for s in steps] == [("opt0", i) for i in (1, 2, 3)] + [
        ("opt1", i) for i in (1, 2, 3)
    ]
    assert steps[-2]["update_ratio"] is not None and all(r > 0 for r in steps[-2]["update_ratio"])
    assert monitor.errors == []


class _WithLazyHead(nn.Module):
    """A trunk trained every step and a lazy head never called (its weight stays uninitialised)."""

    def __init__(self) -> None:
        super().__init__()
        self.trunk = nn.Linear(4, 1)
        self.head = nn.LazyLinear(3)

    def forward(self, x):
        return self.trunk(x)


def _lazy_model():
    with warnings.catch_warnings():  # older torch warns that lazy modules are new
        warnings.simplefilter("ignore")
        return _WithLazyHead()


def test_lazy_parameters_are_left_out_of_the_update_ratio(monitor):
    model = _lazy_model()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    _train(model, optimizer, 4)
    assert monitor.errors == []
    steps = [p for k, p in monitor.events if k == "step"]
    ratios = [s["update_ratio"] for s in steps]
    assert ratios[0] is None and ratios[1] is not None and ratios[3] is not None  # every 2 steps
    assert len(ratios[1]) == 1 and ratios[1][0] > 0  # one group: the trunk's update
    assert steps[1]["grad_norm"] > 0 and steps[3]["grad_norm"] > 0  # always at a ratio step
    assert torch.nn.parameter.is_lazy(model.head.weight)


def test_a_group_of_lazy_parameters_only_has_no_ratio(monitor):
    model = _lazy_model()
    optimizer = torch.optim.SGD(
        [{"params": model.trunk.parameters()}, {"params": model.head.parameters(), "lr": 0.01}], lr=0.1
    )
    _train(model, optimizer, 2)
    assert monitor.errors == []
    last = [p for k, p in monitor.events if k == "step"][-1]
    assert last["update_ratio"][0] > 0 and last["update_ratio"][1] is None
