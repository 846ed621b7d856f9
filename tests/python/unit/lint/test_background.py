"""A large document is linted in a child process (lint/background.py): same findings as in
the server's own process, with the editor's unsaved texts of the other files; in the server's
process only when no child can be started, never after a child stopped on the text."""

from __future__ import annotations

import asyncio
import multiprocessing.connection
import os
import signal

import pytest

from torchdoctor import background as runner
from torchdoctor.lint import background, lint_source

MODEL = """import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        return torch.softmax(self.fc(x), dim=1)
"""

TRAIN = """import torch
from torch import nn
from model import Classifier

model = Classifier()
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
"""


def _pid() -> int:
    return os.getpid()


def _lint(text, path, disabled=(), texts=None):
    return asyncio.run(background.lint(text, path, disabled, texts or {}))


def _crash(text, path, disabled, texts):
    os._exit(3)  # as a crash of the parser or the kernel's out-of-memory killer would end the child


def _in_the_server(text, path=None, disabled=()):
    raise AssertionError("linted in the server's process")


def test_the_child_finds_what_the_server_finds_with_the_editors_unsaved_model(tmp_path):
    (tmp_path / "model.py").write_text(MODEL.replace("torch.softmax(self.fc(x), dim=1)", "self.fc(x)"))
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    padding = "\n".join(f"value_{i} = {i}" for i in range(2000)) + "\n"
    text = TRAIN + padding
    unsaved = {str(tmp_path / "model.py"): MODEL}  # the softmax is only in the editor's text
    try:
        found = _lint(text, str(train), (), unsaved)
        assert [(f.rule_id, f.line) for f in found.all] == [("TD003", 10)]
        on_disk = _lint(text, str(train))  # closed: the file on disk again
        assert [f.rule_id for f in on_disk.all] == []
        assert [f.rule_id for f in lint_source(text, str(train)).all] == []
        assert background.submit("", None, (), {}).result().findings == []
        child = background.CHILD.submit(_pid).result()
        assert child != os.getpid() and child == background.CHILD.pid()
    finally:
        background.reset()


def test_a_child_that_died_while_idle_is_replaced(tmp_path, monkeypatch):
    child = background.CHILD.submit(_pid).result()
    (process,) = runner._processes(background.CHILD._pool)
    os.kill(child, signal.SIGKILL)
    multiprocessing.connection.wait([process.sentinel], timeout=30)  # dead, maybe not yet noticed
    monkeypatch.setattr(background, "lint_source", _in_the_server)
    found = _lint(TRAIN, str(tmp_path / "train.py"))
    assert found.note is None and found.internal_errors == []
    assert background.CHILD.submit(_pid).result() not in (child, None)  # a new child linted it


def test_a_child_that_stops_on_the_text_is_a_note_and_the_server_does_not_lint_it(tmp_path, monkeypatch):
    # Before, the server linted the text itself: a text that crashed the child then hit the server.
    monkeypatch.setattr(background, "_lint_in_child", _crash)
    monkeypatch.setattr(background, "lint_source", _in_the_server)
    found = _lint(TRAIN, str(tmp_path / "train.py"))
    assert found.note == runner.STOPPED and found.findings == [] and found.syntax_error is None


def test_only_a_child_that_cannot_start_lets_the_server_lint(tmp_path, monkeypatch):
    def cannot_start(*args):
        raise runner.ChildUnavailable("cannot start the lint process: OSError(24, 'Too many open files')")

    monkeypatch.setattr(background.CHILD, "_submit", cannot_start)
    path = str(tmp_path / "train.py")
    found = _lint(TRAIN, path)
    assert found.note is None and [f.rule_id for f in found.all] == [f.rule_id for f in lint_source(TRAIN, path).all]


@pytest.fixture(autouse=True)
def _no_child_left():
    yield
    background.reset()
