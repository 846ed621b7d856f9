"""TensorBoard export: the monitor's series as scalars, weight and gradient histograms every N steps.

With ``torch.utils.tensorboard`` (needs the ``tensorboard`` package); without it
:func:`open_writer` returns a clear message how to install it and the run goes on. Scalars are
named like the report's series (``opt0/loss``, ``opt0/lr/0``, ``opt0/time/data``, ``eval/loss``,
``user/<name>``); histograms ``weights/<param>`` and ``grads/<param>`` (seed 000, Part 8) every
``every`` optimizer steps of the first optimizer.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

MISSING = (
    "TensorBoard export needs the tensorboard package, which this interpreter lacks: "
    "`pip install tensorboard` (then `tensorboard --logdir {folder}`). The run goes on without it."
)


def open_writer(folder: str, monitor: Any) -> Tuple[Optional["Board"], Optional[str]]:
    try:
        from torch.utils.tensorboard import SummaryWriter
    except Exception:
        return None, MISSING.format(folder=folder)
    try:
        writer = SummaryWriter(log_dir=folder)
    except Exception as exc:
        return None, f"TensorBoard export: cannot write to {folder}: {type(exc).__name__}: {exc}"
    writer._torchdoctor_own = True  # type: ignore[attr-defined]  # our scalars are not user series
    board = Board(writer, monitor)
    monitor.listeners.append(board.listen)
    monitor.on_step.append(board.histograms)
    return board, None


class Board:
    def __init__(self, writer: Any, monitor: Any) -> None:
        self.writer = writer
        self.monitor = monitor
        self.every = monitor.config.every
        self.scalars = 0
        self.histogram_steps = 0

    def listen(self, kind: str, payload: Dict[str, Any]) -> None:
        add = self._scalar
        if kind == "step":
            series, step = payload["series"], payload["step"]
            for key in ("loss", "grad_norm", "grad_norm_clipped", "samples_per_s"):
                add(f"{series}/{key}", payload.get(key), step)
            for i, value in enumerate(payload.get("lr") or []):
                add(f"{series}/lr/{i}", value, step)
            for i, value in enumerate(payload.get("update_ratio") or []):
                add(f"{series}/update_ratio/{i}", value, step)
            for part, seconds in (payload.get("time") or {}).items():
                add(f"{series}/time/{part}", seconds, step)
            add("rss", payload.get("rss"), step)
            for key, value in (payload.get("cuda") or {}).items():
                add(f"cuda/{key}", value, step)
        elif kind == "eval":
            add("eval/loss", payload["loss"], payload["step"])
        elif kind == "user" and not payload.get("from_writer"):
            add(f"user/{payload['name']}", payload["value"], payload["step"])

    def _scalar(self, tag: str, value: Any, step: int) -> None:
        if value is None:
            return
        self.writer.add_scalar(tag, float(value), step)
        self.scalars += 1

    def histograms(self, optimizer: Any, step: int, name: str) -> None:
        if name != "opt0" or step % self.every:
            return
        models = [m for m in (ref() for ref in self.monitor.models) if m is not None]
        names = {}
        for i, model in enumerate(models):
            prefix = f"model{i}." if len(models) > 1 else ""
            names.update({id(p): prefix + n for n, p in model.named_parameters()})
        for g, group in enumerate(optimizer.param_groups):
            for i, p in enumerate(group["params"]):
                label = names.get(id(p), f"group{g}.{i}")
                self.writer.add_histogram(f"weights/{label}", p.detach(), step)
                if p.grad is not None:
                    self.writer.add_histogram(f"grads/{label}", p.grad.detach(), step)
        self.histogram_steps += 1

    def close(self) -> None:
        self.writer.flush()
        self.writer.close()
