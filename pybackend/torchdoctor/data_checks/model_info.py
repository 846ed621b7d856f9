"""What the data checks read from a model: first conv, first embedding, output size, from its modules
without running it; and the conv that gives its output, from one run on a zero input (``output_conv``).

That run is the user's code: it is made in a daemon thread and waited for ``PROBE_SECONDS`` at most
(less when the time budget has less left). A forward that does not answer by then is left running
(no thread can be stopped): the model is not called again, and its training flags and the random
generators are not put back under it (the forward may still read them); the data-check worker, a
process of its own, ends without waiting for it (``left_running``)."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Optional

from . import budget, rng

PROBE_SECONDS = 5.0  # the longest wait for the model's answer on a zero sample
_left: list = []  # forwards given up on, still running


@dataclass
class ModelInfo:
    name: str
    conv_name: Optional[str] = None
    conv_kind: Optional[str] = None  # "Conv1d" | "Conv2d" | "Conv3d"
    in_channels: Optional[int] = None
    embedding_name: Optional[str] = None
    num_embeddings: Optional[int] = None
    padding_idx: Optional[int] = None
    embedding_sizes: list = field(default_factory=list)  # every Embedding's num_embeddings, in module order
    head_name: Optional[str] = None
    out_features: Optional[int] = None  # the last Linear's output size: the number of classes, or 1
    # the last conv when no Linear comes after it (a segmentation head: its output channels are the classes)
    conv_head_name: Optional[str] = None
    out_channels: Optional[int] = None
    # a normalisation layer met before any conv, Linear or embedding: the model standardises its own
    # input (audio CNNs put a BatchNorm2d first over log-mel dB values), so the input's scale is not judged
    input_norm: Optional[str] = None
    module: Any = field(default=None, repr=False, compare=False)  # the model itself, for ``output_conv``
    runs: dict = field(default_factory=dict, repr=False, compare=False)  # input shape -> output_conv's answer
    # input shape -> why the run gave no answer ("it raised SystemExit on it", "it did not answer within 5 s")
    unanswered: dict = field(default_factory=dict, repr=False, compare=False)

    def describe(self) -> str:
        parts = []
        if self.conv_name:
            parts.append(f"first conv {self.conv_name} ({self.conv_kind}, {self.in_channels} input channels)")
        if self.embedding_name:
            parts.append(f"embedding {self.embedding_name} ({self.num_embeddings} ids)")
        if self.head_name:
            parts.append(f"last Linear {self.head_name} ({self.out_features} outputs)")
        if self.conv_head_name:
            parts.append(f"last conv {self.conv_head_name} ({self.out_channels} output channels)")
        return f"model {self.name}: " + (", ".join(parts) if parts else "no conv, embedding or Linear found")


_INPUT_NORMS = frozenset(
    {
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "InstanceNorm1d",
        "InstanceNorm2d",
        "InstanceNorm3d",
        "LayerNorm",
        "GroupNorm",
    }
)


def inspect_model(model: Any) -> Optional[ModelInfo]:
    named = getattr(model, "named_modules", None)
    if named is None:
        return None
    info = ModelInfo(type(model).__name__, module=model)
    for name, mod in named():
        kind = type(mod).__name__
        if kind in _INPUT_NORMS and info.conv_name is None and info.embedding_name is None and info.head_name is None:
            info.input_norm = info.input_norm or f"{name or kind} ({kind})"
        if (
            info.conv_name is None
            and kind in ("Conv1d", "Conv2d", "Conv3d", "LazyConv2d")
            and hasattr(mod, "in_channels")
        ):
            info.conv_name, info.conv_kind, info.in_channels = name or kind, kind, int(mod.in_channels or 0) or None
        if kind == "Embedding":
            info.embedding_sizes.append(int(mod.num_embeddings))
        if info.embedding_name is None and kind == "Embedding":
            info.embedding_name, info.num_embeddings = name or kind, int(mod.num_embeddings)
            info.padding_idx = mod.padding_idx
        if kind == "Linear":
            info.head_name, info.out_features = name or kind, int(mod.out_features)
            info.conv_head_name = info.out_channels = None
        if kind in _CONVS and isinstance(getattr(mod, "out_channels", None), int):
            info.conv_head_name, info.out_channels = name or kind, int(mod.out_channels)
    return info


_CONVS = frozenset({"Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"})


def output_conv(info: ModelInfo, shape: tuple) -> Optional[tuple]:
    """(name, output channels, the output's channels) of the last conv that ran in one forward of the
    model on a zero input of one sample of ``shape``; the output's channels are its dimension 1 when it
    is a map of the input's dimensions (N x C x H x W for C x H x W samples; a dict's ``"out"`` or a
    tuple's first tensor), else None. None when the model cannot run on it (other inputs, a time
    budget spent, a draw stuck, no answer in time: ``not_run`` says why). Run once per shape in eval
    mode without gradients, every module's training flag and every random generator put back after.
    A KeyboardInterrupt raised by the forward is the user's cancel: raised here."""
    key = tuple(int(d) for d in shape)
    if key not in info.runs:
        torch = sys.modules.get("torch")
        ok = info.module is not None and torch is not None and bool(key)
        if ok and left_running():
            info.unanswered[key] = "a forward of the model on a zero sample, given up on, is still running"
            ok = False
        info.runs[key] = _run(info, torch, key) if ok and not budget.stuck() and not budget.spent() else None
    return info.runs[key]


def not_run(info: ModelInfo, shape: tuple) -> str:
    """Why ``output_conv`` had no answer for ``shape``, in a note's words."""
    return info.unanswered.get(tuple(int(d) for d in shape), "it could not run")


def left_running() -> bool:
    """A forward given up on is still running (the worker then ends without waiting for it)."""
    return any(thread.is_alive() for thread in _left)


def _run(info: ModelInfo, torch: Any, shape: tuple) -> Optional[tuple]:
    model, ran, hooks, answer = info.module, [], [], {}
    modes = [(m, m.training) for m in model.modules()]
    states = rng.states()
    try:
        for name, mod in model.named_modules():
            if type(mod).__name__ in _CONVS and isinstance(getattr(mod, "out_channels", None), int):
                hooks.append(mod.register_forward_hook(lambda m, i, o, name=name: ran.append((name, m.out_channels))))
        param = next(model.parameters(), None)
        if not hooks or param is None:
            return None
        dtype = param.dtype if param.dtype.is_floating_point else torch.float32
        model.eval()
        answer = _answer(model, torch, torch.zeros((1, *shape), dtype=dtype, device=param.device))
    except Exception:  # noqa: BLE001 - a model that does not run on one zero sample is read by its modules
        return None
    finally:
        for hook in hooks:  # ours; removing one is safe while a forward given up on still runs
            hook.remove()
        if "late" not in answer:  # else the forward may still read them: left as they are
            for mod, training in modes:
                mod.training = training
            rng.restore(states)
    if "out" not in answer or not ran:
        info.unanswered[shape] = answer.get("late") or answer.get("why") or "it could not run"
        return None
    out = _first_tensor(answer["out"], torch)
    channels = int(out.shape[1]) if out is not None and out.ndim == len(shape) + 1 else None
    # the last that ran with the output's channels (an auxiliary head may run after the main one), else the last
    name, k = next((r for r in reversed(ran) if r[1] == channels), ran[-1])
    return name or type(model).__name__, int(k), channels


def _answer(model: Any, torch: Any, zeros: Any) -> dict:
    """``{"out": output}``, ``{"why": ...}`` when the forward raised (SystemExit too), or ``{"late": ...}``
    when it did not answer in time (left running). A KeyboardInterrupt is raised again here."""
    box: dict = {}
    device = torch.get_default_device() if hasattr(torch, "get_default_device") else None

    def forward() -> None:
        try:
            if device is not None and device != torch.get_default_device():
                torch.set_default_device(device)  # per thread: as the caller sees it
            with torch.no_grad():
                box["out"] = model(zeros)
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            box["error"] = exc

    wait = max(0.0, min(PROBE_SECONDS, budget.deadline() - time.perf_counter()))
    thread = threading.Thread(target=forward, name="torchdoctor data check: the model on a zero sample", daemon=True)
    thread.start()
    thread.join(wait)
    if thread.is_alive():
        _left[:] = [t for t in _left if t.is_alive()] + [thread]
        return {"late": f"it did not answer within {wait:g} s on a zero sample, and was left running"}
    error = box.get("error")
    if isinstance(error, KeyboardInterrupt):
        raise error
    if error is not None:
        return {"why": f"it could not run: it raised {type(error).__name__} on a zero sample"}
    return box


def _first_tensor(out: Any, torch: Any) -> Any:
    if isinstance(out, dict):
        out = out.get("out", next(iter(out.values()), None))
    if isinstance(out, (list, tuple)) and out:
        out = out[0]
    return out if isinstance(out, torch.Tensor) else None
