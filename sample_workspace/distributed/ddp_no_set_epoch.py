"""A shuffling ``DistributedSampler`` whose ``set_epoch`` is never called.

    torchdoctor run --nproc-per-node 2 distributed/ddp_no_set_epoch.py

The sampler seeds its shuffle with ``seed + epoch``; without ``set_epoch(epoch)`` the epoch
stays 0, so every epoch visits the samples in exactly the same order. Torch Doctor notes each
time the sampler is iterated and says so (`sampler_without_set_epoch`): exit status 1.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(128, 8), torch.randn(128, 1))
    sampler = DistributedSampler(data, shuffle=True)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(3):  # the bug: no sampler.set_epoch(epoch) here
        for x, y in loader:
            optimizer.zero_grad()
            nn.functional.mse_loss(model(x), y).backward()
            optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
