"""A large document is linted in a child process (lint/background.py): same findings as in
the server's own process, with the editor's unsaved texts of the other files."""

from __future__ import annotations

import os
import signal

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


def test_the_child_finds_what_the_server_finds_with_the_editors_unsaved_model(tmp_path):
    (tmp_path / "model.py").write_text(MODEL.replace("torch.softmax(self.fc(x), dim=1)", "self.fc(x)"))
    train = tmp_path / "train.py"
    train.write_text(TRAIN)
    padding = "\n".join(f"value_{i} = {i}" for i in range(2000)) + "\n"
    text = TRAIN + padding
    unsaved = {str(tmp_path / "model.py"): MODEL}  # the softmax is only in the editor's text
    try:
        found = background.lint(text, str(train), (), unsaved)
        assert [(f.rule_id, f.line) for f in found.all] == [("TD003", 10)]
        on_disk = background.lint(text, str(train), (), {})  # closed: the file on disk again
        assert [f.rule_id for f in on_disk.all] == []
        assert [f.rule_id for f in lint_source(text, str(train)).all] == []
        assert background.submit("", None, (), {}).result().findings == []
        child = background.CHILD.submit(_pid).result()
        assert child != os.getpid() and child == background.CHILD.pid()
    finally:
        background.reset()


def test_after_the_child_dies_the_lint_still_answers(tmp_path):
    try:
        child = background.CHILD.submit(_pid).result()
        os.kill(child, signal.SIGKILL)
        found = background.lint(TRAIN, str(tmp_path / "train.py"), (), {})
        assert found.internal_errors == []
        assert background.CHILD.submit(_pid).result() not in (child, None)  # a new child for the next one
    finally:
        background.reset()
