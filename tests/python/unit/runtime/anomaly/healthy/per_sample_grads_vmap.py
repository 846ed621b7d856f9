"""Healthy: DP-SGD-style per-sample gradients with ``torch.func`` (2026-12-06).

``vmap(grad(...))`` over ``functional_call(model, ...)``: the model's layers run on batched
(wrapped) tensors whose values cannot be read inside ``vmap``. Each sample's gradient is clipped
to norm 1, the mean gets a little noise and is written to ``.grad`` by hand before the step; every
few steps an ordinary forward and ``backward()`` trains the same model. The watch used to print an
internal error here (its check called ``.item()`` inside ``vmap``).
"""

import torch
from torch import nn
from torch.func import functional_call, grad, vmap

torch.manual_seed(0)
model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 3))
optimizer = torch.optim.SGD(model.parameters(), lr=0.2)
teacher = torch.randn(10, 3)


def sample_loss(params, x, y):
    logits = functional_call(model, params, (x.unsqueeze(0),))
    return nn.functional.cross_entropy(logits, y.unsqueeze(0))


per_sample = vmap(grad(sample_loss), in_dims=(None, 0, 0))
for step in range(40):
    x = torch.randn(16, 10)
    y = (x @ teacher).argmax(1)
    params = {name: p.detach() for name, p in model.named_parameters()}
    grads = per_sample(params, x, y)
    norms = torch.sqrt(sum(g.flatten(1).pow(2).sum(1) for g in grads.values()))
    scale = (1.0 / (norms + 1e-6)).clamp(max=1.0)
    for name, p in model.named_parameters():
        g = grads[name] * scale.view(-1, *[1] * (grads[name].dim() - 1))
        p.grad = g.mean(0) + 1e-3 * torch.randn_like(p)
    optimizer.step()
    if step % 4 == 0:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
with torch.no_grad():
    accuracy = (model(x).argmax(1) == y).float().mean().item()
print(f"per-sample DP-SGD: accuracy {accuracy:.2f}")
