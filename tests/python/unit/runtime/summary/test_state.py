"""Summaries change nothing: RNG states, autograd graph and history, the data, the version."""

import math
import random
import warnings

import numpy as np
import pytest
import torch
from torch.overrides import TorchFunctionMode

from torchdoctor.runtime.summary.api import stats, summarize
from torchdoctor.runtime.summary.children import tensor_children

pytestmark = pytest.mark.filterwarnings("error")


class RecordOps(TorchFunctionMode):
    """Every torch function called inside, with whether its result joined an autograd graph."""

    def __init__(self):
        super().__init__()
        self.calls = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        grads = [
            o.grad_fn is not None
            for o in (out if isinstance(out, (tuple, list)) else [out])
            if isinstance(o, torch.Tensor)
        ]
        self.calls.append((getattr(func, "__name__", str(func)), any(grads), _numel(out)))
        return out


def _numel(out):
    if isinstance(out, torch.Tensor):
        return out.numel()
    if isinstance(out, (tuple, list)):
        return max([_numel(o) for o in out] or [0])
    return 0


def _rng_snapshot():
    state = {
        "python": random.getstate(),
        "numpy": np.random.get_state()[1].copy(),
        "torch": torch.get_rng_state().clone(),
    }
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        state["cuda"] = [s.clone() for s in torch.cuda.get_rng_state_all()]
    return state


def _assert_same_rng(before, after):
    assert before["python"] == after["python"]
    assert np.array_equal(before["numpy"], after["numpy"])
    assert torch.equal(before["torch"], after["torch"])
    assert all(torch.equal(a, b) for a, b in zip(before.get("cuda", []), after.get("cuda", [])))


def _subjects():
    torch.manual_seed(3)
    leaf = torch.randn(50, 20, requires_grad=True)
    hidden = (leaf * 2).relu()
    hidden.retain_grad()
    loss = hidden.sum()
    loss.backward(retain_graph=True)
    param = torch.nn.Parameter(torch.randn(8, 4))
    param.grad = torch.full((8, 4), math.nan)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sparse = torch.sparse_coo_tensor(torch.tensor([[0, 0], [1, 1]]), torch.tensor([1.0, 2.0]), (3, 3))
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    nan_tensor = torch.tensor([1.0, math.nan, math.inf])
    return {
        "leaf": leaf,
        "hidden": hidden,
        "loss": loss,
        "param": param,
        "sparse": sparse,
        "model": model,
        "nan": nan_tensor,
        "expanded": torch.arange(3.0).expand(4, 3),
        "int": torch.arange(10),
        "array": np.random.default_rng(0).standard_normal(100),
        "dict": {"a": leaf, "b": nan_tensor},
    }


def _tensor_facts(t):
    return (
        t._version,
        t.requires_grad,
        t.grad_fn,
        t.is_leaf,
        t.clone().detach() if t.layout == torch.strided else None,
    )


def test_nothing_changes(recwarn):
    subjects = _subjects()
    tensors = {k: v for k, v in subjects.items() if isinstance(v, torch.Tensor)}
    facts = {k: _tensor_facts(t) for k, t in tensors.items()}
    grads = {
        k: (t.grad.clone() if t.grad is not None else None) for k, t in tensors.items() if t.is_leaf or t.retains_grad
    }
    array_before = subjects["array"].copy()
    model_state = {k: v.clone() for k, v in subjects["model"].state_dict().items()}
    rng = _rng_snapshot()
    grad_mode = torch.is_grad_enabled()

    recorder = RecordOps()
    with recorder, torch.autograd.graph.saved_tensors_hooks(_never_pack, _never_unpack):
        for value in subjects.values():
            summarize(value)
            stats(value)
        for t in tensors.values():
            tensor_children(t)

    _assert_same_rng(rng, _rng_snapshot())
    assert torch.is_grad_enabled() == grad_mode
    assert not [name for name, recorded, _ in recorder.calls if recorded], "an op joined the autograd graph"
    for name, t in tensors.items():
        version, requires_grad, grad_fn, is_leaf, data = facts[name]
        assert (t._version, t.requires_grad, t.grad_fn, t.is_leaf) == (version, requires_grad, grad_fn, is_leaf), name
        if data is not None:
            assert torch.equal(t.detach(), data) or torch.allclose(t.detach(), data, equal_nan=True), name
    for name, grad in grads.items():
        now = tensors[name].grad
        assert (grad is None and now is None) or torch.allclose(now, grad, equal_nan=True), name
    assert np.array_equal(subjects["array"], array_before)
    assert all(torch.equal(v, model_state[k]) for k, v in subjects["model"].state_dict().items())
    assert not subjects["sparse"].is_coalesced()
    # The graph still works as the user built it.
    subjects["loss"].backward()
    assert subjects["leaf"].grad is not None
    assert not recwarn.list, [str(w.message) for w in recwarn.list]


def _never_pack(t):
    raise AssertionError("a summary saved a tensor for backward")


def _never_unpack(t):
    return t


def test_children_never_allocate_tensor_sized_results():
    big = torch.randn(300, 400)
    stats(big)  # statistics (cached) are allowed their bounded blocks; the children are not
    recorder = RecordOps()
    with recorder:
        children = tensor_children(big)
    names = [name for name, _, _ in children]
    assert not {"T", "mT", "H", "mH", "real", "imag"} & set(names)
    # 100 values, or the cache probe's 64 elements seen as bytes: nothing near 120,000.
    assert max(numel for _, _, numel in recorder.calls) <= 64 * big.element_size(), recorder.calls
    assert names[:4] == ["shape", "dtype", "device", "layout"]
    values = dict((n, v) for n, v, _ in children)["values[:10, :10]"]
    assert len(values) == 10 and len(values[0]) == 10 and values[0][0] == pytest.approx(big[0, 0].item(), rel=1e-6)


def test_summaries_never_raise():
    class Hostile(torch.Tensor):
        @property
        def dtype(self):
            raise RuntimeError("no dtype for you")

    class BadRepr:
        def __repr__(self):
            raise ValueError("nope")

    hostile = torch.randn(3).as_subclass(Hostile)
    text = summarize(hostile)
    # the field that raises is left out ("?"); the rest of the header and the values stand
    assert text.startswith("Hostile[3] ? cpu 12 B μ=") and "\n" not in text
    assert stats(hostile)["kind"] == "tensor"
    assert "BadRepr" in summarize(BadRepr())  # reprlib's own fallback names the type
    assert summarize({BadRepr(): torch.zeros(2)}).startswith("dict[1 tensor]")
    assert summarize([1, 2, 3]) == "[1, 2, 3]"
    assert summarize({"k": BadRepr(), "t": torch.zeros(2)}).startswith("dict[2 items, 1 tensor]")


def test_user_defaults_do_not_leak_in():
    """A program's default device/dtype and determinism settings change nothing in a summary."""
    t = torch.tensor([1.0, 2.0, math.nan])
    expected = summarize(t)
    from torchdoctor.runtime.stats.cache import VALUE_STATS

    VALUE_STATS.clear()
    old_dtype = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        torch.use_deterministic_algorithms(True)
        with torch.device("meta"):
            assert summarize(t) == expected
    finally:
        torch.set_default_dtype(old_dtype)
        torch.use_deterministic_algorithms(False)
