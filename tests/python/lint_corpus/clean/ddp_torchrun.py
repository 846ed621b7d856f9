"""A torchrun/DDP script as the PyTorch DDP tutorials write it: a DistributedSampler per
split, set_epoch at the start of each epoch, evaluation under eval() and no_grad()."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def setup():
    dist.init_process_group(backend="gloo")
    return int(os.environ["LOCAL_RANK"])


def build_loaders(batch_size):
    train_set = TensorDataset(torch.randn(1024, 16), torch.randint(0, 3, (1024,)))
    val_set = TensorDataset(torch.randn(256, 16), torch.randint(0, 3, (256,)))
    train_sampler = DistributedSampler(train_set)
    val_sampler = DistributedSampler(val_set, shuffle=False)
    train_loader = DataLoader(train_set, batch_size=batch_size, sampler=train_sampler, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=batch_size, sampler=val_sampler)
    return train_loader, val_loader, train_sampler


def main():
    setup()
    train_loader, val_loader, train_sampler = build_loaders(64)
    model = DDP(nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 3)))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    for epoch in range(3):
        train_sampler.set_epoch(epoch)
        model.train()
        for x, y in train_loader:
            optimizer.zero_grad()
            loss_fn(model(x), y).backward()
            optimizer.step()
        model.eval()
        correct = torch.zeros(1)
        with torch.no_grad():
            for x, y in val_loader:
                correct += (model(x).argmax(1) == y).sum()
        dist.all_reduce(correct)
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: val accuracy {correct.item() / 256:.3f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
