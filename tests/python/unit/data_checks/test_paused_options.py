"""The expression the extension evaluates while paused (extension/src/data/dataTargets.ts's
pausedDumpExpression, with dataOptions.ts's options) runs as Python: the options dict reaches the
check (the grid's 128 images, torchDoctor.dataChecks.budgetSeconds)."""

from __future__ import annotations

import json

import torch


def _expression(ref: str, file: str, mode: str, options: dict) -> str:
    # the same text as pausedDumpExpression (tests/ts/unit/data/dataTargets.test.ts pins it there)
    opts = json.dumps(options, separators=(",", ":"))
    return f"__import__('torchdoctor.data_checks.paused', fromlist=['_']).dump({ref}, {json.dumps(file)}, '{mode}', {json.dumps(ref)}, {opts})"


def test_show_as_images_with_the_editors_options_keeps_every_image_and_the_budget(tmp_path):
    batch = torch.rand(70, 3, 8, 8)  # noqa: F841 - read by the evaluated expression
    out = tmp_path / "r.json"
    status = eval(_expression("batch", str(out), "images", {"galleryImages": 128, "budgetSeconds": 7}))  # noqa: S307
    assert status.startswith("ok"), status
    result = json.loads(out.read_text())
    assert len(result["splits"][0]["gallery"]["images"]) == 70  # more than the CLI's 32: the grid pages
    assert result["budget"]["seconds"] == 7
    assert result["splits"][0]["gallery"]["histograms"]["samples"] == 70


def test_a_budget_of_zero_means_none(tmp_path):
    batch = torch.rand(10, 3, 8, 8)  # noqa: F841
    out = tmp_path / "r.json"
    status = eval(_expression("batch", str(out), "images", {"galleryImages": 128, "budgetSeconds": 0}))  # noqa: S307
    assert status.startswith("ok"), status
    assert "budget" not in json.loads(out.read_text())
