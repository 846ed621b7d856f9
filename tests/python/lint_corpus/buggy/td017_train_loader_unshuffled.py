# expect: TD017@11
"""The training loader keeps the stored (class-sorted) order every epoch."""

import torch
from torch.utils.data import DataLoader, TensorDataset

features = torch.randn(1000, 8)
labels = torch.arange(1000) // 100
train_dataset = TensorDataset(features[:800], labels[:800])
val_dataset = TensorDataset(features[800:], labels[800:])
train_loader = DataLoader(train_dataset, batch_size=32, num_workers=0)
val_loader = DataLoader(val_dataset, batch_size=128)
