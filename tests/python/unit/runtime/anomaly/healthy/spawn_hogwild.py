"""Healthy: hogwild training, two spawned processes updating one shared model, then a forked one."""

import os

import torch
import torch.multiprocessing as mp
from torch import nn


def train(rank, model):
    torch.manual_seed(rank)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for _ in range(5):
        x = torch.randn(16, 4)
        loss = nn.functional.mse_loss(model(x), x.sum(1, keepdim=True))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


if __name__ == "__main__":
    model = nn.Linear(4, 1)
    model.share_memory()
    mp.spawn(train, args=(model,), nprocs=2, join=True)
    pid = os.fork()
    if pid == 0:
        train(2, model)
        os._exit(0)
    os.waitpid(pid, 0)
    print("weights finite:", bool(torch.isfinite(model.weight).all()))
