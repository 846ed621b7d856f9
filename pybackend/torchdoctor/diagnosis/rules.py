"""Seed 002's rules: a sentence naming the layer, and the decision tree's next step.

Thresholds (``Thresholds``; each one a ``torchDoctor.diagnosis.*`` setting):

=================  ====================  =======  ==============================================
rule               setting               default  fires when
=================  ====================  =======  ==============================================
dead-units         deadFraction          0.5      more of a ReLU's units are 0 for the whole batch
grad-vanishing     vanishingGradient     1e-7     a parameter's mean |g| is below it
grad-exploding     explodingGradient     100      a parameter's mean |g| is above it
grad-ratio         gradientRatio         100      first/last layer mean |g| differ more, either way
activation-        collapsedStd          1e-6     a layer's output std is below it
collapsed
activation-        explodingActivation   10       a layer's output |mean| is above it
exploding
=================  ====================  =======  ==============================================

and, with no threshold: NaN/Inf in gradients (``grad-nonfinite``), in a layer's output (the first
one only, ``activation-nonfinite``), in the input batch (``input-nonfinite``) and in weights
(``weights-nonfinite``); a parameter that gets no gradient (``grad-missing``); gradients changed
in place after the backward (``grads-changed``, a note).

The next steps follow the seed's decision tree: NaN/Inf -> check the data, then lower the LR and
clip; exploding -> clip (with a max-norm computed from the observed norms), lower the LR, add
normalisation; all-zero / vanishing -> dead ReLUs first, else activations, residuals,
normalisation, initialisation; dead units -> re-initialise the layer before (Kaiming) or
LeakyReLU, lower the LR.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .words import layer, mag, nice, pct, plain

ERROR = "error"
WARNING = "warning"
INFO = "info"
_RANK = {ERROR: 0, WARNING: 1, INFO: 2}

# Rule ids (stable: the webview and tests key on them).
GRAD_NONFINITE = "grad-nonfinite"
GRAD_EXPLODING = "grad-exploding"
GRAD_VANISHING = "grad-vanishing"
GRAD_RATIO = "grad-ratio"
GRAD_MISSING = "grad-missing"
GRADS_CHANGED = "grads-changed"
WEIGHTS_NONFINITE = "weights-nonfinite"
DEAD_UNITS = "dead-units"
ACT_COLLAPSED = "activation-collapsed"
ACT_EXPLODING = "activation-exploding"
ACT_NONFINITE = "activation-nonfinite"
INPUT_NONFINITE = "input-nonfinite"


@dataclass(frozen=True)
class Thresholds:
    dead_fraction: float = 0.5
    vanishing_gradient: float = 1e-7
    exploding_gradient: float = 100.0
    gradient_ratio: float = 100.0
    collapsed_std: float = 1e-6
    exploding_activation: float = 10.0

    # setting key (under torchDoctor.diagnosis) -> field
    SETTINGS = {
        "deadFraction": "dead_fraction",
        "vanishingGradient": "vanishing_gradient",
        "explodingGradient": "exploding_gradient",
        "gradientRatio": "gradient_ratio",
        "collapsedStd": "collapsed_std",
        "explodingActivation": "exploding_activation",
    }

    @classmethod
    def from_settings(cls, get: Callable[[str, Any], Any]) -> Tuple["Thresholds", List[str]]:
        """Read ``diagnosis.<key>`` with ``get(dotted, default)``; bad values keep the default."""
        defaults = cls()
        values: Dict[str, float] = {}
        problems: List[str] = []
        for key, name in cls.SETTINGS.items():
            default = getattr(defaults, name)
            raw = get(f"diagnosis.{key}", default)
            ok = isinstance(raw, (int, float)) and not isinstance(raw, bool) and math.isfinite(raw) and raw > 0
            if ok and name == "dead_fraction" and raw > 1:
                ok = False
            if ok and name == "gradient_ratio" and raw <= 1:
                ok = False
            if not ok:
                if raw != default:
                    problems.append(f"torchDoctor.diagnosis.{key}: {raw!r} is not a valid threshold; using {default}")
                values[name] = default
            else:
                values[name] = float(raw)
        return cls(**values), problems

    def to_json(self) -> Dict[str, float]:
        return {key: getattr(self, name) for key, name in self.SETTINGS.items()}


@dataclass
class Flag:
    rule: str
    severity: str
    sentence: str
    suggestion: str
    module: Optional[str] = None  # the layer it names (path), for verdicts

    def to_json(self, with_module: bool = False) -> Dict[str, Any]:
        out: Dict[str, Any] = {
            "rule": self.rule,
            "severity": self.severity,
            "sentence": self.sentence,
            "suggestion": self.suggestion,
        }
        if with_module:
            out["module"] = self.module
        return out


def by_severity(flags: Sequence[Flag]) -> List[Flag]:
    return sorted(flags, key=lambda f: _RANK.get(f.severity, 3))


# -- inputs the rules read ------------------------------------------------------------------


@dataclass
class GradRow:
    """One parameter and its gradient statistics (None: unknown)."""

    name: str
    module: str
    module_type: str
    mean_abs: Optional[float] = None
    max_abs: Optional[float] = None
    norm: Optional[float] = None
    nan: int = 0  # -1: present, not counted
    inf: int = 0
    has_grad: bool = True
    requires_grad: bool = True
    changed: bool = False  # modified in place since the backward
    weights_nonfinite: int = 0  # NaN/Inf among the parameter's own values (-1: present, not counted)


@dataclass
class ActRow:
    """One module call and its output statistics."""

    path: str
    type: str
    occurrence: int = 1
    leaf: bool = True
    count: int = 0
    mean: Optional[float] = None
    std: Optional[float] = None
    zeros: Optional[float] = None
    dead_units: Optional[float] = None  # fraction of a sample's positions that are 0 for every sample
    units: Optional[int] = None
    min: Optional[float] = None
    max: Optional[float] = None
    nonfinite: int = 0  # -1: present, not counted
    nan: Optional[int] = None
    inf: Optional[int] = None
    feeder: Optional[Tuple[str, str]] = None  # (path, type) of the layer with parameters before it


@dataclass
class ClipAdvice:
    max_norm: float
    total: Optional[float]
    healthy: Optional[float]

    def code(self) -> str:
        return f"torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm={plain(self.max_norm)})"

    def why(self) -> str:
        if self.total is None:
            return ""
        if self.healthy:
            return f" (the total gradient norm is {mag(self.total)}; the layers that are not exploding total {mag(self.healthy)})"
        return f" (the total gradient norm is {mag(self.total)})"


def clip_advice(rows: Sequence[GradRow], exploding: Sequence[str]) -> ClipAdvice:
    """A max-norm for ``clip_grad_norm_``: the norm of the healthy gradients, as a 1-2-5 number.

    Clipping there leaves a normal step alone and caps a spike at what the healthy layers
    produce together; with no healthy layer left, the customary 1.
    """
    bad = set(exploding)
    finite = [(r.name, r.norm) for r in rows if r.norm is not None and r.nan == 0 and r.inf == 0]
    total = math.sqrt(sum(norm**2 for _, norm in finite)) if finite else None
    healthy_norms = [norm for name, norm in finite if name not in bad]
    healthy = math.sqrt(sum(norm**2 for norm in healthy_norms)) if healthy_norms else None
    max_norm = nice(healthy) if healthy and healthy > 0 else 1.0
    return ClipAdvice(max_norm, total, healthy)


# -- gradient rules ---------------------------------------------------------------------------


def _counted(n: int, what: str) -> str:
    return f"{n} {what}" if n > 0 else f"some {what}"


def grad_nonfinite(row: GradRow, clip: ClipAdvice) -> Optional[Flag]:
    if not (row.nan or row.inf):
        return None
    parts = []
    if row.nan:
        parts.append(_counted(row.nan, "NaN"))
    if row.inf:
        parts.append(_counted(row.inf, "Inf"))
    return Flag(
        GRAD_NONFINITE,
        ERROR,
        f"`{row.name}` has {' and '.join(parts)} gradient values after the last backward.",
        "Check the data for NaN/Inf first (`torch.isfinite(x).all()` on a batch and its targets). If it is clean, "
        f"lower the learning rate 10x and clip the gradients: `{clip.code()}` between `loss.backward()` and "
        "`optimizer.step()`.",
        row.module,
    )


def grad_exploding(row: GradRow, th: Thresholds, clip: ClipAdvice) -> Optional[Flag]:
    if row.mean_abs is None or row.mean_abs <= th.exploding_gradient:
        return None
    return Flag(
        GRAD_EXPLODING,
        WARNING,
        f"`{row.name}`: mean |g| = {mag(row.mean_abs)}, above {mag(th.exploding_gradient)}: exploding gradients "
        f"in {layer(row.module, row.module_type)}.",
        f"Clip the gradients: `{clip.code()}` between `loss.backward()` and `optimizer.step()`{clip.why()}. "
        "Lower the learning rate 10x, and in a deep network add normalisation (BatchNorm/LayerNorm).",
        row.module,
    )


def grad_vanishing(row: GradRow, th: Thresholds, dead_near: Optional[Tuple[str, str, str]] = None) -> Optional[Flag]:
    """``dead_near``: ``(path, type, "after" | "before")`` of a dead ReLU that explains it."""
    if row.mean_abs is None or row.mean_abs >= th.vanishing_gradient or not row.requires_grad or row.changed:
        return None
    if row.mean_abs == 0:
        sentence = (
            f"`{row.name}`: every gradient value is exactly 0: {layer(row.module, row.module_type)} is not learning."
        )
    else:
        sentence = (
            f"`{row.name}`: mean |g| = {mag(row.mean_abs)}, below {mag(th.vanishing_gradient)}: vanishing "
            f"gradients; {layer(row.module, row.module_type)} is barely learning."
        )
    if dead_near is not None and dead_near[2] == "after":
        suggestion = (
            f"The dead {dead_near[1]} {layer(dead_near[0])} after it passes no gradient back: fix that "
            "first (its verdict says how)."
        )
    elif dead_near is not None:
        suggestion = (
            f"Its input comes from the dead {dead_near[1]} {layer(dead_near[0])}, all zeros, so its weights "
            "get no gradient: fix that first (its verdict says how)."
        )
    elif row.mean_abs == 0:
        suggestion = (
            "Nothing of the loss reaches it through a live path: look for dead ReLUs after it, a `.detach()` "
            "or `torch.no_grad()` in the forward; a learning rate that was too high can also have killed the units."
        )
    else:
        suggestion = (
            "Use ReLU/GELU rather than sigmoid/tanh, add residual connections or normalisation "
            "(BatchNorm/LayerNorm), and check the initialisation (`nn.init.kaiming_normal_` for ReLU)."
        )
    return Flag(GRAD_VANISHING, WARNING, sentence, suggestion, row.module)


def grad_missing(row: GradRow) -> Optional[Flag]:
    if row.has_grad or not row.requires_grad:
        return None
    return Flag(
        GRAD_MISSING,
        WARNING,
        f"`{row.name}` got no gradient from the last backward although it requires one: "
        f"{layer(row.module, row.module_type)} does not take part in the loss.",
        "An unused layer, a `.detach()` or `torch.no_grad()` on its path, or an output the loss ignores. Remove the "
        "layer or fix the path; if it is meant to stay fixed, freeze it with `requires_grad_(False)`.",
        row.module,
    )


def weights_nonfinite(row: GradRow, clip: ClipAdvice) -> Optional[Flag]:
    if not row.weights_nonfinite:
        return None
    n = row.weights_nonfinite
    return Flag(
        WEIGHTS_NONFINITE,
        ERROR,
        f"`{row.name}` itself holds {_counted(n, 'NaN/Inf')} values: an earlier update diverged.",
        f"Lower the learning rate 10x and clip the gradients (`{clip.code()}`); restart from a checkpoint taken "
        "before the divergence.",
        row.module,
    )


def grad_ratio(layers: Sequence[Tuple[str, str, Optional[float]]], th: Thresholds, clip: ClipAdvice) -> Optional[Flag]:
    """``layers``: ``(module path, type, mean |g| over its parameters)`` in model order."""
    known = [(p, t, m) for p, t, m in layers if m is not None]
    if len(known) < 2:
        return None
    (fp, ft, first), (lp, lt, last) = known[0], known[-1]
    if first <= 0 or last <= 0:
        return None  # an all-zero layer is the vanishing rule's business
    if last / first > th.gradient_ratio:
        ratio = last / first
        return Flag(
            GRAD_RATIO,
            WARNING,
            f"Gradients shrink {ratio:.0f}x from the last layer {layer(lp, lt)} (mean |g| {mag(last)}) to the first "
            f"{layer(fp, ft)} ({mag(first)}), more than {mag(th.gradient_ratio)}x: vanishing gradients; the first "
            "layers learn far more slowly.",
            "Add residual connections or normalisation (BatchNorm/LayerNorm) between the layers, prefer ReLU/GELU to "
            "sigmoid/tanh, and re-initialise with `nn.init.kaiming_normal_` (ReLU) or `nn.init.xavier_normal_` (tanh).",
            fp,
        )
    if first / last > th.gradient_ratio:
        ratio = first / last
        return Flag(
            GRAD_RATIO,
            WARNING,
            f"Gradients grow {ratio:.0f}x from the last layer {layer(lp, lt)} (mean |g| {mag(last)}) back to the "
            f"first {layer(fp, ft)} ({mag(first)}), more than {mag(th.gradient_ratio)}x: exploding gradients "
            "towards the input.",
            f"Clip the gradients (`{clip.code()}`), lower the learning rate 10x, and add normalisation between the layers.",
            fp,
        )
    return None


def grads_changed(rows: Sequence[GradRow]) -> Optional[Flag]:
    changed = [r for r in rows if r.changed]
    if not changed:
        return None
    zeroed = all((r.max_abs == 0) for r in changed if r.max_abs is not None)
    what = "were zeroed" if zeroed else "were changed in place"
    return Flag(
        GRADS_CHANGED,
        INFO,
        f"The gradients of {len(changed)} parameters {what} after the backward (`zero_grad(set_to_none=False)`, "
        "clipping or accumulation): their rows show them as they are at the pause, after that change (what "
        "`optimizer.step()` uses), and the vanishing rule skips them.",
        "Pause right after `loss.backward()`, before `optimizer.zero_grad()` or clipping, to see what the backward produced.",
        None,
    )


# -- activation rules -------------------------------------------------------------------------


def is_relu(type_name: str, low: Optional[float]) -> bool:
    t = type_name.lower()
    if t == "threshold":
        return True
    return "relu" in t and not any(k in t for k in ("leaky", "prelu", "rrelu", "elu_")) and (low is None or low >= 0)


def _call(row: ActRow) -> str:
    where = layer(row.path, row.type)
    return where + (f" (call {row.occurrence})" if row.occurrence > 1 else "")


def dead_units(row: ActRow, th: Thresholds) -> Optional[Flag]:
    """A ReLU whose units output exactly 0 for every sample of the batch, beyond ``dead_fraction``.

    A unit is one position of a sample's output (a neuron of an MLP, a channel x pixel of a
    CNN). Counting units rather than zeros keeps a healthy ReLU (about half of its outputs 0,
    but different ones for different samples) out; without unit counts (a batch of one) the
    fraction of zero outputs stands in, as in seed 002's NetworkDebugger.
    """
    if not is_relu(row.type, row.min):
        return None
    if row.dead_units is not None:
        if row.dead_units <= th.dead_fraction:
            return None
        units = f"{row.units} units" if row.units else "units"
        measured = (
            f"{pct(row.dead_units)} of its {units} output exactly 0 for every sample of the batch "
            f"({pct(row.zeros)} of all its outputs are 0)"
        )
    elif row.zeros is not None and row.zeros > th.dead_fraction:
        measured = f"{pct(row.zeros)} of its outputs are exactly 0"
    else:
        return None
    before = f"`{row.feeder[0]}` before it" if row.feeder else "the layer before it"
    init = (
        f"`nn.init.kaiming_normal_({row.feeder[0]}.weight, nonlinearity='relu')` and a zero bias"
        if row.feeder
        else "Kaiming initialisation"
    )
    return Flag(
        DEAD_UNITS,
        WARNING,
        f"{_call(row)}: {measured}, above {pct(th.dead_fraction)}: dead units; no gradient flows back through them.",
        f"Re-initialise {before} ({init}), or switch `{row.path}` to `nn.LeakyReLU(0.01)`; if the units died "
        "during training, lower the learning rate.",
        row.path,
    )


def collapsed(row: ActRow, th: Thresholds) -> Optional[Flag]:
    if row.std is None or row.count < 2 or row.std >= th.collapsed_std:
        return None
    value = f" ({mag(row.mean)})" if row.mean is not None else ""
    return Flag(
        ACT_COLLAPSED,
        WARNING,
        f"{_call(row)}: output std = {mag(row.std)}, below {mag(th.collapsed_std)}: collapsed activations; every "
        f"value is (nearly) the same{value}.",
        f"Check that the input varies (not a constant batch) and that `{row.path}`'s weights are not all equal "
        "(re-initialise them); add normalisation before it, and lower the learning rate if it collapsed during training.",
        row.path,
    )


def exploding_activation(row: ActRow, th: Thresholds) -> Optional[Flag]:
    if row.mean is None or abs(row.mean) <= th.exploding_activation:
        return None
    return Flag(
        ACT_EXPLODING,
        WARNING,
        f"{_call(row)}: output mean = {mag(row.mean)}, |mean| above {mag(th.exploding_activation)}: exploding activations.",
        f"Normalise the input (mean 0, std 1), add normalisation (BatchNorm/LayerNorm) after `{row.path}`, check its "
        "initialisation scale, and lower the learning rate if the activations grew during training.",
        row.path,
    )


def _bad_values(nonfinite: int, nan: Optional[int], inf: Optional[int]) -> str:
    if nan is not None and inf is not None and (nan or inf):
        return " and ".join(p for p in (f"{nan} NaN" if nan else "", f"{inf} Inf" if inf else "") if p)
    return _counted(nonfinite if nonfinite > 0 else 0, "NaN/Inf")


def activation_nonfinite(row: ActRow, input_bad: bool, weights_bad: bool, clip: ClipAdvice) -> Flag:
    """The first output in the pass holding NaN/Inf: where they were born."""
    if input_bad:
        suggestion = (
            "The input batch already holds NaN/Inf: check the data and its preprocessing "
            "(`torch.isfinite(x).all()`), and skip or repair the bad samples."
        )
    elif weights_bad:
        suggestion = (
            f"`{row.path}`'s own weights hold NaN/Inf: an earlier update diverged. Lower the learning rate "
            f"10x and clip the gradients (`{clip.code()}`)."
        )
    else:
        suggestion = (
            "Its input was finite, so this operation overflowed or divided by zero: lower the learning rate "
            "10x, clamp before log/exp (eps=1e-7), subtract the max before exp (log-sum-exp), and check the "
            "eps of any custom normalisation."
        )
    return Flag(
        ACT_NONFINITE,
        ERROR,
        f"NaN/Inf first appear in the output of {_call(row)}: {_bad_values(row.nonfinite, row.nan, row.inf)} values.",
        suggestion,
        row.path,
    )


def input_nonfinite(nonfinite: int, nan: Optional[int], inf: Optional[int], model_type: str) -> Optional[Flag]:
    if not nonfinite:
        return None
    return Flag(
        INPUT_NONFINITE,
        ERROR,
        f"The input batch of {model_type} holds {_bad_values(nonfinite, nan, inf)} values.",
        "Check the data for NaN/Inf (`torch.isfinite(x).all()`) and the preprocessing that made them "
        "(a division by a zero std, log of 0, a missing value read as NaN).",
        "",
    )
