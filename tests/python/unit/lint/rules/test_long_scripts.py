"""Rules stay linear on a long module-level script (an exported notebook) whose every block has
the bug: a rule's own CPU time (parse and index excluded) for 4x the blocks must be far from the
16x of a rule that rescans the whole module for each finding."""

from __future__ import annotations

from support.lint import assert_linear

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


def test_loss_accumulation_is_linear_in_the_length_of_a_script():
    """Each ``total += loss`` read every assignment and backward call of the module again
    (5.4 s at 4k lines, 4x the blocks cost ~15x)."""
    assert_linear("TD007", HEADER, ACCUMULATES)
