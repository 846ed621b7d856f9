"""Replicas that drift apart: one rank edits its weights outside DDP.

    torchdoctor run --nproc-per-node 2 distributed/ddp_diverged.py

DDP averages the gradients, so every replica takes the same step; here rank 1 also adds a small
"noise" to its weights after each step (as a per-rank EMA or a weight perturbation written under
``if rank == ...`` would). The ranks now train different models and nothing crashes. Torch
Doctor compares each rank's parameter sums after steps 1, 2, 4 and 8 (`replicas_diverged`, naming
rank 1 and step 1): exit status 1.
"""

import torch
import torch.distributed as dist
from torch import nn


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(10):
        x, y = torch.randn(16, 8), torch.randn(16, 1)
        optimizer.zero_grad()
        nn.functional.mse_loss(model(x), y).backward()
        optimizer.step()
        if rank == 1:
            with torch.no_grad():  # the bug: an update only one replica makes
                model.module[0].weight.add_(1e-3 * torch.randn_like(model.module[0].weight))
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
