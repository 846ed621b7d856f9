"""The monitor's verdicts: pure Python, fed one step (or one evaluation) at a time.

:class:`Verdicts` takes the Step dicts of the channel contract (``docs/monitor.md``) and the
evaluation losses, and returns the findings they newly prove. The loss rules (NaN, spike, not
decreasing, oscillating) are :mod:`runtime.anomaly.loss_health`'s, one :class:`LossHealth` per
series; the others are below, each judged on a window so that healthy noise stays silent:

- ``overfitting``: the validation loss rose at each of the last ``overfittingEvals`` evaluations,
  ends ``overfittingRise`` above its best, and the training loss (median of its last 20 steps)
  fell over the same evaluations. The best evaluation is named as the early-stopping point.
- ``underfitting``: after >= 3 evaluations and 50 training steps, the training loss is not
  decreasing (seed 002's rule) and the validation loss is not below 99% of its first value.
- ``input_bound``: data loading took more than ``inputBoundFraction`` of the last 20 steps' time
  (and at least :data:`INPUT_BOUND_MIN_SECONDS` a step),
  and of each of at least a quarter of those steps (one preempted step is not a slow loader).
- ``update_ratio_high`` / ``update_ratio_low``: the median of a param group's last 5 update ratios
  (||delta w|| / ||w||) above ``updateRatioHigh`` or below ``updateRatioLow``.
- ``memory_growth``: over the last ``memoryWindow`` steps RSS (or CUDA allocated memory) grew by
  more than ``memoryGrowthBytes`` and rose in at least 8 of its 9 block-to-block comparisons.
- ``cuda_memory_high``: CUDA reserved memory above ``cudaMemoryHigh`` of the device.
- ``model_on_cpu`` / ``cpu_batches`` (advice, severity ``info``): the model never moved to an
  available accelerator; batches copied from pageable CPU memory taking a large share of the
  step (rules in :mod:`transfers`, facts from :mod:`devices`).

Each finding is ``{"kind", "severity", "step", "sentence", "where": None, "series", "range":
[first_step, last_step], "about"}``; ``about`` tells the recorder which source line to attach
(``loss``, ``loader``, ``optimizer``, ``memory``, ``eval``, ``model``). Only ``loss_nan`` and
``cuda_oom`` are errors; the trends are warnings (advice), the device kinds ``info``. Each kind is
reported once per series.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Deque, Dict, List, Optional, Tuple

from ..anomaly.loss_health import TREND_WINDOW, LossSeries, _median
from . import transfers, words
from .config import THRESHOLDS

Finding = Dict[str, Any]
WINDOW = 20  # steps for the input-bound rule and the training median at an evaluation
# A loader faster than this a step is never called the bottleneck, whatever its share of a tiny
# step: handing a batch over from a worker process costs about a millisecond itself (a 32-row
# TensorDataset batch: 0.15-0.25 ms with num_workers=0, 1.5 ms with 2 workers, 2 cores,
# 2026-12-06), so "set num_workers > 0" would slow such a loop down. The sample MLP's
# healthy.py (a 0.2 ms loader, half of its 0.4 ms step) was told to, under load.
INPUT_BOUND_MIN_SECONDS = 0.002
RATIO_POINTS = 5
MEMORY_BLOCKS = 10


class Verdicts:
    def __init__(self, thresholds: Optional[Dict[str, float]] = None) -> None:
        self.t = dict(THRESHOLDS, **(thresholds or {}))
        self.losses = LossSeries(self.t["spikeFactor"])
        self.reported: Dict[Tuple[str, str], Finding] = {}
        self.primary: Optional[str] = None
        self.first_step: Dict[str, int] = {}
        self.lr: Dict[str, List[float]] = {}
        self.data: Dict[str, Deque[Tuple[int, float, float]]] = {}
        self.ratios: Dict[Tuple[str, int], Deque[Tuple[int, float]]] = {}
        self.memory: Dict[str, Deque[Tuple[int, float]]] = {}
        self.train_recent: Deque[float] = deque(maxlen=WINDOW)
        self.train_first: List[float] = []
        self.evals: Deque[Tuple[int, float, Optional[float]]] = deque(maxlen=10000)
        self.cuda_total: Optional[float] = None
        self.hint: Callable[[str], str] = lambda kind: ""
        self.copies = transfers.CpuBatches(self.t["cpuBatchFraction"], self.t["cpuBatchCopyShare"])

    # -- training steps ---------------------------------------------------------------------------

    def step(self, rec: Dict[str, Any], devices: Optional[Dict[str, Any]] = None) -> List[Finding]:
        """``devices``: the step's facts from :class:`devices.DeviceWatch` (None: none seen)."""
        series, step = rec["series"], rec["step"]
        if self.primary is None:
            self.primary = series
        self.first_step.setdefault(series, step)
        self.lr[series] = list(rec.get("lr") or [])
        found: List[Finding] = []
        loss = rec.get("loss")
        if loss is not None:
            found += self._loss(series, step, loss)
        found += self._input_bound(series, step, rec.get("time") or {})
        if devices:
            found += self._devices(series, step, devices, rec.get("time") or {})
        for group, ratio in enumerate(rec.get("update_ratio") or []):
            if ratio is not None:
                found += self._ratio(series, step, group, ratio, rec.get("grad_norm"))
        if series == self.primary:
            if rec.get("rss") is not None:
                found += self._memory("rss", step, rec["rss"])
            cuda = rec.get("cuda")
            if cuda:
                found += self._memory("cuda", step, cuda.get("allocated", 0))
                found += self._cuda_high(step, cuda.get("reserved", 0))
        return found

    def _loss(self, series: str, step: int, loss: float) -> List[Finding]:
        if series == self.primary and loss == loss:
            self.train_recent.append(loss)
            if len(self.train_first) < TREND_WINDOW:
                self.train_first.append(loss)
        health = self.losses.get(series, series)
        out: List[Finding] = []
        for hit in health.observe(loss):
            rule = hit["rule"]
            first = self.first_step.get(series, step)
            if rule == "nan":
                out += self._new(
                    "loss_nan", "error", series, step, [step, step], "loss", words.loss_nan(series, step, loss)
                )
            elif rule == "spike":
                out += self._new(
                    "loss_spike", "warning", series, step, [step, step], "loss", words.spike(series, step, hit)
                )
            elif rule == "notDecreasing":
                text = words.not_decreasing(series, first, step, hit, self.lr.get(series))
                out += self._new("not_decreasing", "warning", series, step, [first, step], "loss", text)
            elif rule == "oscillating":
                start = max(first, step - int(str(hit["window"])) + 1)
                text = words.oscillating(series, start, step, hit, self.lr.get(series))
                out += self._new("oscillating", "warning", series, step, [start, step], "loss", text)
        return out

    def _input_bound(self, series: str, step: int, time: Dict[str, float]) -> List[Finding]:
        window = self.data.setdefault(series, deque(maxlen=WINDOW))
        total = sum(float(v) for v in time.values())
        window.append((step, float(time.get("data", 0.0)), total))
        if len(window) < WINDOW // 2 or step % 5:
            return []
        data, spent = sum(w[1] for w in window), sum(w[2] for w in window)
        fraction = self.t["inputBoundFraction"]
        if spent <= 0 or data / spent <= fraction or data / len(window) < INPUT_BOUND_MIN_SECONDS:
            return []
        # One step the OS preempted inside the loader (a few ms on a sub-ms step) can carry the
        # window's sum on its own: the loader must be the larger part of a quarter of the steps
        # too. A loader that stalls in bursts (workers refilling) passes that; a hiccup does not.
        slow = sum(1 for w in window if w[2] > 0 and w[1] / w[2] > fraction)
        if slow < max(2, len(window) // 4):
            return []
        a, b = window[0][0], window[-1][0]
        text = words.input_bound(a, b, data / spent, data / len(window), spent / len(window), self.hint("loader"))
        return self._new("input_bound", "warning", series, step, [a, b], "loader", text)

    def _devices(self, series: str, step: int, facts: Dict[str, Any], time: Dict[str, float]) -> List[Finding]:
        out: List[Finding] = []
        model = facts.get("model")
        if model and transfers.model_on_cpu(model):
            text = words.model_on_cpu(model, step)
            out += self._new("model_on_cpu", "info", series, step, [step, step], "model", text)
        copy = facts.get("copy")
        if copy and step != self.first_step.get(series):  # the first step's time has no "other" part
            total = sum(float(v) for v in time.values())
            found = self.copies.observe(series, step, copy, total)
            if found is not None:
                text = words.cpu_batches(found, self.hint("loader_at"))
                out += self._new("cpu_batches", "info", series, step, found["range"], "loader", text)
        return out

    def _ratio(self, series: str, step: int, group: int, ratio: float, grad_norm: Any) -> List[Finding]:
        kept = self.ratios.setdefault((series, group), deque(maxlen=RATIO_POINTS))
        kept.append((step, float(ratio)))
        if len(kept) < RATIO_POINTS:
            return []
        median = _median([r for _, r in kept])
        lrs = self.lr.get(series) or []
        lr: Optional[float] = lrs[min(group, len(lrs) - 1)] if lrs else None
        span = [kept[0][0], kept[-1][0]]
        if median > self.t["updateRatioHigh"]:
            text = words.ratio_high(series, group, median, span, lr)
            return self._new("update_ratio_high", "warning", series, step, span, "optimizer", text)
        if median < self.t["updateRatioLow"]:
            text = words.ratio_low(series, group, median, span, lr, grad_norm)
            return self._new("update_ratio_low", "warning", series, step, span, "optimizer", text)
        return []

    def _memory(self, what: str, step: int, value: float) -> List[Finding]:
        window = int(self.t["memoryWindow"])
        kept = self.memory.setdefault(what, deque(maxlen=window))
        kept.append((step, float(value)))
        if len(kept) < window or step % 10:
            return []
        size = window // MEMORY_BLOCKS
        values = [v for _, v in kept]
        blocks = [_median(values[i * size : (i + 1) * size]) for i in range(MEMORY_BLOCKS)]
        rises = sum(1 for a, b in zip(blocks, blocks[1:]) if b > a)
        growth = blocks[-1] - blocks[0]
        if growth < self.t["memoryGrowthBytes"] or rises < MEMORY_BLOCKS - 2:
            return []
        steps = max(kept[-1][0] - kept[0][0], 1)
        per_step = (values[-1] - values[0]) / steps
        span = [kept[0][0], kept[-1][0]]
        text = words.memory_growth(what, span, per_step, values[-1] - values[0], self.hint("memory"))
        return self._new("memory_growth", "warning", self.primary or "", step, span, "memory", text)

    def _cuda_high(self, step: int, reserved: float) -> List[Finding]:
        if not self.cuda_total or reserved < self.t["cudaMemoryHigh"] * self.cuda_total:
            return []
        text = words.cuda_high(step, reserved, self.cuda_total)
        return self._new("cuda_memory_high", "warning", self.primary or "", step, [step, step], "loss", text)

    # -- evaluations -----------------------------------------------------------------------------

    def evaluation(self, step: int, value: float) -> List[Finding]:
        train = _median(list(self.train_recent)) if self.train_recent else None
        self.evals.append((step, float(value), train))
        return self._overfitting(step) + self._underfitting(step)

    def _overfitting(self, step: int) -> List[Finding]:
        k = int(self.t["overfittingEvals"])
        evals = list(self.evals)
        if len(evals) < k + 1:
            return []
        tail = evals[-(k + 1) :]
        if not all(b[1] > a[1] for a, b in zip(tail, tail[1:])):
            return []
        best = min(evals, key=lambda e: e[1])
        if tail[-1][1] < best[1] * (1 + self.t["overfittingRise"]) + 1e-12:
            return []
        start, end = tail[0][2], tail[-1][2]
        if start is None or end is None or not end < start * 0.99:
            return []  # the training loss did not fall meanwhile: not overfitting
        text = words.overfitting(k, best, tail[-1], start, end)
        return self._new("overfitting", "warning", self.primary or "", step, [best[0], step], "eval", text)

    def _underfitting(self, step: int) -> List[Finding]:
        evals = list(self.evals)
        health = self.losses.by_site.get(self.primary) if self.primary else None
        if len(evals) < 3 or health is None or health.count < 2 * TREND_WINDOW:
            return []
        first_train = _median(health.first)
        last_train = _median(list(health.recent)[-TREND_WINDOW:])
        if last_train < first_train - 0.01 * abs(first_train):
            return []
        if evals[-1][1] < evals[0][1] - 0.01 * abs(evals[0][1]):
            return []
        span = [self.first_step.get(self.primary or "", 0), step]
        text = words.underfitting(
            span, first_train, last_train, evals[0][1], evals[-1][1], self.lr.get(self.primary or "")
        )
        return self._new("underfitting", "warning", self.primary or "", step, span, "eval", text)

    # -- bookkeeping ------------------------------------------------------------------------------

    def _new(
        self, kind: str, severity: str, series: str, step: int, span: List[int], about: str, sentence: str
    ) -> List[Finding]:
        key = (kind, series)
        if key in self.reported:
            return []
        finding = {
            "kind": kind,
            "severity": severity,
            "step": step,
            "sentence": sentence,
            "where": None,
            "series": series,
            "range": list(span),
            "about": about,
        }
        self.reported[key] = finding
        return [finding]

    def add(self, finding: Finding) -> None:
        """A finding made elsewhere (``cuda_oom``), kept with the others."""
        self.reported[(finding["kind"], finding.get("series") or "")] = finding

    def findings(self) -> List[Finding]:
        return sorted(self.reported.values(), key=lambda f: (f["step"] if f["step"] is not None else -1, f["kind"]))
