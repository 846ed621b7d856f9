"""What every data check reads: the splits (draws, statistics, source line) and the model (worker side)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Optional

from .model_info import ModelInfo
from .reduce import SplitStats
from .sampling import Draws


@dataclass
class Split:
    name: str
    draws: Draws
    stats: SplitStats
    source: Optional[dict] = None  # {"file", "line"} of the dataset's __getitem__ (or the loader's dataset)
    classes: Optional[list] = None  # dataset.classes when it has them
    table: Any = None  # tables.Table when the split is (or holds) a table


@dataclass
class Context:
    splits: list
    model: Optional[ModelInfo] = None
    loss: Optional[str] = None  # the loss's class name ("CrossEntropyLoss"), from torchdoctor_data()'s "loss"
    ignore_index: Optional[int] = None  # the given loss's ignore_index (CrossEntropyLoss(ignore_index=255))
    regression: Optional[str] = None  # a regression loss given as "loss" (L1Loss): the labels are not classes
    notes: list = field(default_factory=list)
    max_samples: int = 2000
    not_drawn: list = field(default_factory=list)  # splits left undrawn after a draw that never returned (stuck.py)
    origin: Optional[dict] = None  # {"file", "line"} where NAME is defined (torchdoctor_data), when it is a function

    @property
    def train(self) -> Optional[Split]:
        named = [s for s in self.splits if s.name.lower() in ("train", "training")]
        return named[0] if named else (self.splits[0] if self.splits else None)

    def others(self) -> list:
        train = self.train
        return [s for s in self.splits if s is not train]

    def table_pairs(self) -> list:
        """``(train, other)`` for each other split, when both are tables (the column checks)."""
        train = self.train
        if train is None or train.table is None:
            return []
        return [(train, split) for split in self.others() if split.table is not None]


def unwrap(obj: Any) -> Any:
    """The dataset behind a DataLoader and Subsets: where __getitem__ and classes live."""
    seen = 0
    obj = getattr(obj, "dataset", obj) if hasattr(obj, "batch_size") else obj
    while type(obj).__name__ == "Subset" and hasattr(obj, "dataset") and seen < 10:
        obj, seen = obj.dataset, seen + 1
    return obj


def source_of(obj: Any) -> Optional[dict]:
    """The line of the dataset's ``__getitem__`` (else its class) when it is Python source."""
    ds = unwrap(obj)
    for target in (getattr(type(ds), "__getitem__", None), getattr(type(ds), "__iter__", None), type(ds)):
        if target is None:
            continue
        try:
            file = inspect.getsourcefile(target)
            # the first line only: findsource is what getsourcelines starts with, before it tokenizes
            # the whole block (~0.3 ms of a 2,000-image check, bench_data_checks.py)
            _, line = inspect.findsource(inspect.unwrap(target))
        except (OSError, TypeError, ValueError):
            continue
        if file and "site-packages" not in file and "/torch/" not in file:
            return {"file": file, "line": int(line) + 1}
    return None


def classes_of(obj: Any) -> Optional[list]:
    ds = unwrap(obj)
    classes = getattr(ds, "classes", None)
    if isinstance(classes, (list, tuple)) and classes and all(isinstance(c, (str, int)) for c in classes):
        return [str(c) for c in classes]
    return None
