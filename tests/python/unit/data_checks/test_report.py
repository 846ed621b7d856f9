"""The data check's text report (data_checks/report.py): what a terminal shows of a result."""

from __future__ import annotations

from torchdoctor.data_checks import report


def _result(count: int, kept: int) -> dict:
    finding = {
        "kind": "labels-out-of-range",
        "severity": "error",
        "split": "train",
        "message": f"{count} train labels fall outside [0, 4).",
        "indices": list(range(kept)),
        "count": count,
    }
    return {"headline": "1 finding", "findings": [finding], "splits": []}


def test_the_more_count_adds_up_to_every_sample_concerned():
    # the result keeps 50 indices of the 450; the text lists 20: the other 430 are "more"
    text = report.render(_result(450, 50))
    [line] = [ln for ln in text.splitlines() if "samples:" in ln]
    listed = line.split("samples:")[1].split("(")[0].split(",")
    assert len(listed) == report.SHOWN
    assert f"(+{450 - report.SHOWN} more)" in line


def test_no_more_count_when_every_index_is_listed():
    text = report.render(_result(7, 7))
    [line] = [ln for ln in text.splitlines() if "samples:" in ln]
    assert "more" not in line and len(line.split("samples:")[1].split(",")) == 7
