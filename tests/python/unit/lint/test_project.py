"""The rules follow the code across functions, methods and files (lint/project.py, context.py).

The cases have the shape of real projects: the model in ``model.py`` and the loop in
``train.py``, ``train(model, loader, criterion, optimizer)`` and ``evaluate(model, loader)``
helpers, a ``Trainer`` holding ``self.model``, a package with relative imports and an
``__init__`` that re-exports the model.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

from torchdoctor.lint import lint_source
from torchdoctor.lint.project import ProjectIndex

MODEL_WITH_DROPOUT = """
    import torch
    from torch import nn


    class Classifier(nn.Module):
        def __init__(self, classes=10):
            super().__init__()
            self.body = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Dropout(0.2), nn.Linear(128, classes))

        def forward(self, x):
            return torch.softmax(self.body(x), dim=1)
"""

MODEL_PLAIN = """
    from torch import nn


    class Classifier(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(784, 10)

        def forward(self, x):
            return self.fc(x)
"""

TRAIN = """
    import torch
    from torch import nn
    from {module} import Classifier


    def train(model, loader, criterion, optimizer):
        model.train()
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()


    def evaluate(model, val_loader):
        correct = 0
        for x, y in val_loader:
            correct += (model(x).argmax(1) == y).sum().item()
        return correct


    def main(train_loader, val_loader):
        model = Classifier()
        criterion = nn.CrossEntropyLoss()
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            train(model, train_loader, criterion, optimizer)
            evaluate(model, val_loader)
"""

TRAINER = """
    import torch
    from torch import nn
    from model import Classifier


    class Trainer:
        def __init__(self, model, criterion, optimizer):
            self.model = model
            self.criterion = criterion
            self.optimizer = optimizer

        def fit(self, loader):
            for x, y in loader:
                self.optimizer.zero_grad()
                loss = self.criterion(self.model(x), y)
                loss.backward()
                self.optimizer.step()


    def run(loader):
        net = Classifier()
        Trainer(net, nn.CrossEntropyLoss(), torch.optim.Adam(net.parameters())).fit(loader)
"""


def project(tmp_path: Path, files: Dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return tmp_path


def lint(path: Path, index: ProjectIndex = None) -> List[Tuple[str, int, str]]:
    text = path.read_text(encoding="utf-8")
    from torchdoctor.lint import engine

    result = engine.lint_source(text, str(path)) if index is None else _lint_with(text, path, index)
    assert result.internal_errors == []
    return [(f.rule_id, f.line, f.message) for f in result.all]


def _lint_with(text, path, index):
    from torchdoctor.lint import project as P

    saved, P.PROJECT = P.PROJECT, index
    try:
        return lint_source(text, str(path))
    finally:
        P.PROJECT = saved


def rules(found) -> List[Tuple[str, int]]:
    return [(rule, line) for rule, line, _ in found]


def test_a_model_imported_from_another_file_is_seen_by_the_eval_rules(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_WITH_DROPOUT, "train.py": TRAIN.format(module="model")})
    found = lint(root / "train.py")
    assert ("TD008", 18) in rules(found) and ("TD009", 18) in rules(found)


def test_a_model_without_dropout_or_batch_norm_needs_no_eval_but_still_no_grad(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_PLAIN, "train.py": TRAIN.format(module="model")})
    found = rules(lint(root / "train.py"))
    assert ("TD008", 18) not in found  # eval() changes nothing for this model (TD008's policy)
    assert ("TD009", 18) in found  # the graph is recorded whatever the layers


def test_softmax_in_an_imported_forward_reaches_the_criterion_passed_to_train(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_WITH_DROPOUT, "train.py": TRAIN.format(module="model")})
    [(rule, line, message)] = [f for f in lint(root / "train.py") if f[0] == "TD003"]
    assert line == 10 and "`criterion` (CrossEntropyLoss)" in message
    assert "model.py line 11" in message and "torch.softmax(self.body(x), dim=1)" in message


def test_a_trainer_holding_the_model_and_criterion_as_attributes(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_WITH_DROPOUT, "trainer.py": TRAINER})
    found = [f for f in lint(root / "trainer.py") if f[0] == "TD003"]
    assert [(rule, line) for rule, line, _ in found] == [("TD003", 15)]
    assert "`self.criterion` (CrossEntropyLoss)" in found[0][2]


def test_relative_imports_and_a_package_init_that_re_exports_the_model(tmp_path):
    root = project(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/models/__init__.py": "from .classifier import Classifier\n",
            "pkg/models/classifier.py": MODEL_WITH_DROPOUT,
            "pkg/train.py": TRAIN.format(module=".models"),
        },
    )
    found = rules(lint(root / "pkg" / "train.py"))
    assert ("TD003", 10) in found and ("TD008", 18) in found


def test_a_file_that_cannot_be_found_or_parsed_falls_back_to_the_names(tmp_path):
    root = project(tmp_path, {"model.py": "class Classifier(:\n", "train.py": TRAIN.format(module="model")})
    found = rules(lint(root / "train.py"))
    assert ("TD009", 18) in found  # `model` is named like a network
    assert not any(rule == "TD003" for rule, _ in found)  # the forward cannot be seen: no claim about it


def test_the_editors_unsaved_text_of_the_other_file_wins(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_PLAIN, "train.py": TRAIN.format(module="model")})
    index = ProjectIndex()
    assert not any(rule == "TD003" for rule, _ in rules(lint(root / "train.py", index)))
    index.set_text(str(root / "model.py"), textwrap.dedent(MODEL_WITH_DROPOUT))
    assert ("TD003", 10) in rules(lint(root / "train.py", index))
    index.set_text(str(root / "model.py"), None)  # closed unsaved: the file on disk again
    assert not any(rule == "TD003" for rule, _ in rules(lint(root / "train.py", index)))


def test_a_changed_file_on_disk_is_parsed_again(tmp_path):
    root = project(tmp_path, {"model.py": MODEL_PLAIN, "train.py": TRAIN.format(module="model")})
    index = ProjectIndex()
    assert ("TD008", 18) not in rules(lint(root / "train.py", index))
    (root / "model.py").write_text(textwrap.dedent(MODEL_WITH_DROPOUT) + "\n\n# changed\n", encoding="utf-8")
    assert ("TD008", 18) in rules(lint(root / "train.py", index))


@pytest.mark.parametrize(
    "callers, expected",
    [
        ("train(Classifier(), loader, nn.CrossEntropyLoss())", True),
        (
            "train(Classifier(), loader, nn.CrossEntropyLoss())\ntrain(Classifier(), loader, nn.CrossEntropyLoss())",
            True,
        ),
        ("train(Classifier(), loader, nn.CrossEntropyLoss())\ntrain(Classifier(), loader, nn.MSELoss())", False),
        ("train(Classifier(), loader, criterion=nn.CrossEntropyLoss())", True),
        ("train(Classifier(), loader, **options)", False),
        ("", False),
    ],
)
def test_a_parameter_is_what_every_caller_in_the_file_passes(callers, expected):
    text = (
        textwrap.dedent("""
        import torch
        from torch import nn


        class Classifier(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc = nn.Linear(4, 3)

            def forward(self, x):
                return torch.softmax(self.fc(x), dim=1)


        def train(model, loader, criterion):
            for x, y in loader:
                loss = criterion(model(x), y)
                loss.backward()
    """).lstrip("\n")
        + "\n"
        + callers
        + "\n"
    )
    found = [f for f in lint_source(text).all if f.rule_id == "TD003"]
    assert bool(found) == expected


def test_a_recursive_helper_that_passes_its_parameter_on_terminates():
    text = textwrap.dedent("""
        from torch import nn


        def walk(model, depth):
            for child in model.children():
                walk(child, depth + 1)
            return model(depth)


        walk(nn.Linear(2, 2), 0)
    """)
    assert lint_source(text).internal_errors == []


def test_switching_the_criterion_to_eval_does_not_put_the_model_in_eval_mode():
    """detr's evaluate() calls ``model.eval()`` and ``criterion.eval()``: without the first,
    the second must not hide TD008."""
    text = textwrap.dedent("""
        import torch


        @torch.no_grad()
        def evaluate(model, criterion, data_loader):
            criterion.eval()
            for samples, targets in data_loader:
                outputs = model(samples)
                criterion(outputs, targets)
    """)
    assert [f.rule_id for f in lint_source(text).all] == ["TD008"]
    assert [f.rule_id for f in lint_source(text.replace("criterion.eval()", "model.eval()")).all] == []


def test_a_model_reloaded_with_torch_load_is_still_a_model():
    """word_language_model: ``model = model.RNNModel(...)`` then, after training,
    ``model = torch.load(f)``; evaluate() sees the module-level name."""
    text = textwrap.dedent("""
        import torch
        from torch import nn

        model = nn.LSTM(4, 4, dropout=0.5)


        def evaluate(val_data):
            with torch.no_grad():
                for batch in val_data:
                    model(batch)


        with open("model.pt", "rb") as f:
            model = torch.load(f, weights_only=False)
        evaluate([])
    """)
    assert [f.rule_id for f in lint_source(text).all if f.rule_id != "TD015"] == ["TD008"]


def test_an_element_of_a_returned_tuple_reaches_the_criterion(tmp_path):
    """A recurrent model returning ``(log_softmax(decoded), hidden)``, unpacked by the loop."""
    root = project(
        tmp_path,
        {
            "model.py": """
            import torch.nn.functional as F
            from torch import nn


            class RNNModel(nn.Module):
                def __init__(self):
                    super().__init__()
                    self.rnn, self.decoder = nn.LSTM(8, 8), nn.Linear(8, 20)

                def forward(self, x, hidden):
                    output, hidden = self.rnn(x, hidden)
                    return F.log_softmax(self.decoder(output), dim=-1), hidden
        """,
            "train.py": """
            from torch import nn
            from model import RNNModel

            model = RNNModel()
            criterion = nn.CrossEntropyLoss()


            def train(batches, hidden):
                for data, targets in batches:
                    output, hidden = model(data, hidden)
                    loss = criterion(output, targets)
                    loss.backward()
        """,
        },
    )
    found = [f for f in lint(root / "train.py") if f[0] == "TD003"]
    assert [(rule, line) for rule, line, _ in found] == [("TD003", 11)]
    assert "log-softmax" in found[0][2] and "model.py line 12" in found[0][2]
    hidden_only = (
        (root / "train.py")
        .read_text()
        .replace("loss = criterion(output, targets)", "loss = criterion(hidden, targets)")
    )
    (root / "train.py").write_text(hidden_only)
    assert not any(f[0] == "TD003" for f in lint(root / "train.py"))  # element 1 is not the log-probabilities
