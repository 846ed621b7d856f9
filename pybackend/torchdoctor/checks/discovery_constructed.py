"""Models a file builds but does not define: ``model = GPT2LMHeadModel(config)`` at module level,
and the class ``torchdoctor_example()`` constructs (statically, ``ast``, no torch).

A Hugging Face script defines no class, so class discovery offers nothing; the checks run on any
``nn.Module`` class the worker can reach by name in the module, imported ones included. Which
calls build a model, without importing anything:

- a class of ``torch.nn`` (``nn.Sequential(...)``) or a model class defined in the file;
- an imported capitalised name that reads as a model (``...Model``, ``...Net``, ``GPT``,
  ``...ForCausalLM``, ``...Transformer``...), or assigned to a name that does (``model``,
  ``net``, ``generator``), and not one that reads as something else (``...Config``,
  ``...Tokenizer``, ``...Dataset``, ``DataLoader``, optimizers, schedulers, scalers).

``model = GPT(config).to(device)`` counts (the call under ``.to`` / ``.cuda`` / ``.eval``).
"""

from __future__ import annotations

import ast
import re

from . import discovery as D

_MODEL_NAME = re.compile(
    r"(Model|Net|Network|GPT\d*|Transformer|Encoder|Decoder|Generator|Discriminator|Classifier|"
    r"For[A-Z]\w*|LM|VAE|AutoEncoder|Autoencoder|ResNet\d*|UNet|MLP|CNN|RNN|LSTM|GRU)$"
)
_NOT_MODEL = re.compile(
    r"(Config|Tokenizer\w*|Dataset|DataLoader|Loader|Sampler|Optimizer|Adam\w*|SGD|Scheduler|LR|Scaler|"
    r"Processor|FeatureExtractor|Trainer|Arguments|Args|Parser|Writer|Logger|Path)$"
)
_MODEL_VAR = re.compile(r"(^|_)(model|net|network|generator|discriminator|encoder|decoder|gpt|lm)(_|$|\d)", re.I)
_CHAINED = {"to", "cuda", "cpu", "eval", "train", "double", "float", "half", "bfloat16", "requires_grad_"}


def constructed_models(tree: ast.Module, aliases: dict, module_names: set, lines: list) -> list:
    """``ModelClass`` entries (origin "constructed" or "example") for the lenses, in source order."""
    found: list = []
    seen: set = set()
    for stmt in tree.body:
        target, call = _assigned_call(stmt)
        if call is None:
            continue
        dotted = D._dotted(call.func)
        if dotted and dotted not in seen and _builds_model(dotted, target, aliases, module_names, local_ok=False):
            seen.add(dotted)
            found.append(_entry(dotted, stmt, call.func, lines, "constructed"))
    example = next(
        (
            n
            for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == D.EXAMPLE_FUNCTION
        ),
        None,
    )
    built = _example_class(example, aliases, module_names) if example is not None else None
    if built is not None:
        found.append(_entry(built, example, None, lines, "example"))
    return found


def _assigned_call(stmt) -> tuple[str, ast.Call | None]:
    """(target name, the constructor call) of ``name = Call(...)[.to(...)...]``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return "", None
    name = target.id if isinstance(target, ast.Name) else D._dotted(target) or ""
    return name, _constructor(value)


def _constructor(value) -> ast.Call | None:
    while (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _CHAINED
    ):  # GPT(config).to(device).eval()
        value = value.func.value
    return value if isinstance(value, ast.Call) else None


def _builds_model(dotted: str, target: str, aliases: dict, module_names: set, local_ok: bool) -> bool:
    if dotted in module_names:
        return local_ok  # a class of this file has its own lenses
    resolved = D._resolve(dotted, aliases)
    if D._is_torch_module_path(resolved):
        return True
    head, last = dotted.split(".")[0], dotted.rsplit(".", 1)[-1]
    if head not in aliases or not last[:1].isupper() or _NOT_MODEL.search(last):
        return False  # not imported (a builtin, a typo) or not a model by its name
    if resolved.split(".")[0] == "torch":
        return False  # torch's own non-module classes (Generator, optimizers, data)
    return bool(_MODEL_NAME.search(last) or _MODEL_VAR.search(target))


def _example_class(fn, aliases: dict, module_names: set) -> str | None:
    """The model class the example function builds: a class of the file first, else an imported one."""
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    calls.sort(key=lambda n: (n.lineno, n.col_offset))
    names = [D._dotted(c.func) for c in calls]
    local = next((n for n in names if n and n in module_names), None)
    if local:
        return local
    return next(
        (n for n in names if n and _builds_model(n, "", aliases, module_names, local_ok=False)),
        None,
    )


def _entry(dotted: str, stmt, func, lines: list, origin: str) -> D.ModelClass:
    start = D._position(lines, stmt.lineno, stmt.col_offset)
    end = D._position(lines, stmt.end_lineno or stmt.lineno, stmt.end_col_offset or 0)
    if func is not None:
        name_start = D._position(lines, func.lineno, func.col_offset)
        name_end = D._position(lines, func.end_lineno or func.lineno, func.end_col_offset or 0)
    else:  # the function's name after ``def``
        text = D._line(lines, stmt.lineno).encode("utf-8")
        at = max(text.find(stmt.name.encode("utf-8"), stmt.col_offset), 0)
        name_start = D._position(lines, stmt.lineno, at)
        name_end = D.Position(name_start.line, name_start.character + D._utf16_len(stmt.name))
    return D.ModelClass(
        name=dotted.rsplit(".", 1)[-1],
        qualname=dotted,
        range=D.Range(start, end),
        nameRange=D.Range(name_start, name_end),
        origin=origin,
    )
