"""The user's custom ``torch.autograd.Function``s, found in one forward and checked one by one.

A wrong backward in a Function poisons every gradient upstream of it: the parameter check then
blames ``fc1.weight`` while the Function's own parameter may even look right. So the gradient
check first runs one forward with ``Function.apply`` watched (:func:`record`), keeps every call of
a Function defined outside torch with the very inputs it received (float64: the check's model copy
is double), and tests each call's backward on its own (:func:`check_calls`), per input:

- ``k`` (<= :data:`ELEMENTS`) sampled elements ``v`` of the input are the variables, the other
  elements and inputs are constants, and the output is projected on fixed random tensors ``R``:
  ``h(v) = sum_j <F.apply(..., x_i[idx] = v, ...)_j, R_j>``, a scalar. Its gradient by the
  Function's backward and by central differences must agree (the same rel_diff and noise floor as
  the parameter check); ``torch.autograd.gradcheck`` runs on the same ``h`` as a second opinion.
  Because ``h`` has ``k`` inputs and one output, torch's slow path (which its fast mode falls back
  to on a mismatch) costs ``2k`` Function calls: bounded whatever the input sizes.

A failing input is named by the Function's class, where its backward is defined (file:line),
where it was called from, and the forward's argument name.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any, Callable

from .gradcheck_words import status

ELEMENTS = 12  # sampled elements per input
EPS = 1e-6
_EPS_MACH = 2.220446049250313e-16


@dataclass
class Call:
    """One call of a custom Function during the recorded forward."""

    cls: Any
    args: tuple
    called_at: str  # "model.py:41", the user's frame that called .apply


@dataclass
class FunctionCheck:
    name: str  # the Function's class name
    defined_at: str  # "file.py:20": its backward
    called_at: str
    input_index: int
    input_name: str
    shape: list
    checked: int
    numel: int
    max_rel_diff: float
    analytical: float
    numerical: float
    worst_index: list
    noise: float  # the central difference's own error at the worst element
    torch_gradcheck: bool | None

    @property
    def status(self) -> str:
        return status(self.checked, self.max_rel_diff)

    @property
    def label(self) -> str:
        return f"{self.name}.backward, input {self.input_index} `{self.input_name}`"


def record(run: Callable[[], Any]) -> tuple[Any, list[Call]]:
    """Run ``run()`` with ``torch.autograd.Function.apply`` watched; its value and the custom calls."""
    from torch.autograd.function import Function

    calls: list[Call] = []
    # a Python classmethod up to torch 2.13, a C classmethod_descriptor (no __func__) from 2.14:
    # bound to the calling class through the descriptor protocol, which both have
    original = Function.__dict__["apply"]

    def watched(cls, *args, **kwargs):
        if not (cls.__module__ or "").startswith("torch.") and not kwargs:
            calls.append(Call(cls, args, _caller()))
        return original.__get__(None, cls)(*args, **kwargs)

    Function.apply = classmethod(watched)  # type: ignore[method-assign, assignment]
    try:
        value = run()
    finally:
        Function.apply = original  # type: ignore[method-assign]
    return value, _distinct(calls)


def _caller() -> str:
    """The first frame outside this module and torch: where the user's code called ``.apply``."""
    frame = inspect.currentframe()
    here = os.path.abspath(__file__)
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        if path != here and f"{os.sep}torch{os.sep}" not in path:
            return f"{os.path.basename(path)}:{frame.f_lineno}"
        frame = frame.f_back
    return "?"


def _distinct(calls: list[Call]) -> list[Call]:
    """One call per (Function, input shapes): a Function applied in every block is checked once."""
    seen, kept = set(), []
    for c in calls:
        key = (c.cls, tuple(tuple(a.shape) if hasattr(a, "shape") else type(a) for a in c.args))
        if key not in seen:
            seen.add(key)
            kept.append(c)
    return kept


def defined_at(cls) -> str:
    """``file.py:LINE`` of the Function's backward (of the class when the backward has no source)."""
    for target in (getattr(cls, "backward", None), cls):
        if target is None:
            continue
        try:
            path = inspect.getsourcefile(target)
            line = inspect.getsourcelines(target)[1]
        except (TypeError, OSError):
            continue
        if path:
            return f"{os.path.basename(path)}:{line}"
    return "?"


def _arg_names(cls, n: int) -> list[str]:
    try:
        params = list(inspect.signature(cls.forward).parameters)[1:]  # after ctx
    except (TypeError, ValueError):
        params = []
    return [params[i] if i < len(params) else f"arg{i}" for i in range(n)]


def check_calls(calls: list[Call], seed: int = 0, out_of_time: Callable[[], bool] = lambda: False) -> list:
    """A :class:`FunctionCheck` per differentiable input of each recorded call."""
    import torch

    g = torch.Generator().manual_seed(seed)
    results: list[FunctionCheck] = []
    for call in calls:
        names = _arg_names(call.cls, len(call.args))
        for i, a in enumerate(call.args):
            if out_of_time():
                return results
            if isinstance(a, torch.Tensor) and a.is_floating_point() and a.requires_grad and a.numel():
                results.append(_check_input(call, i, names[i], g))
    return results


def _check_input(call: Call, i: int, name: str, g) -> FunctionCheck:
    import torch

    base = [a.detach().clone() if isinstance(a, torch.Tensor) else a for a in call.args]
    x = base[i]
    idx = torch.randperm(x.numel(), generator=g)[:ELEMENTS]
    with torch.no_grad():
        probe = call.cls.apply(*base)
    outs = [o for o in (probe if isinstance(probe, (tuple, list)) else (probe,)) if isinstance(o, torch.Tensor)]
    projections = [torch.randn(o.shape, generator=g, dtype=torch.float64).to(o) for o in outs]

    def h(v):
        args = list(base)
        args[i] = x.reshape(-1).index_put((idx,), v).view_as(x)
        out = call.cls.apply(*args)
        out = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor)]
        return sum((o * r).sum() for o, r in zip(out, projections))

    v = x.reshape(-1)[idx].clone().requires_grad_(True)
    (analytical,) = torch.autograd.grad(h(v), v, allow_unused=True)
    analytical = torch.zeros_like(v) if analytical is None else analytical
    worst = (0.0, 0, 0.0, 0.0, 0.0)
    checked = 0
    with torch.no_grad():
        scale = max(1.0, abs(float(h(v))))
        for k in range(v.numel()):
            num, noise = _slope(h, v, k, scale)
            if num is None:
                continue
            checked += 1
            ana = float(analytical[k])
            rel = max(0.0, abs(ana - num) - noise) / max(abs(ana), abs(num), 1e-8)
            if rel >= worst[0]:
                worst = (rel, k, ana, num, noise)
    where = [int(j) for j in _unravel(int(idx[worst[1]]), list(x.shape))]
    return FunctionCheck(
        name=call.cls.__name__,
        defined_at=defined_at(call.cls),
        called_at=call.called_at,
        input_index=i,
        input_name=name,
        shape=list(x.shape),
        checked=checked,
        numel=x.numel(),
        max_rel_diff=worst[0],
        analytical=worst[2],
        numerical=worst[3],
        worst_index=where,
        noise=worst[4],
        torch_gradcheck=_torch_opinion(h, v),
    )


def _slope(h, v, k: int, scale: float) -> tuple[float | None, float]:
    """Central difference of ``h`` along element ``k`` and its numerical noise; None at a kink."""
    original = float(v[k])
    slopes = []
    for step in (EPS, EPS / 2):
        v[k] = original + step
        plus = float(h(v))
        v[k] = original - step
        minus = float(h(v))
        v[k] = original
        slopes.append((plus - minus) / (2 * step))
    rounding = 100 * _EPS_MACH * scale / EPS
    gap = abs(slopes[0] - slopes[1])
    if gap > rounding and gap > 1e-3 * max(abs(slopes[0]), abs(slopes[1]), 1e-8):
        return None, gap  # a kink inside the step (a custom ReLU / clamp switching)
    return slopes[0], max(2 * gap, rounding)


def _torch_opinion(h, v) -> bool | None:
    import torch

    try:
        w = v.detach().clone().requires_grad_(True)
        return bool(
            torch.autograd.gradcheck(h, (w,), eps=EPS, atol=1e-5, rtol=1e-3, fast_mode=False, raise_exception=False)
        )
    except Exception:  # a Function torch's checker cannot drive: no opinion
        return None


def _unravel(flat_index: int, shape: list) -> tuple:
    out: list[int] = []
    for dim in reversed(shape):
        out.insert(0, flat_index % dim)
        flat_index //= dim
    return tuple(out)
