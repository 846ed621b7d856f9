"""TD010 and a distillation teacher (lint/rules/frozen_models.py): an epoch function that puts
the model in train mode and the teacher in eval mode, and runs the teacher only under
``torch.no_grad()``, trains the model as meant. A model put in eval mode before the loop and
run with gradients there is still reported."""

from __future__ import annotations

from support.lint import hits

EPOCH = """
import torch
import torch.nn.functional as F


def one_epoch(model, loader, optimizer, teacher_model, distill):
    model.train()
    if distill:
        {switched}.eval()
    for images, labels in loader:
        optimizer.zero_grad()
        logits = model(images)
        loss = F.cross_entropy(logits, labels)
        if distill:
{run}
            loss = loss + F.kl_div(logits.log_softmax(-1), soft.softmax(-1), reduction="batchmean")
        loss.backward()
        optimizer.step()
"""

WITHOUT_GRAD = """\
            with torch.no_grad():
                soft = teacher_model(images)"""

WITH_GRAD = """\
            soft = teacher_model(images)"""


def td010(switched: str, run: str):
    return hits(EPOCH.format(switched=switched, run=run), "TD010")


def test_a_teacher_run_only_under_no_grad_stays_in_eval_mode_on_purpose():
    assert td010("teacher_model", WITHOUT_GRAD) == []


def test_the_trained_model_put_in_eval_mode_before_the_loop_is_still_reported():
    assert td010("model", WITHOUT_GRAD) == [("TD010", 8)]


def test_a_teacher_run_with_gradients_is_not_taken_for_a_frozen_one():
    assert td010("teacher_model", WITH_GRAD) == [("TD010", 8)]
