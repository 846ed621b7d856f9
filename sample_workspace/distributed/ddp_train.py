"""A healthy DistributedDataParallel job on the CPU (gloo): run it with torchrun.

    torchdoctor run --nproc-per-node 2 distributed/ddp_train.py

Each rank reads its own shard (``DistributedSampler``, ``set_epoch`` every epoch), the
replicas stay in sync, and Torch Doctor stays silent: exit status 0.

In VS Code: F9 on the marked line, then run "Debug with torchrun (2 processes)": the Call Stack
shows `rank 0` and `rank 1`, each paused there; "Torch Doctor: Continue All Ranks" resumes both.
"""

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset


def main() -> None:
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(256, 8), torch.randn(256, 1))
    sampler = DistributedSampler(data, shuffle=True, seed=0)
    loader = DataLoader(data, batch_size=16, sampler=sampler)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 1)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(2):
        sampler.set_epoch(epoch)
        for x, y in loader:
            optimizer.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()  # Debug with torchrun: a breakpoint here stops every rank
    print(f"rank {dist.get_rank()}: final loss {loss.item():.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
