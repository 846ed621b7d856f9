"""The line of a model's configuration (a Hugging Face ``PretrainedConfig``: ``BertConfig``,
``GPT2Config``): ``BertConfig bert hidden_size=32 num_hidden_layers=2 num_attention_heads=2
vocab_size=99``.

Its own repr is the whole config as JSON (40 fields and more): clipped to one line it showed the
first fields (``add_cross_attention``) and the last, never the sizes. The line names the sizes an
engineer checks first, in the config's own attribute names (``n_embd`` for GPT-2: what the user
wrote, and what evaluates back); expanding the value still lists every field (the debugger's own
children: this module gives the line only).

Known by the base class's name, as ``ModelOutput`` is (:mod:`.kinds`): transformers is never
imported. Fields are read from the instance's ``__dict__`` through the class's ``attribute_map``,
never with ``getattr``: a config's properties may compute or warn (``torch_dtype`` is deprecated
in transformers 5), and a summary must do neither.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ...spelling import clip
from .kinds import is_model_config
from .render import LINE_LIMIT

# Each fact: the names configs give it, the usual first; the first the config holds is shown.
_FACTS: Tuple[Tuple[str, ...], ...] = (
    ("hidden_size", "d_model", "n_embd", "dim", "embed_dim"),
    ("num_hidden_layers", "n_layer", "num_layers", "n_layers", "encoder_layers"),
    ("num_attention_heads", "n_head", "num_heads", "n_heads", "encoder_attention_heads"),
    ("vocab_size",),
    ("image_size",),  # a vision config's facts beside its width and depth
    ("num_channels",),
    ("dtype", "torch_dtype"),  # shown only when set: None means "as loaded"
)
_PARTS_SHOWN = 3  # sub-configs on the line (CLIP's text and vision, an encoder-decoder's two)
_VALUE_LIMIT = 24  # a list value (Swin's depths per stage) is clipped to this


def describe_config(obj: Any) -> Dict[str, object]:
    """``stats()`` of a config: its type, ``model_type``, the facts it holds, and those of the
    configs it is made of (a composite config holds no sizes of its own)."""
    own = _own_fields(obj)
    info: Dict[str, object] = {"kind": "config", "type": type(obj).__name__, "fields": _facts(obj, own)}
    model_type = _class_attr(obj, "model_type")
    if isinstance(model_type, str) and model_type:
        info["model_type"] = model_type
    parts = [(name, value) for name, value in own.items() if _is_config(value)][:_PARTS_SHOWN]
    if parts:
        info["parts"] = {name: {"type": type(v).__name__, "fields": _facts(v, _own_fields(v))} for name, v in parts}
    return info


def render_config(info: Dict[str, Any]) -> str:
    """``GPT2Config gpt2 n_embd=64 n_layer=2 n_head=2 vocab_size=100 dtype=bfloat16``; a composite
    one: ``CLIPConfig clip · text_config: hidden_size=32 ... · vision_config: ...``."""
    words = [str(info.get("type"))]
    if info.get("model_type"):
        words.append(str(info["model_type"]))
    words += _field_words(info.get("fields") or {})
    for name, part in (info.get("parts") or {}).items():
        words.append(f"· {name}: " + " ".join(_field_words(part.get("fields") or {}) or [str(part.get("type"))]))
    return clip(" ".join(words), LINE_LIMIT)  # the sizes come first: a clip cuts only the tail


def _field_words(fields: Dict[str, Any]) -> List[str]:
    return [f"{name}={value}" for name, value in fields.items()]


def _facts(obj: Any, own: Dict[str, Any]) -> Dict[str, object]:
    """``{name as the config spells it: shown value}`` for each fact the config holds."""
    aliases = _class_attr(obj, "attribute_map")
    aliases = aliases if isinstance(aliases, dict) else {}
    out: Dict[str, object] = {}
    for names in _FACTS:
        found = _first_held(own, names, aliases)
        if found is not None:
            out[found[0]] = found[1]
    return out


def _first_held(own: Dict[str, Any], names: Tuple[str, ...], aliases: Dict[Any, Any]) -> Optional[Tuple[str, object]]:
    for name in names:
        stored = aliases.get(name, name)
        if not isinstance(stored, str) or stored not in own:
            continue
        shown = _shown(own[stored])
        if shown is not None:
            return stored, shown
    return None


def _shown(value: Any) -> Optional[object]:
    """The value as the line shows it; None for unset (a dtype of None) or a value of no use on
    one line (a nested dict)."""
    if value is None or isinstance(value, dict):
        return None
    if isinstance(value, (int, float)):  # bool included
        return value
    if isinstance(value, (list, tuple)):
        return clip(str(list(value)).replace(" ", ""), _VALUE_LIMIT)
    text = str(value)  # a torch.dtype or its name
    return clip(text[len("torch.") :] if text.startswith("torch.") else text, _VALUE_LIMIT)


def _own_fields(obj: Any) -> Dict[str, Any]:
    try:
        fields = object.__getattribute__(obj, "__dict__")
    except Exception:  # a config with __slots__ only: nothing read, the line says its type
        return {}
    return dict(fields) if isinstance(fields, dict) else {}


def _class_attr(obj: Any, name: str) -> Any:
    """A class attribute, read without the config's own ``__getattribute__``."""
    try:
        return next((vars(cls)[name] for cls in type(obj).__mro__ if name in vars(cls)), None)
    except Exception:
        return None


def _is_config(value: Any) -> bool:
    return is_model_config(type(value))
