"""The ``torchdoctor_example()`` function to paste into the user's file, with the blanks named.

Read from the class without running it (its constructor may need what we lack): the import line
for a sibling ``torchdoctor_example.py``; integer token ids when the class has an ``nn.Embedding``
(``torch.randint`` up to its vocabulary size, written as the constructor's own expression, e.g.
``config.vocab_size``); and, when ``forward`` takes optional ``targets``/``labels``, targets passed so
the model computes its own loss. Optional forward arguments are not inputs. The import comes from the
top-level package when it exports the names (``from transformers import ...``).

A class built from a Hugging Face config (``config_class``) gets a snippet that runs as written
(``snippet_library.py``; a vision class, whose config gives its images' channels and size:
``snippet_vision.py``). A model the user's file already built (``model = Net(...)`` at module
level, ``instance``) gives the vocabulary when the class's source does not: its first
``nn.Embedding``'s ``num_embeddings``.
"""

from __future__ import annotations

import inspect
import re

from ..discovery import EXAMPLE_FUNCTION
from ..user_files import is_user_file
from .snippet_library import config_class, embedding_vocab, importable_from, library_snippet
from .snippet_vision import vision_config_class, vision_snippet

_EMBEDDING = re.compile(r"nn\.Embedding\(\s*([^,()]+(?:\([^()]*\))?[^,()]*?)\s*,")
_TARGET_NAMES = ("targets", "target", "labels", "label", "y")


def example_snippet(class_name: str, init_args: list[str], forward_inputs: list[str], cls=None, instance=None) -> str:
    """The function to paste into the user's file, with the blanks named (``cls``: read hints from it;
    ``instance``: a model of that class the user's file built)."""
    if cls is not None and vision_config_class(cls) is not None:
        return vision_snippet(cls, class_name, EXAMPLE_FUNCTION, _import_note(cls, cls.__module__))
    if cls is not None and config_class(cls) is not None:
        return library_snippet(cls, class_name, EXAMPLE_FUNCTION, instance)
    vocab = (_vocab_expression(cls) if cls is not None else None) or embedding_vocab(instance)
    target_arg = _optional_target_arg(cls) if cls is not None else None
    inputs = [a for a in forward_inputs if a not in _TARGET_NAMES] or ["x"]
    lines = ["import torch", ""]
    if cls is not None and getattr(cls, "__module__", "") not in ("", "__main__", "torchdoctor_user_module", None):
        module, names = cls.__module__, _imported(cls, class_name, init_args)
        lines.append(f"from {_import_from(cls, names)} import {', '.join(names)}  # {_import_note(cls, module)}")
    lines += [
        "",
        "",
        f"def {EXAMPLE_FUNCTION}():",
        '    """Torch Doctor\'s checks call this: the model and one small batch."""',
    ]
    if vocab and init_args and not vocab.isdigit():  # the constructor's expression names its arguments: bind them
        config = _config_class(cls)
        for i, a in enumerate(init_args):
            value = f"{config}(...)" if config and a in ("config", "cfg", "conf") else "..."
            note = "  # fill in (small sizes: the checks train it on a CPU)" if i == 0 else ""
            lines.append(f"    {a} = {value}{note}")
        lines.append(f"    model = {class_name}({', '.join(init_args)})")
    else:
        args = ", ".join(f"{a}=..." for a in init_args)
        lines.append(
            f"    model = {class_name}({args})" + ("  # fill in the constructor arguments" if init_args else "")
        )
    if vocab:
        lines.append(
            f"    {inputs[0]} = torch.randint(0, {vocab}, (8, 16))  # token ids below the vocabulary size, 8 sequences of 16"
        )
        lines.append(f"    targets = torch.randint(0, {vocab}, (8, 16))  # the next token at each position")
        rest = ["model.init_hidden(8)" if hasattr(cls, "init_hidden") else "torch.randn(8, ...)" for _ in inputs[1:]]
        args_tuple = ", ".join([inputs[0]] + rest)
    elif len(inputs) > 1:
        args_tuple = ", ".join("torch.randn(8, ...)" for _ in inputs)
        lines.append(f"    inputs = ({args_tuple},)  # one per forward argument: {', '.join(inputs)}")
        args_tuple = "*inputs"
    else:
        lines.append(f"    {inputs[0]} = torch.randn(8, ...)  # one batch, as your DataLoader yields it")
        args_tuple = inputs[0]
    if not vocab:
        lines.append("    targets = torch.randint(0, ..., (8,))  # class indices; a float tensor for regression")
    tuple_text = (
        "inputs" if args_tuple == "*inputs" else f"({args_tuple},)" if "," not in args_tuple else f"({args_tuple})"
    )
    ret = f'    return {{"model": model, "inputs": {tuple_text}, "targets": targets}}'
    if target_arg:
        ret += f"  # passed as forward({target_arg}=targets): the model's own loss is used"
    lines.append(ret)
    return "\n".join(lines) + "\n"


def _import_note(cls, module: str) -> str:
    """Where the import line goes. A class of an installed package (``transformers``'
    ``ResNetForImageClassification``) is imported by the user's file already: telling them it is
    "not needed in transformers.models.resnet.modeling_resnet.py itself" named a file they never edit."""
    if _installed(cls):
        return f"as your file imports it; in a sibling {_sibling()} too"
    return f"in a sibling {_sibling()}; not needed in {module}.py itself"


def _installed(cls) -> bool:
    try:
        path = inspect.getsourcefile(cls) or ""
    except (TypeError, OSError):
        return False
    return bool(path) and not is_user_file(path)


def _sibling() -> str:
    from .core import EXAMPLE_FILE

    return EXAMPLE_FILE


def _vocab_expression(cls) -> str | None:
    """The vocabulary size as the class's constructor writes it, when an nn.Embedding is built there."""
    try:
        source = inspect.getsource(cls)
    except (OSError, TypeError):
        return None
    match = _EMBEDDING.search(source)
    return match.group(1).strip() if match else None


def _imported(cls, class_name: str, init_args: list[str]) -> list[str]:
    config = _config_class(cls) if {"config", "cfg", "conf"} & set(init_args) else None
    return [class_name] + ([config] if config else [])


def _import_from(cls, names: list[str]) -> str:
    """The top-level package when it exports every name as the class's module has it, else the module."""
    import sys

    module = sys.modules.get(cls.__module__)
    tops = {importable_from(getattr(module, n, cls), n) for n in names} if module else {cls.__module__}
    return tops.pop() if len(tops) == 1 else cls.__module__


def _config_class(cls) -> str | None:
    """``<Class>Config`` in the model's module (nanoGPT's ``GPTConfig``), else its only ``...Config`` class."""
    import sys

    module = sys.modules.get(getattr(cls, "__module__", ""), None)
    found = [n for n, v in vars(module).items() if inspect.isclass(v) and n.endswith("Config")] if module else []
    own = f"{cls.__name__}Config"
    return own if own in found else found[0] if len(found) == 1 else None


def _optional_target_arg(cls) -> str | None:
    try:
        params = inspect.signature(cls.forward).parameters.values()
    except (TypeError, ValueError):
        return None
    return next((p.name for p in params if p.name in _TARGET_NAMES and p.default is not p.empty), None)
