"""Rules stay linear on long module-level scripts whose every block repeats a shape that used
to make a rule rescan the module per block. Measured without a clock: the number of function
calls (Python and C, as ``sys.setprofile`` sees them) a rule's check makes, for 40 and for 160
blocks. A linear rule makes about 4x the calls for 4x the blocks; the rescans made 10-15x.
The counts are the same on every machine and under any load (bench/bench_lint.py times them)."""

from __future__ import annotations

import ast
import sys

import pytest

from torchdoctor.lint import all_rules
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.registry import Reporter
from torchdoctor.lint.source import SourceText

HEADER = """import torch
import torch.nn as nn
from torch.utils.data import DataLoader, DistributedSampler, RandomSampler, TensorDataset
model = nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
criterion = nn.CrossEntropyLoss()
distributed = False
ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))
"""

# TD007: ``loss`` and the accumulators rebound in every block, or named per block (``running_3``):
# each accumulation read the module's assignments, backward calls, steps and text again.
ACCUMULATES = """
total = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss
losses = []
for x, y in loader:
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    losses.append(loss)
    loss = loss.item()
running_{i} = 0
for epoch in range(2):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_{i} = running_{i} + loss
    print(running_{i})
"""

# TD017-TD020: a sampler and a training loader per block, under the same names or numbered:
# each loader walked the module for its reads, each sampler scanned every call and loop.
SAMPLERS = """
train_sampler = DistributedSampler(ds) if distributed else None
train_loader = DataLoader(ds, batch_size=8, sampler=train_sampler)
for epoch in range(2):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
sampler_{i} = DistributedSampler(ds)
train_loader_{i} = DataLoader(ds, batch_size=8, sampler=sampler_{i}, shuffle=True)
for epoch in range(2):
    for x, y in train_loader_{i}:
        loss = criterion(model(x), y)
        loss.backward()
train_sampler = None
if distributed:
    train_sampler = DistributedSampler(ds)
train_loader = DataLoader(ds, batch_size=8, sampler=train_sampler)
for epoch in range(2):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
"""


def calls_made(rule_id: str, blocks: int, block: str) -> int:
    """The function calls ``rule_id``'s check makes on a script of ``blocks`` blocks, after every
    rule before it has run (as in a lint: an analysis they share is counted where it is built)."""
    text = HEADER + "".join(block.format(i=i) for i in range(blocks))
    ctx = LintContext(ast.parse(text), SourceText(text), "script.py")
    count = 0

    def counter(frame, event, arg):
        nonlocal count
        count += 1

    try:
        for rule in all_rules():
            if rule.id == rule_id:
                sys.setprofile(counter)
                try:
                    rule.check(ctx, Reporter(rule, ctx))
                finally:
                    sys.setprofile(None)
                return count
            rule.check(ctx, Reporter(rule, ctx))
    finally:
        ctx.release()
    raise AssertionError(f"no rule {rule_id}")


@pytest.mark.parametrize(
    ("rule_id", "block"),
    [
        ("TD007", ACCUMULATES),
        ("TD013", ACCUMULATES),
        ("TD017", SAMPLERS),
        ("TD018", SAMPLERS),
        ("TD019", SAMPLERS),
        ("TD020", SAMPLERS),
    ],
)
def test_a_rule_makes_linearly_many_calls_on_a_long_script(rule_id, block):
    low, high = calls_made(rule_id, 40, block), calls_made(rule_id, 160, block)
    assert high < 5 * low, f"{rule_id}: 4x the blocks made {high / low:.1f}x the calls (linear: ~4x)"
