"""A NaN on one rank only: the batch of rank 1 at step 5 carries a NaN.

    torchdoctor run --nproc-per-node 2 distributed/ddp_nan_on_rank1.py

Without Torch Doctor, DDP all-reduces the NaN gradient into every replica and both ranks
train on NaN weights from then on. With it, rank 1 stops at step 5 with a report that names
the layer, rank 0 says it stopped because rank 1 went wrong first, and the last line names
rank 1: exit status 1.
"""

import torch
import torch.distributed as dist
from torch import nn


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(20):
        x = torch.randn(4, 8)
        if rank == 1 and step == 5:
            x[0, 0] = float("nan")  # one corrupt sample in one rank's shard
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
