"""Through a real debugpy: a stop with more to compute than the request's budget answers in time,
says what is pending (``stats…``), and computes it on expand; a model's line is cached per stop
and renewed by anything run in the REPL.

The debuggee holds 16 float32 tensors of 1.2e7 elements. The budget is set low through the
debuggee's environment, and the full statistics of the same tensors are timed inside the
debuggee right after the listing: the listing must return well before their sum (relations
measured in one run, never absolute times: the machine may be loaded; the listing's own cost,
measured by a relisting, is taken off).
"""

from __future__ import annotations

import textwrap

import pytest

from support.dap_client import DAPClient
from support.dap_env import injected_env, marked_line

pytestmark = pytest.mark.timeout(900)  # a ceiling for a loaded machine, not an expectation

PENDING = "stats…"
TENSORS = [f"a{i:02d}" for i in range(16)]
ELEMENTS = 12_000_000  # big enough that the full statistics dwarf a listing's own cost
BUDGET_MS = 50

PROGRAM = """
import time

import torch


def full_seconds(tensors):
    from torchdoctor.runtime.stats.tensor_stats import value_stats

    start = time.perf_counter()
    for t in tensors:
        value_stats(t)
    return time.perf_counter() - start


def main():
    g = torch.Generator().manual_seed(0)
{assignments}
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    pass  # STOP
    return model


main()
"""


@pytest.fixture(scope="module")
def paused(tmp_path_factory):
    assignments = "\n".join(f"    {n} = torch.randn({ELEMENTS}, generator=g)" for n in TENSORS)
    program = tmp_path_factory.mktemp("budget") / "many_tensors.py"
    program.write_text(textwrap.dedent(PROGRAM).format(assignments=assignments))
    env = dict(injected_env(), TORCHDOCTOR_BUDGET_VARIABLES_MS=str(BUDGET_MS), TORCHDOCTOR_BUDGET_EVALUATE_MS="50")
    with DAPClient() as dap:
        stop = dap.launch_and_stop(str(program), [marked_line(program, "# STOP")], env=env)
        yield dap, stop


def timed_locals(dap, stop):
    import time

    start = time.perf_counter()
    variables = dap.frame_locals(stop.frame_id)
    return time.perf_counter() - start, variables


def test_a_listing_over_budget_answers_in_time_and_says_what_is_pending(paused):
    dap, stop = paused
    # What the listing spent beyond a listing's own cost (a relisting of the stop, which reads
    # only the cache, as test_budget proves: its round trips, ~90 ms here before the plugin set
    # TCP_NODELAY on pydevd's socket, a few ms since; a machine with faster memory does not
    # shrink them as it shrinks the statistics) must be well below the statistics' sum. Timings of
    # one run compared: a load spike during one of them can break the relation, so it must hold
    # in one of three fresh trials (a listing that waits for every tensor's statistics fails all three).
    seen = []
    for trial in range(3):
        if trial:  # a REPL line is a new epoch, and add_(0) bumps every _version: all cold again
            dap.evaluate(f"[t.add_(0) for t in [{', '.join(TENSORS)}]] and None", stop.frame_id, "repl")
        cold, variables = timed_locals(dap, stop)
        relisted, _ = timed_locals(dap, stop)
        seconds = cold - relisted
        full = float(dap.evaluate(f"full_seconds([{', '.join(TENSORS)}])", stop.frame_id, "repl")["result"])
        lines = [variables[name]["value"] for name in TENSORS]
        assert all(line.startswith(f"tensor[{ELEMENTS}] f32 cpu 45.8 MiB") for line in lines), lines
        pending = [line for line in lines if PENDING in line]
        assert pending, lines  # 16 tensors cannot all fit in 50 ms: some say so
        assert all(line.endswith(PENDING) for line in pending)
        assert all("μ=" in line for line in lines if PENDING not in line)
        seen.append((cold, relisted, full))
        if seconds < 0.6 * full:
            break
    assert seconds < 0.6 * full, seen


def test_expanding_a_pending_tensor_yields_its_statistics(paused):
    dap, stop = paused
    variables = dap.frame_locals(stop.frame_id)
    name = next((n for n in reversed(TENSORS) if PENDING in variables[n]["value"]), None)
    if name is None:  # every one got computed by the listings before: make one cold again
        dap.evaluate(f"{TENSORS[-1]}.add_(0)", stop.frame_id, "repl")  # bumps _version
        name = TENSORS[-1]
    children = dap.children(variables[name])
    assert f"'count': {ELEMENTS}" in children["stats"]["value"] and "'mean'" in children["stats"]["value"]
    assert "μ=" in dap.frame_locals(stop.frame_id)[name]["value"]  # now cached: shown at once


def test_a_model_line_is_cached_at_one_stop_and_renewed_by_the_repl(paused):
    dap, stop = paused
    hits = "__import__('torchdoctor.runtime.summary.aggregates', fromlist=['_']).MODULE_LINES.hits"
    before = int(dap.evaluate(hits, stop.frame_id, "repl")["result"])  # a REPL line: a new epoch
    first = dap.evaluate("model", stop.frame_id, "hover")["result"]
    assert dap.evaluate("model", stop.frame_id, "hover")["result"] == first
    after = int(dap.evaluate(hits, stop.frame_id, "repl")["result"])
    assert after == before + 1  # the first hover computed, the second was a hit
    dap.evaluate("model[2].weight.data[0, 0] = float('nan')", stop.frame_id, "repl")
    assert "NaN/Inf in" in dap.evaluate("model", stop.frame_id, "hover")["result"]
    assert int(dap.evaluate(hits, stop.frame_id, "repl")["result"]) == after  # recomputed, not hit


def test_a_second_listing_of_the_stop_reads_only_the_cache_and_a_hover_computes(paused):
    dap, stop = paused
    dap.evaluate(f"[t.add_(0) for t in [{', '.join(TENSORS)}]] and None", stop.frame_id, "repl")  # all cold
    first = dap.frame_locals(stop.frame_id)
    second = dap.frame_locals(stop.frame_id)
    lines = [first[name]["value"] for name in TENSORS]
    pending = [name for name in TENSORS if PENDING in first[name]["value"]]
    assert pending, lines  # 16 cold tensors cannot all fit in 50 ms
    assert [second[name]["value"] for name in TENSORS] == lines  # nothing retried: the same lines
    hovered = dap.evaluate(pending[-1], stop.frame_id, "hover")["result"]  # a hover tries it again
    assert "μ=" in hovered or hovered.endswith(PENDING), hovered
    children = dap.children(first[pending[0]])  # expanding computes, whatever the budget
    assert f"'count': {ELEMENTS}" in children["stats"]["value"]
