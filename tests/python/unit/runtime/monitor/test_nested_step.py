"""A custom optimizer whose ``step`` calls ``super().step()`` makes one Step, not two (issue 17).

torch wraps each optimizer class's ``step`` with the step hooks when its first instance is made:
once a plain ``SGD`` exists, a subclass of it that calls ``super().step()`` (a NaN guard, a
wrapper) runs the global hooks twice per step. The recorder counted each step twice (steps 1..6
for 3 steps, each loss twice). Real optimizers, a loop that catches a raising step and goes on.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from support.monitor import recording  # noqa: E402


class _GuardedSGD(torch.optim.SGD):
    """SGD behind a NaN guard: refuses a non-finite gradient, else ``super().step()``."""

    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None and not torch.isfinite(p.grad).all():
                    raise FloatingPointError("non-finite gradient")
        return super().step(closure)


class _Wrapper(_GuardedSGD):
    """One more level: its ``step`` calls the guard's, which may raise inside the inner hooks."""

    def step(self, closure=None):
        return super().step(closure)


def _loop(optimizer_class, n, bad=()):
    model = nn.Linear(4, 1)
    torch.optim.SGD(model.parameters(), lr=0.1)  # a plain SGD: SGD.step is hooked from now on
    optimizer = optimizer_class(model.parameters(), lr=0.1)
    losses = []
    for i in range(n):
        x = torch.randn(8, 4)
        if i in bad:
            x[0, 0] = float("nan")
        optimizer.zero_grad()
        loss = model(x).pow(2).mean()
        loss.backward()
        try:
            optimizer.step()
        except FloatingPointError:
            continue
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("optimizer_class", [_GuardedSGD, _Wrapper])
def test_a_subclass_calling_super_step_makes_one_step(optimizer_class):
    with recording(every=2) as m:
        losses = _loop(optimizer_class, 4)
        steps = [p for k, p in m.events if k == "step"]
        assert m.errors == []
    assert [s["step"] for s in steps] == [1, 2, 3, 4]
    assert [s["loss"] for s in steps] == pytest.approx(losses)
    assert [s["update_ratio"] is not None for s in steps] == [False, True, False, True]
    assert all(s["time"]["optimizer"] > 0 for s in steps)


@pytest.mark.parametrize("optimizer_class", [_GuardedSGD, _Wrapper])
def test_after_a_nested_step_raised_the_next_steps_count_once(optimizer_class):
    with recording(every=2) as m:
        _loop(optimizer_class, 6, bad={1, 2})  # _Wrapper: raised inside the inner hooked step
        steps = [p for k, p in m.events if k == "step"]
        assert m.errors == [] and m.nesting.open == []
    assert [s["step"] for s in steps] == [1, 2, 3, 4]
    assert [s["update_ratio"] is not None for s in steps] == [False, True, False, True]
