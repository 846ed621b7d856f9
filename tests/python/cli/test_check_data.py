"""``torchdoctor check data`` on every sample of sample_workspace/data/, with a real worker:
the findings each sample is written to show, exit 1 on findings, 0 on healthy data, 2 on usage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.paths import SAMPLES
from torchdoctor.cli import main

DATA = SAMPLES / "data"

EXPECTED = {
    "blank_augmentation.py::ZoomedDigits": ["blank-augmentation"],
    "channels_last.py": ["channels-last", "channels-last"],
    "unnormalised.py::HousePrices": ["unnormalised"],
    "imbalanced.py::Transactions": ["label-imbalance"],
    "leaky_split.py": ["duplicates-across-splits", "duplicates-within-split"],
    "drifted_val.py": ["drift"],
    "tabular_strings.py::Customers": ["constant-column", "missing-values", "numbers-as-text"],
    "temporal_leak.py": ["temporal-leakage"],
    "unshuffled.py": ["unshuffled-class-runs"],
}


def run_json(target: str, capsys, *extra: str) -> tuple[int, dict]:
    code = main(["check", "data", str(DATA / target), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("target", sorted(EXPECTED))
def test_each_sample_shows_its_bug(target: str, capsys):
    code, result = run_json(target, capsys)
    assert code == 1, result["headline"]
    assert sorted(f["kind"] for f in result["findings"]) == EXPECTED[target]
    assert all(f["source"] and f["source"]["file"].startswith(str(DATA)) for f in result["findings"])


def test_healthy_sample_passes_with_exit_0(capsys):
    code = main(["check", "data", str(DATA / "healthy.py")])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("PASS  Data check on torchdoctor_data")
    assert "train: loader" in out and "labels 0: " in out


def test_text_report_names_the_indices_and_the_line(capsys):
    assert main(["check", "data", f"{DATA / 'leaky_split.py'}::torchdoctor_data"]) == 1
    out = capsys.readouterr().out
    assert "!! duplicates-across-splits [error] in test" in out and "samples: " in out


def test_every_sample_has_a_docstring_that_says_how_to_run_it():
    for path in sorted(DATA.glob("*.py")):
        text = path.read_text()
        assert text.startswith('"""') and "torchdoctor check data data/" in text, path.name


def test_usage_errors_exit_2(tmp_path: Path, capsys):
    assert main(["check", "data", str(tmp_path / "missing.py")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["check", "data", str(DATA / "healthy.py"), "--options", '{"maxSamples": 0}']) == 2
    assert "maxSamples" in capsys.readouterr().err
    assert main(["check", "data", str(DATA / "healthy.py"), "--options", '{"budgetSeconds": "5"}']) == 2
    assert "budgetSeconds" in capsys.readouterr().err


def test_a_dataset_that_needs_arguments_gets_the_snippet(tmp_path: Path, capsys):
    path = tmp_path / "needs.py"
    path.write_text(
        "from torch.utils.data import Dataset\n\nclass Rows(Dataset):\n    def __init__(self, root):\n        pass\n"
    )
    code = main(["check", "data", f"{path}::Rows", "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 2 and result["error"]["kind"] == "constructor-error"
    assert "root" in result["headline"] and "def torchdoctor_data" in result["snippet"]
    assert '"train": Rows(root=...)' in result["snippet"]  # the class itself, not a placeholder


def test_a_sample_that_raises_is_named_with_its_split_and_index(tmp_path: Path, capsys):
    path = tmp_path / "broken.py"
    path.write_text(
        "import torch\nfrom torch.utils.data import Dataset\n\n"
        "class Files(Dataset):\n    def __len__(self):\n        return 10\n\n"
        "    def __getitem__(self, i):\n        if i == 4:\n            raise KeyError(f'no file {i}')\n"
        "        return torch.zeros(3), 0\n"
    )
    assert main(["check", "data", f"{path}::Files", "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["error"]["kind"] == "dataset-error" and result["headline"].startswith("Files[4] raised KeyError")
    assert "Next step" in result["headline"]
    detail = result["error"]["detail"]
    assert "broken.py" in detail and "torchdoctor" not in detail  # starts in the user's __getitem__


def test_a_constructor_that_raises_says_what_to_do(tmp_path: Path, capsys):
    path = tmp_path / "setup.py"
    path.write_text(
        "from torch.utils.data import Dataset\n\n"
        "class Needs(Dataset):\n    def __init__(self):\n        raise FileNotFoundError('data/train.csv')\n"
    )
    assert main(["check", "data", f"{path}::Needs", "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["error"]["kind"] == "constructor-error" and "FileNotFoundError" in result["headline"]
    assert "Next step" in result["headline"] and "def torchdoctor_data" in result["snippet"]


def test_name_is_required_when_the_file_has_two_datasets(tmp_path: Path, capsys):
    path = tmp_path / "two.py"
    path.write_text(
        "from torch.utils.data import Dataset\n\nclass A(Dataset):\n    pass\n\nclass B(Dataset):\n    pass\n"
    )
    assert main(["check", "data", str(path), "--json"]) == 2
    assert "A, B" in json.loads(capsys.readouterr().out)["headline"]


def test_a_hanging_dataset_is_stopped_at_the_time_limit(tmp_path: Path, capsys):
    path = tmp_path / "hang.py"
    path.write_text(
        "import time\nimport torch\nfrom torch.utils.data import Dataset\n\n"
        "class Slow(Dataset):\n    def __len__(self):\n        return 10\n\n"
        "    def __getitem__(self, i):\n        time.sleep(60)\n        return torch.zeros(3)\n"
    )
    assert main(["check", "data", f"{path}::Slow", "--json", "--timeout", "3"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "timeout"


def test_a_dataset_that_raises_is_reported(tmp_path: Path, capsys):
    path = tmp_path / "broken.py"
    path.write_text(
        "from torch.utils.data import Dataset\n\nclass Broken(Dataset):\n    def __len__(self):\n        return 5\n\n"
        "    def __getitem__(self, i):\n        raise KeyError(i)\n"
    )
    assert main(["check", "data", f"{path}::Broken", "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    assert result["error"]["kind"] == "dataset-error" and "KeyError" in result["headline"]


LOADER_WITH_WORKERS = (
    "import os\nimport signal\nimport torch\nfrom torch.utils.data import DataLoader, Dataset\n\n"
    "class Files(Dataset):\n    def __init__(self, bad):\n        self.bad = bad\n\n"
    "    def __len__(self):\n        return 16\n\n"
    "    def __getitem__(self, i):\n        if i == self.bad:\n            {fail}\n        return torch.zeros(3), 0\n\n"
    "def torchdoctor_data():\n"
    "    return {{'train': DataLoader(Files(-1), batch_size=4), 'val': DataLoader(Files(5), batch_size=4, num_workers=2)}}\n"
)  # train draws fine in this process; val's workers fail on sample 5


def test_a_loader_worker_that_raised_names_split_worker_error_line_and_sample(tmp_path: Path, capsys):
    path = tmp_path / "workers.py"
    path.write_text(LOADER_WITH_WORKERS.format(fail="raise ValueError(f'cannot decode file {i}')"))
    assert main(["check", "data", str(path), "--json"]) == 2
    result = json.loads(capsys.readouterr().out)
    error, headline = result["error"], result["headline"]
    assert error["kind"] == "dataset-error" and error["cause"] == "worker-raised"
    assert error["split"] == "val" and isinstance(error["worker"], int) and error["index"] == 5
    assert error["exception"] == "ValueError" and error["exceptionMessage"] == "cannot decode file 5"
    assert error["source"]["file"] == str(path)
    assert path.read_text().splitlines()[error["source"]["line"] - 1].strip().startswith("raise ValueError")
    assert headline.startswith("val: DataLoader worker") and "ValueError: cannot decode file 5" in headline
    assert f"{path}:{error['source']['line']}" in headline and "num_workers=0" in headline
    assert "Caught ValueError" not in headline
    assert "torchdoctor" not in error["detail"] and "site-packages" not in error["detail"]


@pytest.mark.parametrize(
    ("fail", "says"), [("os._exit(3)", "status 3"), ("os.kill(os.getpid(), signal.SIGKILL)", "SIGKILL")]
)
def test_a_loader_worker_that_died_says_how_and_that_the_split_was_not_drawn(tmp_path: Path, capsys, fail, says):
    path = tmp_path / "dies.py"
    path.write_text(LOADER_WITH_WORKERS.format(fail=fail))
    assert main(["check", "data", str(path)]) == 2
    out = capsys.readouterr().out
    assert out.startswith("ERROR") and "val: DataLoader worker" in out and " died " in out
    assert says in out and "could not draw val" in out and "num_workers=0" in out
    assert "Traceback" not in out  # the story, not our frames


DETECTION = """
import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler


class Boxes(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        g = torch.Generator().manual_seed(i)
        h, w = 64 + 8 * (i % 3), 80 + 8 * (i % 2)
        k = 1 + i % 3
        target = {"boxes": torch.rand(k, 4, generator=g), "labels": torch.randint(0, 5, (k,), generator=g)}
        return (torch.rand(3, h, w, generator=g) - 0.5) / 0.29, target


def pad(batch):
    images, targets = zip(*batch)
    out = torch.zeros(len(images), 3, max(x.shape[1] for x in images), max(x.shape[2] for x in images))
    for k, x in enumerate(images):
        out[k, :, : x.shape[1], : x.shape[2]] = x
    return out, targets


def torchdoctor_data():
    ds = Boxes()
    batches = BatchSampler(RandomSampler(ds), 4, drop_last=True)
    return {"train": DataLoader(ds, batch_sampler=batches, collate_fn=pad, num_workers=2)}
"""


def test_a_detection_loader_counts_every_sample_drawn_and_its_boxes(tmp_path: Path, capsys):
    """DETR-shaped: padded batches of several sizes, a tuple of target dicts. The count is the
    samples drawn, not those of one padded shape; the box labels are counted, one per box."""
    path = tmp_path / "detection.py"
    path.write_text(DETECTION)
    code, result = run_json(f"{path}::torchdoctor_data", capsys)
    assert code == 0 and result["findings"] == [], result["headline"]
    split = result["splits"][0]
    assert split["sampled"] == split["length"] == 40 and "train (40 samples" in result["headline"]
    assert split["statsSampled"] + split["otherShapes"] == 40
    assert split["labelKind"] == "boxes" and sum(split["labels"].values()) == sum(1 + i % 3 for i in range(40))


ONEHOT_AND_TRANSPOSED = (
    "import torch\nimport torch.nn.functional as F\nfrom torch import nn\n"
    "from torch.utils.data import DataLoader, Dataset\n\n"
    "class Scans(Dataset):\n"
    "    def __init__(self, transpose):\n        self.transpose = transpose\n\n"
    "    def __len__(self):\n        return 24\n\n"
    "    def __getitem__(self, i):\n"
    "        x = torch.randn(1, 20, 36, generator=torch.Generator().manual_seed(i))\n"
    "        return (x.transpose(1, 2) if self.transpose else x), F.one_hot(torch.tensor(i % 3), 3)\n\n"
    "def torchdoctor_data():\n"
    "    return {{'train': DataLoader(Scans(False), batch_size=8), 'val': Scans(True), {loss}}}\n"
)


@pytest.mark.parametrize("loss", ["'loss': nn.CrossEntropyLoss()", "'criterion': nn.NLLLoss()", ""])
def test_onehot_labels_against_the_loss_and_swapped_height_and_width(tmp_path: Path, capsys, loss: str):
    path = tmp_path / "scans.py"
    path.write_text(ONEHOT_AND_TRANSPOSED.format(loss=loss))
    code, result = run_json(str(path), capsys)
    assert code == 1 and [s["name"] for s in result["splits"]] == ["train", "val"]
    found = sorted((f["kind"], f["split"]) for f in result["findings"])
    swapped = [("height-width-swapped", "val")]
    if loss:
        assert found == sorted([("onehot-labels-for-loss", "train"), ("onehot-labels-for-loss", "val")] + swapped)
    else:  # without the loss, one-hot labels are a note, not a finding
        assert found == swapped
        assert any(n.startswith("train: labels are one-hot rows of width 3") for n in result["notes"])


SLOW_SEGMENTER = (
    "import time\nimport torch\nfrom torch import nn\nfrom torch.utils.data import Dataset\n\n"
    "class Tiles(Dataset):\n"
    "    def __len__(self):\n        return 24\n\n"
    "    def __getitem__(self, i):\n"
    "        g = torch.Generator().manual_seed(i)\n"
    "        return torch.rand(3, 16, 16, generator=g), torch.randint(0, 3, (16, 16), generator=g)\n\n"
    "class Waits(nn.Module):\n"
    "    def __init__(self):\n"
    "        super().__init__()\n        self.body, self.head = nn.Conv2d(3, 8, 3, padding=1), nn.Conv2d(8, 2, 1)\n\n"
    "    def forward(self, x):\n        time.sleep(60)  # a model that waits on something that never comes\n"
    "        return self.head(self.body(x))\n\n"
    "def torchdoctor_data():\n"
    "    return {'train': Tiles(), 'model': Waits(), 'loss': nn.CrossEntropyLoss()}\n"
)


def test_a_model_that_never_answers_on_a_zero_sample_costs_the_check_nothing_but_a_note(tmp_path: Path, capsys):
    path = tmp_path / "slow_model.py"
    path.write_text(SLOW_SEGMENTER)
    code, result = run_json(f"{path}::torchdoctor_data", capsys, "--timeout", "40")
    assert code == 0 and not result.get("error"), result["headline"]
    assert any("did not answer within 5 s on a zero sample" in n for n in result["notes"]), result["notes"]
    assert result["durationSeconds"] < 30
