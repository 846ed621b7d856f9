"""Input bound: the model waits for its data (a slow ``__getitem__`` and ``num_workers=0``).

What the view shows: a stacked step-time chart where "data" is most of every step (each
sample takes ~2 ms to "decode", the model ~1 ms a batch), low samples/s, and an "input_bound"
verdict card: set `num_workers` > 0 (now 0) on the DataLoader, linked to the line that
creates it (on a GPU it adds `pin_memory=True` and that a faster GPU would not help).
`torchdoctor run --monitor input_bound.py` reports `input_bound` (a warning: exit 0).
"""

import time

import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset


class SlowImages(Dataset):
    def __len__(self) -> int:
        return 1280

    def __getitem__(self, index: int):
        time.sleep(0.002)  # decoding a JPEG from a slow disk
        g = torch.Generator().manual_seed(index)
        x = torch.randn(32, generator=g)
        return x, int(x[:4].argmax())  # a learnable label: the loss falls, only the input is slow


def main() -> None:
    torch.manual_seed(0)
    loader = DataLoader(SlowImages(), batch_size=16, shuffle=True, num_workers=0)
    model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 4))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    criterion = nn.CrossEntropyLoss()
    for step, (x, y) in enumerate(loader):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        if step == 79:  # 80 steps: at least 2.5 s of loading, so a live view redraws several times
            break
    print(f"last loss {loss.item():.3f}")


if __name__ == "__main__":
    main()
