"""Every rank reads the whole dataset: the DataLoader has no ``DistributedSampler``.

    torchdoctor run --nproc-per-node 2 distributed/ddp_no_sampler.py

It trains, and the loss falls, but both ranks see the same batches in the same order (same
seed, ``shuffle=True``): two processes do the work of one. Torch Doctor compares a digest of
each rank's first batches and says so (`same_batches_on_every_rank`): exit status 1.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(128, 8), torch.randn(128, 1))
    loader = DataLoader(data, batch_size=16, shuffle=True)  # the bug: no DistributedSampler
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for x, y in loader:
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
