# expect: TD005@10 TD005@15
"""Seed 003's wrong loss: binary cross-entropy for a 3-class problem."""

import torch
import torch.nn as nn
import torch.nn.functional as F

predictions_logits = torch.randn(5, 3, requires_grad=True)
true_labels = torch.randint(0, 3, (5,))
loss_bce = F.binary_cross_entropy_with_logits(predictions_logits, F.one_hot(true_labels, num_classes=3).float())

head = nn.Linear(8, 1)
labels = torch.randint(0, 4, (64,))
criterion = nn.BCEWithLogitsLoss()
loss = criterion(head(torch.randn(64, 8)).squeeze(1), labels.float())
loss.backward()
