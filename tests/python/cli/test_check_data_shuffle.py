"""``torchdoctor check data`` on sample_workspace/data/unshuffled.py, with a real worker: the
unshuffled training loader over images stored by class is reported at its ``DataLoader(...)`` line;
the validation loader, unshuffled too, is not."""

from __future__ import annotations

import json

from support.paths import SAMPLES
from torchdoctor.cli import main

SAMPLE = SAMPLES / "data" / "unshuffled.py"


def test_the_unshuffled_training_loader_is_reported_at_its_line(capsys):
    code = main(["check", "data", str(SAMPLE), "--json"])
    result = json.loads(capsys.readouterr().out)
    assert code == 1, result["headline"]
    assert [(f["kind"], f["split"], f["severity"]) for f in result["findings"]] == [
        ("unshuffled-class-runs", "train", "warning")
    ]
    f = result["findings"][0]
    assert f["message"].startswith("17 of 20 drawn train batches (batch size 16) hold one class")
    line = next(n for n, text in enumerate(SAMPLE.read_text().splitlines(), 1) if "train = DataLoader(" in text)
    assert f["source"] == {"file": str(SAMPLE), "line": line}
