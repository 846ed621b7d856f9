# Image folder with optional augmentations: the factory gives None when the extra package is missing, and the dataset checks before using it.
import logging

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger(__name__)


def build_augmentations(size=64):
    """The augmentation pipeline, or None (with a warning) when albumentations is not installed."""
    try:
        import albumentations as A

        steps = [A.RandomResizedCrop(size=(size, size)), A.HorizontalFlip(p=0.5)]
        return A.Compose(steps)
    except ImportError:
        log.warning("albumentations is not installed: training without augmentations")


class Pictures(Dataset):
    def __init__(self, images, labels, augment=True):
        self.images = images
        self.labels = labels
        self.aug = build_augmentations() if augment else None

    def __len__(self):
        return len(self.images)

    def __getitem__(self, i):
        img = self.images[i]
        if self.aug:
            img = self.aug(image=img)["image"]
        x = torch.as_tensor(np.ascontiguousarray(img), dtype=torch.float32).permute(2, 0, 1) / 255.0
        return x, self.labels[i]


def main():
    torch.manual_seed(0)
    images = np.random.randint(0, 256, size=(64, 64, 64, 3), dtype=np.uint8)
    labels = torch.randint(0, 4, (64,))
    loader = DataLoader(Pictures(images, labels), batch_size=16, shuffle=True)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
    model.train()
    for epoch in range(3):
        running = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            running += loss.item()
        print(f"epoch {epoch}: loss {running / len(loader):.4f}")


if __name__ == "__main__":
    main()
