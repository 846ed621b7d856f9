# expect: TD020@53
"""A DDP script whose validation accuracy is rank 0's shard: the val loader has a
DistributedSampler, the sums are never all-reduced, and only rank 0 prints."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def build_loaders(batch_size):
    train_set = TensorDataset(torch.randn(512, 12), torch.randint(0, 3, (512,)))
    val_set = TensorDataset(torch.randn(128, 12), torch.randint(0, 3, (128,)))
    train_sampler = DistributedSampler(train_set)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=DistributedSampler(val_set, shuffle=False))
    return train_loader, val_loader, train_sampler


@torch.no_grad()
def accuracy(model, loader):
    model.eval()
    correct = 0
    seen = 0
    for x, y in loader:
        correct += (model(x).argmax(dim=1) == y).sum().item()
        seen += y.numel()
    model.train()
    return correct / seen


def main():
    dist.init_process_group("gloo")
    rank = int(os.environ.get("RANK", 0))
    train_loader, val_loader, train_sampler = build_loaders(32)
    model = DDP(nn.Sequential(nn.Linear(12, 32), nn.ReLU(), nn.Linear(32, 3)))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(4):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x), y)
            loss.backward()
            optimizer.step()
        val_acc = accuracy(model, val_loader)
        if rank == 0:
            print(f"epoch {epoch}: val accuracy {val_acc:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
