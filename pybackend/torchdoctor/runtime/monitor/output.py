"""The recorder's outputs: the bucketed series, the findings with their source lines, listeners.

A mixin of :class:`recorder.Monitor` (kept apart for size): everything that happens once a
step's values are read.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Dict, List, Optional

from . import words
from .series import Bucketed

MAX_SERIES = 256
_FIELDS = ("loss", "grad_norm", "grad_norm_clipped", "samples_per_s")
_PARTS = ("data", "forward", "backward", "optimizer", "other")
_KEYS: Dict[str, Dict[str, str]] = {}  # series name -> {field or time part: series key}, built once


class Outputs:
    torch: Any
    series: Dict[str, Bucketed]
    listeners: List[Callable[[str, Dict[str, Any]], None]]
    sites: Dict[str, Any]
    names: Dict[int, str]
    optimizers: Any
    backward_calls: int
    verdicts: Any
    loader: Optional[Dict[str, Any]]
    cuda_total: Optional[int]
    eval_sum: Any
    eval_n: int

    def _error(self, exc: BaseException) -> None:
        raise NotImplementedError

    def _primary_name(self) -> str:
        raise NotImplementedError

    def _drain(self, wait: bool = False) -> None:
        raise NotImplementedError

    # -- user series -----------------------------------------------------------------------------

    def user_value(self, name: str, value: Any, step: Optional[int] = None, from_writer: bool = False) -> None:
        try:
            number = float(value.item() if isinstance(value, self.torch.Tensor) else value)
        except Exception:
            return
        if step is None:
            step = self._primary_step()
        entry: Dict[str, Any] = {"name": name, "step": int(step), "value": number}
        if from_writer:
            entry["from_writer"] = True
        self._add(f"user/{name}", int(step), number)
        self._tell("user", entry)

    def _primary_step(self) -> int:
        if self.names:  # keyed by optimizer key (Optimizers.key), in the order named: opt0 first
            return self.optimizers.steps(next(iter(self.names)))
        return self.backward_calls

    def _store(self, name: str, step: int, rec: Dict[str, Any]) -> None:
        add = self._add
        keys = _KEYS.get(name)
        if keys is None:
            keys = _KEYS[name] = {key: f"{name}/{key}" for key in _FIELDS}
            keys.update((part, f"{name}/time/{part}") for part in _PARTS)
        for key in _FIELDS:
            if rec[key] is not None:
                add(keys[key], step, rec[key])
        for i, lr in enumerate(rec["lr"]):
            if lr is not None:
                add(f"{name}/lr/{i}", step, lr)
        for i, ratio in enumerate(rec["update_ratio"] or []):
            if ratio is not None:
                add(f"{name}/update_ratio/{i}", step, ratio)
        for part, seconds in rec["time"].items():
            add(keys.get(part) or f"{name}/time/{part}", step, seconds)
        if name == self._primary_name():
            if rec["rss"] is not None:
                add("rss", step, rec["rss"])
            for key, value in (rec["cuda"] or {}).items():
                add(f"cuda/{key}", step, value)
                if self.cuda_total is None:
                    self._cuda_total()

    def _cuda_total(self) -> None:
        try:
            cuda = self.torch.cuda
            self.cuda_total = int(cuda.get_device_properties(cuda.current_device()).total_memory)
            self.verdicts.cuda_total = self.cuda_total
        except Exception:
            self.cuda_total = 0

    def _add(self, key: str, step: int, value: float) -> None:
        series = self.series.get(key)
        if series is None:
            if len(self.series) >= MAX_SERIES:
                return
            series = self.series[key] = Bucketed()
        series.add(step, value)

    def _judge(self, found: List[Dict[str, Any]]) -> None:
        for finding in found:
            about, series = finding.get("about"), finding.get("series")
            if about == "loader":
                finding["where"] = (self.loader or {}).get("where")
            else:
                key = {"optimizer": f"optimizer:{series}", "eval": "eval", "model": "model"}.get(
                    str(about), f"backward:{series}"
                )
                finding["where"] = self.sites.get(key) or self.sites.get(f"backward:{series}")
            self._tell("finding", finding)

    def _hint(self, kind: str) -> str:
        if kind in ("loader", "loader_at") and self.loader is not None:
            where = self.loader.get("where") or {}
            at = f" at {os.path.basename(str(where.get('path')))}:{where.get('line')}" if where else ""
            if kind == "loader_at":
                return at
            return words.loader_advice(self.loader, at, _gpu_in_use(self.torch))
        if kind == "memory":
            from .leaks import holder

            return holder(self.torch, sys._getframe(1))
        return ""

    def _tell(self, kind: str, payload: Dict[str, Any]) -> None:
        for listener in self.listeners:
            try:
                listener(kind, payload)
            except Exception as exc:
                self._error(exc)

    def flush(self) -> None:
        """Read every step still waiting for the device (end of the run)."""
        try:
            if self.eval_n:
                value = float(self.eval_sum / self.eval_n)
                self.eval_sum, self.eval_n = None, 0
                step = self._primary_step()
                self._add("eval/loss", step, value)
                self._tell("eval", {"step": step, "loss": value})
                self._judge(self.verdicts.evaluation(step, value))
            self._drain(wait=True)
        except Exception as exc:
            self._error(exc)

    def note_exception(self, exc: BaseException) -> None:
        """An exception that ended the script: a ``torch.OutOfMemoryError`` becomes ``cuda_oom``."""
        from . import oom

        try:
            if oom.is_oom(self.torch, exc):
                finding = oom.explain(self.torch, exc, self._primary_step())
                self.verdicts.add(finding)
                self._tell("finding", finding)
        except Exception as error:
            self._error(error)

    def findings(self) -> List[Dict[str, Any]]:
        return [{k: v for k, v in f.items() if k != "about"} for f in self.verdicts.findings()]

    def total_steps(self) -> int:
        counts = [self.optimizers.steps(k) for k in self.names]
        return max(counts) if counts else self.backward_calls


def _gpu_in_use(torch: Any) -> bool:
    """Whether the program has started CUDA (a model or batch put on a GPU); never starts it."""
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # a torch without CUDA support at all
        return False
