"""Shape trace: a table per module call; when the forward raises, the table up to there and plain words."""

from __future__ import annotations

from pathlib import Path

import torch

from support.checks import MODELS, example, new_result, quiet, write
from torchdoctor.checks import shape_trace as S


def run(ex) -> dict:
    return S.run(ex, {}, quiet, new_result("shapes"))


def test_healthy_cnn_table():
    r = run(example(MODELS / "cnn.py", "TinyCNN", targets=False))
    assert r["verdict"] == "PASS"
    assert r["table"]["columns"] == S.COLUMNS
    rows = {row[0]: row for row in r["table"]["rows"]}
    assert rows["(model)"][3:6] == ["(8, 3, 32, 32)", "(8, 10)", 5538]
    assert rows["conv1"][1:5] == ["Conv2d", 1, "(8, 3, 32, 32)", "(8, 4, 32, 32)"]
    assert rows["fc"][3:8] == ["(8, 512)", "(8, 10)", 5130, "float32", "cpu"]
    assert [row[0] for row in r["table"]["rows"]].count("pool") == 2  # one row per call
    assert r["table"]["errorRow"] is None


def test_flatten_size_mistake_stops_the_table_at_the_layer():
    r = run(example(MODELS / "shape_mismatch.py", "LeNetish", targets=False))
    assert r["verdict"] == "FAIL"
    rows = r["table"]["rows"]
    assert [row[0] for row in rows] == ["(model)", "conv1", "conv2", "fc1"]
    assert r["table"]["errorRow"] == 3 and rows[3][4] == "—"
    assert r["headline"] == "The forward of LeNetish raises in `fc1`."
    assert r["sentences"][0].startswith(
        "Layer `fc1` (Linear) expects 400 input features (in_features=400) but the tensor reaching it has shape (8, 576): 576 features per sample."
    )
    assert "flatten-size mistake" in r["sentences"][0] and "nn.Linear(576, ...)" in r["sentences"][0]


def test_channels_last_images_are_called_nhwc(tmp_path: Path):
    path = write(
        tmp_path,
        "nhwc.py",
        """
        import numpy as np
        import torch
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(3, 4, 3)

            def forward(self, x):
                return self.conv(x)

        def torchdoctor_example():
            images = np.zeros((8, 32, 32, 3), dtype=np.float32)   # as PIL / OpenCV give them
            return Net(), (torch.from_numpy(images), None)
        """,
    )
    r = run(example(path, "Net", targets=False))
    assert r["verdict"] == "FAIL"
    text = r["sentences"][0]
    assert "channels-last (NHWC)" in text and "NCHW" in text and "x.permute(0, 3, 1, 2)" in text
    assert "`conv` (Conv2d) expects 3 channels" in text


def test_a_bad_view_in_the_models_own_code(tmp_path: Path):
    path = write(
        tmp_path,
        "view.py",
        """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 4, 3)
                self.fc = nn.Linear(400, 10)

            def forward(self, x):
                x = self.conv(x)
                return self.fc(x.view(-1, 400))
        """,
    )
    r = run(example(path, "Net", {"spatialSize": 11}, targets=False))
    assert r["verdict"] == "FAIL"
    assert r["headline"] == "The forward of Net raises in its own code."
    text = r["sentences"][0]
    assert text.startswith(
        "The reshape to [-1,400] in the forward of Net itself (not one of its layers) cannot work: the tensor has 2592 elements."
    )
    assert "`conv`, produced (8, 4, 9, 9), that is 324 features per sample" in text
    assert "give the next Linear in_features=324" in text and "flatten-size mistake" in text


def test_a_view_that_folds_features_into_the_batch_is_a_warning(tmp_path: Path):
    path = write(
        tmp_path,
        "fold.py",
        """
        import torch.nn as nn

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = nn.Conv2d(1, 2, 3)
                self.fc = nn.Linear(50, 10)

            def forward(self, x):
                return self.fc(self.conv(x).view(-1, 50))   # 2*10*10 = 200 per sample: batch 8 becomes 32
        """,
    )
    r = run(example(path, "Net", {"spatialSize": 12}, targets=False))
    assert r["verdict"] == "WARN"
    assert r["sentences"][0].startswith("The batch dimension changed from 8 to 32 before `fc` (Linear, input (32, 50))")


def test_trace_helpers_never_raise_for_the_models_errors():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(5, 2))
    tr = S.trace(model, (torch.zeros(2, 3),))
    assert tr.failure is not None and tr.failure.module_name == "1"
    assert S.explain_forward_failure(model, (torch.zeros(2, 3),)).startswith(
        "Layer `1` (Linear) expects 5 input features"
    )
    assert S.explain_forward_failure(model, (torch.zeros(2, 3),)) is not None
    assert S.fmt([[2, 3], [[1, 2], [1, 2]]]) == "(2, 3), [(1, 2), (1, 2)]"
