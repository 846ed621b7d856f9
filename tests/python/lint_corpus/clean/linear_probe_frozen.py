"""Linear probing on frozen features (MoCo/SimSiam lincls shape): the backbone is frozen, only the
head is optimized, and the model stays in eval mode on purpose so batch-norm statistics never move."""
import torch
import torch.nn as nn

backbone = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten())
model = nn.Sequential(backbone, nn.Linear(8, 10))
for name, p in model.named_parameters():
    if not name.startswith("1."):
        p.requires_grad = False
trainable = [p for p in model.parameters() if p.requires_grad]
optimizer = torch.optim.SGD(trainable, lr=0.1)
criterion = nn.CrossEntropyLoss()


def probe_one_epoch(loader):
    model.eval()  # frozen-feature protocol: BN statistics must not move
    for x, y in loader:
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def run(train_loader, epochs):
    for epoch in range(epochs):
        probe_one_epoch(train_loader)
