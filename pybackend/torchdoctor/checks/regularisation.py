"""Dropout off for the overfit test, and back on after (worker side, imports torch lazily).

Memorising one batch asks whether the model, the loss and the backward can learn; dropout is
there to keep a model from memorising, so a correct model with Dropout(0.2) "fails" with it on
(measured: a dropout CNN and the word-LM Transformer did). Batch norm keeps training mode: it is
part of what the model computes, not noise added to stop memorising.

Two ways real models drop out, both set to zero (modules stay in training mode):
- dropout modules (``nn.Dropout``, ``Dropout1d/2d/3d``, ``AlphaDropout``...): ``p = 0``. Setting
  ``p`` rather than ``eval()`` also covers code that reads ``self.attn_dropout.p`` when training
  (Hugging Face attention);
- float attributes whose name says drop (``self.dropout = 0.1`` used as
  ``dropout_p=self.dropout if self.training else 0`` in nanoGPT, ``nn.LSTM(dropout=...)``,
  ``nn.MultiheadAttention``, a drop-path rate), on a module or on the ``config`` object it reads
  at each forward (Hugging Face's ``config.layerdrop``).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class DropoutOff:
    """What was set to zero, to say it and to put it back."""

    layers: list = field(default_factory=list)  # names of dropout modules
    attributes: list = field(default_factory=list)  # "module.attr" of float attributes
    _undo: list = field(default_factory=list)  # (object, attribute, old value)

    def restore(self) -> None:
        for obj, attr, old in reversed(self._undo):
            setattr(obj, attr, old)
        self._undo.clear()

    def sentence(self) -> str | None:
        if not self._undo and not self.layers and not self.attributes:
            return None
        parts = []
        if self.layers:
            parts.append(f"p=0 in {_count(self.layers, 'dropout layer')} ({_names(self.layers)})")
        if self.attributes:
            parts.append(f"0 in {_count(self.attributes, 'dropout attribute')} ({_names(self.attributes)})")
        return (
            "Dropout off for this test: "
            + "; ".join(parts)
            + ". Memorising one batch tests the model, the loss and the backward; dropout exists to prevent "
            "memorising (your training keeps it)."
        )


def dropout_off(model) -> DropoutOff:
    import torch.nn as nn

    off = DropoutOff()
    configs: set = set()  # ids of the config objects already zeroed
    for name, module in model.named_modules():
        where = name or type(model).__name__
        _config_off(module, where, off, configs)
        if isinstance(module, (nn.modules.dropout._DropoutNd,)):
            if module.p > 0:
                off._undo.append((module, "p", module.p))
                module.p = 0.0
                off.layers.append(where)
            continue
        for attr, value in list(vars(module).items()):
            if "drop" in attr.lower() and type(value) is float and 0.0 < value < 1.0:
                off._undo.append((module, attr, value))
                setattr(module, attr, 0.0)
                off.attributes.append(f"{where}.{attr}")
    return off


def _config_off(module, where: str, off: DropoutOff, seen: set) -> None:
    """Zero the drop rates of the config a layer reads at each forward, once per config object.
    Hugging Face's Wav2Vec2 encoder skips a layer when ``random() < self.config.layerdrop`` (0.1):
    the skipped layer's parameters then read as "never used" on a healthy model."""
    import torch.nn as nn

    config = vars(module).get("config")
    if config is None or isinstance(config, nn.Module) or id(config) in seen or not hasattr(config, "__dict__"):
        return
    seen.add(id(config))
    for attr, value in list(vars(config).items()):
        if "drop" in attr.lower() and type(value) is float and 0.0 < value < 1.0:
            off._undo.append((config, attr, value))
            setattr(config, attr, 0.0)
            off.attributes.append(f"{where}.config.{attr}")


def _count(items: list, what: str) -> str:
    return f"{len(items)} {what}{'s' if len(items) != 1 else ''}"


def _names(items: list, shown: int = 3) -> str:
    return ", ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")
