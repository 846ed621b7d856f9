"""The recorder: one Step per ``optimizer.step()`` (per ``backward()`` without an optimizer).

Installed with no change to the user's code, through torch's global hooks and a few wrappers
(:mod:`hooks`): global forward hooks time the outermost module calls (forward; off while such
a call runs, :mod:`outermost`) and give the batch size (the first input's first dimension), ``Tensor.backward`` /
``torch.autograd.backward`` give the loss and the backward time, the global optimizer step
hooks give the optimizer time and the step boundary, ``DataLoader`` iteration gives the data
time. A step's time is split into data, forward, backward, optimizer and other (the rest of the
wall time since the previous step; forwards and data loading under ``no_grad``/``eval()`` are
an evaluation and are left out). One series per optimizer object, named ``opt0``, ``opt1``... in
the order they first step (a GAN has two; a sweep's new optimizer per trial gets a new one, even at
a freed one's ``id``: state is keyed by ``Optimizers.key``); ``backward`` when there is none.

Device values (loss, gradient norms, update ratios, a validation loss) are packed into one
tensor per step. On the CPU it is read at once; on CUDA it is copied to pinned memory without
blocking and read when its event has completed (a later step), so the recorder adds no sync
(at most one, when 16 steps are waiting). Public: :func:`install`, :func:`uninstall`,
:func:`current`.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
import warnings
import weakref
from collections import deque
from time import perf_counter
from typing import Any, Callable, Deque, Dict, List, Optional

from ..anomaly.patches import Patches
from ..anomaly.steps import init_wrapper
from . import hooks, measure
from .config import MonitorConfig
from .devices import DeviceWatch
from .nesting import StepNesting
from .norm_schedule import NormSchedule
from .outermost import Outermost
from .output import MAX_SERIES, Outputs
from .series import Bucketed
from .sites import Optimizers, nothing, site, weak
from .verdicts import Verdicts

PARTS = ("data", "forward", "backward", "optimizer", "other")
MAX_PENDING = 16
MAX_ERRORS = 20

_MONITOR: List["Monitor"] = []


def current() -> Optional["Monitor"]:
    monitor = _MONITOR[0] if _MONITOR else None
    if monitor is not None and monitor.pid != os.getpid():
        return None  # a forked DataLoader worker: its steps are not training steps
    return monitor


def install(config: MonitorConfig) -> "Monitor":
    uninstall()
    monitor = Monitor(config, sys.modules["torch"])
    try:
        monitor.attach()
    except BaseException:
        monitor.detach()
        raise
    _MONITOR.append(monitor)
    return monitor


def uninstall() -> Optional["Monitor"]:
    monitor = _MONITOR.pop() if _MONITOR else None
    if monitor is not None:
        monitor.flush()
        monitor.detach()
    return monitor


class Monitor(Outputs, Patches):
    def __init__(self, config: MonitorConfig, torch: Any) -> None:
        self.config, self.torch = config, torch
        self.pid = os.getpid()
        self.optimizers = Optimizers()
        self.optimizers.freed.append(self._forget)
        self.names: Dict[int, str] = {}  # optimizer key -> series name
        self.series: Dict[str, Bucketed] = {}
        self.verdicts = Verdicts(config.thresholds)
        self.verdicts.hint = self._hint
        self.listeners: List[Callable[[str, Dict[str, Any]], None]] = []
        self.on_step: List[Callable[[Any, int, str], None]] = []  # TensorBoard histograms
        self.started = time.time()
        self.steps = 0
        self.errors: List[str] = []
        self.acc = [0.0] * 5  # data, forward, backward, optimizer, evaluation since the last step
        self.t_mark = perf_counter()
        self.series_t: Dict[str, float] = {}
        self.losses: List[Any] = []
        self.last_loss: Any = None
        self.backward_calls = 0
        self.sites: Dict[str, Any] = {}
        self.clips: List[Any] = []
        self.norms: Dict[int, Any] = {}
        self.norm_schedule = NormSchedule(config.every)
        self.nesting = StepNesting()  # a subclass's step calling super().step(): one step
        # measure.params_of's cache, weak: a deleted optimizer's parameters are not kept
        self.params: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        self.before: Dict[int, Any] = {}
        self.ratios: Dict[int, Any] = {}
        self.root: Any = None
        self.root_t = 0.0
        self.root_eval = False
        self.batch: Optional[int] = None
        self._model: Callable[[], Any] = nothing  # weak: a sweep's deleted models must be freed
        self.devices = DeviceWatch(torch)  # where the model and its batches live (cpu_batches)
        self.models: List[Any] = []  # weak references to the training models seen (parameter names)
        self.eval_sum: Any = None
        self.eval_n = 0
        self.opt_t = 0.0
        self.pending: Deque[Any] = deque()
        self.loaders: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        self.iters: "weakref.WeakKeyDictionary[Any, Any]" = weakref.WeakKeyDictionary()
        self.loader: Optional[Dict[str, Any]] = None
        self._handles: List[Any] = []
        self._patched: List[Any] = []
        self._writer_patched = False
        self.is_tensor = lambda x: isinstance(x, torch.Tensor)
        self.cuda_total: Optional[int] = None
        self._is_compiling = getattr(getattr(torch, "compiler", None), "is_compiling", lambda: False)

    @property
    def model(self) -> Any:
        """The root module of the last training forward, while it is alive."""
        return self._model()

    # -- installing ------------------------------------------------------------------------------

    def attach(self) -> None:
        torch = self.torch
        # torch.compile(model) warns that global hooks fire once more for its wrapper: we know.
        warnings.filterwarnings("ignore", message=r"Using `torch.compile\(module\)` when there are global hooks")
        outermost = Outermost(torch, self._pre, self._post)
        self._handles.append(outermost)
        outermost.attach()
        optimizer = importlib.import_module("torch.optim.optimizer")
        self._patch(optimizer.Optimizer, "__init__", lambda o: init_wrapper(o, current))
        self._handles.append(optimizer.register_optimizer_step_pre_hook(self._step_pre))
        self._handles.append(optimizer.register_optimizer_step_post_hook(self._step_post))
        self._patch(torch.Tensor, "backward", lambda o: hooks.backward_wrapper(o, current, True))
        self._patch(torch.autograd, "backward", lambda o: hooks.backward_wrapper(o, current, False))
        for name in ("torch.nn.utils", "torch.nn.utils.clip_grad"):
            module = importlib.import_module(name)
            if callable(getattr(module, "clip_grad_norm_", None)):
                self._patch(module, "clip_grad_norm_", lambda o: hooks.clip_norm_wrapper(o, current))
        data = importlib.import_module("torch.utils.data.dataloader")
        self._patch(data.DataLoader, "__init__", lambda o: hooks.loader_init_wrapper(o, current))
        self._patch(data.DataLoader, "__iter__", lambda o: hooks.loader_iter_wrapper(o, current))
        self._patch(data._BaseDataLoaderIter, "__next__", lambda o: hooks.next_wrapper(o, current))
        functional = torch.nn.functional
        for name in hooks.FUNCTIONAL_LOSSES:
            if callable(getattr(functional, name, None)):
                self._patch(functional, name, lambda o: hooks.functional_loss_wrapper(o, current))
        self._patch_writer()

    def _patch_writer(self) -> None:
        """``SummaryWriter.add_scalar``, once the script has imported ``torch.utils.tensorboard``."""
        writer = sys.modules.get("torch.utils.tensorboard.writer")
        if writer is None or self._writer_patched:
            return
        self._writer_patched = True
        self._patch(writer.SummaryWriter, "add_scalar", lambda o: hooks.add_scalar_wrapper(o, current))

    # -- forward ---------------------------------------------------------------------------------

    def _pre(self, module: Any, inputs: Any) -> bool:
        """An outermost module call starts (True); :class:`Outermost` calls ``_post`` at its end."""
        if self._is_compiling() or self.root is not None:  # torch.compile tracing: not ours to record
            return False
        self.root, self.root_t = module, perf_counter()
        torch = self.torch
        self.root_eval = not torch.is_grad_enabled()
        if not self.root_eval and self.batch is None and not isinstance(module, torch.nn.modules.loss._Loss):
            if module is not self._model():
                self._model = weak(module)
                self._seen_model(module)
                self.sites.setdefault("model", site(sys._getframe(1)))  # model_on_cpu's line
            try:
                self.devices.forward(module, inputs, self.root_t)
                self.batch = measure.batch_size(torch, inputs)
            except Exception as exc:
                self._error(exc)
        return True

    def _post(self, module: Any, output: Any) -> None:
        if self._is_compiling() or module is not self.root:
            return
        self.root = None
        self.acc[4 if self.root_eval else 1] += perf_counter() - self.root_t
        if isinstance(module, self.torch.nn.modules.loss._Loss):
            self.maybe_eval_loss(output, sys._getframe(2))

    def maybe_eval_loss(self, loss: Any, frame: Any) -> None:
        torch = self.torch
        model = self._model()
        if not isinstance(loss, torch.Tensor) or loss.numel() != 1 or not loss.is_floating_point():
            return
        # under no_grad, or a model in eval() whose loss cannot be backpropagated; a loss that
        # requires grad may still be trained on (fine-tuning with frozen BatchNorm): not counted
        evaluating = not torch.is_grad_enabled() or (
            model is not None and not model.training and not loss.requires_grad
        )
        if not evaluating:
            return
        value = loss.detach().float().reshape(())
        self.eval_sum = value if self.eval_sum is None else self.eval_sum + value.to(self.eval_sum.device)
        self.eval_n += 1
        if "eval" not in self.sites:
            self.sites["eval"] = site(frame)

    def _seen_model(self, module: Any) -> None:
        if len(self.models) < 8 and not any(ref() is module for ref in self.models):
            self.models.append(weakref.ref(module))

    # -- backward --------------------------------------------------------------------------------

    def before_backward(self, loss: Any, frame: Any) -> float:
        start = perf_counter()
        self.root = None  # a forward that raised never reached its hook
        try:
            if isinstance(loss, self.torch.Tensor) and loss.numel() == 1 and loss.is_floating_point():
                self.losses.append(loss.detach())
            where = site(frame)
            if where is not None:
                self.sites["backward:next"] = where
        except Exception as exc:
            self._error(exc)
        return start

    def after_backward(self, start: float) -> None:
        self.acc[2] += perf_counter() - start
        self.backward_calls += 1
        if not self.optimizers._refs:
            self._boundary(None)

    def clipped(self, params: List[Any], total: Any, max_norm: Any, norm_type: Any) -> None:
        if len(self.clips) < 8 and norm_type in (2, 2.0) and isinstance(total, self.torch.Tensor):
            self.clips.append(({id(p) for p in params}, total.detach(), float(max_norm)))

    # -- optimizer -------------------------------------------------------------------------------

    def _step_pre(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not self.nesting.enter(optimizer):
            return None
        try:
            torch, key = self.torch, self.optimizers.key(optimizer)
            ratio_step = (self.optimizers.counts.get(id(optimizer), 0) + 1) % self.config.every == 0
            with torch.no_grad():
                clip = self._clip_of(optimizer) if self.clips else None
                if clip is not None:
                    total = clip[1].float()
                    after = total * (clip[2] / (total + 1e-6)).clamp(max=1.0)
                    self.norms[key] = (total, after)
                elif self.norm_schedule.due(key, ratio_step):
                    start = perf_counter()
                    grads = measure.grads_of(measure.params_of(optimizer, self.params))
                    self.norms[key] = (measure.total_norm(torch, grads), None)
                    self.norm_schedule.computed(key, perf_counter() - start)
                else:
                    self.norms.pop(key, None)  # a norm left by a step() that raised is not this step's
                    self.norm_schedule.skipped(key)
                if ratio_step:
                    self.before[key] = measure.snapshot(torch, optimizer)
        except Exception as exc:
            self._error(exc)
        self.opt_t = perf_counter()
        return None

    def _clip_of(self, optimizer: Any) -> Any:
        """The ``clip_grad_norm_`` call made on this optimizer's parameters since the last step."""
        ids = {id(p) for p in measure.params_of(optimizer, self.params)}
        clip = next((c for c in self.clips if c[0] & ids), None)
        if clip is not None:
            self.clips.remove(clip)
        return clip

    def _step_post(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if not self.nesting.leave():
            return None
        self.acc[3] += perf_counter() - self.opt_t
        try:
            key = self.optimizers.key(optimizer)
            self.optimizers.stepped(optimizer)
            before = self.before.pop(key, None)
            if before is not None:
                with self.torch.no_grad():
                    self.ratios[key] = measure.update_ratios(self.torch, before)
            self._boundary(optimizer, key)
            for callback in self.on_step:
                callback(optimizer, self.optimizers.counts.get(id(optimizer), 0), self._series_name(key))
        except Exception as exc:
            self._error(exc)
        return None

    # -- data ------------------------------------------------------------------------------------

    def loader_created(self, loader: Any, frame: Any) -> None:
        if loader not in self.loaders:
            self.loaders[loader] = site(frame)

    def loader_iterated(self, loader: Any, iterator: Any) -> None:
        try:
            self.iters[iterator] = {
                "where": self.loaders.get(loader),
                "num_workers": int(getattr(loader, "num_workers", 0)),
                "pin_memory": bool(getattr(loader, "pin_memory", False)),
            }
        except TypeError:
            pass

    def data_time(self, iterator: Any, seconds: float, batch: Any = None) -> None:
        if not self.torch.is_grad_enabled():
            self.acc[4] += seconds
            return
        self.acc[0] += seconds
        try:  # called from the patched DataLoader.__next__: nothing may reach the user's loop
            self.devices.yielded(batch)
        except Exception as exc:
            self._error(exc)
        try:
            info = self.iters.get(iterator)
        except TypeError:
            info = None
        if info is not None:
            self.loader = info

    # -- the step --------------------------------------------------------------------------------

    def _series_name(self, key: Optional[int]) -> str:
        if key is None:
            return "backward"
        name = self.names.get(key)
        if name is None:
            name = self.names[key] = f"opt{len(self.names)}"
            self.sites[f"optimizer:{name}"] = self.optimizers.sites.get(key)
        return name

    def _forget(self, key: int) -> None:
        """A freed optimizer: what a ``step()`` that raised left for it (a snapshot holds its
        parameters and a copy of them) goes with it."""
        for held in (self.before, self.ratios, self.norms, self.norm_schedule.state):
            held.pop(key, None)

    def _boundary(self, optimizer: Any, key: Optional[int] = None) -> None:
        try:
            self._record(optimizer, key)
        except Exception as exc:
            self._error(exc)
        self.acc = [0.0] * 5
        self.losses, self.batch, self.root = [], None, None
        self.clips.clear()  # a clip is about the step it preceded (a skipped step leaves none behind)
        self.t_mark = perf_counter()

    def _record(self, optimizer: Any, opt_key: Optional[int]) -> None:
        now = perf_counter()
        name = self._series_name(opt_key)
        data, forward, backward, optim, evaluation = self.acc
        wall = now - self.t_mark
        parts = {"data": data, "forward": forward, "backward": backward, "optimizer": optim}
        first = not self.series_t  # the first step's wall time would hold the script's set-up
        parts["other"] = 0.0 if first else max(0.0, wall - data - forward - backward - optim - evaluation)
        previous = self.series_t.get(name)
        self.series_t[name] = now
        if opt_key is not None and previous is not None:
            self.norm_schedule.step_time(opt_key, now - previous)
        step = self.optimizers.counts.get(id(optimizer), 0) if optimizer is not None else self.backward_calls
        rec: Dict[str, Any] = {
            "step": step,
            "series": name,
            "t": time.time(),
            "loss": None,
            "lr": [],
            "grad_norm": None,
            "grad_norm_clipped": None,
            "update_ratio": None,
            "time": parts,
            "samples_per_s": self.batch / (now - previous) if self.batch and previous and now > previous else None,
            "rss": measure.rss(),
            "cuda": measure.cuda_memory(self.torch),
            "_devices": self.devices.step_facts(self.models),  # popped by _emit
        }
        if "backward:next" in self.sites:
            self.sites[f"backward:{name}"] = self.sites.pop("backward:next")
        tensors: List[Any] = []
        layout: List[Any] = []
        loss = self._step_loss()
        if loss is not None:
            tensors.append(loss)
            layout.append(("loss",))
        if optimizer is not None and opt_key is not None:
            for i, group in enumerate(optimizer.param_groups):
                lr = group.get("lr")
                if isinstance(lr, self.torch.Tensor):
                    tensors.append(lr.detach())
                    layout.append(("lr", i))
                    rec["lr"].append(None)
                else:
                    rec["lr"].append(float(lr) if lr is not None else None)
            total, after = self.norms.pop(opt_key, (None, None))
            for key, value in (("grad_norm", total), ("grad_norm_clipped", after)):
                if value is not None:
                    tensors.append(value)
                    layout.append((key,))
            ratios = self.ratios.pop(opt_key, None)
            if ratios is not None:
                rec["update_ratio"] = [None] * len(ratios)
                for i, value in enumerate(ratios):
                    if value is not None:
                        tensors.append(value)
                        layout.append(("update_ratio", i))
        if self.eval_n and name == self._primary_name():
            tensors.append(self.eval_sum / self.eval_n)
            layout.append(("eval", self._primary_step_before(step)))
            self.eval_sum, self.eval_n = None, 0
        self._pack(rec, tensors, layout)

    def _step_loss(self) -> Any:
        losses = self.losses
        if not losses:
            loss, self.last_loss = self.last_loss, None  # a second optimizer stepping on the same backward
            return loss
        loss = losses[0] if len(losses) == 1 else self.torch.stack([x.reshape(()).float() for x in losses]).mean()
        self.last_loss = loss
        return loss

    def _primary_name(self) -> str:
        return "opt0" if self.names else "backward"

    def _primary_step_before(self, step: int) -> int:
        return max(step - 1, 0)  # the evaluation came before this step: it followed the previous one

    def _pack(self, rec: Dict[str, Any], tensors: List[Any], layout: List[Any]) -> None:
        torch = self.torch
        if not tensors:
            self._emit(rec, [], layout)
            return
        if all(t.is_cpu or t.is_meta for t in tensors):  # no device to wait for: read now (meta has no value)
            self._emit(rec, [t.item() if t.is_cpu else None for t in tensors], layout)
            return
        with torch.no_grad():
            device = next(t.device for t in tensors if not t.is_cpu)
            packed = torch.stack([t.reshape(()).float().to(device) for t in tensors])
            host = torch.empty(packed.shape, dtype=packed.dtype, pin_memory=True)
            host.copy_(packed, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
        self.pending.append((rec, host, layout, event))
        self._drain()

    def _drain(self, wait: bool = False) -> None:
        while self.pending:
            rec, host, layout, event = self.pending[0]
            if not event.query():
                if not wait and len(self.pending) <= MAX_PENDING:
                    return
                event.synchronize()
            self.pending.popleft()
            self._emit(rec, host.tolist(), layout)

    def _emit(self, rec: Dict[str, Any], values: List[Optional[float]], layout: List[Any]) -> None:
        evaluation = None
        for slot, value in zip(layout, values):
            if slot[0] == "eval":
                evaluation = (slot[1], value)
            elif slot[0] in ("lr", "update_ratio"):
                rec[slot[0]][slot[1]] = value
            else:
                rec[slot[0]] = value
        self.steps += 1
        name, step, devices = rec["series"], rec["step"], rec.pop("_devices", None)
        if len(self.series) < MAX_SERIES:
            self._store(name, step, rec)
        self._tell("step", rec)
        self._judge(self.verdicts.step(rec, devices))
        if evaluation is not None and evaluation[1] is not None:  # None: a meta tensor
            self._add("eval/loss", evaluation[0], evaluation[1])
            self._tell("eval", {"step": evaluation[0], "loss": evaluation[1]})
            self._judge(self.verdicts.evaluation(*evaluation))
        if not self._writer_patched:
            self._patch_writer()

    def _error(self, exc: BaseException) -> None:
        if len(self.errors) < MAX_ERRORS:
            self.errors.append(f"{type(exc).__name__}: {exc}")
