"""checks/worker.py: who an exception inside a check is blamed on (issue 16, item 10).

The worker's last resort used to say "The model raised X" for every exception, so a mistake in
our own check code (overfit's TypeError on a scalar output) was blamed on a correct model. These
run ``worker.run`` in-process (the subprocess plumbing is test_jobs.py's job) on small models.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from support.checks import code, write
from torchdoctor import spelling
from torchdoctor.checks import overfit, worker


class Progress:
    """What ``worker.run`` needs of its channel: progress lines, kept for the assertion messages."""

    def __init__(self) -> None:
        self.lines: list = []

    def progress(self, fraction: float, message: str) -> None:
        self.lines.append((fraction, message))


def run(check: str, file: Path, class_name: str) -> dict:
    args = worker._parse(["--check", check, "--file", str(file), "--class", class_name])
    return worker.run(args, Progress())


def raised(fn, *args) -> BaseException:
    try:
        fn(*args)
    except BaseException as exc:  # noqa: BLE001 - the exception itself is the subject
        return exc
    raise AssertionError(f"{fn} did not raise")


def test_a_python_mistake_in_our_own_code_is_ours():
    exc = raised(spelling.fmt_shape, None)  # a TypeError raised inside torchdoctor/spelling.py
    where = worker.our_bug(exc)
    assert where is not None and where.startswith("torchdoctor/spelling.py:"), where


def test_an_exception_from_user_code_or_torch_is_not_ours(tmp_path: Path):
    import torch

    namespace: dict = {}
    exec(compile("def forward(x):\n    return x + None\n", str(tmp_path / "model.py"), "exec"), namespace)
    assert worker.our_bug(raised(namespace["forward"], 1)) is None  # the user's file raised
    assert worker.our_bug(raised(torch.cat, [torch.zeros(2), torch.zeros(2, 2)])) is None  # torch's RuntimeError


def test_a_wrong_call_of_a_users_callable_is_not_ours():
    def loss(output):  # the user's loss, called by our code with two arguments
        return output

    exc = raised(lambda: loss(1, 2))
    assert worker.our_bug(exc) is None


RAISES_IN_FORWARD = code(
    """
    import torch.nn as nn

    class Broken(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 2)

        def forward(self, x):
            return self.fc(x) + None
    """
)


def test_a_forward_that_raises_is_still_blamed_on_the_model(tmp_path: Path):
    r = run("overfit", write(tmp_path, "broken.py", RAISES_IN_FORWARD), "Broken")
    assert r["verdict"] == "ERROR" and r["error"]["kind"] == "forward-error", r["headline"]
    assert "raised TypeError" in r["headline"] and "own code" not in r["headline"]


def test_our_own_failure_inside_a_check_is_an_internal_error_not_the_models(tmp_path: Path, monkeypatch):
    def buggy_check(ex, options, progress, result):
        return spelling.fmt_shape(None)  # stands for any mistake of ours inside a check

    monkeypatch.setattr(overfit, "run", buggy_check)
    r = run("overfit", write(tmp_path, "broken.py", RAISES_IN_FORWARD.replace(" + None", "")), "Broken")
    assert r["verdict"] == "ERROR" and r["error"]["kind"] == "internal", r["headline"]
    assert "not in your model" in r["headline"] and "torchdoctor/spelling.py:" in r["headline"]
    assert "model raised" not in r["headline"]
    assert "Traceback" in r["error"]["detail"]


SCALAR_OUTPUTS = code(
    """
    import torch
    import torch.nn as nn

    class Scalar(nn.Module):  # returns one 0-d value: its own loss
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            return self.fc(x).pow(2).mean()

    class PlainFloat(nn.Module):  # returns a Python float: nothing to train on
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 1)

        def forward(self, x):
            return float(self.fc(x).sum())
    """
)


@pytest.mark.parametrize("class_name", ["Scalar", "PlainFloat"])
def test_an_odd_output_is_never_blamed_on_the_model_as_a_crash(tmp_path: Path, class_name: str):
    # issue 16.10: overfit's own TypeError on a scalar output read "The model raised TypeError".
    r = run("overfit", write(tmp_path, "scalar.py", SCALAR_OUTPUTS), class_name)
    assert (r.get("error") or {}).get("kind") not in ("forward-error", "internal"), r["headline"]
    assert "The model raised" not in r["headline"], r["headline"]


def test_the_protocol_line_is_strict_json_with_or_without_nan():
    """``encode`` writes a clean result as it is and sanitises only one the strict encoder refuses:
    NaN and Inf (Python floats, numpy scalars, inside numpy arrays) become null, nothing else moves."""
    import json

    import numpy as np

    clean = {"a": [1, 2.5, "x", None, True], "b": {"c": (3, 4)}, "d": np.arange(3)}
    assert json.loads(worker.encode(clean)) == {"a": [1, 2.5, "x", None, True], "b": {"c": [3, 4]}, "d": [0, 1, 2]}
    dirty = {"loss": float("nan"), "top": [float("inf"), 1.0], "np": np.float64("-inf"), "arr": np.array([np.nan, 2.0])}
    line = worker.encode(dirty)
    assert "NaN" not in line and "Infinity" not in line
    assert json.loads(line) == {"loss": None, "top": [None, 1.0], "np": None, "arr": [None, 2.0]}
