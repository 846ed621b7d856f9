# expect: TD018@22
"""A DDP training script whose DistributedSampler never gets set_epoch: the same order every epoch."""

import os

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler


def main():
    dist.init_process_group("gloo")
    local_rank = int(os.environ.get("LOCAL_RANK", 0))
    torch.manual_seed(1234 + local_rank)
    features, targets = torch.randn(512, 20), torch.randint(0, 4, (512,))
    dataset = TensorDataset(features, targets)
    model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(20, 64), nn.ReLU(), nn.Linear(64, 4)))
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    criterion = nn.CrossEntropyLoss()
    train_sampler = DistributedSampler(dataset, shuffle=True)
    train_loader = DataLoader(dataset, batch_size=32, sampler=train_sampler, num_workers=0)
    for epoch in range(5):
        model.train()
        for inputs, labels in train_loader:
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(inputs), labels)
            loss.backward()
            optimizer.step()
        if dist.get_rank() == 0:
            print(f"epoch {epoch}: {loss.item():.4f}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
