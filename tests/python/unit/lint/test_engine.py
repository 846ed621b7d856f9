"""The engine: syntax errors, disabled rules, ignore comments, positions, isolation of a
failing rule."""

import ast

import pytest

from support.lint import code, findings, hits
from torchdoctor.lint import SYNTAX_ERROR_ID, all_rules, lint_source, registry
from torchdoctor.lint.fixes import apply_edits
from torchdoctor.lint.ignore import ignore_edit, parse_ignores

BUGGY = code("""
    import torch
    for x in xs:
        loss = model(x).sum()
        loss.backward()
        optimizer.step()
""")


@pytest.mark.parametrize("text", ["def f(:\n", "x = (1,\n", "\tif x:\n  pass\n", "a = 1\x00\n", "(" * 300 + ")" * 300])
def test_unparsable_text_is_one_syntax_finding(text):
    result = lint_source(text)
    assert result.findings == []
    assert result.syntax_error is not None and result.syntax_error.rule_id == SYNTAX_ERROR_ID
    assert result.all == [result.syntax_error]
    assert result.syntax_error.severity == "error"


def test_syntax_error_position_points_at_the_problem():
    result = lint_source("x = 1\ny = [1, 2\nz = 3\n")
    assert result.syntax_error.span.start_line in (1, 2)


def test_disabled_rules_are_skipped():
    assert hits(BUGGY) == [("TD001", 5)]
    assert lint_source(BUGGY, disabled=["td001"]).findings == []


@pytest.mark.parametrize(
    "comment",
    [
        "# torchdoctor: ignore[TD001]",
        "# torchdoctor: ignore",
        "#torchdoctor:ignore[TD002, TD001]",
        "# note  # torchdoctor: ignore[td001]",
    ],
)
def test_ignore_comment_on_the_finding_line(comment):
    text = BUGGY.replace("optimizer.step()", f"optimizer.step()  {comment}")
    assert hits(text) == []


def test_ignore_comment_for_another_rule_does_not_silence():
    text = BUGGY.replace("optimizer.step()", "optimizer.step()  # torchdoctor: ignore[TD002]")
    assert hits(text) == [("TD001", 5)]


def test_ignore_text_inside_a_string_is_not_a_comment():
    assert parse_ignores('x = "# torchdoctor: ignore"\n') == {}


def test_ignore_edit_adds_a_comment_or_extends_one():
    lines = ["optimizer.step()", "y = 1  # torchdoctor: ignore[TD002]", "z = 2   "]
    assert (
        apply_edits("\n".join(lines), [ignore_edit(lines, 0, "TD001")]).splitlines()[0]
        == "optimizer.step()  # torchdoctor: ignore[TD001]"
    )
    assert (
        apply_edits("\n".join(lines), [ignore_edit(lines, 1, "TD001")]).splitlines()[1]
        == "y = 1  # torchdoctor: ignore[TD002, TD001]"
    )
    assert (
        apply_edits("\n".join(lines), [ignore_edit(lines, 2, "TD003")]).splitlines()[2]
        == "z = 2  # torchdoctor: ignore[TD003]"
    )


def test_columns_are_code_points_not_utf8_bytes():
    text = "import torch\nétiquette = 'ñ'; é = torch.load(path, weights_only=False)\n"
    (finding,) = findings(text)
    line = text.splitlines()[1]
    assert line[finding.span.start_col : finding.span.end_col] == "weights_only=False"


def test_findings_are_sorted_and_carry_json():
    text = "import torch\nb = torch.load(q, weights_only=False)\na = torch.load(p, weights_only=False)\n"
    result = lint_source(text)
    assert [f.line for f in result.findings] == [2, 3]
    data = result.findings[0].to_json()
    assert data["id"] == "TD015" and data["line"] == 2 and "fix" in data


def test_a_failing_rule_is_isolated(caplog):
    def explode(ctx, report):
        raise RuntimeError("boom")

    registry.rule("TD999", "test-explode", "test rule", "warning", "raises")(explode)
    try:
        result = lint_source(BUGGY)
    finally:
        del registry._RULES["TD999"]
    assert [f.rule_id for f in result.findings] == ["TD001"]
    assert result.internal_errors and "TD999" in result.internal_errors[0]


def test_every_rule_has_metadata():
    rules = all_rules()
    assert [r.id for r in rules] == sorted(r.id for r in rules)
    for rule in rules:
        assert rule.id.startswith("TD") and len(rule.id) == 5
        assert rule.severity in ("error", "warning", "information", "hint")
        assert rule.title and rule.explanation and rule.name == rule.name.lower()


def test_the_linter_never_imports_torch():
    import subprocess
    import sys

    probe = "import sys, torchdoctor.lint as l; l.lint_source(open(sys.argv[1]).read()); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe, __file__], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_python39_compatible_syntax_in_the_backend():
    """The backend runs on Python 3.9: no ``match`` statements, no PEP 604 unions evaluated at
    run time (``from __future__ import annotations`` in every module)."""
    from pathlib import Path

    import torchdoctor.lint as lint

    for path in Path(lint.__file__).parent.rglob("*.py"):
        tree = ast.parse(path.read_text(), feature_version=(3, 9))
        if path.name != "__init__.py" or path.stat().st_size > 200:
            assert any(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in tree.body), path


def test_fixes_keep_the_files_line_endings():
    text = BUGGY.replace("\n", "\r\n")
    (finding,) = lint_source(text).findings
    assert finding.fix.edits[0].new_text == "\r\n    optimizer.zero_grad()"
    assert finding.span.start_line == 4
