"""A DDP model with a layer the loss never uses: DDP raises at the second step, or hangs.

    torchdoctor run --nproc-per-node 2 distributed/ddp_unused_parameters.py
    torchdoctor run --nproc-per-node 2 distributed/ddp_unused_parameters.py --rank0-uses-it
    torchdoctor run --nproc-per-node 2 distributed/ddp_unused_parameters.py --find-unused

``Classifier`` keeps an auxiliary head that ``forward`` only calls when asked. DDP (without
``find_unused_parameters=True``) waits for every parameter's gradient, so the second forward
raises "Expected to have finished reduction in the prior iteration", naming parameter indices;
with ``--rank0-uses-it`` rank 0 does use the head and waits in the all-reduce for rank 1, which
never sends it (a hang until rank 1 fails). Torch Doctor names the parameters (``module.aux.weight``,
``module.aux.bias``), the rank and the step, and explains DDP's error in one line: exit status 1.
With ``--find-unused`` DDP copes, and the job is silent.
"""

import sys

import torch
import torch.distributed as dist
from torch import nn


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(8, 16), nn.ReLU())
        self.head = nn.Linear(16, 2)
        self.aux = nn.Linear(16, 2)  # an auxiliary head, only used when asked

    def forward(self, x: torch.Tensor, with_aux: bool = False) -> torch.Tensor:
        h = self.body(x)
        out = self.head(h)
        return out + self.aux(h) if with_aux else out


def main() -> None:
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(0)
    data = torch.Generator().manual_seed(rank)  # each rank its own batches
    find_unused = "--find-unused" in sys.argv
    with_aux = "--rank0-uses-it" in sys.argv and rank == 0
    model = nn.parallel.DistributedDataParallel(Classifier(), find_unused_parameters=find_unused)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range(4):
        x, y = torch.randn(16, 8, generator=data), torch.randint(0, 2, (16,), generator=data)
        optimizer.zero_grad()
        nn.functional.cross_entropy(model(x, with_aux=with_aux), y).backward()
        optimizer.step()
    print(f"rank {rank}: done", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
