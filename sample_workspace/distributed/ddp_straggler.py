"""A DistributedDataParallel job with a straggler: rank 1 sleeps 40 ms every step.

    torchrun --standalone --nproc-per-node 2 distributed/ddp_straggler.py

Rank 1 stands for a rank on a slower GPU, a busier host or a slower data shard. Because DDP's
gradient all-reduce needs every rank, rank 0 does its own work, then waits for rank 1 at the end
of each `backward()`: both ranks' steps take as long, and rank 0's step-time chart shows the wait
as a tall "backward".

In VS Code, open this file and run "Debug current file with torchrun (2 processes)". The
"Torch Doctor: Training" view opens with the first step and draws rank 0; its toolbar has a
"Rank" picker (rank 0, rank 1). Above the charts: "Slowest: rank 1 (in ~100% of N steps), +X%
over the other ranks' median ...", and the "Step time across ranks" chart draws the slowest
rank's own time (rank 1's, sleep included) above the median rank's. Pick rank 1: its charts,
verdicts and Export CSV are rank 1's, and its step time shows the sleep as "other".
"""

import os
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

SLEEP_S = 0.04  # rank 1's extra work every step
EPOCHS = 6


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=8, sampler=sampler)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(EPOCHS):
        sampler.set_epoch(epoch)
        for x, y in loader:
            if rank == 1:
                time.sleep(SLEEP_S)  # the straggler: the other ranks wait for it in backward
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
    print(f"rank {rank} (pid {os.getpid()}): final loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
