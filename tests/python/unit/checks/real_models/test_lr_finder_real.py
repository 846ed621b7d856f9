"""The LR finder on real-model shapes (issue 14): the steepest-descent suggestion is never the start
of the sweep, the state comes back exactly on a batch-norm GAN discriminator."""

from __future__ import annotations

import math

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


def _reference_steepest(sweep, smooth_f: float = 0.05, skip_start: int = 10, skip_end: int = 5) -> float:
    """torch_lr_finder's documented rule, in our words: an average of the raw losses with weight
    ``smooth_f`` on each new one (no bias correction), the first ``skip_start`` and last ``skip_end``
    points dropped, the lr of the most negative gradient (numpy's central differences, per point)."""
    smoothed: list = []
    for v in sweep.losses:
        smoothed.append(v if not smoothed else smooth_f * v + (1 - smooth_f) * smoothed[-1])
    lrs, s = sweep.lrs[skip_start:-skip_end], smoothed[skip_start:-skip_end]
    grad = [s[1] - s[0]] + [(s[i + 1] - s[i - 1]) / 2 for i in range(1, len(s) - 1)] + [s[-1] - s[-2]]
    return lrs[min(range(len(grad)), key=grad.__getitem__)]


def test_on_a_dcgan_generator_the_suggestion_is_where_the_raw_loss_falls_not_decades_later():
    torch.manual_seed(0)
    model = M.DCGANGenerator()
    z = torch.randn(8, 16, 1, 1, generator=torch.Generator().manual_seed(2))
    target = torch.rand(8, 3, 16, 16, generator=torch.Generator().manual_seed(3)) * 2 - 1
    optimizer = L.make_optimizer("adam", model.parameters())
    sweep = L.lr_find(model, optimizer, lambda: F.mse_loss(model(z), target), num_iter=100)
    steepest = L.suggestions(sweep)["steepest"]

    def raw_at(lr: float) -> float:
        return sweep.losses[min(range(len(sweep.lrs)), key=lambda i: abs(math.log10(sweep.lrs[i] / lr)))]

    # the raw loss falls by a tenth over the half decade from the suggestion (was 0.14: where it rises)
    assert raw_at(steepest * 10**0.5) < 0.9 * raw_at(steepest), steepest
    # torch_lr_finder's lighter average (0.95) lags less than our online one (0.98) but still lags:
    # ours is never later than its pick on the same sweep
    assert steepest <= _reference_steepest(sweep)
