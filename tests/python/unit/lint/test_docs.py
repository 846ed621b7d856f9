"""docs/rules.md documents every rule, and its examples are true: each "Bad" block triggers
the rule, each "Good" block lints clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from torchdoctor.lint import all_rules, lint_source

DOCS = Path(__file__).resolve().parents[4] / "docs" / "rules.md"
TEXT = DOCS.read_text()


def section(rule_id: str) -> str:
    match = re.search(rf"^## {rule_id} .*?(?=^## |\Z)", TEXT, re.M | re.S)
    assert match, f"docs/rules.md has no section for {rule_id}"
    return match.group(0)


def block(text: str, label: str) -> str:
    match = re.search(rf"^{label}:\n\n```python\n(.*?)```", text, re.M | re.S)
    assert match, f"no {label} example"
    return match.group(1)


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_every_rule_has_a_section_with_its_anchor(rule):
    assert f"## {rule.id} {rule.name}\n" in TEXT
    assert f"](#{rule.anchor})" in TEXT  # linked from the summary table
    text = section(rule.id)
    for part in ("Bad:", "Good:", "Quick fix:", "Silence:", f"ignore[{rule.id}]"):
        assert part in text, f"{rule.id}: missing {part!r}"


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_bad_example_triggers_the_rule(rule):
    found = lint_source(block(section(rule.id), "Bad")).all
    assert rule.id in {f.rule_id for f in found}, [(f.rule_id, f.message) for f in found]


@pytest.mark.parametrize("rule", all_rules(), ids=lambda r: r.id)
def test_good_example_is_clean(rule):
    found = lint_source(block(section(rule.id), "Good")).all
    assert [(f.rule_id, f.message) for f in found] == []
