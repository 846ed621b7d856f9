"""What each rank notes for the cross-rank checks (``consistency.py``), with no collective of
its own: a check that called ``all_gather`` could itself hang a job whose ranks are out of step.

Each rank appends JSON lines to ``$TORCHDOCTOR_RANK_FACTS/<rank>.jsonl``:

- ``{"fact": "params", "step": k, "sums": [...]}`` after optimizer steps 1, 2, 4 and 8: per
  parameter tensor of a DDP-wrapped model, the float64 sum and sum of squares (replicas that DDP
  keeps in sync agree to rounding);
- ``{"fact": "batch", "step": k, "digest": "..."}`` for the first 4 forwards of a DDP model: a
  digest of its first input tensor's bytes (every rank reading the same batch: no
  ``DistributedSampler``);
- ``{"fact": "sampler", "sampler": id, "epoch": e, "shuffle": true}`` each time a ``DistributedSampler`` is
  iterated (the same epoch twice: ``set_epoch`` is never called, so each epoch has the same order).

Costs: one digest per forward for 4 steps, one pass over the parameters on 4 steps.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Dict, List

FACTS_ENV = "TORCHDOCTOR_RANK_FACTS"
PARAM_STEPS = (1, 2, 4, 8)
BATCH_STEPS = 4

_STATE: Dict[str, Any] = {"steps": 0, "forwards": 0, "ddp": []}


def install(rank: int) -> None:
    """Hook the optimizer steps, DDP forwards and DistributedSampler of this rank."""
    folder = os.environ.get(FACTS_ENV)
    if not folder:
        return
    _STATE["path"] = os.path.join(folder, f"{rank}.jsonl")
    import torch
    from torch.nn.modules import module as nn_module
    from torch.optim import optimizer

    optimizer.register_optimizer_step_post_hook(_after_step)
    nn_module.register_module_forward_pre_hook(_before_forward)
    _wrap_sampler(torch.utils.data.DistributedSampler)


def forget() -> None:
    """Drop the DDP models seen (the end of the rank: see ``rank_entry._release``)."""
    _STATE["ddp"] = []


def _note(fact: Dict[str, Any]) -> None:
    try:
        with open(_STATE["path"], "a", encoding="utf-8") as out:
            out.write(json.dumps(fact) + "\n")
    except OSError:
        pass  # a lost fact only silences a check


def _before_forward(module: Any, args: Any) -> None:
    from torch.nn.parallel import DistributedDataParallel

    if not isinstance(module, DistributedDataParallel):
        return
    if module not in _STATE["ddp"]:
        _STATE["ddp"].append(module)
    _STATE["forwards"] += 1
    if _STATE["forwards"] > BATCH_STEPS or not module.training:
        return
    first = next((a for a in args if hasattr(a, "detach")), None)
    if first is not None:
        data = first.detach().cpu().contiguous().numpy().tobytes()
        _note({"fact": "batch", "step": _STATE["forwards"], "digest": hashlib.sha1(data).hexdigest()})


def _after_step(opt: Any, args: Any, kwargs: Any) -> None:
    _STATE["steps"] += 1
    if _STATE["steps"] not in PARAM_STEPS or not _STATE["ddp"]:
        return
    import torch

    sums: List[float] = []
    with torch.no_grad():
        for model in _STATE["ddp"]:
            for p in model.parameters():
                q = p.detach().double()
                sums += [float(q.sum()), float((q * q).sum())]
    _note({"fact": "params", "step": _STATE["steps"], "sums": sums})


def _wrap_sampler(cls: Any) -> None:
    original = cls.__iter__
    if getattr(original, "_torchdoctor", False):
        return

    def __iter__(self: Any) -> Any:
        epoch, shuffle = int(getattr(self, "epoch", 0)), bool(getattr(self, "shuffle", False))
        _note({"fact": "sampler", "sampler": id(self), "epoch": epoch, "shuffle": shuffle})
        return original(self)

    __iter__._torchdoctor = True  # type: ignore[attr-defined]
    cls.__iter__ = __iter__
