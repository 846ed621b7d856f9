"""TD007 through timm's ``AverageMeter`` (lint/rules/loss_meters.py): its ``update(val, n=1)``
sums what it gets (``self.sum += val * n``), so a training loop that feeds it the loss tensor
instead of ``loss.item()`` keeps every batch's graph, whether the class comes by name or through
``from timm.utils import *`` (timm's training script and the projects that copy it). Fed a
number it is quiet, and an ``AverageMeter`` of unknown origin is not guessed at."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
{imports}


def train_one_epoch(net, loader, loss_fn, opt, distributed):
    losses_m = AverageMeter()
    net.train()
    for images, labels in loader:
        images, labels = images.cuda(), labels.cuda()
        loss = loss_fn(net(images), labels)
        if not distributed:
            losses_m.update({fed}, images.size(0))
        opt.zero_grad()
        loss.backward()
        opt.step()
    return losses_m.avg
"""


def found(imports: str, fed: str):
    return [rule for rule, _ in hits(SCRIPT.format(imports=imports, fed=fed)) if rule == "TD007"]


def test_the_loss_tensor_fed_to_timms_meter_through_a_star_import_is_reported():
    assert found("from timm.utils import *", "loss") == ["TD007"]


def test_the_loss_tensor_fed_to_timms_meter_imported_by_name_is_reported():
    assert found("from timm.utils import AverageMeter", "loss") == ["TD007"]


def test_a_number_fed_to_timms_meter_is_quiet():
    assert found("from timm.utils import *", "loss.item()") == []


def test_a_meter_of_unknown_origin_is_not_guessed_at():
    assert found("from helpers import *", "loss") == []
