"""Module and parameter names as the user knows them, found from what the hooks have seen."""

from __future__ import annotations

import gc

import pytest
import torch
from torch import nn

from support.anomaly import watching
from torchdoctor.runtime.anomaly.names import ModuleNames


def model():
    return nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))


def test_roots_and_paths_from_seen_modules():
    m, criterion = model(), nn.MSELoss()
    names = ModuleNames()
    for module in (m[0], m[1][0], m[1][1], m[1], m, criterion):
        names.see(module)
    assert names.roots() == [m, criterion]
    assert names.name(m[1][1]) == (m, "1.1") and names.name(m) == (m, "") and names.name(criterion) == (criterion, "")
    assert [path for path, _, _ in names.parameters()] == ["0.weight", "0.bias", "1.1.weight", "1.1.bias"]


def test_the_stack_hint_names_a_layer_before_its_root_has_been_seen():
    m = model()
    names = ModuleNames()
    names.see(m[0])
    assert names.name(m[0]) == (m[0], "")
    assert names.name(m[0], hint=m) == (m, "0")


def test_unknown_modules_and_dead_ones():
    names = ModuleNames()
    assert names.name(nn.ReLU()) == (None, "")
    names.see(nn.Linear(1, 1))  # dies at once
    gc.collect()
    assert names.roots() == []


def test_shared_modules_keep_their_first_name():
    shared = nn.Linear(2, 2)
    m = nn.ModuleDict({"a": shared, "b": shared})
    names = ModuleNames()
    names.see(m)
    assert names.name(shared) == (m, "a")
    assert [p for p, _, _ in names.parameters()] == ["a.weight", "a.bias"]


def test_a_named_root_is_not_kept_alive():
    # Roots and paths are weak: a DDP model the watch kept until the interpreter's finalization
    # outlived destroy_process_group() and gloo aborted the rank at exit.
    import weakref

    class Wrapper(nn.Module):  # stands for DistributedDataParallel: a root with no parameters of its own
        def __init__(self, inner):
            super().__init__()
            self.module = inner

    m = Wrapper(model())
    names = ModuleNames()
    for module in m.modules():
        names.see(module)
    assert names.name(m.module[1][1]) == (m, "module.1.1") and names.roots() == [m]
    assert [path for path, _, _ in names.parameters()][:1] == ["module.0.weight"]
    gone = weakref.ref(m)
    del m
    gc.collect()
    assert gone() is None
    assert names.roots() == []


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
def test_a_scripted_module_is_reported_under_its_name():
    """``torch.jit.script``'s module keeps its children in a dict without ``get``: naming it raised,
    and every report about it was lost."""

    class Scaled(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x) * 2.0

    scripted = torch.jit.script(Scaled())
    with torch.no_grad():
        scripted.lin.bias[0] = float("nan")
    with watching() as seen:
        scripted(torch.randn(2, 3))
    assert seen.watch.errors == [] and seen.reports[0]["qualname"] == "scripted"


class Wrapped(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))

    def forward(self, x):
        return self.body(x)

    def helper(self, x):  # a method that is not forward: its self is no module being called
        return self.body[0](x)


def test_a_forward_called_directly_still_names_the_layer_from_the_model():
    """``model.forward(x)`` instead of ``model(x)``: no hook runs for ``model``, so the layers were
    named from the ``Sequential`` up (``Sequential.2``); the stack's ``forward`` frame knows the model."""
    model = Wrapped()
    with torch.no_grad():
        model.body[2].weight[0, 0] = float("nan")
    with watching() as seen:
        model.forward(torch.randn(3, 4))
    assert seen.watch.errors == [] and seen.reports[0]["qualname"] == "model.body.2"


def test_another_method_of_a_module_is_not_taken_for_its_forward():
    model = Wrapped()
    with torch.no_grad():
        model.body[0].weight[0, 0] = float("nan")
    with watching() as seen:
        model.helper(torch.randn(3, 4))
    assert seen.watch.errors == [] and seen.reports[0]["qualname"] == "Linear"


class Proxy(nn.Module):
    """Forwards attribute reads to the layer it wraps and refuses to list its parameters by name:
    the user's own exception, which must not read as an error of the watch."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = nn.Linear(4, 1)

    def named_parameters(self, *args, **kwargs):
        raise RuntimeError("parameters are listed by the wrapped layer")

    def forward(self, x):
        return self.inner(x)


def test_a_module_refusing_to_name_its_parameters_still_gets_them_named():
    proxy = Proxy()
    names = ModuleNames()
    names.see(proxy)
    assert [path for path, _, _ in names.parameters()] == ["inner.weight", "inner.bias"]
    with torch.no_grad():
        proxy.inner.weight[0, 0] = float("nan")
    with watching() as seen:
        opt = torch.optim.SGD(proxy.inner.parameters(), lr=0.1)
        for _ in range(2):
            proxy(torch.randn(8, 4)).pow(2).mean().backward()
            opt.step()
    assert seen.watch.errors == [] and seen.reports
