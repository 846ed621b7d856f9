"""Model unit tests (pytest): forward shapes and a one-step overfit check, not training loops."""

import torch
import torch.nn as nn


def make_model():
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.5), nn.Linear(8, 2))


def test_forward_shape():
    model = make_model()
    out = model(torch.randn(3, 4))
    assert out.shape == (3, 2)


def test_loss_decreases_on_one_batch():
    torch.manual_seed(0)
    model = make_model()
    x, y = torch.randn(16, 4), torch.randint(0, 2, (16,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(50):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < losses[0]


def test_eval_is_deterministic():
    model = make_model().eval()
    x = torch.randn(5, 4)
    with torch.no_grad():
        for _ in range(3):
            assert torch.equal(model(x), model(x))
