"""The anomaly watch: every module output, every gradient and every loss, checked as training runs.

Installed with no change to the user's code (see :mod:`anomaly_activation`), through torch's
global extension points and thin wrappers of torch's own functions:

- a global module forward hook (``register_module_forward_hook``): each floating output is
  tested with one ``aminmax`` (:mod:`anomaly_detect`) for NaN/Inf, magnitude past the
  threshold, and all-zero outputs (dead modules);
- ``Tensor.backward`` / ``torch.autograd.backward``, wrapped: a step is one outermost call; the
  scalar it is called on is the step's loss. Before the real backward: loss rules
  (:mod:`loss_health`) and stale gradients; after it: parameter gradients (:mod:`anomaly_grads`);
- global optimizer step hooks: a step on gradients that were never zeroed (:mod:`anomaly_stale`).

On the CPU a module output is judged at once, so the debugger stops in the user's frame that
called the module that went bad, with its inputs still there. On other devices the checks stay
on the device and are read once per step, after ``backward`` (:mod:`anomaly_device`).

Rules kept: nothing here raises into user code (errors are counted in :attr:`Watch.errors`),
nothing records autograd history (reductions run on detached views or under ``no_grad``),
nothing draws random numbers or changes a tensor. Public: :func:`install`, :func:`uninstall`,
:func:`current`, :func:`last_report`, :func:`reports`, :func:`anomalies_reported`,
:func:`clear_reports`. Past :data:`MAX_REPORTS` reports the first half and the latest half are kept (the first is the
origin, the latest the state now); every anomaly is counted.
"""

from __future__ import annotations

import importlib
import sys
import warnings
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

from ..summary.jsonable import jsonable
from . import children
from . import report as R
from .amp import ScalerTracker, scale_wrapper, unscale_wrapper, update_wrapper
from .backward import autograd_backward, tensor_backward
from .clipping import ClipHints, clip_wrapper
from .clipping import targets as clip_targets
from .config import BREAK, LOG, OFF, AnomalyConfig
from .data_origin import FORWARD_FRAMES, data_scale, nonfinite_data
from .dead import DeadEvidence, DeadRule
from .detect import EXPLOSION, NONFINITE, ZERO
from .device import DeviceBatch
from .forward import ForwardChecks
from .frames import outermost_module, user_frame
from .grad_checks import GradientChecks
from .loss_checks import LossChecks
from .loss_health import LossSeries
from .masks import masked_output
from .names import ModuleNames
from .names import unwrap as names_unwrap
from .norms import zero_spread
from .origins import bad_inputs, made_by_own_code, made_inside
from .patches import Patches
from .pause import ADVICE_PREFIX, LINE_PREFIX, announce, debugger_attached, pause
from .sentences import sentence
from .stale import StaleGradTracker
from .steps import OptimizerSteps, init_wrapper, scaler_step_wrapper
from .sums import ProvenSums
from .vanished import VanishedStreak

MAX_REPORTS = 100
# An output past the threshold but within this factor of the loop's largest data value is on the
# data's scale (a regression on raw targets), not exploding; a learning rate too high overshoots it.
DATA_SCALE_FACTOR = 10.0
MAX_ERRORS = 20
# What a step's lesser report (an explosion, a dead unit, a spike) must not hide: the step's NaN/Inf,
# which may be born later in it at another module, and its first origin is the report that matters.
NONFINITE_KINDS = frozenset(("nonfinite_output", "nonfinite_grad", "loss_nan"))
ERROR_PREFIX = "[torchdoctor] internal error in the anomaly watch: "
# a module's held state (:meth:`Watch._held_facts`): the reached child's is dropped for its parent's
_HELD_KEYS = "params_shared buffers_bad buffers_bad_kinds params_stepped params_update params_stepped_by".split()
_HELD_KEYS.append("params_stepped_named")

_WATCH: Optional["Watch"] = None
_REPORTS: List[Dict[str, Any]] = []  # the first and the latest MAX_REPORTS // 2 reports (anomalies and advice)
_COUNT = {"anomalies": 0}  # every anomaly reported since clear_reports(), kept or not (advice is not counted)
_SINK: List[Callable[[Dict[str, Any]], None]] = []  # a child process's reports also go there


def set_sink(sink: Optional[Callable[[Dict[str, Any]], None]]) -> None:
    """Where each report also goes (a child of ``torchdoctor run`` writes them to a file)."""
    _SINK[:] = [sink] if sink is not None else []


def install(
    config: AnomalyConfig, on_break: Optional[Callable[[Dict[str, Any]], None]] = None, deferred: Optional[bool] = None
) -> Optional["Watch"]:
    """Start watching (replacing any watch already installed); None if ``mode`` is off.

    ``on_break(report)`` runs for a "break" hit when no debugger is attached (``torchdoctor
    run`` stops the script there). ``deferred=True`` takes the accelerator path on the CPU too
    (tests); by default it is taken for tensors not on the CPU.
    """
    global _WATCH
    uninstall()
    if config.mode == OFF:
        return None
    watch = Watch(config, on_break, deferred)
    try:
        watch.attach()
    except BaseException:
        watch.detach()  # all or nothing
        raise
    _WATCH = watch
    return watch


def uninstall() -> None:
    global _WATCH
    if _WATCH is not None:
        _WATCH.detach()
        _WATCH = None


def current() -> Optional["Watch"]:
    return _WATCH


def last_report() -> Optional[Dict[str, Any]]:
    """The latest anomaly (JSON-able dict), or None: evaluate it in the Debug Console."""
    return _REPORTS[-1] if _REPORTS else None


def reports() -> List[Dict[str, Any]]:
    """The reports kept, oldest first: every one up to :data:`MAX_REPORTS`; past it the first
    ``MAX_REPORTS // 2`` (where it began) and the latest ``MAX_REPORTS // 2``."""
    return list(_REPORTS)


def anomalies_reported() -> int:
    """How many anomalies were reported since :func:`clear_reports`, including those
    :func:`reports` no longer keeps; advice (loss trends) is not counted."""
    return _COUNT["anomalies"]


def clear_reports() -> None:
    del _REPORTS[:]
    _COUNT["anomalies"] = 0


class Watch(ForwardChecks, LossChecks, GradientChecks, DeadRule, Patches):
    def __init__(self, config: AnomalyConfig, on_break, deferred: Optional[bool]) -> None:
        self.config = config
        self.on_break = on_break
        self.force_deferred = bool(deferred)
        self.step = 0
        self.updates = 0  # optimizer steps seen
        self.names = ModuleNames()
        self._ran: Set[int] = set()  # modules called since the last backward (forward.py)
        self.losses = LossSeries(config.spike_factor)  # one series per backward() call site
        self.stale = StaleGradTracker()
        self.vanished = VanishedStreak()  # every gradient 0, steps in a row (vanished.py)
        self.amp = ScalerTracker()  # GradScaler: scaled losses, skipped steps
        self.clips = ClipHints()  # does the script clip its gradients?
        self.dead = DeadEvidence()  # zero outputs of layers that learn are not dead
        self.sums = ProvenSums()  # modules whose large output is a per-sample sum (sums.py)
        self.optimizers = OptimizerSteps()  # a report's step counts optimizer steps when there are any
        self._amp_step: Any = None  # (scaler, unscaled loss) while a scaled loss's backward runs
        self._unscaled_step = -1  # the step whose gradients scaler.unscale_() divided already
        self._pending_explosion: Optional[int] = None  # held until the script's clipping (its step)
        self._pending_scale: Optional[float] = None
        self._pending_order: Optional[List[int]] = None  # the held explosion's distance order
        self._loss_types: Dict[type, bool] = {}
        self._passing: Dict[type, Tuple[Any, bool]] = {}  # module type -> (passthrough bounds, needs exact)
        self.pending = DeviceBatch()  # deferred forward checks of this step
        self.errors: List[str] = []
        self.done = False  # firstOnly: the first anomaly has been reported
        self._reported_step = -1  # the last step with a report that counts (one per step, firstOnly false)
        self._nonfinite_step = -1  # the last step with a counted report of NaN/Inf (NONFINITE_KINDS)
        self._bad_output_step = -1  # last step in which a module output was non-finite
        self._dead: Dict[int, List[int]] = {}  # id(module) -> [first step, last step] all-zero
        self._forget_last()  # the last output checked: none yet (forward.ForwardChecks)
        self._sites: Dict[Any, Any] = {}  # backward() call sites and their loss series (loss_checks)
        self._last_loss: Optional[float] = None
        self._last_grads: Any = None  # ([param paths], [(min, max)] or [2-norms]) of the last gradient check
        self._grad_seen: Dict[int, Any] = {}  # id(param) -> (weakref to its grad, grad version)
        self._handles: List[Any] = []
        self._patched: List[Any] = []
        # the configured checks (forward, backward, loss): the config is fixed for the watch's life
        self._checks = tuple(config.watches(part) for part in ("forward", "backward", "loss"))
        self._refresh_flags()

    # -- installing ------------------------------------------------------------------------------

    def attach(self) -> None:
        torch = sys.modules["torch"]
        self._torch = torch
        self._is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)
        self._tensor_type, self._strided = torch.Tensor, torch.strided
        self._grad_dtypes = frozenset((torch.float32, torch.float16, torch.bfloat16, torch.float64))
        self._known = self.names.known
        # torch.compile(model) warns that global hooks fire once more for its wrapper: we know
        # (names.unwrap), and the user did not register them.
        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        # A global hook, not a wrapper of Module._call_impl (cheaper, but a frame of ours between the
        # user's frames shows in the debugger's call stack under justMyCode).
        modules = torch.nn.modules.module
        try:  # keyword inputs too: DETR's multihead_attn(query=..., key=..., value=memory)
            self._handles.append(modules.register_module_forward_hook(self._forward_hook_kwargs, with_kwargs=True))
        except TypeError:  # a torch without with_kwargs for global hooks
            self._handles.append(modules.register_module_forward_hook(self._forward_hook))
        optimizer = importlib.import_module("torch.optim.optimizer")  # torch imports optim lazily
        self._patch(optimizer.Optimizer, "__init__", lambda original: init_wrapper(original, current))
        self._handles.append(optimizer.register_optimizer_step_pre_hook(self._step_pre_hook))
        self._handles.append(optimizer.register_optimizer_step_post_hook(self._step_post_hook))
        self._patch(torch.Tensor, "backward", lambda original: tensor_backward(original, current))
        self._patch(torch.autograd, "backward", lambda original: autograd_backward(original, current))
        try:
            scaler_type = importlib.import_module("torch.amp.grad_scaler").GradScaler
        except Exception:  # an old torch: no scaler to understand
            scaler_type = None
        if scaler_type is not None:
            self._patch(scaler_type, "scale", lambda original: scale_wrapper(original, current))
            self._patch(scaler_type, "unscale_", lambda original: unscale_wrapper(original, current))
            self._patch(scaler_type, "update", lambda original: update_wrapper(original, current))
            self._patch(scaler_type, "step", lambda original: scaler_step_wrapper(original, current))
        for module, name in clip_targets():
            self._patch(module, name, lambda original: clip_wrapper(original, current))

    def _refresh_flags(self) -> None:
        """What to check this step: cheap booleans read by the hot hooks (after every backward)."""
        config = self.config
        live = not self.done and self.step >= config.skip_steps
        forward, backward, loss = self._checks
        self.check_forward, self.check_backward, self.check_loss = live and forward, live and backward, live and loss
        self._threshold = config.threshold

    # -- forward (the checks: :mod:`forward`) ----------------------------------------------------

    def _output_hit(self, module, inputs, t, low: float, high: float, kind: str, before=None, kwargs=None) -> None:
        if kind == ZERO:
            if not self._is_loss_module(module, t):  # a loss of exactly 0 is a perfect fit, not a dead unit
                self._dead_hit(module, inputs, t, before)
            return
        if kind == EXPLOSION and self._is_loss_module(module, t):
            return  # a loss summed over a batch is large by construction (reduction='sum')
        first_bad = self._bad_output_step != self.step
        if not self._may_report(self.config.mode, nonfinite=kind == NONFINITE):
            # Nothing more is reported (firstOnly after the first report, this step's already made):
            # the excuses below read whole tensors and the loop's data, on every hit of every step of
            # a run whose weights blew up (an lr x1e6 GAN ran past 4 minutes): not asked then.
            if kind == NONFINITE:
                self._bad_output_step = self.step
            return
        if masked_output(t, low, high, self.config.threshold):
            return  # illegal actions' logits set to -inf or -1e9 on purpose (masks.py)
        if kind == EXPLOSION and self.sums.judge(module, t, max(-low, high), self.config.threshold):
            return  # a flow's log-likelihood summed over 12288 pixels (sums.py)
        if kind == EXPLOSION and max(-low, high) <= DATA_SCALE_FACTOR * data_scale(user_frame()):
            return  # a model fitting raw targets (2e5 dollars): the data's scale, not an explosion
        if kind == NONFINITE:
            self._bad_output_step = self.step
        frame = user_frame()
        report = R.base(
            "nonfinite_output" if kind == NONFINITE else "exploding_output",
            "forward",
            self.step,
            frame,
            self.config.mode,
        )
        report.update(R.module_facts(self.names, module, frame, outermost_module(sys._getframe())))
        report.update(R.output_facts(t, inputs, low, high, self.config.threshold, _names(inputs, kwargs)))
        if kind == NONFINITE:
            self._held_facts(report, module, frame)
        report.update(R.evaluation_facts(self.names.name(module)[0], self._torch, sys._getframe()))
        report["first_bad_in_step"] = first_bad
        if kind == NONFINITE and first_bad and not report.get("inputs_bad"):
            self._own_code(report, module, t, inputs)
        if kind == NONFINITE and first_bad and report.get("inputs_bad"):
            self._made_inside(report, inputs, frame)
            if not report.get("made_inside"):  # from outside the modules: the loop's batch, if it holds it
                report["data_bad"] = nonfinite_data(frame, FORWARD_FRAMES)
        self._emit(report, frame, about=module)

    def _made_inside(self, report: Dict[str, Any], inputs: Any, frame) -> None:
        """No module before made the NaN its inputs had: did a parent's own forward code make it?"""
        found = made_inside(sys._getframe(), bad_inputs(inputs))
        if found is None:
            return
        report["reached"] = {k: report[k] for k in ("module", "module_type", "qualname")}
        report.update(R.module_facts(self.names, found["module"], frame, outermost_module(sys._getframe())))
        report["made_inside"] = True
        report.update(R.origin_facts(found))
        for key in _HELD_KEYS:
            report.pop(key, None)  # the reached child's: the parent's are read now
        self._held_facts(report, found["module"], frame)  # its own weights may hold it (awd-lstm's embedding)

    def _own_code(self, report: Dict[str, Any], module: Any, t: Any, inputs: Any) -> None:
        """Finite inputs, parameters and buffers, no child bad first: the op of its own forward, or
        (torch's own layers have no forward to search) a norm layer's 0/0 with eps=0 (norms.py)."""
        if report.get("params_bad") or report.get("buffers_bad"):
            return
        found = made_by_own_code(names_unwrap(module), t)
        if found is not None:
            report["own_code"] = True
            report.update(R.origin_facts(found))
            return
        spread = zero_spread(names_unwrap(module), inputs)
        if spread is not None:
            report["zero_spread"] = spread

    def _held_facts(self, report: Dict[str, Any], module: Any, frame) -> None:
        """The module's parameters and buffers holding NaN/Inf, and whether one of its optimizers
        updated them since the last ``backward()`` that gave them gradients (else code between the
        steps wrote them), or is updating them now (``steps.OptimizerSteps.stepped_since``)."""
        report.update(R.params_facts(module))
        if not (report["params_bad"] and self.step > 0):
            return
        params = list(names_unwrap(module).parameters())
        status, optimizer = self.optimizers.stepped_since(params, self.step, sys._getframe())
        report["params_stepped"] = status in ("stepped", "under_way")
        if status in ("under_way", "unknown", "skipped"):
            report["params_update"] = status
        if optimizer is not None and status != "not_stepped":  # the script's name for it, else its class
            label = R.root_label(optimizer, frame)
            report["params_stepped_by"] = label["root_var"] or type(optimizer).__name__
            report["params_stepped_named"] = label["root_var"] is not None

    def _is_loss_module(self, module: Any, t: Any) -> bool:
        """A loss module (``nn.*Loss``, or a class named ``...Loss`` returning a scalar), or any
        module returning a 0-d value: a model that computes its own loss (Barlow Twins' forward
        returns ``on_diag + lambd * off_diag``, ~1.5e4 at batch 32 by construction). A model's
        predictions have a batch dimension, even for one sample."""
        cls = type(module)
        known = self._loss_types.get(cls)
        if known is None:
            known = self._loss_types[cls] = issubclass(cls, self._torch.nn.modules.loss._Loss)
        return known or t.dim() == 0 or (cls.__name__.lower().endswith("loss") and t.numel() == 1)

    # -- optimizer -------------------------------------------------------------------------------

    def _step_pre_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not self.check_backward:
            return None
        try:
            if self._pending_explosion is not None:  # the script names clipping but did not clip
                self._judge_pending({"clipping": True})
            stale = self.stale.before_step(optimizer)
            if stale and self._may_report(self.config.mode, step=max(self.step - 1, 0)):
                self._stale_hit(optimizer, stale)
        except Exception as exc:
            self._error(exc)
        return None

    def _step_post_hook(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        self.updates += 1
        try:
            self.optimizers.stepped(optimizer)
            self.optimizers.updated(optimizer, self.step)  # one dict store a step: what a NaN weight is blamed on
            self.stale.after_step(optimizer)
        except Exception as exc:
            self._error(exc)
        return None

    def _stale_hit(self, optimizer: Any, stale: Dict[str, Any]) -> None:
        frame = user_frame()
        step = max(self.step - 1, 0)  # the step whose backward came just before this optimizer step
        report = R.base("stale_grad", "optimizer", step, frame, self.config.mode)
        label = R.root_label(optimizer, frame)
        report["optimizer"] = label["root_var"] or "optimizer"
        report["optimizer_type"] = type(optimizer).__name__
        report["stale_params"] = stale["params"]
        report["example_param"] = self._param_name(stale["example"], frame)
        self._emit(report, frame, step=step, about=optimizer)

    def _param_name(self, param: Any, frame) -> Optional[str]:
        for path, p, module in self.names.parameters():
            if p is param:
                return self._qualify(path, module, frame)
        return None

    def _qualify(self, path: str, module: Any, frame) -> str:
        """``model.net.0.weight``: a path in a root model, prefixed with the user's name for it."""
        root, _ = self.names.name(module)
        return f"{R.root_label(root, frame)['label']}.{path}" if root is not None else path

    # -- reporting -------------------------------------------------------------------------------

    def _may_report(
        self, action: str, step: Optional[int] = None, advice: bool = False, nonfinite: bool = False
    ) -> bool:
        """Is a hit reported? With ``firstOnly`` false one report counts per step, but a NaN/Inf
        (``nonfinite``) only waits for another NaN/Inf: an explosion at an early layer must not hide
        the NaN a later one makes in the same step (at most two lines a step)."""
        step = self.step if step is None else step
        if action == OFF or self.done or step < self.config.skip_steps:
            return False
        last = self._nonfinite_step if nonfinite else self._reported_step
        return advice or self.config.first_only or not self._counts(action) or last != step

    def _counts(self, action: str) -> bool:
        """Does a hit with this action count for ``firstOnly`` / one-per-step? Breaks do (and every
        hit in log mode); a rule set to "log" in break mode (a loss trend) is a note on the side."""
        return action == BREAK or self.config.mode == LOG

    def _emit(
        self, report: Dict[str, Any], frame, step: Optional[int] = None, about: Any = None, count: bool = True
    ) -> None:
        if count:  # a scaler's run of skipped steps is already counted in its own steps
            self._count_steps(report, frame, about)
        worker = _SINK and children.in_worker()
        if worker:  # a DataLoader worker never runs backward: its one report is the whole story
            report["worker_id"] = children._worker()
            report["sample_index"] = children.sample_index(frame)
            self.config.first_only = True
        report["sentence"] = sentence(report)
        report = jsonable(report)  # strict JSON (NaN -> "NaN"): the Debug Console and CI read it
        _REPORTS.append(report)
        if len(_REPORTS) > MAX_REPORTS:  # the oldest of the latest half goes: the first ones stay
            del _REPORTS[MAX_REPORTS // 2]
        if not report.get("advice"):
            _COUNT["anomalies"] += 1
        for sink in _SINK:
            sink(report)
        if report.get("advice"):  # a loss trend: a note on the side, whatever the mode
            announce(report["sentence"], prefix=ADVICE_PREFIX)
            return
        if self._counts(report["action"]):
            self._reported_step = self.step if step is None else step
            if report["kind"] in NONFINITE_KINDS:
                self._nonfinite_step = self._reported_step
            if self.config.first_only:
                self.done = True
                self._refresh_flags()
        announce(report["sentence"], prefix=LINE_PREFIX)
        if report["action"] != BREAK:
            return
        if debugger_attached() and pause(frame, report["sentence"], report):
            return
        if self.on_break is not None:
            self.on_break(report)  # torchdoctor run: stops the script (a BaseException)

    def _count_steps(self, report: Dict[str, Any], frame, about: Any) -> None:
        """The report's step in optimizer steps (:mod:`steps`), when the script has an optimizer."""
        report["backward_calls"] = report["step"]
        since_counts = report.pop("dead_since_counts", None)  # a dead streak's start, see dead.py
        found: Optional[Tuple[int, Any]] = None
        try:
            if about is not None and isinstance(about, self._torch.nn.Module):
                params = list(names_unwrap(about).parameters()) or []
            elif about is not None and isinstance(about, self._torch.optim.Optimizer):
                found = (self.optimizers.counts.get(id(about), 0), about)
                params = None
            else:
                params = [about] if about is not None else []
            if params is not None:
                found = self.optimizers.step_of(params)
            if found is None:
                return
            report["step"], optimizer = found
            if since_counts is not None:
                report["dead_since"] = min(since_counts.get(id(optimizer), 0), report["step"])
            if len(self.optimizers.live()) > 1:
                report["step_optimizer"] = R.root_label(optimizer, frame)["label"]
        except Exception as exc:
            self._error(exc)

    def _deferred(self, t: Any) -> bool:
        return self.force_deferred or not t.is_cpu

    def _error(self, exc: BaseException) -> None:
        """A failure of the watch itself: kept (at most :data:`MAX_ERRORS`), and the first one said
        once, on its own line, so that a check that stopped working is not silent (the script goes on)."""
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            if len(self.errors) == 1:
                announce(f"{self.errors[0]} (the watch goes on; later ones are not shown)", prefix=ERROR_PREFIX)


def _names(inputs: Any, kwargs: Any) -> Optional[List[str]]:
    """Names of the inputs a report lists: positions, then keywords (``value``)."""
    if not kwargs:
        return None
    positional = len(inputs) - len(kwargs)
    return [f"#{i}" for i in range(positional)] + [str(k) for k in kwargs]
