"""TD015: ``torch.load`` that may unpickle arbitrary code.

``torch.load(path, weights_only=False)`` runs the pickle protocol, which can execute any code
stored in the file. Loading a checkpoint you did not produce is then running someone else's
program. ``weights_only=True`` restricts loading to tensors and plain containers.
"""

from __future__ import annotations

import ast
from typing import Dict, List

from .. import torchapi
from ..context import LintContext
from ..fixes import add_keyword, replace_node
from ..model import INFORMATION, WARNING
from ..names import canonical
from ..registry import Reporter, rule


@rule(
    "TD015",
    "torch-load-unsafe",
    "torch.load without weights_only=True",
    WARNING,
    """
`torch.load` unpickles the file. With `weights_only=False` a malicious (or just unexpected)
checkpoint can execute arbitrary code on load. Since PyTorch 2.6 the default is
`weights_only=True`; on older versions, and whenever `False` is passed explicitly, it is not.
Pass `weights_only=True` and save `state_dict()`s rather than whole pickled models. A plain
`torch.load(path)` is reported as information only, because on PyTorch ≥ 2.6 it is already
safe; being explicit keeps it safe everywhere.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    for call in ctx.calls_named_any(_load_names(ctx)):
        if ctx.qualname(call.func) != "torch.load":
            continue
        flag = torchapi.keyword(call, "weights_only")
        path = ctx.text(call.args[0]) if call.args else "the file"
        if flag is None:
            if torchapi.has_star_kwargs(call):
                continue
            whole = _whole_model(ctx, call)
            report.report(
                call,
                f"`torch.load({path})` does not pass `weights_only=True`: before PyTorch 2.6 it unpickles "
                f"arbitrary code from the file."
                + (
                    f" Here {whole}, which `weights_only=True` refuses: save and load `state_dict()`s instead."
                    if whole
                    else ""
                ),
                # a whole pickled model is refused under weights_only=True: that fix would break the load
                fix=None if whole else add_keyword(ctx.source, call, "weights_only=True", "Pass `weights_only=True`"),
                severity=INFORMATION,
            )
        elif isinstance(flag.value, ast.Constant) and flag.value.value is False:
            report.report(
                flag,
                f"`torch.load({path}, weights_only=False)` unpickles the file, which can run arbitrary code: "
                f"load state dicts with `weights_only=True`.",
                fix=replace_node(ctx.source, flag.value, "True", "Use `weights_only=True`"),
            )


def _load_names(ctx: LintContext) -> List[str]:
    """The callee names a ``torch.load`` call can have: ``load`` (``torch.load``,
    ``serialization.load``: a qualified name keeps the last name it is spelled with), and any
    local name imported as it (``from torch import load as tload``)."""
    return ["load"] + [local for local, imported in ctx.imports.aliases.items() if canonical(imported) == "torch.load"]


_MODULE_METHODS = frozenset({"eval", "train", "parameters", "named_parameters", "modules", "children", "forward"})


def _whole_model(ctx: LintContext, call: ast.Call) -> str:
    """What says this load returns a whole pickled model (which ``weights_only=True`` refuses),
    or "": the result is used as a module (``torch.load(p).eval()``, ``net2 = torch.load(p)``
    with a model's name), or the same path is written by ``torch.save(net1, path)`` of a network
    in this file, as tutorials on saving do (MorvanZhou's ``save_reload``)."""
    parent = ctx.parents.get(call)
    if isinstance(parent, ast.Attribute) and parent.attr in _MODULE_METHODS:
        return f"its result is used as a model (`.{parent.attr}()`)"
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and torchapi.is_model(ctx, parent.targets[0]):
        return f"it loads a whole model into `{ctx.text(parent.targets[0])}`"
    path = ctx.text(call.args[0]) if call.args else None
    saved = _saved_models(ctx).get(path) if path is not None else None
    if saved is not None:
        return f"`{path}` holds a whole model (`{ctx.text(saved)}`, line {saved.lineno})"
    return ""


def _saved_models(ctx: LintContext) -> Dict[str, ast.Call]:
    """``torch.save(model, path)`` calls of a network itself (not its ``state_dict()``), by the
    text of their path."""

    def find() -> Dict[str, ast.Call]:
        found: Dict[str, ast.Call] = {}
        for call in ctx.calls_named_any(["save"]):
            if ctx.qualname(call.func) == "torch.save" and len(call.args) >= 2 and torchapi.is_model(ctx, call.args[0]):
                found.setdefault(ctx.text(call.args[1]), call)
        return found

    return ctx.shared("torch_load.saved_models", find)
