"""The line of a split's ``DataLoader(...)`` call in the source of the function that built it (NAME,
e.g. ``torchdoctor_data``), read statically: a DataLoader object does not keep where it was made."""

from __future__ import annotations

import ast
import linecache
import re
from typing import Any, Optional

# words of a split name (or of a loader's variable) that say it is not the training split
OTHER_SPLITS = ("val", "valid", "validation", "test", "eval", "evaluation", "dev", "holdout")


def loader_line(origin: Optional[dict], split: str) -> Optional[dict]:
    """The line of the ``DataLoader(...)`` call for ``split`` in the function at ``origin`` (NAME's
    definition, e.g. ``torchdoctor_data``): the only one not given ``shuffle=True`` or a random sampler,
    else the one assigned to a name, or put under a key, that holds the split's name. None when
    not found in the source (the text the check ran, from linecache)."""
    if not origin or not origin.get("file"):
        return None
    try:
        tree = ast.parse("".join(linecache.getlines(origin["file"])))
    except (SyntaxError, ValueError):
        return None
    body = next(
        (n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and _starts(n, origin["line"])),
        None,
    )
    if body is None:
        return None
    calls = [c for c in ast.walk(body) if isinstance(c, ast.Call) and _unshuffled_loader(c)]
    if len(calls) != 1 or _for_another_split(body, calls[0]):
        # the only one may be another split's (``val_loader = DataLoader(...)`` beside a training loader
        # made at module level): never named for this split's finding
        named = _named_calls(body, split.lower())
        calls = [c for c in calls if c in named]
    return {"file": origin["file"], "line": calls[0].lineno} if len(calls) == 1 else None


def _starts(node: Any, line: int) -> bool:
    return node.lineno == line or any(d.lineno == line for d in node.decorator_list)


def _unshuffled_loader(call: ast.Call) -> bool:
    func = call.func
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    if name != "DataLoader":
        return False
    for kw in call.keywords:
        if kw.arg == "shuffle" and isinstance(kw.value, ast.Constant) and kw.value.value is True:
            return False
        text = ast.unparse(kw.value) if kw.arg in ("sampler", "batch_sampler") else ""
        if re.search(r"Random|Weighted", text) or ("Distributed" in text and "shuffle=False" not in text):
            return False
    return True


def _for_another_split(body: Any, call: ast.Call) -> bool:
    """The call is assigned to a name, or put under a key, that says validation or test."""
    for node in ast.walk(body):
        names: list = []
        if isinstance(node, ast.Assign) and node.value is call:
            names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        elif isinstance(node, ast.Dict):
            names = [k.value for k, v in zip(node.keys, node.values) if v is call and isinstance(k, ast.Constant)]
        words = [w for n in names if isinstance(n, str) for w in re.split(r"[^a-z]+", n.lower()) if w]
        if any(w.startswith(OTHER_SPLITS) for w in words):
            return True
    return False


def _named_calls(body: Any, split: str) -> list:
    """The calls assigned to a name (``train_loader = DataLoader(...)``) or under a key
    (``{"train": DataLoader(...)}``) that holds the split's name."""
    out: list = []
    names = {split, "train"} if "train" in split else {split}  # a "training" split's ``train_loader``
    for node in ast.walk(body):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if any(isinstance(t, ast.Name) and any(n in t.id.lower() for n in names) for t in node.targets):
                out.append(node.value)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(key, ast.Constant) and key.value == split and isinstance(value, ast.Call):
                    out.append(value)
    return out
