"""Where the "Check data" lens goes: Dataset subclasses, functions returning data, torchdoctor_data()."""

from __future__ import annotations

import pytest

from support.paths import REPO
from torchdoctor.checks.discovery import Position, SourceSyntaxError
from torchdoctor.data_checks.discovery import discover_data

SOURCE = """\
import torch
from torch.utils import data as tud
from torch.utils.data import DataLoader, Dataset
from datasets import Dataset as HFDataset


class Digits(Dataset):
    def __len__(self):
        return 3


class Augmented(Digits):
    pass


class Needs(tud.IterableDataset):
    def __init__(self, root):
        self.root = root


class Rows(torch.utils.data.TensorDataset):
    pass


class NotTorch(HFDataset):
    pass


class Model(torch.nn.Module):
    pass


def loaders(batch_size=8):
    train = DataLoader(Digits(), batch_size=batch_size)
    return train, DataLoader(Augmented())


def splits():
    return {"train": Digits(), "val": Augmented()}


def annotated() -> Dataset:
    return make()


def needs_path(path):
    return Digits()


def helper():
    return 3


def nested():
    def inner():
        return Digits()

    return inner
"""


def names(found) -> list:
    return [(t.name, t.kind) for t in found.targets]


def test_datasets_and_functions_returning_data_are_found_in_source_order():
    found = discover_data(SOURCE)
    assert names(found) == [
        ("Digits", "class"),
        ("Augmented", "class"),
        ("Needs", "class"),
        ("Rows", "class"),
        ("loaders", "function"),
        ("splits", "function"),
        ("annotated", "function"),
    ]
    needs = next(t for t in found.targets if t.name == "Needs")
    assert needs.initRequired == ["root"] and not found.hasHook
    digits = found.targets[0]
    assert (digits.nameRange.start.line, digits.nameRange.start.character) == (6, 6)
    assert digits.nameRange.end.character - digits.nameRange.start.character == len("Digits")
    assert found.containing(Position(7, 8)).name == "Digits"
    assert found.containing(Position(0, 0)) is None


def test_with_torchdoctor_data_a_class_that_needs_arguments_is_left_to_the_hook():
    found = discover_data(SOURCE + "\n\ndef torchdoctor_data():\n    return {'train': Needs('x')}\n")
    assert found.hasHook and ("torchdoctor_data", "hook") in names(found)
    assert "Needs" not in [t.name for t in found.targets]


def test_every_sample_file_gets_a_lens_and_a_syntax_error_says_where():
    samples = sorted((REPO / "sample_workspace" / "data").glob("*.py"))
    assert len(samples) == 10
    for path in samples:
        assert discover_data(path.read_text()).targets, path.name
    with pytest.raises(SourceSyntaxError) as err:
        discover_data("class A(Dataset:\n")
    assert err.value.line == 0


def test_return_annotations_match_whole_names_only():
    src = (
        "from typing import Tuple\n"
        "from torch.utils.data import DataLoader\n\n"
        "class Local(object):\n    pass\n\n"
        'def config() -> "DataLoaderConfig":\n    return make()\n\n'
        "def settings() -> DatasetSettings:\n    return make()\n\n"
        "def pair() -> Tuple[DataLoader, DataLoader]:\n    return make()\n\n"
        'def quoted() -> "torch.utils.data.Dataset":\n    return make()\n'
    )
    assert [t.name for t in discover_data(src).targets] == ["pair", "quoted"]


def test_pytest_fixtures_get_no_lens():
    src = (
        "import pytest\nfrom pytest import fixture\nfrom torch.utils.data import DataLoader, TensorDataset\n\n"
        "@pytest.fixture\ndef loader():\n    return DataLoader(TensorDataset())\n\n"
        "@fixture(scope='module')\ndef module_loader():\n    return DataLoader(TensorDataset())\n\n"
        "@staticmethod\ndef plain():\n    return DataLoader(TensorDataset())\n"
    )
    assert [t.name for t in discover_data(src).targets] == ["plain"]
