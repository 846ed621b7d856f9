"""A sweep's optimizers each get their own series, even at a freed optimizer's ``id`` (issue 17).

A hyperparameter sweep builds a model and an optimizer per trial and frees the old ones; CPython
often gives the new optimizer the freed one's ``id``. Keyed by ``id``, the recorder appended the
new optimizer's steps to the old series (``opt3`` going 1, 2, 3, 1, 2, 3) with its step windows
and verdict state. Each test runs trials until an ``id`` is reused (asserted: else it proves
nothing), with real ``nn.Linear`` models and ``torch.optim.SGD``.
"""

from __future__ import annotations

import gc

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

from support.monitor import recording  # noqa: E402

MAX_TRIALS = 80  # an id comes back within ~10 trials here; the bound only stops a runaway loop


def _trial(lr, steps=3):
    """One trial: its model and optimizer live only in this call (freed when it returns)."""
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for _ in range(steps):
        optimizer.zero_grad()
        model(torch.randn(8, 4)).pow(2).mean().backward()
        optimizer.step()
    return id(optimizer)


def _sweep_until_an_id_is_reused(after=2):
    """Trials until an optimizer's id is one a freed optimizer had, then ``after`` more."""
    ids = []
    while len(ids) < MAX_TRIALS:
        ids.append(_trial(0.1))
        gc.collect()
        if len(set(ids)) < len(ids):
            break
    for _ in range(after):
        ids.append(_trial(0.1))
        gc.collect()
    assert len(set(ids)) < len(ids), "no optimizer id was reused: the sweep was not reproduced"
    return ids


def test_each_trial_of_a_sweep_has_its_own_series_even_at_a_reused_id():
    torch.manual_seed(0)
    with recording(every=2) as m:
        ids = _sweep_until_an_id_is_reused()
        steps = [p for k, p in m.events if k == "step"]
        assert m.errors == []
    names = [f"opt{i}" for i in range(len(ids))]
    assert [s["series"] for s in steps] == [n for n in names for _ in range(3)]
    assert [s["step"] for s in steps] == [1, 2, 3] * len(ids)  # each trial counts from 1
    ratios = [s["update_ratio"] is not None for s in steps]
    assert ratios == [False, True, False] * len(ids)  # every=2: each trial's own step 2


def test_a_trial_at_a_reused_id_gets_its_own_verdict_windows_and_line():
    with recording(every=2) as m:
        ids = _sweep_until_an_id_is_reused(after=1)
        names = [f"opt{i}" for i in range(len(ids))]
        assert sorted(m.names.values()) == sorted(names)  # one name per trial, reused id or not
        assert m.verdicts.first_step == dict.fromkeys(names, 1)  # each window from its own step 1
        assert all(m.sites[f"optimizer:{name}"] is not None for name in names)
        assert m.total_steps() == 3 and m._primary_step() == 3  # opt0 (freed) kept its count
        assert m.before == {} and m.norms == {} and m.ratios == {}


def test_an_optimizer_made_before_the_monitor_counts_from_its_first_step_seen():
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    model(torch.randn(8, 4)).pow(2).mean().backward()
    optimizer.step()  # before install: not seen
    with recording(every=2) as m:
        for _ in range(2):
            optimizer.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            optimizer.step()
        steps = [(p["step"], p["update_ratio"] is not None) for k, p in m.events if k == "step"]
        series = [p["series"] for k, p in m.events if k == "step"]
        assert m.errors == []
    # its first backward is seen before any optimizer is known: a `backward` Step (as before)
    assert series == ["backward", "opt0", "opt0"]
    assert steps[1:] == [(1, False), (2, True)]
