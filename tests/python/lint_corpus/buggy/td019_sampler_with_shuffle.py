# expect: TD019@24 TD019@26
"""A script moved to DDP: the DistributedSampler was added, the loader's shuffle=True was kept
(DataLoader raises ValueError), once only on the distributed path and once always."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    distributed = "WORLD_SIZE" in os.environ
    if distributed:
        dist.init_process_group("gloo")
    train_set = TensorDataset(torch.randn(256, 10), torch.randint(0, 2, (256,)))
    extra_set = TensorDataset(torch.randn(64, 10), torch.randint(0, 2, (64,)))
    if distributed:
        sampler = DistributedSampler(train_set)
    else:
        sampler = None
    loader = DataLoader(train_set, batch_size=16, shuffle=True, sampler=sampler)
    extra_sampler = DistributedSampler(extra_set, drop_last=True)
    extra = DataLoader(extra_set, batch_size=16, shuffle=True, sampler=extra_sampler)
    model = nn.Linear(10, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
    for x, y in extra:
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()


if __name__ == "__main__":
    main()
