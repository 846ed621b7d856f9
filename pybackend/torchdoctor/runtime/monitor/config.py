"""The monitor's settings: ``TORCHDOCTOR_MONITOR=<json>`` or ``torchdoctor run --monitor``.

``{"every": 10, "tensorboard": null | "runs/x", "channel": null | {"host", "port", "token"},
"thresholds": {...}}``. ``every``: the update-to-weight ratio (and TensorBoard histograms) every
N optimizer steps. ``thresholds`` override :data:`THRESHOLDS` (the seeds' numbers, the
``torchDoctor.monitor.*`` settings). Unknown or bad values are kept in ``problems`` and replaced
by the default; nothing here raises. Stdlib only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

ENV_VAR = "TORCHDOCTOR_MONITOR"

THRESHOLDS: Dict[str, float] = {
    "inputBoundFraction": 0.5,  # seed 000: data loading > 50% of the step
    "overfittingEvals": 3,  # validation rising for >= 3 evaluations while training falls
    "overfittingRise": 0.02,  # ... and at least 2% above its best
    "updateRatioHigh": 5e-2,  # ~1e-3 is healthy (Adam at 1e-3 on small layers sits near 1e-2)
    "updateRatioLow": 1e-5,
    "memoryGrowthBytes": 32 * 2**20,  # growth over the window before it is a leak
    "memoryWindow": 100,  # steps
    "cudaMemoryHigh": 0.9,  # reserved / device total
    "spikeFactor": 10.0,  # seed 002 (shared with the anomaly watch)
    "cpuBatchFraction": 0.2,  # cpu_batches: loader's yield -> model's forward >= 20% of the step
    "cpuBatchCopyShare": 0.05,  # ... and the batch's bytes at 25 GB/s >= 5% of the step
}


@dataclass
class MonitorConfig:
    every: int = 10
    tensorboard: Optional[str] = None
    channel: Optional[Dict[str, Any]] = None
    report: Optional[str] = None
    thresholds: Dict[str, float] = field(default_factory=lambda: dict(THRESHOLDS))
    problems: List[str] = field(default_factory=list)

    def to_json(self) -> Dict[str, Any]:
        return {
            "every": self.every,
            "tensorboard": self.tensorboard,
            "channel": self.channel,
            "thresholds": self.thresholds,
        }


def from_env(environ: Mapping[str, str]) -> Optional[MonitorConfig]:
    text = environ.get(ENV_VAR)
    if text is None or text.strip().lower() in ("", "0", "off", "false", "no"):
        return None
    if text.strip().lower() in ("1", "on", "true", "yes"):
        return MonitorConfig()
    return parse(text)


def parse(text: str) -> MonitorConfig:
    try:
        raw = json.loads(text)
    except ValueError as exc:
        config = MonitorConfig()
        config.problems.append(f"{ENV_VAR} is not JSON ({exc}); the defaults are used")
        return config
    if raw is True:
        return MonitorConfig()
    if not isinstance(raw, dict):
        config = MonitorConfig()
        config.problems.append(f"{ENV_VAR} must be a JSON object; the defaults are used")
        return config
    return from_mapping(raw)


def from_mapping(raw: Mapping[str, Any]) -> MonitorConfig:
    config = MonitorConfig()
    note = config.problems.append
    every = raw.get("every", 10)
    if isinstance(every, int) and not isinstance(every, bool) and every >= 1:
        config.every = every
    else:
        note(f"every must be a whole number >= 1, not {every!r}; 10 is used")
    board = raw.get("tensorboard")
    if board is not None and not isinstance(board, str):
        note(f"tensorboard must be a folder name, not {board!r}; no TensorBoard export")
        board = None
    config.tensorboard = board or None
    channel = raw.get("channel")
    if channel is not None:
        ok = (
            isinstance(channel, dict) and isinstance(channel.get("port"), int) and isinstance(channel.get("token"), str)
        )
        if ok and channel.get("host", "127.0.0.1") in ("127.0.0.1", "localhost", "::1"):
            config.channel = dict(channel)
        else:
            note("channel must be {host: loopback, port: int, token: str}; no live view")
    for key, value in (raw.get("thresholds") or {}).items():
        if key not in THRESHOLDS:
            note(f"unknown threshold {key!r} ignored (known: {', '.join(sorted(THRESHOLDS))})")
        elif isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            config.thresholds[key] = float(value)
        else:
            note(f"threshold {key} must be a positive number, not {value!r}; {THRESHOLDS[key]} is used")
    return config
