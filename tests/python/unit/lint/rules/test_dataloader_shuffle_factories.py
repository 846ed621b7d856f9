"""TD017 through a loader factory of the script: ``def make_loader(rows, size,
shuffle=False)`` returns ``DataLoader(rows, size, shuffle=shuffle)``; the training loader made
without ``shuffle=True`` takes the default ``False`` and is reported at that call, with a fix
that passes ``shuffle=True``. The evaluation loaders that keep the default, a training call that
passes ``True`` (by keyword or position), one that writes ``False`` on purpose and a factory
that shuffles by default are quiet; so are the direct rule's exceptions read at the call, a
function that only uses a loader inside, and a factory with a sampler branch."""

from __future__ import annotations

import ast

from support.lint import findings, fixed, hits
from torchdoctor.lint import get_rule
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.registry import Reporter
from torchdoctor.lint.source import SourceText

SCRIPT = """
import torch
from torch.utils.data import DataLoader


def make_loader(rows, size, shuffle={default}):
    return DataLoader(rows, batch_size=size, shuffle=shuffle)


def fit(model, train_rows, dev_rows, epochs):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = {train_call}
    dev_loader = make_loader(dev_rows, 256)
    for epoch in range(epochs):
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    return dev_loader
"""


def td017(train_call: str, default: str = "False"):
    return hits(SCRIPT.format(train_call=train_call, default=default), "TD017")


def test_the_training_loader_left_at_the_factory_default_is_reported():
    assert td017("make_loader(train_rows, 64)") == [("TD017", 11)]


def test_a_training_call_that_writes_false_on_purpose_is_quiet():
    # the documented way to keep a deliberate order (a time series): by keyword or by position
    assert td017("make_loader(train_rows, 64, shuffle=False)") == []
    assert td017("make_loader(train_rows, 64, False)") == []


def test_the_fix_passes_shuffle_true():
    text = SCRIPT.format(train_call="make_loader(train_rows, 64)", default="False")
    assert "train_loader = make_loader(train_rows, 64, shuffle=True)" in fixed(text, "TD017")


def test_a_training_call_that_asks_for_shuffling_is_quiet():
    assert td017("make_loader(train_rows, 64, shuffle=True)") == []
    assert td017("make_loader(train_rows, 64, True)") == []


def test_a_factory_that_shuffles_by_default_is_quiet():
    assert td017("make_loader(train_rows, 64)", default="True") == []


METHOD = """
import torch
from torch.utils.data import DataLoader


class Batches:
    def __init__(self, train_rows, dev_rows):
        self.train_rows, self.dev_rows = train_rows, dev_rows

    def build_loader(self, rows, shuffle=False):
        return DataLoader(rows, batch_size=16, shuffle=shuffle)

    def fit(self, model):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        train_loader = {train_call}
        for x, y in train_loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
"""


def test_a_method_factory_reads_positions_after_self():
    assert hits(METHOD.format(train_call="self.build_loader(self.train_rows, True)"), "TD017") == []
    text = METHOD.format(train_call="self.build_loader(self.train_rows)")
    assert hits(text, "TD017") == [("TD017", 14)]
    assert "self.build_loader(self.train_rows, shuffle=True)" in fixed(text, "TD017")


def test_a_helper_that_returns_statistics_not_its_loader_is_quiet():
    assert (
        hits(
            """
            import torch
            from torch.utils.data import DataLoader

            def pixel_moments(images, shuffle=False):
                loader = DataLoader(images, batch_size=128, shuffle=shuffle)
                stacked = torch.cat([x for x, _ in loader])
                return stacked.mean(), stacked.std()

            def prepare(train_images):
                mean, std = pixel_moments(train_images)
                return mean, std
            """,
            "TD017",
        )
        == []
    )


def test_a_factory_whose_other_return_uses_a_sampler_is_quiet():
    assert (
        hits(
            """
            import torch
            from torch.utils.data import DataLoader, WeightedRandomSampler

            def make_loader(rows, size, weights=None, shuffle=False):
                if weights is not None:
                    picker = WeightedRandomSampler(weights, len(weights))
                    return DataLoader(rows, batch_size=size, sampler=picker)
                return DataLoader(rows, batch_size=size, shuffle=shuffle)

            def fit(model, train_rows, weights):
                optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
                train_loader = make_loader(train_rows, 32, weights=weights)
                for x, y in train_loader:
                    optimizer.zero_grad()
                    torch.nn.functional.mse_loss(model(x), y).backward()
                    optimizer.step()
            """,
            "TD017",
        )
        == []
    )


def test_a_positional_only_order_parameter_is_reported_without_a_keyword_fix():
    found = findings(
        """
        import torch
        from torch.utils.data import DataLoader

        def make_loader(rows, size, shuffle=False, /):
            return DataLoader(rows, batch_size=size, shuffle=shuffle)

        def fit(model, train_rows):
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            train_loader = make_loader(train_rows, 32)
            for x, y in train_loader:
                optimizer.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                optimizer.step()
        """,
        "TD017",
    )
    assert [(f.line, f.fix) for f in found] == [(9, None)]


EXCEPTIONS = """
import pytest
import torch
from torch.utils.data import DataLoader, IterableDataset


class Lines(IterableDataset):
    def __init__(self, path):
        self.path = path

    def __iter__(self):
        yield from open(self.path)


def make_loader(rows, size, shuffle=False):
    return DataLoader(rows, batch_size=size, shuffle=shuffle)


def fit(model):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    train_loader = make_loader(Lines("train.txt"), 32)
    for x in train_loader:
        optimizer.zero_grad()
        model(x).sum().backward()
        optimizer.step()


def peek(model, train_rows):
    first = make_loader(train_rows, 8)
    x, y = next(iter(first))
    return model(x).shape


def test_shapes(model, train_rows):
    train_loader = make_loader(train_rows, 8)
    for x, y in train_loader:
        model(x).sum().backward()
"""


def test_the_direct_rules_exceptions_hold_at_the_factory_call():
    # an iterable dataset passed in, a loader read only for its first batch, a pytest test
    assert hits(EXCEPTIONS, "TD017") == []


def test_a_factory_with_many_returns_looks_up_its_callers_once(monkeypatch):
    returns = "".join(
        f"    if size == {i}:\n        return DataLoader(rows, batch_size={i}, shuffle=shuffle)\n" for i in range(30)
    )
    text = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n"
        f"def make_loader(rows, size, shuffle=False):\n{returns}"
        "    return DataLoader(rows, batch_size=size, shuffle=shuffle)\n\n"
        "def fit(model, train_rows):\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    train_loader = make_loader(train_rows, 4)\n"
        "    for x, y in train_loader:\n"
        "        optimizer.zero_grad()\n"
        "        torch.nn.functional.mse_loss(model(x), y).backward()\n"
        "        optimizer.step()\n"
    )
    looked_up = []
    original = LintContext.call_sites

    def counting(self, func):
        if getattr(func, "name", None) == "make_loader":
            looked_up.append(func)
        return original(self, func)

    monkeypatch.setattr(LintContext, "call_sites", counting)
    rule = get_rule("TD017")
    assert rule is not None
    ctx = LintContext(ast.parse(text), SourceText(text))
    reporter = Reporter(rule, ctx)
    rule.check(ctx, reporter)  # TD017 alone: other rules may ask for the callers too
    assert [f.line for f in reporter.findings] == [69]
    assert len(looked_up) == 1  # not once per ``return DataLoader(...)``
