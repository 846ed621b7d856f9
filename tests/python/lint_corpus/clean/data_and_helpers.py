"""Dataset and helper code: every path of every tensor-returning helper ends explicitly."""

from pathlib import Path

import torch
from torch.utils.data import DataLoader, Dataset, IterableDataset


class WindowDataset(Dataset):
    def __init__(self, series: torch.Tensor, window: int):
        self.series = series
        self.window = window

    def __len__(self):
        return len(self.series) - self.window

    def __getitem__(self, i):
        x = self.series[i:i + self.window]
        y = self.series[i + self.window]
        return x, y


class Stream(IterableDataset):
    def __iter__(self):
        for _ in range(100):
            yield torch.randn(8)


def style_embedding(meta: dict, table: dict, dim: int = 16) -> torch.Tensor:
    if meta.get("style_id") in table:
        return table[meta["style_id"]]
    if meta.get("description"):
        return torch.full((dim,), float(len(meta["description"])))
    return torch.zeros(dim)


def maybe_checkpoint(path: Path):
    if not path.exists():
        return None
    return torch.load(path, weights_only=True)


def find_first_nan(t: torch.Tensor):
    for i, row in enumerate(t):
        if torch.isnan(row).any():
            return i
    return None


def is_finite(t: torch.Tensor):
    if torch.isfinite(t).all():
        return True


def pick_device(prefer_gpu: bool) -> torch.device:
    while True:
        if prefer_gpu and torch.cuda.is_available():
            return torch.device("cuda")
        return torch.device("cpu")


def clamp_or_raise(x: torch.Tensor, limit: float) -> torch.Tensor:
    try:
        return x.clamp(-limit, limit)
    except RuntimeError as exc:
        raise ValueError(f"cannot clamp {x.dtype}") from exc


series = torch.sin(torch.linspace(0, 50, 1000))
train_windows = WindowDataset(series[:800], window=16)
train_loader = DataLoader(train_windows, batch_size=32, shuffle=False)  # keep time order on purpose
stream_train_loader = DataLoader(Stream(), batch_size=4)
val_windows = DataLoader(WindowDataset(series[800:], window=16), batch_size=64)
