"""The anomaly watch's settings: one JSON object in the ``TORCHDOCTOR_ANOMALY`` variable.

The extension (or ``torchdoctor run``) passes a debug session's settings to the debuggee as
JSON; no variable means no watch. Every key is optional; a missing or invalid value takes its
default, and the problem is kept in ``AnomalyConfig.problems`` (never raised: this runs inside
the user's program). Schema, with defaults::

    {
      "mode": "break",          # "break": pause the debugger (stop the run under `torchdoctor run`)
                                # "log": report and go on; "off": install nothing
      "threshold": 1e4,         # |value| above this in a module output or a gradient: explosion
      "skipSteps": 0,           # warm-up: no reports before this step (steps count from 0)
      "firstOnly": true,        # true: after the first anomaly that breaks (log mode: the first
                                # anomaly), go quiet; false: the first such anomaly of every step.
                                # A rule set to "log" in break mode is reported once, ends nothing
      "checks": ["forward", "backward", "loss"],
                                # forward: module outputs (NaN/Inf, explosion, dead outputs)
                                # backward: parameter gradients (NaN/Inf, explosion, every one
                                #           exactly 0) and stale gradients (a missing zero_grad)
                                # loss: the scalar .backward() is called on (rules below)
      "deadSteps": 3,           # a module whose whole output is 0 while its input is not, this
                                # many steps in a row, is dead; every gradient 0 this many steps
                                # while the loss is not: the model is stuck (0 turns both off)
      "loss": {
        "nan": "break",         # each rule: "break", "log" or "off"
        "spike": "break",       # loss > spikeFactor x the running median of the last 20 losses
        "spikeFactor": 10,
        "notDecreasing": "log", # advice: median of the last 25 losses >= 99% of the first 25's
        "oscillating": "log"    # advice: the last 50 losses alternate, big swings, no net progress
      }
    }

``mode`` caps every rule: in "log" mode a rule set to "break" only logs. The trend rules
(``TREND_RULES``) are advice: "log" or "off", never a stop ("break" reads as "log").
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Tuple

ENV_VAR = "TORCHDOCTOR_ANOMALY"

BREAK = "break"
LOG = "log"
OFF = "off"
ACTIONS = (BREAK, LOG, OFF)

CHECKS = ("forward", "backward", "loss")
LOSS_RULES = ("nan", "spike", "notDecreasing", "oscillating")

TREND_RULES = ("notDecreasing", "oscillating")  # advice, not anomalies: never a stop
DEFAULT_LOSS_ACTIONS = {"nan": BREAK, "spike": BREAK, "notDecreasing": LOG, "oscillating": LOG}


@dataclass
class AnomalyConfig:
    mode: str = BREAK
    threshold: float = 1e4
    skip_steps: int = 0
    first_only: bool = True
    checks: Tuple[str, ...] = CHECKS
    dead_steps: int = 3
    loss_actions: Dict[str, str] = field(default_factory=lambda: dict(DEFAULT_LOSS_ACTIONS))
    spike_factor: float = 10.0
    problems: List[str] = field(default_factory=list)  # what was ignored, and why

    def watches(self, check: str) -> bool:
        return self.mode != OFF and check in self.checks

    def action(self, loss_rule: Optional[str] = None) -> str:
        """What to do on a hit: the loss rule's own action (if any), capped by ``mode``."""
        wanted = self.loss_actions.get(loss_rule, OFF) if loss_rule else BREAK
        if self.mode == OFF or wanted == OFF:
            return OFF
        if loss_rule in TREND_RULES:
            return LOG  # trends are advice: they never stop a run ("break" reads as "log")
        return LOG if LOG in (self.mode, wanted) else BREAK

    def to_json(self) -> Dict[str, Any]:
        """The settings in the variable's own spelling (what ``parse`` would read back)."""
        loss: Dict[str, Any] = dict(self.loss_actions)
        loss["spikeFactor"] = self.spike_factor
        return {
            "mode": self.mode,
            "threshold": self.threshold,
            "skipSteps": self.skip_steps,
            "firstOnly": self.first_only,
            "checks": list(self.checks),
            "deadSteps": self.dead_steps,
            "loss": loss,
        }


def from_env(environ: Mapping[str, str]) -> Optional[AnomalyConfig]:
    """The settings in ``environ``; None when the variable is absent or empty (watch off)."""
    text = environ.get(ENV_VAR, "").strip()
    return parse(text) if text else None


def parse(text: str) -> AnomalyConfig:
    """Read the JSON text; anything unreadable falls back to defaults, noted in ``problems``."""
    try:
        raw = json.loads(text)
    except ValueError as exc:
        config = AnomalyConfig()
        config.problems.append(f"{ENV_VAR} is not JSON ({exc}); using the defaults")
        return config
    if not isinstance(raw, dict):
        config = AnomalyConfig()
        config.problems.append(f"{ENV_VAR} must be a JSON object; using the defaults")
        return config
    return from_mapping(raw)


def from_mapping(raw: Mapping[str, Any]) -> AnomalyConfig:
    config = AnomalyConfig()
    note = config.problems.append
    config.mode = _choice(raw, "mode", ACTIONS, config.mode, note)
    config.threshold = _number(raw, "threshold", config.threshold, note, low=0.0)
    config.skip_steps = _count(raw, "skipSteps", config.skip_steps, note)
    config.first_only = _flag(raw, "firstOnly", config.first_only, note)
    config.checks = _checks(raw, note)
    config.dead_steps = _count(raw, "deadSteps", config.dead_steps, note)
    loss = raw.get("loss", {})
    if not isinstance(loss, dict):
        note("loss must be an object; using the default loss rules")
        loss = {}
    for rule in LOSS_RULES:
        config.loss_actions[rule] = _choice(loss, rule, ACTIONS, DEFAULT_LOSS_ACTIONS[rule], note, "loss.")
    config.spike_factor = _number(loss, "spikeFactor", config.spike_factor, note, low=1.0, prefix="loss.")
    known = {"mode", "threshold", "skipSteps", "firstOnly", "checks", "deadSteps", "loss"}
    for key in raw:
        if key not in known:
            note(f"unknown setting {key!r} ignored")
    return config


def _choice(raw, key, allowed, default, note, prefix=""):
    value = raw.get(key, default)
    if value in allowed:
        return value
    note(f"{prefix}{key} must be one of {', '.join(allowed)} (got {value!r}); using {default!r}")
    return default


def _number(raw, key, default, note, low, prefix=""):
    value = raw.get(key, default)
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and value > low
    if ok:
        return float(value)
    note(f"{prefix}{key} must be a number above {low:g} (got {value!r}); using {default:g}")
    return default


def _count(raw, key, default, note):
    value = raw.get(key, default)
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    note(f"{key} must be a whole number >= 0 (got {value!r}); using {default}")
    return default


def _flag(raw, key, default, note):
    value = raw.get(key, default)
    if isinstance(value, bool):
        return value
    note(f"{key} must be true or false (got {value!r}); using {default}")
    return default


def _checks(raw, note) -> Tuple[str, ...]:
    value = raw.get("checks", list(CHECKS))
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        note(f"checks must be a list of {', '.join(CHECKS)}; using all")
        return CHECKS
    unknown = [v for v in value if v not in CHECKS]
    if unknown:
        note(f"unknown checks ignored: {', '.join(unknown)}")
    return tuple(c for c in CHECKS if c in value)
