"""TD007 on shapes from real projects: a loss function that sums one batch's terms and returns
them, and a loss read from a forward pass run under ``no_grad``."""

import pytest

from support.lint import code, hits

# -- a loss built over output heads and returned (PyTorch-YOLOv3's ``compute_loss``) ------

HEADS_LOSS = """
import torch
import torch.nn as nn

def multi_scale_loss(predictions, targets):
    bce = nn.BCEWithLogitsLoss()
    total = torch.zeros(1)
    for pred, tgt in zip(predictions, targets):
        total += bce(pred[..., 0], tgt)
    {tail}
"""


@pytest.mark.parametrize(
    "tail",
    [
        "return total",
        "total *= 0.5\n    return total",
        "return total * 0.5",
        "loss = total + 1e-3\n    return loss",
        "return {'loss': total}",
    ],
)
def test_loss_terms_summed_over_heads_and_returned_are_fine(tail):
    # backward() runs in the caller, in another file: `.item()` here would stop them training
    assert hits(HEADS_LOSS.format(tail=tail), "TD007") == []


def test_several_terms_combined_then_returned_with_their_parts_are_fine():
    text = code("""
        import torch
        import torch.nn as nn

        def compute_loss(predictions, targets):
            bce = nn.BCEWithLogitsLoss()
            mse = nn.MSELoss()
            lbox, lobj, lcls = torch.zeros(1), torch.zeros(1), torch.zeros(1)
            for i, p in enumerate(predictions):
                lbox += mse(p[..., :4], targets[i][..., :4])
                lobj += bce(p[..., 4], targets[i][..., 4])
                lcls += bce(p[..., 5:], targets[i][..., 5:])
            lbox *= 0.05
            loss = lbox + lobj + lcls
            return loss, torch.cat((lbox, lobj, lcls)).detach()
    """)
    assert hits(text, "TD007") == []


def test_a_caller_here_unpacking_and_backpropagating_the_result_keeps_it_quiet():
    text = code(
        HEADS_LOSS.format(tail="return total, total.detach()")
        + """
for x, y in loader:
    loss, parts = multi_scale_loss(model(x), y)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
"""
    )
    assert hits(text, "TD007") == []


def test_a_returned_sum_whose_callers_here_only_log_it_is_reported():
    text = code(
        HEADS_LOSS.format(tail="return total, total.detach()")
        + """
for x, y in loader:
    loss, parts = multi_scale_loss(model(x), y)
    print(loss.item())
"""
    )
    assert hits(text, "TD007") == [("TD007", 8)]


def test_an_epoch_total_returned_by_a_training_function_is_reported():
    # backward runs per batch inside the loop: what is returned is the whole epoch's sum
    text = code("""
        import torch.nn as nn
        criterion = nn.CrossEntropyLoss()

        def train_epoch(model, loader, optimizer):
            total_loss = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                loss = criterion(model(x), y)
                loss.backward()
                optimizer.step()
                total_loss += loss
            return total_loss / len(loader)
    """)
    assert hits(text, "TD007") == [("TD007", 11)]


def test_heads_summed_into_an_epoch_total_returned_by_a_training_function_are_reported():
    # the inner loop runs no backward, the batch loop around it does, and the total outlives both
    text = code("""
        import torch.nn.functional as F

        def train_epoch(model, heads, loader, optimizer):
            head_total = 0.0
            for x, y in loader:
                optimizer.zero_grad()
                feats = model(x)
                loss = F.cross_entropy(feats, y)
                loss.backward()
                optimizer.step()
                for head in heads:
                    head_total += F.cross_entropy(head(feats.detach()), y)
            return head_total
    """)
    assert hits(text, "TD007") == [("TD007", 12)]


@pytest.mark.parametrize(
    "tail", ["print(total / len(loader))", "return total.item() / len(loader)", "return total / len(loader)"]
)
def test_a_total_kept_for_display_in_a_function_is_reported(tail):
    # the last: an evaluation function with autograd on runs the model per batch; its total
    # spans batches even though nothing in the loop trains
    text = code(f"""
        import torch.nn as nn
        criterion = nn.MSELoss()

        def evaluate(model, loader):
            total = 0.0
            for x, y in loader:
                total += criterion(model(x), y)
            {tail}
    """)
    assert hits(text, "TD007") == [("TD007", 7)]


@pytest.mark.parametrize(
    "loop", ["for discriminator in discriminators:", "for discriminator in [self.d_small, self.d_large]:"]
)
def test_one_batch_through_each_of_several_networks_returned_is_fine(loop):
    # a multi-scale GAN's generator loss: the loop rebinds the network, it does not walk batches
    text = code(f"""
        import torch
        import torch.nn as nn
        class GeneratorLoss(nn.Module):
            def forward(self, fake, discriminators):
                crit = nn.MSELoss()
                total = 0.0
                {loop}
                    pred = discriminator(fake)
                    total += crit(pred, torch.ones_like(pred))
                return total
    """)
    assert hits(text, "TD007") == []


# -- a loss read from a forward pass run under no_grad (accelerate's examples) ------------

EVAL_AFTER_NO_GRAD = """
import torch

def run(model, optimizer, train_loader, eval_loader):
    model.train()
    for batch in train_loader:
        loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    losses = []
    for batch in eval_loader:
        with {mode}:
            outputs = model(**batch)
        {read}
        losses.append(loss)
    return torch.stack(losses).mean().item()
"""


@pytest.mark.parametrize("mode", ["torch.no_grad()", "torch.inference_mode()"])
@pytest.mark.parametrize("read", ["loss = outputs.loss", "loss = outputs['loss']", "loss = outputs[0]"])
def test_a_loss_read_after_a_no_grad_forward_is_fine(mode, read):
    # `loss` is backpropagated in the training loop, but this one was made without a graph
    assert hits(EVAL_AFTER_NO_GRAD.format(mode=mode, read=read), "TD007") == []


def test_a_loss_computed_inside_the_block_and_appended_after_it_is_fine():
    text = EVAL_AFTER_NO_GRAD.format(mode="torch.no_grad()", read="pass").replace(
        "outputs = model(**batch)", "loss = model(**batch).loss"
    )
    assert hits(text, "TD007") == []


def test_a_loss_read_from_a_forward_outside_the_block_is_reported():
    text = EVAL_AFTER_NO_GRAD.format(
        mode="torch.no_grad()", read="outputs = model(**batch)\n        loss = outputs.loss"
    )
    assert hits(text, "TD007") == [("TD007", 17)]


def test_a_forward_under_no_grad_on_one_branch_only_is_reported():
    text = code("""
        import torch

        def run(model, train_loader, warmup):
            losses = []
            for batch in train_loader:
                if not warmup:
                    outputs = model(**batch)
                else:
                    with torch.no_grad():
                        outputs = model(**batch)
                loss = outputs.loss
                loss.backward()
                losses.append(loss)
            return sum(l.item() for l in losses)
    """)
    assert hits(text, "TD007") == [("TD007", 13)]
