"""A lagging copy of the model being trained: a DQN's target network, an EMA or mean teacher.

Targets computed from such a copy move when it is synced (``target.load_state_dict(q.state_dict())``
every N steps) or drifts, and the loss moves with them: a DQN's TD loss, fallen to 2e-6, jumps
10,000x the step after a sync, twice as high as where it started, in a run that learns
(2026-12-06). A spike of a loss trained beside such a copy is advice, not a stop. Read only when a
spike is found (rare): the frames of the training loop and the objects their ``self`` holds.
"""

from __future__ import annotations

import sys
from typing import Any, Container, Iterator, List, Set, Tuple

Shapes = Tuple[Tuple[int, ...], ...]
# Frames read outward from the one that called backward(): a loop in a method of an agent.
FRAMES = 2


def has_lagging_copy(frame: Any, optimizers: List[Any], ran: Container[int]) -> bool:
    """Does the training loop hold a model no optimizer trains with the parameter shapes of one
    that is trained, called in this step (``ran``: the ids of the modules called since the last
    backward)? A frozen or distilled-from model of another shape is not such a copy, nor is one the
    step never called (a best-so-far snapshot, an EMA kept for evaluation): no target came from it,
    and a learning rate too high beside it was advice (review, 2026-12-06)."""
    torch = sys.modules["torch"]
    trained = {id(p) for o in optimizers for g in o.param_groups for p in g["params"]}
    if not trained:
        return False
    copies: List[Shapes] = []  # models no optimizer holds a parameter of
    models: List[Shapes] = []  # models trained whole
    for module in _modules(frame, torch.nn.Module):
        params = list(module.parameters())
        held = [id(p) in trained for p in params]
        if params and all(held):
            models.append(_shapes(params))
        elif params and not any(held) and id(module) in ran:
            copies.append(_shapes(params))
    return any(c == m for c in copies for m in models)


def _shapes(params: List[Any]) -> Shapes:
    return tuple(tuple(p.shape) for p in params)


def _modules(frame: Any, module_type: type) -> Iterator[Any]:
    seen: Set[int] = set()
    for _ in range(FRAMES):
        if frame is None:
            return
        values = list(frame.f_locals.values())
        owner = frame.f_locals.get("self")
        if owner is not None and not isinstance(owner, module_type):  # an agent holding its networks
            values += list(getattr(owner, "__dict__", {}).values())
        for value in values:
            if isinstance(value, module_type) and id(value) not in seen:
                seen.add(id(value))
                yield value
        frame = frame.f_back
