"""Healthy shapes from a sixth corpus of real projects: a character model whose dataset draws a
random window (no shuffle needed), a layer stored as ``self.softmax`` that is a log-softmax fed
to ``NLLLoss``, a warm-up wrapper whose ``step_and_update_lr()`` is the step, a running-average
meter fed numbers, a variadic coalesce, and a distillation teacher run under ``no_grad``."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

torch.manual_seed(0)
text = torch.randint(0, 64, (4096,))


def first_set(*values):
    for value in values:
        if value is not None:
            return value


class RandomWindows(Dataset):
    def __init__(self, data, window):
        self.data, self.window = data, window

    def __getitem__(self, index):
        start = torch.randint(0, self.data.size(0) - self.window - 1, (1,)).item()
        return self.data[start : start + self.window + 1]

    def __len__(self):
        return self.data.size(0) // self.window


class CharTagger(nn.Module):
    def __init__(self, vocab=64, width=32, dropout=None):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.drop = nn.Dropout(first_set(dropout, 0.1))
        self.out = nn.Linear(width, vocab)
        self.softmax = nn.LogSoftmax(dim=-1)

    def forward(self, idx):
        return self.softmax(self.out(self.drop(self.embed(idx))))


class Warmup:
    def __init__(self, inner, warmup):
        self.inner, self.warmup, self.count = inner, warmup, 0

    def zero_grad(self):
        self.inner.zero_grad()

    def step_and_update_lr(self):
        self.count += 1
        for group in self.inner.param_groups:
            group["lr"] = 1e-3 * min(1.0, self.count / self.warmup)
        self.inner.step()


class Mean:
    def __init__(self):
        self.total, self.count = 0.0, 0

    def update(self, value, n=1):
        self.total += value * n
        self.count += n


student, teacher = CharTagger(), CharTagger()
criterion = nn.NLLLoss()
optimizer = Warmup(torch.optim.Adam(student.parameters()), 100)
train_loader = DataLoader(RandomWindows(text, 16), batch_size=8)
meter = Mean()

student.train()
teacher.eval()
for epoch in range(2):
    for chunk in train_loader:
        optimizer.zero_grad()
        log_probs = student(chunk[:, :-1])
        loss = criterion(log_probs.flatten(0, 1), chunk[:, 1:].flatten())
        with torch.no_grad():
            soft = teacher(chunk[:, :-1]).exp()
        loss = loss + F.kl_div(log_probs, soft, reduction="batchmean")
        loss.backward()
        optimizer.step_and_update_lr()
        meter.update(loss.item(), chunk.size(0))
    print(epoch, meter.total / meter.count)
