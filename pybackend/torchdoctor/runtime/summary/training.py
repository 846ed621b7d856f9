"""The line of a training loop's other objects: optimizer, LR scheduler, ``DataLoader``, dataset,
sampler, ``GradScaler``, ``Generator`` (issue 15: each showed only its default repr).

Reading only: no iteration, no ``__getitem__``, no step, no draw; nothing warns (``quiet``) and
no autograd history is recorded. Each kind is described in :mod:`optim_info` or :mod:`data_info`.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, Optional

from ..stats.guard import quiet
from . import data_info, optim_info

_DESCRIBE: Dict[str, Callable[[Any], Dict[str, object]]] = {
    "optimizer": optim_info.describe_optimizer,
    "scheduler": optim_info.describe_scheduler,
    "grad_scaler": optim_info.describe_grad_scaler,
    "generator": optim_info.describe_generator,
    "dataloader": data_info.describe_loader,
    "dataset": data_info.describe_dataset,
    "sampler": data_info.describe_sampler,
}

_RENDER: Dict[str, Callable[[Dict[str, Any]], str]] = {
    "optimizer": optim_info.render_optimizer,
    "scheduler": optim_info.render_scheduler,
    "grad_scaler": optim_info.render_grad_scaler,
    "generator": optim_info.render_generator,
    "dataloader": data_info.render_loader,
    "dataset": data_info.render_dataset,
    "sampler": data_info.render_sampler,
}


def describe_training(obj: Any, what: Optional[str]) -> Dict[str, object]:
    """``stats()`` of a training object whose :func:`..kinds.training_kind` is ``what``."""
    describe = _DESCRIBE.get(what or "")
    if describe is None:
        return {"kind": "other", "type": type(obj).__name__}
    torch = sys.modules["torch"]
    with quiet(), torch.no_grad():
        return describe(obj)


def render_training(info: Dict[str, Any]) -> str:
    return _RENDER[str(info["kind"])](info)
