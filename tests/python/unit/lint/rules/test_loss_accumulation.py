"""TD007: loss tensors accumulated across iterations."""

import pytest

from support.lint import code, findings, fixed, hits

BASE = """
import torch.nn as nn
crit = nn.CrossEntropyLoss()
total = 0.0
for x, y in loader:
    loss = crit(model(x), y)
    loss.backward()
    {line}
"""


@pytest.mark.parametrize(
    "line", ["total += loss", "total = total + loss", "total += loss * x.size(0)", "total += crit(model(x), y)"]
)
def test_tensor_accumulation_is_reported(line):
    assert hits(BASE.format(line=line)) == [("TD007", 7)]


@pytest.mark.parametrize(
    "line",
    [
        "total += loss.item()",
        "total += loss.detach()",
        "total += float(loss)",
        "total += loss.item() * x.size(0)",
        "total += x.sum()",
    ],
)
def test_number_accumulation_is_fine(line):
    assert hits(BASE.format(line=line)) == []


def test_list_of_losses_is_reported_with_item_fix():
    text = BASE.replace("total = 0.0", "losses = []").format(line="losses.append(loss)")
    assert hits(text) == [("TD007", 7)]
    assert fixed(text, "TD007").splitlines()[6].strip() == "losses.append(loss.item())"


def test_fix_uses_detach_when_the_total_is_used_as_a_tensor():
    text = BASE.format(line="total += loss") + "print(total.item())\n"
    assert fixed(text, "TD007").splitlines()[6].strip() == "total += loss.detach()"


def test_summing_losses_for_one_backward_is_fine():
    text = code("""
        import torch.nn.functional as F
        for x, y in loader:
            total = 0
            for head in heads:
                total += F.cross_entropy(head(x), y)
            total.backward()
    """)
    assert hits(text) == []


def test_accumulator_reset_inside_the_loop_is_fine():
    text = code("""
        import torch.nn.functional as F
        for x, y in loader:
            running = 0
            running += F.mse_loss(model(x), y)
            log(running)
    """)
    assert hits(text) == []


def test_accumulating_under_no_grad_is_fine():
    text = code("""
        import torch
        import torch.nn.functional as F
        total = 0
        with torch.no_grad():
            for x, y in val_loader:
                total += F.mse_loss(model(x), y)
    """)
    assert hits(text, "TD007") == []


def test_message_names_both_variables():
    (finding,) = findings(BASE.format(line="total += loss"))
    assert "`total`" in finding.message and "`loss`" in finding.message


# -- precision and recall on real-code shapes (issue 13) -------------------------------------


def test_loss_terms_summed_over_layers_then_backpropagated_are_fine():
    # the style-transfer shape: a sum over feature maps inside one step, then one backward
    text = code("""
        import torch
        mse = torch.nn.MSELoss()
        for images, _ in loader:
            opt.zero_grad()
            feats = extractor(net(images))
            content = mse(feats[1], target_feats[1])
            style = 0.0
            for f, g in zip(feats, target_grams):
                style += mse(gram(f), g)
            style *= style_weight
            total = content + style
            total.backward()
            opt.step()
    """)
    assert hits(text, "TD007") == []


def test_losses_collected_then_stacked_and_backpropagated_are_fine():
    # the actor-critic shape: one loss per time step, stacked after the episode
    text = code("""
        import torch
        import torch.nn.functional as F
        def finish_episode(saved, returns):
            actor_terms, critic_terms = [], []
            for (log_prob, value), ret in zip(saved, returns):
                actor_terms.append(-log_prob * (ret - value.item()))
                critic_terms.append(F.smooth_l1_loss(value, torch.tensor([ret])))
            optimizer.zero_grad()
            loss = torch.stack(actor_terms).sum() + torch.stack(critic_terms).sum()
            loss.backward()
            optimizer.step()
    """)
    assert hits(text, "TD007") == []


def test_an_accumulator_reset_only_when_logging_still_piles_up_graphs():
    # the word-language-model shape: reset every log_interval batches
    text = code("""
        import torch.nn as nn
        criterion = nn.NLLLoss()
        def train_epoch(model, batches, optimizer, log_interval=200):
            total_loss = 0.0
            for i, (data, targets) in enumerate(batches):
                optimizer.zero_grad()
                output = model(data)
                loss = criterion(output, targets)
                loss.backward()
                optimizer.step()
                total_loss += loss
                if i % log_interval == 0 and i > 0:
                    print(total_loss / log_interval)
                    total_loss = 0
    """)
    assert hits(text, "TD007") == [("TD007", 11)]


def test_losses_appended_with_amp_scaled_backward():
    text = code("""
        import torch
        losses = []
        for x, y in loader:
            optimizer.zero_grad()
            with torch.autocast("cuda"):
                loss = compute_loss(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            losses.append(loss)
    """)
    assert hits(text, "TD007") == [("TD007", 10)]
    assert fixed(text, "TD007").splitlines()[9].strip() == "losses.append(loss.item())"


def test_accelerator_backward_marks_the_loss():
    text = code("""
        history = []
        for batch in loader:
            loss = model(**batch).loss
            accelerator.backward(loss)
            optimizer.step()
            optimizer.zero_grad()
            history.append(loss)
    """)
    assert hits(text, "TD007") == [("TD007", 7)]


def test_self_attributes_as_accumulator_and_loss():
    text = code("""
        class Trainer:
            def __init__(self):
                self.losses = []
            def fit(self, loader):
                for x, y in loader:
                    self.opt.zero_grad()
                    self.loss = self.criterion(self.net(x), y)
                    self.loss.backward()
                    self.opt.step()
                    self.losses.append(self.loss)
    """)
    assert hits(text, "TD007") == [("TD007", 10)]
    assert fixed(text, "TD007").splitlines()[9].strip() == "self.losses.append(self.loss.item())"


def test_self_attribute_reset_every_iteration_is_fine():
    text = code("""
        class Trainer:
            def fit(self, loader):
                for x, y in loader:
                    self.terms = []
                    loss = self.criterion(self.net(x), y)
                    loss.backward()
                    self.terms.append(loss)
    """)
    assert hits(text, "TD007") == []


def test_micro_batches_summed_within_one_optimizer_step_are_fine():
    # the learning-rate-finder shape: accumulate over micro-batches, then one step
    text = code("""
        def train_batch(self, batches, steps):
            total = None
            self.optimizer.zero_grad()
            for _ in range(steps):
                x, y = next(batches)
                loss = self.criterion(self.model(x), y) / steps
                loss.backward()
                if total is None:
                    total = loss
                else:
                    total += loss
            self.optimizer.step()
            return total.item()
    """)
    assert hits(text, "TD007") == []


def test_a_weighted_loss_logged_without_item_is_reported():
    text = code("""
        import torch
        mse = torch.nn.MSELoss()
        agg_content = 0.0
        for x, _ in loader:
            opt.zero_grad()
            content = weight * mse(net(x), x)
            content.backward()
            opt.step()
            agg_content += content
    """)
    assert hits(text, "TD007") == [("TD007", 9)]


# A style-transfer loop: the style term starts as a number, gains one loss per feature layer,
# then is weighted in place, and its running total is logged.
STYLE_TERMS = """
    import torch
    mse = torch.nn.MSELoss()
    running_style = 0.0
    for images, _ in loader:
        opt.zero_grad()
        feats_out, feats_ref = extractor(net(images)), extractor(images)
        style = 0.0
        for a, b in zip(feats_out, targets):
            style += mse(gram(a), b)
        style *= style_weight
        total = mse(feats_out[0], feats_ref[0]) + style
        total.backward()
        opt.step()
        running_style += style.item()
"""


def test_a_loss_built_by_augmented_assignments_logged_without_item_is_reported():
    text = code(STYLE_TERMS.replace("running_style += style.item()", "running_style += style"))
    assert hits(text, "TD007") == [("TD007", 14)]


def test_a_loss_built_by_augmented_assignments_logged_with_item_is_fine():
    assert hits(code(STYLE_TERMS), "TD007") == []


def test_a_number_scaled_in_place_is_not_a_loss():
    """``+=`` of a number and ``*=`` keep a float a float: nothing to report."""
    text = code(
        STYLE_TERMS.replace("style += mse(gram(a), b)", "style += mse(gram(a), b).item()")
        .replace("total = mse(feats_out[0], feats_ref[0]) + style", "total = mse(feats_out[0], feats_ref[0])")
        .replace("running_style += style.item()", "running_style += style")
    )
    assert hits(text, "TD007") == []


FEATURE_LOSS = """
import torch.nn.functional as F

def feature_loss(real_feats, fake_feats):
    summed = F.l1_loss(real_feats[0], fake_feats[0])
    for k in range(1, len(real_feats)):
        summed += F.l1_loss(real_feats[k], fake_feats[k])
    summed /= len(real_feats)
    return summed

for batch in loader:
    loss = F.mse_loss(decoder(batch), batch)
    extra = feature_loss(enc(batch), enc(decoder(batch)))
    loss += extra
    loss.backward()
    opt.step()
    opt.zero_grad()
"""


def test_loss_terms_summed_in_a_helper_whose_result_is_backpropagated_are_fine():
    # One step's loss, built from per-level terms and freed after that step's backward.
    assert hits(FEATURE_LOSS, "TD007") == []


def test_a_returned_sum_that_no_caller_backpropagates_is_still_reported():
    logged = FEATURE_LOSS.replace("    loss += extra\n", "    history.append(extra.item())\n")
    assert hits(logged, "TD007") == [("TD007", 6)]
