"""Rules stay linear on a long module-level script (an exported notebook) whose every block has
the bug: a rule's own CPU time (parse and index excluded) for 4x the blocks must be far from the
16x of a rule that rescans the whole module for each finding."""

from __future__ import annotations

import ast
import time

from torchdoctor.lint import get_rule
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.registry import Reporter
from torchdoctor.lint.source import SourceText

HEADER = """import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset
"""

# ``total += loss`` keeps every batch's graph (TD007), in every block, under the same name.
ACCUMULATES = """
model{i} = nn.Linear(4, 2)
crit{i} = nn.CrossEntropyLoss()
optimizer{i} = torch.optim.SGD(model{i}.parameters(), lr=0.01)
total = 0
for x, y in [(torch.randn(8, 4), torch.randint(0, 2, (8,)))]:
    optimizer{i}.zero_grad()
    loss = crit{i}(model{i}(x), y)
    loss.backward()
    optimizer{i}.step()
    total += loss
"""


def rule_cpu_time(rule_id: str, block: str, blocks: int) -> float:
    """Best of three CPU times of ``rule_id`` alone on ``blocks`` copies of ``block``; each copy
    must give one finding."""
    text = HEADER + "".join(block.format(i=i) for i in range(blocks))
    rule = get_rule(rule_id)
    assert rule is not None
    best = float("inf")
    for _ in range(3):
        ctx = LintContext(ast.parse(text), SourceText(text))
        reporter = Reporter(rule, ctx)
        start = time.process_time()
        rule.check(ctx, reporter)
        best = min(best, time.process_time() - start)
        assert len(reporter.findings) == blocks, reporter.findings[:3]
        ctx.release()
    return best


def assert_linear(rule_id: str, block: str, small: int = 100) -> None:
    seen = []
    for _trial in range(3):  # a load spike can break one trial; a quadratic rescan fails all three
        low, high = rule_cpu_time(rule_id, block, small), rule_cpu_time(rule_id, block, 4 * small)
        seen.append((low, high))
        if high < 9 * low:
            return
    raise AssertionError(f"{rule_id}: 4x the blocks cost {[round(h / lo, 1) for lo, h in seen]}x (linear ~4x)")


def test_loss_accumulation_is_linear_in_the_length_of_a_script():
    """Each ``total += loss`` read every assignment and backward call of the module again
    (5.4 s at 4k lines, 4x the blocks cost ~15x)."""
    assert_linear("TD007", ACCUMULATES)
