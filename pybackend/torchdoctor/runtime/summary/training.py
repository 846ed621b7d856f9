"""The line of a training loop's other objects: optimizer, LR scheduler, ``DataLoader``, dataset,
sampler, ``GradScaler``, ``Generator`` (issue 15: each showed only its default repr).

Reading only: no iteration, no ``__getitem__``, no step, no draw; nothing warns (``quiet``) and
no autograd history is recorded. Each kind is described in :mod:`optim_info` or :mod:`data_info`.
"""

from __future__ import annotations

import sys
import weakref
from typing import Any, Callable, Dict, Optional, Tuple

from ..stats.budget import current_epoch
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
    """``stats()`` of a training object whose :func:`..kinds.training_kind` is ``what``. Within one
    debugger stop (the request's epoch: the program has not run since) an object's facts are read
    once: an optimizer of 6,000 parameters took 20-40 ms a hover, and a user ``__len__`` runs once."""
    describe = _DESCRIBE.get(what or "")
    if describe is None:
        return {"kind": "other", "type": type(obj).__name__}
    epoch = current_epoch()
    kept = _STOP.get(id(obj)) if epoch is not None else None
    if kept is not None and kept[0]() is obj and kept[1] is epoch:
        return dict(kept[2])
    torch = sys.modules["torch"]
    with quiet(), torch.no_grad(), data_info.one_summary():
        info = describe(obj)
    if epoch is not None:
        _keep(obj, epoch, info)
    return info


# id(obj) -> (weak reference, epoch, facts): this stop's lines, forgotten at the next stop.
_STOP: Dict[int, Tuple[Any, Any, Dict[str, object]]] = {}
_STOP_LIMIT = 1024


def _keep(obj: Any, epoch: Any, info: Dict[str, object]) -> None:
    try:
        ref = weakref.ref(obj)
    except TypeError:  # not weakly referenceable: read again next time
        return
    if len(_STOP) >= _STOP_LIMIT or any(entry[1] is not epoch for entry in list(_STOP.values())[:1]):
        _STOP.clear()  # a new stop: the program ran, what was read proves nothing now
    _STOP[id(obj)] = (ref, epoch, dict(info))


def render_training(info: Dict[str, Any]) -> str:
    return _RENDER[str(info["kind"])](info)
