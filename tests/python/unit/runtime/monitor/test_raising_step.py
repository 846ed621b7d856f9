"""An ``optimizer.step()`` that raises, and the script goes on (issue 17).

torch runs the step pre-hooks, then ``step``, then the post-hooks: when ``step`` raises, the
recorder's pre-hook has run (a gradient norm, every ``every`` steps a copy of the parameters for
the update ratio) and its post-hook has not. What this checks, with a real optimizer that refuses
a non-finite gradient (``_NanGuardSGD``) and a loop that catches the error and goes on:

- the failed attempt is not counted, and the next Step (same number) gets a correct update ratio:
  its copy is taken again (this held before the fix too);
- a gradient norm computed for the failed attempt is not recorded as the next Step's (it was, when
  the norm schedule skipped that Step);
- the parameter copy left by the failed attempt goes with its optimizer (it kept a sweep's
  abandoned model and a copy of its weights alive).
"""

from __future__ import annotations

import gc
import math
import weakref

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from support.monitor import recording  # noqa: E402
from torchdoctor.runtime.monitor.norm_schedule import NormSchedule  # noqa: E402


class _NanGuardSGD(torch.optim.Optimizer):
    """Plain SGD that refuses to step on a non-finite gradient (a common custom-optimizer guard).

    Written out rather than calling ``SGD.step``: a subclass calling ``super().step()`` runs
    torch's global step hooks twice once any plain ``SGD`` exists (both classes' ``step`` are
    hooked); that case is test_nested_step.py's."""

    def __init__(self, params, lr):
        super().__init__(params, {"lr": lr})

    @torch.no_grad()
    def step(self, closure=None):
        grads = [p.grad for group in self.param_groups for p in group["params"] if p.grad is not None]
        if not all(bool(torch.isfinite(g).all()) for g in grads):
            raise FloatingPointError("non-finite gradient")
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])


class _EveryThird(NormSchedule):
    """The norm schedule with its interval fixed at 3: the real one sets it from measured times
    (a tiny CPU model gets 2..``every``), which a test cannot pin."""

    def interval(self, key: int) -> int:
        return 3


def _loop(model, optimizer, n, bad):
    """``n`` iterations; iteration ``i in bad`` feeds a NaN batch, and its step raises (caught).
    Returns, per successful step, the weights before it, after it and its gradient norm."""
    torch.manual_seed(0)
    seen = []
    for i in range(n):
        x = torch.randn(8, 4)
        if i in bad:
            x[0, 0] = float("nan")
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        before = [p.detach().clone() for p in model.parameters()]
        norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()
        try:
            optimizer.step()
        except FloatingPointError:
            continue
        seen.append((before, [p.detach().clone() for p in model.parameters()], norm))
    return seen


def _ratio(before, after):
    delta = math.sqrt(sum(float((a - b).pow(2).sum()) for a, b in zip(after, before)))
    return delta / math.sqrt(sum(float(a.pow(2).sum()) for a in after))


def test_a_step_that_raised_is_not_counted_and_the_next_ratio_is_its_own():
    with recording(every=2) as m:
        model = nn.Linear(4, 1)
        optimizer = _NanGuardSGD(model.parameters(), lr=0.1)
        seen = _loop(model, optimizer, 7, bad={1})  # the 2nd attempt (a ratio step) raises
        steps = [p for k, p in m.events if k == "step"]
        assert m.errors == [] and m.before == {}
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5, 6]
    assert [s["update_ratio"] is not None for s in steps] == [False, True, False, True, False, True]
    for s, (before, after, _) in zip(steps, seen):
        if s["update_ratio"] is not None:
            assert s["update_ratio"][0] == pytest.approx(_ratio(before, after), rel=1e-4)


def test_a_norm_computed_for_a_step_that_raised_is_not_the_next_steps():
    with recording(every=100) as m:
        model = nn.Linear(4, 1)
        optimizer = _NanGuardSGD(model.parameters(), lr=0.1)
        m.norm_schedule = _EveryThird(100)
        seen = _loop(model, optimizer, 8, bad={3})  # attempt 4 computes the norm (1, 4, 7...), raises
        steps = [p for k, p in m.events if k == "step"]
        assert m.errors == []
    assert [s["step"] for s in steps] == [1, 2, 3, 4, 5, 6, 7]
    norms = [s["grad_norm"] for s in steps]
    assert norms[3] is None  # step 4's retry was not due: no norm, not the NaN batch's
    for recorded, (_, _, true) in zip(norms, seen):
        if recorded is not None:
            assert recorded == pytest.approx(true, rel=1e-4)
    assert sum(n is not None for n in norms) >= 2


def _abandoned_trial():
    """A sweep trial given up when its step raises at an update-ratio step (every=2: the 2nd)."""
    model = nn.Linear(4, 1)
    optimizer = _NanGuardSGD(model.parameters(), lr=0.1)
    _loop(model, optimizer, 2, bad={1})
    return weakref.ref(model.weight), weakref.ref(optimizer)


def test_the_copy_left_by_a_step_that_raised_goes_with_its_optimizer():
    with recording(every=2) as m:
        weight, optimizer = _abandoned_trial()
        gc.collect()
        assert optimizer() is None
        assert weight() is None  # the copy held the parameters: the model's weights stayed alive
        assert m.before == {} and m.norms == {}
        model = nn.Linear(4, 1)  # the next trial: a fresh optimizer, its first step no ratio step
        _loop(model, torch.optim.SGD(model.parameters(), lr=0.1), 1, bad=set())
        first = [p for k, p in m.events if k == "step"][-1]
        assert m.errors == []
    assert first["step"] == 1 and first["update_ratio"] is None
