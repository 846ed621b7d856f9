"""The watch's loss checks and its after-``backward()`` work: loss rules, deferred device checks.

A mixin of :class:`watch.Watch` (it uses the watch's state: ``config``, ``names``, ``step``,
``amp``, ``losses``, ``pending``...), kept apart so that each file stays readable. Before the real
backward the step's loss is judged (:mod:`loss_health`, one series per ``backward()`` call site);
after it the step's deferred device checks and fresh gradients are read in one transfer and
handed to :class:`grad_checks.GradientChecks`.
"""

from __future__ import annotations

import os
import sys
import weakref
from itertools import islice
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Set, Tuple

from . import report as R
from .amp import ScalerTracker
from .data_origin import nonfinite_data
from .dead import DeadEvidence
from .detect import NONFINITE, ZERO, checkable, extremes_device, grad_norms, verdict
from .device import DeviceBatch
from .frames import user_frame
from .grads import zero_grads
from .host import WatchHost
from .lagging import has_lagging_copy
from .loss_forensics import describe, find_origin
from .loss_health import TREND_RULES, LossSeries
from .masks import judged_kept
from .stale import StaleGradTracker

_ref = weakref.ref
_ACCUMULATE: List[Any] = []  # torch's AccumulateGrad node type, looked up once
MAX_SITES = 256  # backward() call sites whose line numbers are cached

_LOSS_KINDS = {
    "nan": "loss_nan",
    "spike": "loss_spike",
    "notDecreasing": "loss_not_decreasing",
    "oscillating": "loss_oscillating",
}


class LossChecks(WatchHost):
    # The watch's state and methods this mixin uses (declared for the type checker; the values
    # are :class:`watch.Watch`'s).
    amp: ScalerTracker
    stale: StaleGradTracker
    losses: LossSeries
    dead: DeadEvidence
    pending: DeviceBatch
    force_deferred: bool
    check_backward: bool
    check_loss: bool
    _amp_step: Any
    _ran: Set[int]  # modules called since the last backward (forward.py; lagging.py reads it)
    _last_loss: Optional[float]
    _last_grads: Any
    _bad_output_step: int
    _grad_seen: Dict[int, Any]
    _tensor_type: Any
    _strided: Any
    _grad_dtypes: Any
    _last_out: Callable[[], Any]  # forward.ForwardChecks: the last output checked (weakly)
    _last_version: int
    _last_extremes: Tuple[float, float]
    _last_id: int
    _last_one: bool
    _sites: Dict[Tuple[int, int, int, int, int], Tuple[Any, Any, Tuple[Any, int, Any, int, int], Any]]

    if TYPE_CHECKING:

        def _deferred(self, t: Any) -> bool: ...

        def _refresh_flags(self) -> None: ...

        def _dead_after_backward(self, frame: Any) -> None: ...

        def _grads_hit(self, grads: Any, table: Any, frame: Any, loss: Any = None) -> None: ...

        def _grad_norms_hit(self, grads: Any, norms: Any, frame: Any, loss: Any = None) -> None: ...

    def before_backward(self, loss: Any, frame) -> None:
        try:
            # A GradScaler's scale(loss): judge the unscaled loss, and the gradients unscaled.
            self._amp_step = self.amp.lookup(loss) if self.amp._scaled else None
            if self.check_backward:
                self.stale.before_backward()
            if self.check_loss:
                value = self._checked_loss(loss)
                if value is None and is_scalar(loss) and not self._deferred(loss):
                    value = self._loss_value(loss)
                if value is not None:
                    self._loss_hit(value, loss, frame)
        except Exception as exc:
            self._error(exc)

    def _checked_loss(self, loss: Any) -> Optional[float]:
        """The forward check's own read of the loss, when the loss is the one value it read last
        (a loss module's output, on the CPU), unchanged since; None otherwise (or under a GradScaler)."""
        if self._last_one and id(loss) == self._last_id and not self._amp_step:
            if self._last_out() is loss and loss._version == self._last_version:
                return self._last_extremes[0]
        return None

    def _loss_value(self, loss: Any) -> float:
        """The loss as a float: the unscaled one under a GradScaler."""
        if self._amp_step:
            return float(self._amp_step[1].item())
        return float(loss.detach().item())

    def after_backward(self, loss: Any, frame) -> None:
        try:
            self._flush_deferred(loss, frame)
            if self.dead.pending:
                self._dead_after_backward(frame)
        except Exception as exc:
            self._error(exc)
        self._amp_step = None
        self.step += 1
        self._ran.clear()  # one step's calls: a copy that ran in it computed this step's targets
        self._refresh_flags()

    def _loss_hit(self, value: float, loss: Any, frame) -> None:
        self._last_loss = value
        # One series per backward() call site (the caller's line and the line that called it):
        # a GAN's discriminator and generator losses are different curves.
        site, health = self._loss_series(frame, loss)
        for finding in health.observe(value, self.updates):
            rule = str(finding["rule"])
            # trends are advice: never a stop, never the exit status; so is a spike in
            # adversarial training (pytorch/examples' DCGAN: the discriminator's loss on fakes
            # jumps 17x when the generator wins a step, its normal game), or beside a lagging
            # copy of the model (a DQN's target network: its syncs move the targets, lagging.py)
            adversarial = rule == "spike" and self._adversarial()
            lagging = rule == "spike" and not adversarial and self._lagging_copy(frame)
            advice = rule in TREND_RULES or adversarial or lagging
            action = self.config.action(rule)
            if not self._may_report(action, advice=advice, nonfinite=rule == "nan"):
                continue
            frame = user_frame(frame)
            report = R.base(_LOSS_KINDS[rule], "loss", self.step, frame, action)
            report.update({k: v for k, v in finding.items() if k != "rule"})
            report["loss"] = value
            report["advice"] = advice
            if lagging:
                report["lagging_copy"] = True
            report["loss_site"], report["loss_series"] = self.losses.labels.get(site), len(self.losses)
            if self._amp_step is not None:
                report["unscaled"] = True
            if rule == "nan":
                self._explain_nan(report, loss, frame)
            if rule == "notDecreasing" and self._last_grads:
                paths, table = self._last_grads
                if table and not isinstance(table[0], tuple):  # norms (grad_checks): (-n, n) bounds
                    table = [(-n, n) for n in table]
                report["zero_grad_params"] = self._qualified(zero_grads(paths, table), frame)
                report["params_with_grad"] = len(paths)
            self._emit(report, frame)

    def _qualified(self, paths: List[str], frame) -> List[str]:
        """``model.fc1.weight`` for ``fc1.weight``, as the anomaly lines name parameters (a report path)."""
        if not paths:
            return paths
        owners: Dict[str, Any] = {}
        for path, _, module in self.names.parameters():
            owners.setdefault(path, module)
        return [self._qualify(path, owners[path], frame) if path in owners else path for path in paths]

    def _lagging_copy(self, frame) -> bool:
        try:
            return has_lagging_copy(frame, self.optimizers.live(), self._ran)
        except Exception:  # an odd object in the loop's frames: the spike stays an anomaly
            return False

    def _adversarial(self) -> bool:
        """Several losses and several optimizers: a GAN (or any models trained against each other)."""
        return len(self.losses) > 1 and len(self.optimizers.live()) > 1

    def _loss_series(self, frame, loss: Any = None) -> Tuple[Tuple[Any, int, Any, int, int], Any]:
        """The call site ``(code, line, calling code, its line)`` of a ``backward()`` call, and its
        loss series. A line number is computed from the frame's instruction offset by a scan of
        the code's line table, and a code object's hash hashes its constants (both long for a
        script's module-level loop): the pair is cached per pair of offsets, keyed by the code
        objects' ids (the entry holds the code objects, so the ids stay theirs)."""
        back = frame.f_back
        code = frame.f_code
        back_code = back.f_code if back is not None else None
        owner = _owner(frame, code)
        if not owner and loss is not None:
            # one line may train several models in turn (``for net, opt in zip(nets, opts)``):
            # the parameter nearest the loss tells whose loss it is (a few nodes: a few µs)
            owner = _nearest_parameter(loss)
        key = (id(code), frame.f_lasti, id(back_code), back.f_lasti if back is not None else -1, owner)
        entry = self._sites.get(key)
        if entry is None or entry[0] is not code or entry[1] is not back_code:
            site = (code, frame.f_lineno, back_code, back.f_lineno if back is not None else 0, owner)
            health = self.losses.by_site.get(site) or self.losses.get(site, _site_label(frame))
            entry = (code, back_code, site, health)
            if len(self._sites) < MAX_SITES:
                self._sites[key] = entry
        return entry[2], entry[3]

    def _explain_nan(self, report: Dict[str, Any], loss: Any, frame: Any) -> None:
        from ...spelling import fmt_num

        report["loss_text"] = fmt_num(report["loss"])
        report["modules_clean"] = self.config.watches("forward") and self._bad_output_step != self.step
        if loss is not None and getattr(loss, "grad_fn", None) is not None:
            origin = find_origin(loss)
            report["origin_op"] = origin
            report["origin"] = describe(origin)
        if report["modules_clean"] and not report.get("origin"):  # a NaN target reaches only the loss
            report["data_bad"] = nonfinite_data(frame)

    def _flush_deferred(self, loss: Any, frame) -> None:
        """The step's device checks (accelerators) and its gradients, read in one transfer."""
        grads, tensors, on_cpu = self._fresh_grads() if (self.check_backward and loss is not None) else ([], [], True)
        deferred_loss = self._deferred_loss(loss)
        if not len(self.pending) and not deferred_loss and not self.force_deferred and on_cpu:
            if grads:  # the CPU: read each gradient's norm directly, nothing to batch
                self._grad_norms_hit(grads, grad_norms(tensors), frame, loss)
            return
        batch, self.pending = self.pending, DeviceBatch()
        if deferred_loss:
            batch.add(("loss",), (self._amp_step[1] if self._amp_step else loss.detach()).reshape(1).float())
        for entry in grads:
            batch.add(("grad",), extremes_device(entry[3]).float())
        if not len(batch):
            return
        rows = batch.flush()
        forward = [(tag[1], tag[2], values) for tag, values in rows if tag[0] == "forward"]
        self._deferred_forward(forward, frame)
        if deferred_loss:
            self._loss_hit([v for tag, v in rows if tag[0] == "loss"][0][0], None, frame)
        if grads:
            table = [(v[0], v[1]) for tag, v in rows if tag[0] == "grad"]
            self._grads_hit(grads, table, frame, loss)

    def _deferred_loss(self, loss: Any) -> bool:
        """Is the loss judged after backward, with the step's device checks (not on the CPU)?"""
        if loss is None or not self.check_loss:
            return False
        if not self.force_deferred and type(loss) is self._tensor_type and loss.is_cpu:
            return False  # the usual case, without is_scalar's reads
        return is_scalar(loss) and self._deferred(loss)

    def _fresh_grads(self) -> Tuple[List[Tuple[str, Any, Any, Any]], List[Any], bool]:
        """Gradients this backward wrote (another model's old ``.grad`` is not this step's news):
        ``(path, parameter, module, grad)`` entries, the gradients alone, and whether they are all
        on the CPU.

        A gradient is the same if it is the same tensor (weak reference) at the same version;
        backward either accumulates in place (new version) or creates a new tensor.
        """
        entries, grads = [], []
        on_cpu = True
        seen = self._grad_seen
        tensor, strided, floats = self._tensor_type, self._strided, self._grad_dtypes
        for path, p, module in self.names.parameters():
            grad = p.grad
            if grad is None:
                continue
            known = seen.get(id(p))
            version = grad._version
            if known is not None and known[0]() is grad and known[1] == version:
                continue
            # checkable(grad), inlined: a dense floating gradient with values (sparse ones are not
            # read); a CPU tensor is not a meta one
            cpu = grad.is_cpu
            if (
                type(grad) is tensor
                and grad.dtype in floats
                and grad.layout is strided
                and grad.numel()
                and (cpu or not grad.is_meta)
            ) or ((type(grad) is not tensor or grad.dtype not in floats) and checkable(grad)):
                seen[id(p)] = (_ref(grad), version)
                entries.append((path, p, module, grad))
                grads.append(grad)
                on_cpu = on_cpu and cpu
        return entries, grads, on_cpu

    def _deferred_forward(self, forward, frame) -> None:
        for module_ref, kept, (low, high) in forward:
            module = module_ref()
            kind = verdict(low, high, self.config.threshold)
            if module is None or kind is None or kind == ZERO:
                continue  # the dead-output rule needs the inputs: CPU only
            if not self._may_report(self.config.mode, nonfinite=kind == NONFINITE):
                if kind == NONFINITE:
                    self._bad_output_step = self.step
                    return
                continue  # an explosion after the step's report: a NaN in a later row may still be told
            if judged_kept(kept, low, high, self.config.threshold):
                continue  # a mask's fill written on purpose (masks.py)
            if kind == NONFINITE:
                self._bad_output_step = self.step
            frame = user_frame(frame)
            report = R.base(
                "nonfinite_output" if kind == NONFINITE else "exploding_output",
                "forward",
                self.step,
                frame,
                self.config.mode,
            )
            report.update(R.module_facts(self.names, module, frame))
            report.update(
                {
                    "max_abs": max(-low, high) if low == low and high == high else float("nan"),
                    "min": low,
                    "max": high,
                    "threshold": self.config.threshold,
                    "exact": False,
                    "counts": None,
                    "inputs_counts": None,
                }
            )
            self._emit(report, frame, about=module)
            if kind == NONFINITE:
                return  # the step's first NaN/Inf row: the origin (rows are in call order)


def _site_label(frame) -> str:
    """``train.py:42``: the backward() line of a loss series."""
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def is_scalar(t: Any) -> bool:
    """A one-element floating tensor: what a loss is."""
    torch = sys.modules["torch"]
    return isinstance(t, torch.Tensor) and t.numel() == 1 and t.dtype.is_floating_point


def _owner(frame: Any, code: Any) -> int:
    """The object whose method called ``backward()`` (``id(self)``), 0 outside a method: the
    forward-forward algorithm trains each layer with its own optimizer through one
    ``Layer.train`` method, so one call site is several losses, one per layer (pytorch/examples'
    mnist_forward_forward read as one curve: "not decreasing" from layer 2's start)."""
    if code.co_argcount and code.co_varnames[0] == "self":
        return id(frame.f_locals.get("self"))
    return 0


def _nearest_parameter(loss: Any, limit: int = 32) -> int:
    """``id`` of the first parameter found walking back from ``loss`` through its graph
    (breadth first, at most ``limit`` nodes), 0 when none is near. Only read, never run.

    Runs at every ``backward()``: a node's type says whether it is a parameter's
    ``AccumulateGrad`` (asking any other node for ``variable`` raises inside ``getattr``)."""
    start = getattr(loss, "grad_fn", None)
    if start is None:
        return 0
    accumulate = _accumulate_type()
    if type(start) is accumulate:
        return id(start.variable)
    queue = [start]
    for node in islice(queue, limit):  # the list grows as it is read: breadth first
        for child, _ in node.next_functions:
            if child is not None:
                # queued at len(queue): read within the limit, and before anything queued later
                if type(child) is accumulate and len(queue) < limit:
                    return id(child.variable)
                queue.append(child)
    return 0


def _accumulate_type() -> Any:
    found = _ACCUMULATE
    if not found:
        found.append(getattr(sys.modules["torch"]._C._functions, "AccumulateGrad", None))
    return found[0]
