"""The corpora: correct training scripts lint clean; each buggy script produces exactly the
findings its first line declares (``# expect: TD001@18 TD003@27``); every quick fix applies
cleanly and removes its finding; mutated files never break the linter."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from torchdoctor.lint import all_rules, lint_source
from torchdoctor.lint.fixes import apply_edits

CORPUS = Path(__file__).resolve().parents[2] / "lint_corpus"
CLEAN = sorted((CORPUS / "clean").glob("*.py"))
BUGGY = sorted((CORPUS / "buggy").glob("*.py"))
_EXPECT = re.compile(r"^# expect:((?:\s+TD\d{3}@\d+)+)\s*$")


def expected(path: Path):
    first = path.read_text().splitlines()[0]
    match = _EXPECT.match(first)
    assert match, f"{path.name}: first line must be '# expect: TDxxx@line ...'"
    return sorted((item.split("@")[0], int(item.split("@")[1])) for item in match.group(1).split())


def actual(text: str, name: str = "<corpus>"):
    result = lint_source(text, name)
    assert result.internal_errors == []
    return sorted((f.rule_id, f.line) for f in result.all)


def test_corpora_are_not_empty():
    assert len(CLEAN) >= 9 and len(BUGGY) >= len(all_rules())


@pytest.mark.parametrize("path", CLEAN, ids=lambda p: p.name)
def test_clean_script_has_no_findings(path):
    result = lint_source(path.read_text(), str(path))
    assert [(f.rule_id, f.line, f.message) for f in result.all] == []
    assert result.internal_errors == []


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.name)
def test_buggy_script_has_exactly_the_expected_findings(path):
    assert actual(path.read_text(), str(path)) == expected(path)


def test_every_rule_has_a_buggy_example():
    covered = {rule for path in BUGGY for rule, _ in expected(path)}
    assert covered == {r.id for r in all_rules()}


@pytest.mark.parametrize("path", BUGGY, ids=lambda p: p.name)
def test_each_fix_applies_and_clears_its_finding(path):
    text = path.read_text()
    before = lint_source(text, str(path)).findings
    for finding in (f for f in before if f.fix is not None):
        after_text = apply_edits(text, finding.fix.edits)
        compile(after_text, str(path), "exec")  # still valid Python
        after = Counter(f.rule_id for f in lint_source(after_text, str(path)).all)
        wanted = Counter(f.rule_id for f in before)
        wanted[finding.rule_id] -= 1
        assert after == +wanted, f"fix for {finding.rule_id}@{finding.line} left {after}"


def _mutate(text: str, data) -> str:
    lines = text.splitlines()
    kind = data.draw(st.sampled_from(["delete", "truncate", "duplicate", "dedent"]))
    i = data.draw(st.integers(0, len(lines) - 1))
    if kind == "delete":
        j = data.draw(st.integers(i, min(len(lines), i + 5)))
        del lines[i:j]
    elif kind == "truncate":
        lines = lines[:i] + [lines[i][: data.draw(st.integers(0, len(lines[i])))]]
    elif kind == "duplicate":
        lines.insert(i, lines[i])
    else:
        lines[i] = lines[i].lstrip()
    return "\n".join(lines)


@settings(max_examples=60)
@given(data=st.data())
def test_mutated_corpus_files_never_break_the_linter(data):
    path = data.draw(st.sampled_from(CLEAN + BUGGY))
    text = _mutate(path.read_text(), data)
    result = lint_source(text, str(path))
    assert result.internal_errors == []
    lines = text.split("\n")
    for finding in result.all:
        assert 0 <= finding.span.start_line < max(len(lines), 1)


@settings(max_examples=40)
@given(st.text(max_size=200))
def test_arbitrary_text_never_raises(text):
    result = lint_source(text)
    assert result.internal_errors == []


_IDENT = st.from_regex(r"[a-z][a-z0-9_]{2,10}", fullmatch=True).filter(
    lambda s: (
        s
        not in {
            "for",
            "and",
            "not",
            "def",
            "del",
            "try",
            "with",
            "while",
            "print",
            "range",
            "import",
            "from",
            "lambda",
            "return",
            "class",
            "pass",
            "global",
            "yield",
            "async",
            "await",
            "assert",
            "raise",
            "elif",
            "else",
            "break",
            "true",
            "none",
            "false",
            "torch",
            "nn",
            "model",
            "loss",
            "step",
            "criterion",
            "out",
            "x",
            "y",
        }
    )
)


@settings(max_examples=30)
@given(optimizer=_IDENT, criterion=_IDENT)
def test_findings_follow_the_objects_not_their_names(optimizer, criterion):
    """TD001 and TD003 hold whatever the optimizer and the loss are called: the rules follow
    assignments, not spellings."""
    assume(optimizer != criterion)
    text = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "model = nn.Linear(4, 3)\n"
        f"{optimizer} = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        f"{criterion} = nn.CrossEntropyLoss()\n"
        "for x, y in batches:\n"
        f"    loss = {criterion}(F.softmax(model(x), dim=1), y)\n"
        "    loss.backward()\n"
        f"    {optimizer}.step()\n"
    )
    result = lint_source(text)
    assert sorted((f.rule_id, f.line) for f in result.findings) == [("TD001", 10), ("TD003", 8)]
    td001 = next(f for f in result.findings if f.rule_id == "TD001")
    assert f"`{optimizer}.zero_grad()`" in td001.message
    assert td001.fix is not None and td001.fix.edits[0].new_text.strip() == f"{optimizer}.zero_grad()"
