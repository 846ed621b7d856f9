"""Fine-tuning a pretrained-style backbone with a warmup scheduler and gradient accumulation."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import AdamW
from torch.optim.lr_scheduler import LambdaLR
from torch.utils.data import DataLoader, TensorDataset

ACCUM_STEPS = 4
EPOCHS = 3


class Backbone(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(),
                                      nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x):
        return self.features(x)


class Classifier(nn.Module):
    def __init__(self, backbone, num_classes):
        super().__init__()
        self.backbone = backbone
        self.head = nn.Linear(16, num_classes)

    def forward(self, x):
        return self.head(self.backbone(x))


def warmup(step, warmup_steps=10):
    return min(1.0, (step + 1) / warmup_steps)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.inference_mode():
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    backbone = Backbone()
    backbone.load_state_dict(backbone.state_dict())
    for p in backbone.parameters():
        p.requires_grad_(False)
    model = Classifier(backbone, num_classes=5).to(device)

    images, labels = torch.randn(256, 3, 16, 16), torch.randint(0, 5, (256,))
    train_loader = DataLoader(TensorDataset(images[:200], labels[:200]), batch_size=8, shuffle=True)
    val_loader = DataLoader(TensorDataset(images[200:], labels[200:]), batch_size=32)

    optimizer = AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
    scheduler = LambdaLR(optimizer, warmup)
    optimizer.zero_grad()
    for epoch in range(EPOCHS):
        model.train()
        for step, (x, y) in enumerate(train_loader):
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y, label_smoothing=0.1) / ACCUM_STEPS
            loss.backward()
            if (step + 1) % ACCUM_STEPS == 0:
                optimizer.step()
                scheduler.step()
                optimizer.zero_grad()
        print(f"epoch {epoch}: val acc {evaluate(model, val_loader, device):.2%}")


if __name__ == "__main__":
    main()
