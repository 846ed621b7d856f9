"""A small, healthy CNN for 3x32x32 images (NCHW): every check passes on it.

Torch Doctor infers an input of (8, 3, 32, 32) from ``conv1`` (in_channels=3, and
its default spatial size of 32x32).
"""

from torch import nn


class TinyCNN(nn.Module):
    def __init__(self, n_classes: int = 10):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.act = nn.ReLU()
        self.fc = nn.Linear(8 * 8 * 8, n_classes)  # two 2x poolings: 32 -> 16 -> 8

    def forward(self, x):
        x = self.pool(self.act(self.conv1(x)))
        x = self.pool(self.act(self.conv2(x)))
        return self.fc(x.flatten(1))
