"""The Variables view's Check Data / Show as Images: the check on a value inside a paused program."""

from __future__ import annotations

import json

import torch
from torch.utils.data import DataLoader

from support.data_checks import Images
from torchdoctor.data_checks.paused import check, dump


def test_a_batch_tensor_shown_as_images_marks_its_blank_samples(tmp_path):
    x = torch.rand(10, 1, 28, 28)
    x[[2, 7]] = 0.0
    path = tmp_path / "out.json"
    status = dump(x, str(path), "images", "batch")
    assert status.startswith("ok: ")
    result = json.loads(path.read_text())
    g = result["splits"][0]["gallery"]
    assert len(g["images"]) == 10 and [im["index"] for im in g["images"] if im["blank"]] == [2, 7]
    assert [f["kind"] for f in result["findings"]] == ["constant-samples"]
    assert result["target"] == "batch" and result["notes"][0] == "batch shown as images"
    assert result["asHeld"] is True  # the tensor's own values: the page does not speak of transforms


def test_a_dict_batch_pairs_images_with_labels_and_one_image_is_one_tile():
    batch = {"image": torch.rand(6, 3, 16, 16), "label": torch.tensor([0, 1, 2, 0, 1, 2])}
    g = check(batch, "batch")["splits"][0]["gallery"]
    assert [im["label"] for im in g["images"]] == ["0", "1", "2", "0", "1", "2"]
    one = check(torch.rand(3, 20, 24), "img", "images")["splits"][0]["gallery"]
    assert len(one["images"]) == 1 and (one["height"], one["width"], one["channels"]) == (20, 24, 3)
    grey = check(torch.rand(20, 24), "img", "images")["splits"][0]["gallery"]
    assert len(grey["images"]) == 1 and grey["channels"] == 1


def test_a_dataset_or_loader_is_checked_as_the_cli_would_and_the_rng_is_left_alone():
    before = torch.get_rng_state()
    r = check(DataLoader(Images(n=64), batch_size=16), "train_loader")
    assert torch.equal(torch.get_rng_state(), before)
    assert r["verdict"] == "PASS" and r["splits"][0]["kind"] == "loader"
    assert r["splits"][0]["gallery"] is not None
    assert "asHeld" not in r  # drawn through the loader: after the dataset's transforms
    assert check({"image": torch.rand(4, 3, 8, 8), "label": torch.arange(4)}, "batch")["asHeld"] is True


def test_what_cannot_be_checked_is_an_error_status_never_an_exception(tmp_path):
    path = tmp_path / "out.json"
    status = dump("some text", str(path), "data", "name")
    assert status.startswith("error: ") and "name" in status
    assert json.loads(path.read_text())["verdict"] == "ERROR"
    assert dump(torch.rand(5), str(tmp_path / "x.json"), "images").startswith("error: ")
    assert dump(torch.rand(3), str(tmp_path / "missing" / "x.json")).startswith("error: ")  # no such folder


class RaisesAt(Images):
    def __getitem__(self, i):
        if i == 7:
            raise OSError("image 7 is truncated")
        return super().__getitem__(i)


def test_a_dataset_whose_sample_raises_is_a_dataset_error_naming_the_index():
    r = check(RaisesAt(20), "train_ds")
    assert r["verdict"] == "ERROR" and r["error"]["kind"] == "dataset-error"
    assert r["headline"].startswith("train_ds[7] raised OSError: image 7 is truncated")
    assert "test_paused.py" in r["error"]["detail"]
