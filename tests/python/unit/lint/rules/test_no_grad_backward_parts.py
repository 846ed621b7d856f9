"""TD013 when the optimizer steps parts of the model that runs whole under ``no_grad``
(2026-12-07, a fetched graph example whose ``Adam`` takes one parameter group per layer:
``dict(params=model.conv1.parameters(), weight_decay=5e-4)``). A frozen part under ``no_grad``
with the stepped part run with gradients is still fine."""

from __future__ import annotations

from support.lint import hits

GROUPS = """
import torch
import torch.nn.functional as F


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Linear(8, 16)
        self.conv2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return self.conv2(F.relu(self.conv1(x)))


model = Net()
optimizer = torch.optim.Adam([
    dict(params=model.conv1.parameters(), weight_decay=5e-4),
    dict(params=model.conv2.parameters(), weight_decay=0),
], lr=0.01)
x, y = torch.randn(32, 8), torch.randint(0, 4, (32,))


def train():
    model.train()
    optimizer.zero_grad()
{forward}
    loss = F.cross_entropy(out, y)
    loss.backward()
    optimizer.step()
"""


def td013(forward: str):
    return [rule for rule, _ in hits(GROUPS.format(forward=forward)) if rule == "TD013"]


def test_a_model_run_whole_under_no_grad_starves_the_parts_the_optimizer_steps():
    assert td013("    with torch.no_grad():\n        out = model(x)") == ["TD013"]
    assert td013("    out = model(x)") == []


def test_a_frozen_part_under_no_grad_beside_the_stepped_part_is_fine():
    frozen = "    with torch.no_grad():\n        h = F.relu(model.conv1(x))\n    out = model.conv2(h)"
    text = GROUPS.format(forward=frozen).replace("dict(params=model.conv1.parameters(), weight_decay=5e-4),\n    ", "")
    assert [rule for rule, _ in hits(text) if rule == "TD013"] == []


PEFT = """
import torch
from peft import get_peft_model
from transformers import AutoModelForSeq2SeqLM

model = get_peft_model(AutoModelForSeq2SeqLM.from_pretrained("tiny"), config)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for epoch in range(3):
    model.train()
    for batch in loader:
{forward}
        loss = outputs.loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
"""


def test_a_model_the_optimizer_steps_is_a_model_however_it_was_built():
    # ``get_peft_model(...)`` is no class the linter knows, but the optimizer steps its parameters
    under = "        with torch.no_grad():\n            outputs = model(**batch)"
    assert [rule for rule, _ in hits(PEFT.format(forward=under)) if rule == "TD013"] == ["TD013"]
    assert [rule for rule, _ in hits(PEFT.format(forward="        outputs = model(**batch)")) if rule == "TD013"] == []
    # one branch of a siamese pair under no_grad, the other with gradients: a stop-gradient, by design
    pair = "        a = model(**batch)\n        with torch.no_grad():\n            b = model(**batch)\n        outputs = a + b"
    assert [rule for rule, _ in hits(PEFT.format(forward=pair)) if rule == "TD013"] == []
