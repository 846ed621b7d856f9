"""docs/checks.md's worked examples of torchdoctor_example() are true: each one, pasted into a file
as it stands, gives the example the docs describe and the overfit test passes on it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from support.checks import ROOT, example, new_result, quiet
from torchdoctor.checks import overfit

TEXT = (ROOT / "docs" / "checks.md").read_text()
CORPUS = ROOT / "tests" / "python" / "unit" / "checks" / "real_models" / "models.py"


@pytest.fixture(autouse=True)
def one_thread():
    """As the worker runs the checks (threads=1): on a busy machine more threads only spin."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def block(heading: str) -> str:
    """The first ```python block after the heading that starts with ``heading``."""
    match = re.search(rf"^#### {re.escape(heading)}.*?```python\n(.*?)```", TEXT, re.M | re.S)
    assert match, f"docs/checks.md has no python block under '#### {heading}'"
    return match.group(1)


def run_overfit(path: Path, class_name: str) -> tuple:
    ex = example(path, class_name)
    return ex, overfit.run(ex, {"timeBudgetSeconds": 900}, quiet, new_result("overfit", class_name))


def test_the_contract_table_names_every_key_the_code_accepts():
    from torchdoctor.checks.example.contract import KEYS

    for key in KEYS:
        assert f"| `{key}` |" in TEXT


def test_nanogpt_style_worked_example(tmp_path: Path):
    path = tmp_path / "tiny_gpt.py"
    path.write_text(block("Worked example: a nanoGPT-style model"))
    ex, r = run_overfit(path, "TinyGPT")
    assert ex.loss_name == "model" and ex.target_kwarg == "targets"
    assert any(s.startswith("Loss: TinyGPT's own: its forward, given targets=targets") for s in ex.inferred)
    assert any(s.startswith("Dropout off for this test: p=0 in") for s in r["inferred"])
    assert r["verdict"] == "PASS", r["headline"]
    assert r["details"]["finalAccuracy"] >= overfit.TOKEN_ACCURACY


def test_hugging_face_worked_example(tmp_path: Path):
    pytest.importorskip("transformers")
    path = tmp_path / "hf_example.py"
    path.write_text(block("Worked example: a Hugging Face model"))
    ex, r = run_overfit(path, "GPT2LMHeadModel")
    assert ex.loss_name == "model" and set(ex.kwargs) == {"input_ids", "attention_mask", "labels"}
    assert r["verdict"] == "PASS", r["headline"]
    assert r["details"]["finalAccuracy"] >= overfit.TOKEN_ACCURACY  # scored with the model's own shift


def test_vae_fragment_with_a_loss_that_sees_every_output(tmp_path: Path):
    path = tmp_path / "vae_example.py"
    prelude = (
        "import importlib.util\nimport torch\nimport torch.nn.functional as F\n"
        f"_spec = importlib.util.spec_from_file_location('docs_corpus_models', {str(CORPUS)!r})\n"
        "_m = importlib.util.module_from_spec(_spec)\nimport sys\nsys.modules['docs_corpus_models'] = _m\n"
        "_spec.loader.exec_module(_m)\nVAE = _m.VAE\n\n"
    )
    path.write_text(prelude + block("A loss that needs every output"))
    ex, r = run_overfit(path, "VAE")
    assert ex.loss_sees == "all" and ex.loss_name == "custom"
    assert r["verdict"] == "PASS", r["headline"]
    assert r["details"]["lossFloor"] > 0 and r["details"]["finalLoss"] > r["details"]["lossFloor"]
