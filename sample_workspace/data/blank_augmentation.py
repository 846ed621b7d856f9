"""Blank augmentation (seed 004): a random crop that sometimes lands on the empty background.

``ZoomedDigits`` draws small synthetic "digits" (a bright stroke on a black 28x28 background) and
augments them with its own ``random_resized_crop``: a square of 5% to 100% of the image area at
a random place, resized back to 28x28. When a small crop falls on the background, the model is
trained on an all-black image with the digit's label: a few percent of the batches are noise,
and no loss curve shows it.

Try it::

    torchdoctor check data data/blank_augmentation.py::ZoomedDigits

Torch Doctor draws the dataset, sees blank samples, draws those indices again and finds them
blank in only some draws: "x% of the draws are blank after the dataset's own transforms ...
a random transform blanks them", with the indices and the ``__getitem__`` line. The fix: a
smaller scale range (``scale=(0.3, 1.0)``) or crops that keep the digit.
"""

import torch
import torch.nn.functional as F
from torch.utils.data import Dataset


def random_resized_crop(image: torch.Tensor, scale=(0.05, 1.0)) -> torch.Tensor:
    """A square crop of a random share of the area, resized back to the image size."""
    _, h, w = image.shape
    area = float(torch.empty(()).uniform_(*scale))
    side = max(2, int(round((area * h * w) ** 0.5)))
    top = int(torch.randint(0, h - side + 1, ()))
    left = int(torch.randint(0, w - side + 1, ()))
    crop = image[:, top : top + side, left : left + side]
    return F.interpolate(crop[None], size=(h, w), mode="nearest")[0]


class ZoomedDigits(Dataset):
    def __init__(self, n: int = 600, seed: int = 0):
        g = torch.Generator().manual_seed(seed)
        self.images = torch.zeros(n, 1, 28, 28)
        self.labels = torch.randint(0, 10, (n,), generator=g)
        for i in range(n):  # a stroke of random length and angle through the middle
            t = torch.linspace(-1, 1, 40)
            angle = float(torch.rand((), generator=g)) * 3.14
            length = 4 + 4 * float(torch.rand((), generator=g))
            rows = (14 + length * t * torch.sin(torch.tensor(angle))).long().clamp(0, 27)
            cols = (14 + length * t * torch.cos(torch.tensor(angle))).long().clamp(0, 27)
            self.images[i, 0, rows, cols] = 0.5 + 0.5 * torch.rand(len(rows), generator=g)

    def __len__(self):
        return len(self.images)

    def __getitem__(self, index):
        image = random_resized_crop(self.images[index])
        return (image - 0.1) / 0.3, self.labels[index]
