"""Healthy: float16 autocast, GradScaler at its default scale, ``unscale_`` then clipping.

The usual recipe for clipping under AMP: unscale the gradients in place, clip them, then let the
scaler step (it knows they are unscaled already). A convolutional net, so that autocast runs
both convolutions and matmuls in float16.
"""

import torch
from torch import nn

torch.manual_seed(1)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1),
    nn.ReLU(),
    nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1),
    nn.ReLU(),
    nn.AdaptiveAvgPool2d(1),
    nn.Flatten(),
    nn.Linear(32, 4),
)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler("cpu")
patterns = torch.randn(4, 3, 16, 16)

for _ in range(60):
    labels = torch.randint(0, 4, (32,))
    images = patterns[labels] + 0.5 * torch.randn(32, 3, 16, 16)
    optimizer.zero_grad(set_to_none=True)
    with torch.autocast(device_type="cpu", dtype=torch.float16):
        logits = model(images)
        loss = nn.functional.cross_entropy(logits.float(), labels)
    scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    scaler.step(optimizer)
    scaler.update()
print(f"final loss {loss.item():.4f}")
