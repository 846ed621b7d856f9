# expect: TD003@13 TD003@18
"""Softmax written inline into the loss call (quick fix removes it), and a redundant
log_softmax into F.cross_entropy (information)."""

import torch
import torch.nn.functional as F

W = torch.randn(10, 3, requires_grad=True)
opt = torch.optim.SGD([W], lr=0.5)
for i in range(100):
    x, y = torch.randn(16, 10), torch.randint(0, 3, (16,))
    logits = x @ W
    loss = F.cross_entropy(F.softmax(logits, dim=1), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    log_probs = logits.log_softmax(dim=-1)
    monitor = F.cross_entropy(log_probs, y)
