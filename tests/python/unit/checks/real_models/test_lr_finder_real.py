"""The LR finder on real-model shapes (issue 14): the steepest-descent suggestion is never the start
of the sweep, the state comes back exactly on a batch-norm GAN discriminator."""

from __future__ import annotations

import real_models as M
import torch
import torch.nn.functional as F

from torchdoctor.checks import lr_finder as L


def _mnist():
    torch.manual_seed(0)
    ex = M.example_mnist()
    return ex["model"], ex["inputs"][0], ex["targets"]


def test_steepest_descent_on_the_mnist_net_is_past_the_start_of_the_sweep():
    model, x, y = _mnist()
    optimizer = L.make_optimizer("adam", model.parameters())
    sweep = L.lr_find(model, optimizer, lambda: F.nll_loss(model(x), y), num_iter=60)
    sug = L.suggestions(sweep)
    assert sug["steepest"] is not None and sug["minimum"] is not None
    skip = round(L.SKIP_START * 60)
    assert sug["steepest"] >= sweep.lrs[skip]  # never the 2nd point (1.2e-7 before issue 14)
    assert sug["steepest"] <= sug["minimum"]  # and before the minimum
    # the fall it names is real: the smoothed loss drops by >= 5% over the decade around it
    i = sweep.lrs.index(sug["steepest"])
    j = max(k for k, lr in enumerate(sweep.lrs) if lr <= sug["steepest"] * 10 and k < len(sweep.lrs))
    assert sweep.smoothed[j] < 0.95 * sweep.smoothed[max(i - 3, 0)]


def test_a_batch_norm_discriminator_gets_its_state_back():
    torch.manual_seed(0)
    ex = M.example_discriminator()
    model, x, y = ex["model"], ex["inputs"][0], ex["targets"]
    optimizer = L.make_optimizer("adam", model.parameters())
    before = {k: v.clone() for k, v in model.state_dict().items()}
    sweep = L.lr_find(model, optimizer, lambda: F.binary_cross_entropy(model(x), y), num_iter=40)
    assert len(sweep.lrs) >= 10
    assert all(torch.equal(v, before[k]) for k, v in model.state_dict().items())  # running stats too
