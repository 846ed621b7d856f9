"""A GPT-style training loop: iteration-based, micro-batch gradient accumulation under
autocast with a GradScaler, a cosine learning-rate schedule set by hand, periodic evaluation
by a helper that restores train mode, and checkpoints that are loaded safely."""

import math
import os
from contextlib import nullcontext

import torch
import torch.nn as nn
from torch.nn import functional as F

device = "cuda" if torch.cuda.is_available() else "cpu"
dtype = torch.bfloat16 if device == "cuda" else torch.float32
ctx = nullcontext() if device == "cpu" else torch.autocast(device_type="cuda", dtype=dtype)
block_size, batch_size, vocab_size = 64, 8, 256
grad_accum, max_iters, eval_interval, eval_iters = 4, 200, 50, 10
learning_rate, min_lr, warmup_iters = 6e-4, 6e-5, 20
data = torch.randint(0, vocab_size, (10_000,))
train_data, val_data = data[:9000], data[9000:]


class TinyGPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, 128)
        self.pos = nn.Embedding(block_size, 128)
        layer = nn.TransformerEncoderLayer(128, 4, 512, dropout=0.1, batch_first=True)
        self.blocks = nn.TransformerEncoder(layer, num_layers=2)
        self.head = nn.Linear(128, vocab_size)

    def forward(self, idx, targets=None):
        t = idx.size(1)
        mask = torch.triu(torch.full((t, t), float("-inf"), device=idx.device), diagonal=1)
        x = self.tok(idx) + self.pos(torch.arange(t, device=idx.device))
        logits = self.head(self.blocks(x, mask=mask))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


def get_batch(split):
    source = train_data if split == "train" else val_data
    ix = torch.randint(len(source) - block_size - 1, (batch_size,))
    x = torch.stack([source[i:i + block_size] for i in ix])
    y = torch.stack([source[i + 1:i + 1 + block_size] for i in ix])
    return x.to(device), y.to(device)


def get_lr(it):
    if it < warmup_iters:
        return learning_rate * (it + 1) / warmup_iters
    ratio = (it - warmup_iters) / max(1, max_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (learning_rate - min_lr)


@torch.no_grad()
def estimate_loss(model):
    out = {}
    model.eval()
    for split in ("train", "val"):
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            xb, yb = get_batch(split)
            with ctx:
                _, loss = model(xb, yb)
            losses[k] = loss.item()
        out[split] = losses.mean().item()
    model.train()
    return out


model = TinyGPT()
if os.path.exists("ckpt.pt"):
    model.load_state_dict(torch.load("ckpt.pt", map_location=device, weights_only=True)["model"])
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, betas=(0.9, 0.95), weight_decay=0.1)
scaler = torch.amp.GradScaler(enabled=(dtype == torch.float16))

X, Y = get_batch("train")
iter_num = 0
while True:
    lr = get_lr(iter_num)
    for group in optimizer.param_groups:
        group["lr"] = lr
    if iter_num % eval_interval == 0:
        losses = estimate_loss(model)
        print(f"step {iter_num}: train {losses['train']:.4f} val {losses['val']:.4f}")
    for micro_step in range(grad_accum):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / grad_accum
        X, Y = get_batch("train")
        scaler.scale(loss).backward()
    scaler.unscale_(optimizer)
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    iter_num += 1
    if iter_num > max_iters:
        break
