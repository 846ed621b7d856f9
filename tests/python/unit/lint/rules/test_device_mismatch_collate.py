"""TD014 through a ``collate_fn``: a detection dataset's ``collate_fn`` that stacks the images
and keeps the boxes in lists leaves the batch on the CPU, so images used as they come still
meet the moved model; a ``collate_fn`` that moves the batch (or one we cannot read) keeps the
rule quiet. The dataset may live in a ``datasets.py`` beside the script: that file, not the
installed library of the same name, is what ``from datasets import ...`` imports there."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import List, Tuple

from support.lint import hits
from torchdoctor.lint import lint_source
from torchdoctor.lint import project as P

DATASET = """
import torch
from torch.utils.data import Dataset


class BoxesDataset(Dataset):
    def __init__(self, items):
        self.items = items

    def __getitem__(self, i):
        return self.items[i]

    def __len__(self):
        return len(self.items)

    def collate_fn(self, batch):
        images = torch.stack([b[0] for b in batch])
        boxes = [b[1]{move} for b in batch]
        return images, boxes
"""

TRAIN = """
import torch
from torch import nn

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


def train(loader, model, optimizer):
    model.train()
    for images, boxes in loader:
        scores = model(images)
        loss = scores.sum() + sum(b.sum() for b in boxes)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main(items):
    model = nn.Conv2d(3, 4, 3).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    data = BoxesDataset(items)
    loader = torch.utils.data.DataLoader(data, batch_size=8, shuffle=True, collate_fn=data.collate_fn)
    for epoch in range(3):
        train(loader, model, optimizer)
"""


def test_a_collate_fn_that_only_stacks_leaves_the_batch_on_the_cpu():
    assert hits(DATASET.format(move="") + TRAIN, "TD014") == [("TD014", 29)]


def test_a_collate_fn_that_moves_the_batch_keeps_the_rule_quiet():
    assert hits(DATASET.format(move=".to('cuda')") + TRAIN, "TD014") == []


def test_a_collate_fn_that_cannot_be_read_keeps_the_rule_quiet():
    unread = TRAIN.replace("collate_fn=data.collate_fn", "collate_fn=make_collate(device)")
    assert hits(DATASET.format(move="") + unread, "TD014") == []


def td014_in(root: Path, script: str) -> List[Tuple[str, int]]:
    saved, P.PROJECT = P.PROJECT, P.ProjectIndex()
    try:
        result = lint_source(script, str(root / "train.py"))
    finally:
        P.PROJECT = saved
    assert result.internal_errors == []
    return [(f.rule_id, f.line) for f in result.all if f.rule_id == "TD014"]


def test_a_datasets_file_beside_the_script_is_the_project_s(tmp_path):
    (tmp_path / "datasets.py").write_text(textwrap.dedent(DATASET.format(move="")), encoding="utf-8")
    script = "from datasets import BoxesDataset\n" + textwrap.dedent(TRAIN)
    (tmp_path / "train.py").write_text(script, encoding="utf-8")
    assert td014_in(tmp_path, script) == [("TD014", 12)]
