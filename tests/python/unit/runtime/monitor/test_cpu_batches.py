"""``model_on_cpu`` and ``cpu_batches`` (seed 000's wrong device that "runs slow").

The rules are judged on synthetic facts (this machine has no GPU): big pageable batches whose
copy takes a large share of the step are reported; the ordinary ``x = x.to(device)`` loop with a
cheap copy stays silent even when the measured interval is long (a blocking copy waiting for
queued GPU work). The recorder's facts are checked on real torch: a CPU run records none and
says nothing; the ``meta`` device declared an accelerator gives real ``.to()`` copies of
DataLoader batches (the slow copy is a sleep after it; meta copies are free).
"""

from __future__ import annotations

import argparse

import pytest

from torchdoctor.runtime.monitor import transfers
from torchdoctor.runtime.monitor.verdicts import Verdicts

MIB = 2**20


def copy(gap, nbytes, busy=None, pinned=False, batch="cpu", model="cuda", input="cuda"):
    return {"batch": batch, "pinned": pinned, "bytes": nbytes, "busy": busy, "model": model, "input": input, "gap": gap}


def rec(step, total, series="opt0"):
    # the gap (loader's yield -> forward) is inside "other"; the rest is the model's work
    return {"step": step, "series": series, "loss": None, "lr": [0.1], "time": {"data": 0.0, "other": total}}


def run(facts_of, n=60, total=0.04, series="opt0"):
    v = Verdicts()
    found = []
    for step in range(1, n + 1):
        found += v.step(rec(step, total, series), facts_of(step))
    return found


def kinds(found):
    return [f["kind"] for f in found]


# -- a step that shows it ------------------------------------------------------------------------


def test_a_big_pageable_batch_copied_slowly_shows_it():
    assert transfers.shows(copy(0.015, 150 * MIB), 0.04, 0.2, 0.05)


@pytest.mark.parametrize(
    "fact",
    [
        copy(0.015, 150 * MIB, pinned=True),  # pin_memory=True: the fast path already
        copy(0.015, 150 * MIB, input="cpu"),  # the model copies inside forward: not seen
        copy(0.015, 150 * MIB, batch="cuda"),  # built on the device
        copy(0.004, 150 * MIB),  # 10% of the step: not a large share
        copy(0.030, 384 * 1024),  # a cheap copy (CIFAR batch): the long interval is something else
    ],
)
def test_steps_that_do_not_show_it(fact):
    assert not transfers.shows(fact, 0.04, 0.2, 0.05)


# -- the verdict ---------------------------------------------------------------------------------


def test_flagged_as_advice_with_evidence_and_next_step():
    # 16 of 40 ms: 40%, far from a rounding edge (15 of 40 is 37.5%, which Python 3.12's compensated
    # float sum() rounds to 37% and 3.11's plain one to 38%)
    found = run(lambda step: {"copy": copy(0.016, 150 * MIB)})
    assert kinds(found) == ["cpu_batches"]
    f = found[0]
    assert f["severity"] == "info" and f["about"] == "loader"
    assert f["step"] == 15 and f["range"] == [2, 15]  # the first step (no "other" time) is left out
    text = f["sentence"]
    assert text.startswith("In 14 of the 14 steps 2-15 the batch the DataLoader yielded was on the CPU")
    assert "40%" in text and "150 MiB" in text and "pin_memory=True" in text and "non_blocking=True" in text
    assert "may still have had queued work" in text  # not CUDA: the stream could not be asked


def test_how_sure_the_sentence_is():
    idle = run(lambda step: {"copy": copy(0.015, 150 * MIB, busy=False)})[0]["sentence"]
    assert "no queued work" in idle and "may still" not in idle
    busy = run(lambda step: {"copy": copy(0.015, 150 * MIB, busy=step % 2 == 0)})[0]["sentence"]
    assert "may still have had queued work in 7 of those steps" in busy


def test_the_ordinary_to_device_loop_with_a_cheap_copy_is_silent():
    # CIFAR-sized batch (32x3x32x32 float32, 384 KiB) copied with a blocking .to(device) in a loop
    # that never syncs: the copy waits for the previous step's GPU work, so the measured interval
    # is most of the step. 500 steps, the GPU busy at every yield: nothing to say.
    assert run(lambda step: {"copy": copy(0.03, 384 * 1024, busy=True)}, n=500) == []
    # the same with an idle device and a quick copy
    assert run(lambda step: {"copy": copy(0.0002, 384 * 1024, busy=False)}, n=500) == []


def test_pinned_batches_are_silent():
    assert run(lambda step: {"copy": copy(0.015, 150 * MIB, pinned=True)}, n=200) == []


def test_most_of_the_window_must_show_it():
    # 15 of every 20 steps show it: three quarters, reported; 14 of 20 are not
    pattern15 = [False] * 5 + [True] * 15
    pattern14 = [False] * 6 + [True] * 14
    for pattern, expected in ((pattern15, ["cpu_batches"]), (pattern14, [])):

        def facts(step, pattern=pattern):
            slow = pattern[(step - 2) % 20]
            return {"copy": copy(0.015 if slow else 0.001, 150 * MIB)}

        assert kinds(run(facts, n=200)) == expected


def test_a_few_slow_steps_are_silent():
    # one slow copy in ten (a hiccup, a checkpoint save before the forward)
    assert run(lambda step: {"copy": copy(0.03 if step % 10 == 0 else 0.0005, 150 * MIB)}, n=200) == []


def test_too_few_steps_are_silent():
    assert run(lambda step: {"copy": copy(0.015, 150 * MIB)}, n=9) == []


def test_once_per_series():
    v = Verdicts()
    found = []
    for step in range(1, 61):
        for series in ("opt0", "opt1"):
            found += v.step(rec(step, 0.04, series), {"copy": copy(0.015, 150 * MIB)})
    assert sorted((f["kind"], f["series"]) for f in found) == [("cpu_batches", "opt0"), ("cpu_batches", "opt1")]


def test_thresholds_are_settings():
    v = Verdicts({"cpuBatchFraction": 0.5})
    found = []
    for step in range(1, 61):
        found += v.step(rec(step, 0.04), {"copy": copy(0.015, 150 * MIB)})
    assert found == []  # 38% < 50%


def test_the_dataloader_line_is_named():
    v = Verdicts()
    v.hint = lambda kind: " at train.py:30" if kind == "loader_at" else ""
    found = []
    for step in range(1, 21):
        found += v.step(rec(step, 0.04), {"copy": copy(0.015, 150 * MIB)})
    assert "`pin_memory=True` on the DataLoader at train.py:30" in found[0]["sentence"]


def test_advice_never_fails_a_run(monkeypatch):
    # `torchdoctor run --monitor --fail-on warning` exits 0 on these findings (severity info)
    from torchdoctor.runtime.monitor import run as monitor_run
    from torchdoctor.runtime.monitor import startup

    class Session:
        def findings(self):
            return run(lambda step: {"copy": copy(0.015, 150 * MIB), "model": model() if step == 3 else None})

        def total_steps(self):
            return 60

    assert sorted(kinds(Session().findings())) == ["cpu_batches", "model_on_cpu"]
    monkeypatch.setattr(startup, "finish", Session)
    monkeypatch.setattr(startup, "problems", lambda: [])
    args = argparse.Namespace(report=None, fail_on="warning", script="x.py")
    assert monitor_run.finish({"on": True}, args, 0) == 0


# -- model_on_cpu --------------------------------------------------------------------------------


def model(accelerator="cuda", used=False, params=4, cpu_params=4):
    return {"accelerator": accelerator, "used": used, "params": params, "cpu_params": cpu_params, "values": 1234}


def test_a_model_never_moved_to_an_available_gpu():
    found = run(lambda step: {"model": model()} if step == 3 else None)
    assert kinds(found) == ["model_on_cpu"]
    f = found[0]
    assert f["severity"] == "info" and f["about"] == "model" and f["range"] == [3, 3]
    assert "model.to(device)" in f["sentence"] and "torch.cuda.is_available()" in f["sentence"]
    # how much slower the CPU is was never measured: the sentence must not claim it
    assert "slowly" not in f["sentence"] and "(not measured here)" in f["sentence"]
    assert "If training on the CPU is what you want, ignore this." in f["sentence"]


@pytest.mark.parametrize(
    "facts",
    [
        None,  # no accelerator (this machine)
        model(accelerator=None),
        model(used=True),  # something lives on the GPU: a deliberate split
        model(cpu_params=3),  # part of the model was moved
        model(params=0, cpu_params=0),
    ],
)
def test_model_on_cpu_silent(facts):
    assert run(lambda step: {"model": facts} if step == 3 else None) == []
