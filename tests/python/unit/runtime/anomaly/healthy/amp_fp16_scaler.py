"""Healthy: float16 autocast with a GradScaler whose initial scale (2**24) is far too large.

The first steps overflow: the scaler finds Inf in the scaled gradients, skips the optimizer step
and halves its scale, several times in a row, until the scaled gradients fit in float16. Later a
growth interval of 25 doubles the scale now and then, and the next step may overflow again and
back off. The scaled gradients (the loss times about 1e4-1e7) are far above the watch's
threshold; the gradients the optimizer applies (after unscaling) are small. Nothing here is wrong.
"""

import torch
from torch import nn

torch.manual_seed(0)
features, classes = 32, 5
model = nn.Sequential(nn.Linear(features, 128), nn.GELU(), nn.Linear(128, 128), nn.GELU(), nn.Linear(128, classes))
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
scaler = torch.amp.GradScaler("cpu", init_scale=2.0**24, growth_interval=25)
centres = torch.randn(classes, features) * 2

skipped = 0
for _ in range(120):
    labels = torch.randint(0, classes, (64,))
    inputs = centres[labels] + torch.randn(64, features)
    optimizer.zero_grad()
    with torch.autocast("cpu", dtype=torch.float16):
        loss = nn.functional.cross_entropy(model(inputs), labels)
    before = scaler.get_scale()
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    skipped += scaler.get_scale() < before
print(f"final loss {loss.item():.4f}, skipped {skipped} steps, scale {scaler.get_scale():g}")
assert skipped >= 3, "the large initial scale should have backed off several times"
