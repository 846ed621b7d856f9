"""Which step an anomaly happened at: optimizer steps when the script has an optimizer.

A ``backward()`` call is not a training step: a GAN calls it three times per iteration, gradient
accumulation several times per update. When the script has an optimizer (one created, seen
through ``Optimizer.__init__``, or one seen stepping), a report's step is the number of
``step()`` calls so far of the optimizer that owns the parameters the report is about (a
module's, a gradient's); for a loss, the fewest steps of any optimizer (in a GAN loop both
optimizers step once per iteration). A script that updates its weights by hand keeps counting
``backward()`` calls. A step a GradScaler skipped counts. The owner map is built only when a report asks (after something is wrong).
"""

from __future__ import annotations

import weakref
from typing import Any, Dict, List, Optional, Tuple


class OptimizerSteps:
    def __init__(self) -> None:
        self._refs: Dict[int, "weakref.ref[Any]"] = {}
        self.counts: Dict[int, int] = {}
        self.updated_at: Dict[int, int] = {}  # id(optimizer) -> the backward() count at its last real update
        # id(optimizer) -> the backward() count at its last step a GradScaler skipped: weights it holds
        # that are NaN now were NaN at that backward already (open_clip's loop with a NaN weight)
        self.skipped_at: Dict[int, int] = {}

    def created(self, optimizer: Any) -> None:
        try:
            self._refs[id(optimizer)] = weakref.ref(optimizer)
        except TypeError:
            return
        self.counts[id(optimizer)] = 0

    def stepped(self, optimizer: Any) -> None:
        key = id(optimizer)
        if key not in self._refs or self._refs[key]() is not optimizer:
            self.created(optimizer)
        self.counts[key] = self.counts.get(key, 0) + 1

    def updated(self, optimizer: Any, backward_calls: int) -> None:
        """A real update (the step post hook; a step a GradScaler skipped changes no weight)."""
        self.updated_at[id(optimizer)] = backward_calls

    def skipped(self, optimizer: Any, backward_calls: int) -> None:
        """A step a GradScaler skipped (its gradients were not finite): counted, no weight changed."""
        self.stepped(optimizer)
        self.skipped_at[id(optimizer)] = backward_calls

    def stepped_since(self, params: List[Any], backward_calls: int, frame: Any = None) -> Tuple[Optional[str], Any]:
        """Did an optimizer holding any of ``params`` update them since the last ``backward()`` that
        gave them gradients? Asked after a hit only. ``("under_way", opt)``: this forward runs inside
        ``opt.step()`` (an LBFGS closure; ``frame`` is where the stack is read from); ``("stepped",
        opt)``: it updated them after the latest ``backward()`` (the count ``backward_calls``);
        ``("skipped", opt)``: a GradScaler skipped its step after that backward (the weights kept
        what they held then); ``("not_stepped", opt)``: it did not, and it is the script's only
        optimizer, so the latest backward was theirs; ``("unknown", opt)``: it did not, but the
        script has other optimizers, and their models' backwards may have come since (models trained in turn: the last step of these
        parameters may well be after their last backward); ``(None, None)``: none holds them."""
        wanted = {id(p) for p in params}
        stepping = _stepping(wanted, frame)  # an optimizer the watch may not know yet (made before it)
        if stepping is not None:
            return "under_way", stepping
        live = self.live()
        owners = [o for o in live if _holds(o, wanted)]
        if not owners:
            return None, None
        for optimizer in owners:
            if self.updated_at.get(id(optimizer)) == backward_calls:
                return "stepped", optimizer
        for optimizer in owners:
            if self.skipped_at.get(id(optimizer)) == backward_calls:
                return "skipped", optimizer
        latest = max(owners, key=lambda o: self.updated_at.get(id(o), -1))
        return ("not_stepped" if len(live) == 1 else "unknown"), latest

    def live(self) -> List[Any]:
        return [o for o in (r() for r in self._refs.values()) if o is not None]

    def step_of(self, params: List[Any]) -> Optional[Tuple[int, Any]]:
        """``(steps, optimizer)`` for a report about ``params`` (none: any optimizer's fewest)."""
        optimizers = self.live()
        if not optimizers:
            return None
        wanted = {id(p) for p in params}
        if wanted:
            for optimizer in optimizers:
                if any(id(p) in wanted for group in optimizer.param_groups for p in group["params"]):
                    return self.counts.get(id(optimizer), 0), optimizer
        fewest = min(optimizers, key=lambda o: self.counts.get(id(o), 0))
        return self.counts.get(id(fewest), 0), fewest


def _holds(optimizer: Any, wanted: set) -> bool:
    return any(id(p) in wanted for group in optimizer.param_groups for p in group["params"])


def _stepping(wanted: set, frame: Any) -> Any:
    """The optimizer holding any of ``wanted`` whose ``step()`` is on the stack (its closure calling
    the model), or None."""
    while frame is not None:
        if frame.f_code.co_name == "step":
            owner = frame.f_locals.get("self")
            try:
                if isinstance(getattr(owner, "param_groups", None), list) and _holds(owner, wanted):
                    return owner
            except Exception:  # noqa: BLE001 - some other object's step(), with odd groups
                pass
        frame = frame.f_back
    return None


def scaler_step_wrapper(original: Any, current: Any) -> Any:
    """``GradScaler.step(optimizer)``: a step the scaler skipped (Inf gradients) is still a step."""

    def step(self: Any, optimizer: Any, *args: Any, **kwargs: Any) -> Any:
        watch = current()
        before = watch.optimizers.counts.get(id(optimizer)) if watch is not None else None
        result = original(self, optimizer, *args, **kwargs)
        if watch is not None and watch.optimizers.counts.get(id(optimizer)) == before:
            watch.optimizers.skipped(optimizer, watch.step)  # no step hook ran
        return result

    step.__wrapped__ = original  # type: ignore[attr-defined]
    return step


def init_wrapper(original: Any, current: Any) -> Any:
    """``Optimizer.__init__``, then the watch learns that the script has this optimizer."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        watch = current()
        if watch is not None:
            try:
                watch.optimizers.created(self)
            except Exception:
                pass

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__
