"""The flatten-size mistake: ``fc1`` was sized for 5x5 feature maps, the convolutions make 6x6.

LeNet's 16 * 5 * 5 assumes 32x32 inputs and unpadded 5x5 convolutions; these
3x3 convolutions leave 6x6 maps, so 16 * 6 * 6 = 576 features reach a layer that
expects 400. The Shape trace shows the table up to ``fc1`` and says so.
"""

import torch.nn as nn
import torch.nn.functional as F


class LeNetish(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, kernel_size=3)
        self.conv2 = nn.Conv2d(6, 16, kernel_size=3)
        self.fc1 = nn.Linear(16 * 5 * 5, 32)  # BUG: the maps are 6x6 here, not 5x5
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)  # 32 -> 30 -> 15
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)  # 15 -> 13 -> 6
        x = x.flatten(1)
        return self.fc2(F.relu(self.fc1(x)))


def torchdoctor_example():
    """LeNet's images are 32x32. Without this, Torch Doctor solves the input size from fc1 instead:
    28x28 gives the 16 x 5 x 5 features it was written for, and that is no bug."""
    import torch

    return LeNetish(), (torch.randn(8, 3, 32, 32), None)
