"""Parameters of a DDP model that got no gradient in a step, named before DDP fails on them.

``DistributedDataParallel`` (without ``find_unused_parameters=True`` or ``static_graph=True``)
all-reduces gradients bucket by bucket and waits, at the end of each backward, for *every*
parameter's gradient. A parameter the loss did not depend on (an unused head, a branch taken
on some steps only, an output left out of the loss) never gets one, and then:

- on the rank that skipped it, the next forward raises ``RuntimeError: Expected to have finished
  reduction in the prior iteration before starting a new one`` (naming parameter *indices*);
- on a rank that did use it (a branch under ``if rank == 0``), backward waits in the all-reduce
  of that parameter's bucket until its peer dies or the collective times out: a hang.

Each rank hooks the parameters of the DDP models it sees in a training forward
(``register_post_accumulate_grad_hook``), for the first ``STEPS`` backwards. At the next
forward of that model (before DDP's own check raises) it reports, in one line, the step and the
names (``module.aux.weight``) of the parameters that require a gradient and got none while the
others did. Quiet when DDP was told to cope (``find_unused_parameters``, ``static_graph``), for
forwards under ``no_sync()`` or without grad, and for a forward no backward followed.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Set

STEPS = 8
SHOWN = 6  # names in the line; the report holds them all

ERROR_TEXT = "Expected to have finished reduction in the prior iteration"


class UnusedWatch:
    """Per rank: which parameters of each DDP model got a gradient since its last forward."""

    def __init__(self, report: Callable[[Dict[str, Any]], None]) -> None:
        self.report = report
        self.models: Dict[int, Dict[str, Any]] = {}  # id(ddp) -> its state
        self.found: List[Dict[str, Any]] = []

    def before_forward(self, module: Any) -> None:
        import torch

        state = self.models.get(id(module))
        if state is not None:
            self._judge(module, state)
        if not module.training or not torch.is_grad_enabled() or _copes(module):
            if state is not None:
                state["pending"] = False
            return
        if state is None:
            state = self.models[id(module)] = self._hook(module)
        if state["checked"] >= STEPS:
            return
        state["pending"] = bool(getattr(module, "require_backward_grad_sync", True))
        state["got"].clear()

    def _hook(self, module: Any) -> Dict[str, Any]:
        state: Dict[str, Any] = {"got": set(), "pending": False, "checked": 0, "step": 0, "handles": []}
        names: Dict[int, str] = {}
        got: Set[str] = state["got"]
        for name, param in module.named_parameters():
            if not param.requires_grad or id(param) in names:
                continue
            names[id(param)] = name
            state["handles"].append(param.register_post_accumulate_grad_hook(lambda p, n=name: got.add(n)))
        state["names"] = list(names.values())
        return state

    def _judge(self, module: Any, state: Dict[str, Any]) -> None:
        """The forward before this one: did its backward reach every parameter?"""
        if not state["pending"]:
            return
        state["pending"] = False
        got: Set[str] = state["got"]
        if not got:
            return  # no backward since that forward (evaluation, a forward never backpropagated)
        step = state["step"]  # counted from 0, as the anomaly watch counts (the loop's own index)
        state["step"] += 1
        state["checked"] += 1
        missing = [n for n in state["names"] if n not in got]
        if missing:
            self._report(module, step, missing, len(state["names"]))
        if missing or state["checked"] >= STEPS:
            for handle in state["handles"]:
                handle.remove()
            state["handles"] = []
            state["checked"] = STEPS

    def _report(self, module: Any, step: int, missing: List[str], total: int) -> None:
        shown = ", ".join(missing[:SHOWN]) + (f" and {len(missing) - SHOWN} more" if len(missing) > SHOWN else "")
        sentence = (
            f"at step {step}, {len(missing)} of the DDP model's {total} parameters got no gradient: {shown}. "
            "DDP without `find_unused_parameters=True` waits for every parameter's gradient: this rank raises "
            f"'{ERROR_TEXT}' at its next training forward, and a rank that did use them waits in the all-reduce (a hang). "
            "Make every parameter take part in the loss, freeze the unused ones (`requires_grad_(False)`) "
            "before wrapping, or pass `find_unused_parameters=True`"
        )
        found = {"kind": "unused_parameters", "step": step, "parameters": missing, "sentence": sentence}
        found.update(action="log", distributed=True)
        self.found.append(found)
        self.report(found)

    def explain(self, exc: BaseException) -> Optional[str]:
        """One line for DDP's own error, naming the parameters, or None if it is another error."""
        if ERROR_TEXT not in str(exc):
            return None
        if self.found:
            last = self.found[-1]
            names = ", ".join(last["parameters"][:SHOWN])
            cause = f"step {last['step']}'s backward gave no gradient to {names}"
        else:
            cause = "some parameters got no gradient in the previous backward"
        return (
            f"DDP's RuntimeError '{ERROR_TEXT}' means {cause}: DDP waits for every parameter's gradient "
            "unless `find_unused_parameters=True`"
        )


def _copes(module: Any) -> bool:
    """DDP told to expect parameters without gradients."""
    return bool(getattr(module, "find_unused_parameters", False) or getattr(module, "static_graph", False))


_WATCH: List[UnusedWatch] = []


def install(report: Callable[[Dict[str, Any]], None]) -> UnusedWatch:
    """Watch every DDP model of this process (one global forward pre-hook, installed once: a
    second install, e.g. a rank armed both by a debug session and by ``rank_entry``, only
    redirects the reports, so each finding is reported once)."""
    from torch.nn.modules import module as nn_module
    from torch.nn.parallel import DistributedDataParallel

    if _WATCH:
        _WATCH[0].report = report
        return _WATCH[0]
    watch = UnusedWatch(report)
    _WATCH[:] = [watch]

    def before_forward(module: Any, args: Any) -> None:
        if isinstance(module, DistributedDataParallel):
            try:
                watch.before_forward(module)
            except Exception:
                pass  # never raise into the user's forward

    nn_module.register_module_forward_pre_hook(before_forward)
    return watch


def forget() -> None:
    """Remove the hooks still on parameters (the end of the rank: see ``rank_entry._release``)."""
    for watch in _WATCH:
        for state in watch.models.values():
            for handle in state["handles"]:
                handle.remove()
        watch.models.clear()


def current() -> Optional[UnusedWatch]:
    return _WATCH[0] if _WATCH else None
