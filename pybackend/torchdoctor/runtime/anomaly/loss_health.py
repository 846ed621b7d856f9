"""Loss health: the rules of seed 002's ``check_loss_health``, made quiet on healthy noise.

Pure Python (floats in, findings out) so every rule is unit-tested without torch. One
:class:`LossHealth` follows one loss series (the watch keeps one per ``backward()`` call site,
:class:`LossSeries`, so a GAN's discriminator and generator losses are never mixed). Each call
to :meth:`LossHealth.observe` takes the loss of one step and returns the rules it breaks:

- ``nan``: the loss is NaN or Inf.
- ``spike``: the loss exceeds ``spike_factor`` times the median of the last ``SPIKE_WINDOW``
  finite losses (once at least ``SPIKE_MIN_HISTORY`` are known, and only while that median is
  positive and no loss of that window is below 0: a ratio to a level that moves around 0 means
  nothing), and only when it is back above
  where the series started (``SPIKE_FLOOR`` x the median of its first ``SPIKE_MIN_HISTORY`` losses): a loss that fell
  from 0.69 to 0.005 and jumps to 0.25 on a batch holding a noisy label, or from 1.6 to 1e-6 and
  jumps to 2e-5, is noise in a run that learns; a learning rate too high sends the loss far
  above its starting level (and on to NaN).

Trend rules are advice, not anomalies (the watch never stops on them): they describe the
smoothed curve over at least ``TREND_MIN`` losses, re-judged every ``TREND_EVERY`` steps, so
that mini-batch noise, label noise and outlier batches stay silent:

- ``notDecreasing`` (seed 002): the median of the last ``TREND_WINDOW`` losses is still >= 99% of
  the median of the first ``TREND_WINDOW``, unless it is 0 at the loss's floor (``_at_floor``). Medians, not means: one outlier batch moves neither.
  When the watch sees an optimizer, judged only once it has stepped ``TREND_WINDOW`` times
  since the series began (with gradient accumulation over 4 micro-steps, 50 losses are only 12
  updates), and only with ``allow_not_decreasing`` (the watch turns it off when there are several loss
  series: in a GAN or a multi-loss model one loss may rise by design while the other falls), and not
  when the last ``TREND_MIN`` losses fall steadily by Mann-Kendall's trend test (``_falling``), however
  slowly.
- ``oscillating``: over the last ``TREND_MIN`` losses the curve alternates (lag-1 autocorrelation
  of the deviations from the window's median below ``OSCILLATION_CORRELATION``: up, down, up...),
  with swings large against the loss (median |diff| > ``OSCILLATION_SWING`` x median level) and
  no net progress of the smoothed curve (the medians of the first and last ``BLOCK`` losses of
  the window differ by less than one swing). Independent mini-batch noise has an autocorrelation
  near 0 (about +-0.15 over 50 values), a curve bouncing between two levels near -1; the older
  test (mean swing against the net change over 10 losses) fired on ordinary noisy curves.

Each trend rule is reported once, the first time it holds. Non-finite losses are not added to the
history. Memory is fixed: the first ``TREND_WINDOW`` losses and the last ``TREND_MIN``.
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any, Dict, List, Optional, Set

SPIKE_WINDOW = 20
SPIKE_MIN_HISTORY = 5
SPIKE_FLOOR = 1.0
TREND_MIN = 50
TREND_WINDOW = 25
TREND_EVERY = 10
BLOCK = 10
NOT_DECREASING_RATIO = 0.99
MANN_KENDALL_Z = 2.33  # one-sided 1%: a falling trend that noise alone shows once in 100 windows
OSCILLATION_SWING = 0.5
OSCILLATION_CORRELATION = -0.6
TREND_RULES = ("notDecreasing", "oscillating")
MAX_SERIES = 32

Finding = Dict[str, object]


class LossHealth:
    def __init__(self, spike_factor: float = 10.0) -> None:
        self.spike_factor = spike_factor
        self.allow_not_decreasing = True
        self._updates_at_start: Optional[int] = None  # optimizer steps when the series began
        self._updates = 0
        self.count = 0  # finite losses seen
        self.first: List[float] = []  # the first TREND_WINDOW finite losses
        self.recent: "deque[float]" = deque(maxlen=max(TREND_MIN, SPIKE_WINDOW))
        self._latched: Set[Any] = set()  # trend rules already reported
        self._floor: Optional[float] = None  # SPIKE_FLOOR x the median of the first SPIKE_MIN_HISTORY losses

    @property
    def history(self) -> List[float]:
        """The last finite losses kept (at most ``TREND_MIN``), in step order."""
        return list(self.recent)

    def observe(self, value: float, updates: Optional[int] = None) -> List[Finding]:
        """Check ``value`` against the history, then add it; returns the rules it breaks.

        ``updates``: the optimizer steps taken so far, when known (None: one per loss)."""
        if updates is not None:
            if self._updates_at_start is None:
                self._updates_at_start = updates
            self._updates = updates - self._updates_at_start
        if not math.isfinite(value):
            return [{"rule": "nan", "value": value}]
        spike = self._spike(value)
        findings: List[Finding] = [spike] if spike else []
        self.count += 1
        if len(self.first) < TREND_WINDOW:
            self.first.append(value)
        self.recent.append(value)
        if self.count >= TREND_MIN and (self.count - TREND_MIN) % TREND_EVERY == 0:
            for name, rule in (("notDecreasing", self._not_decreasing), ("oscillating", self._oscillating)):
                if name in self._latched:
                    continue  # reported once already: not judged again
                finding = rule()
                if finding:
                    self._latched.add(name)
                    findings.append(finding)
        return findings

    def _spike(self, value: float) -> Optional[Finding]:
        if len(self.recent) < SPIKE_MIN_HISTORY:
            return None
        floor = self._floor
        if floor is None:  # the first losses are kept for good: their median is read once
            floor = self._floor = SPIKE_FLOOR * _median(self.first[:SPIKE_MIN_HISTORY])
        if not value > floor:
            return None  # the usual case (below where the series started): no median to sort
        recent = list(self.recent)[-SPIKE_WINDOW:]
        # A window with a loss below 0 (a policy gradient's -(log p x advantage), a WGAN critic) moves
        # around 0: its median is no scale, and 0.02 -> 0.39 was called a 21x spike (2026-12-06). Only
        # the window: a series that dipped below 0 once and settled above it (a regulariser's offset,
        # a Gaussian NLL) still spikes when its learning rate is too high (review, 2026-12-06).
        if min(recent) < 0:
            return None
        median = _median(recent)
        if median > 0 and value > self.spike_factor * median:
            return {
                "rule": "spike",
                "value": value,
                "median": median,
                "ratio": value / median,
                "factor": self.spike_factor,
                "window": len(recent),
            }
        return None

    def _not_decreasing(self) -> Optional[Finding]:
        if not self.allow_not_decreasing:
            return None
        if 0 < self._updates < TREND_WINDOW:
            return None  # too few optimizer steps to expect progress
        first = _median(self.first)
        last = _median(list(self.recent)[-TREND_WINDOW:])
        if last == 0.0 and _at_floor(self.first + list(self.recent)):
            return None  # a hinge at its floor: most losses exactly 0, none below it
        # "99% of first" for positive losses; the same margin below it for negative ones.
        if last >= first - (1 - NOT_DECREASING_RATIO) * abs(first) and not _falling(list(self.recent)):
            return {
                "rule": "notDecreasing",
                "first_mean": first,
                "last_mean": last,
                "window": TREND_WINDOW,
                "steps": self.count,
                "smoothed": "median",
            }
        return None

    def _oscillating(self) -> Optional[Finding]:
        window = list(self.recent)[-TREND_MIN:]
        centre = _median(window)
        deviations = [v - centre for v in window]
        power = sum(d * d for d in deviations)
        if power <= 0:
            return None
        correlation = sum(a * b for a, b in zip(deviations, deviations[1:])) / power
        if correlation >= OSCILLATION_CORRELATION:
            return None  # the usual case: the curve does not alternate
        swing = _median([abs(b - a) for a, b in zip(window, window[1:])])
        level = _median([abs(v) for v in window])
        net = abs(_median(window[:BLOCK]) - _median(window[-BLOCK:]))
        if level > 0 and swing > OSCILLATION_SWING * level and net < swing:
            return {
                "rule": "oscillating",
                "swing": swing,
                "level": level,
                "net": net,
                "window": len(window),
                "correlation": correlation,
            }
        return None


class LossSeries:
    """One :class:`LossHealth` per loss (per ``backward()`` call site), at most ``MAX_SERIES``."""

    def __init__(self, spike_factor: float = 10.0) -> None:
        self.spike_factor = spike_factor
        self.by_site: Dict[Any, LossHealth] = {}
        self.labels: Dict[Any, str] = {}

    def get(self, site: Any, label: Optional[str] = None) -> LossHealth:
        health = self.by_site.get(site)
        if health is not None:
            return health
        if len(self.by_site) >= MAX_SERIES:
            return next(reversed(self.by_site.values()))  # bounded: the last series takes the rest
        health = self.by_site[site] = LossHealth(self.spike_factor)
        self.labels[site] = label or "?"
        if len(self.by_site) > 1:  # several losses: one may rise by design (a GAN's generator)
            for each in self.by_site.values():
                each.allow_not_decreasing = False
        return health

    def __len__(self) -> int:
        return len(self.by_site)


def _at_floor(values: List[float]) -> bool:
    """A loss that cannot fall further: none below 0, and it was above 0 (it got to 0). A triplet
    or margin-ranking loss is exactly 0 once the margin holds, and reached it within its first
    steps: both medians 0 read as "not decreasing" (2026-12-07). A loss 0 from its first step on
    (``mse_loss(out, out)``, nothing to learn) is still advised."""
    return min(values) >= 0.0 and max(values) > 0.0


def _falling(values: List[float]) -> bool:
    """The losses fall steadily, if slowly: Mann-Kendall's trend test, one-sided at 1%. A bigram
    language model from uniform predictions falls 0.3% in its first 50 steps (makemore: 3.296 ->
    3.28, then 3.13 by step 500): not 1%, yet every later loss tends to be below the earlier ones.
    Mini-batch noise around a flat level gives about as many rises as falls: the test says no."""
    n = len(values)
    if n < 10:
        return False
    s = 0
    for i in range(n - 1):
        xi = values[i]
        for xj in values[i + 1 :]:
            s += (xj > xi) - (xj < xi)
    spread = math.sqrt(n * (n - 1) * (2 * n + 5) / 18.0)
    return (s + 1) / spread < -MANN_KENDALL_Z


def _median(values: List[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
