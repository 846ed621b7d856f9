"""TD015: ``torch.load`` that may unpickle arbitrary code.

``torch.load(path, weights_only=False)`` runs the pickle protocol, which can execute any code
stored in the file. Loading a checkpoint you did not produce is then running someone else's
program. ``weights_only=True`` restricts loading to tensors and plain containers.
"""

from __future__ import annotations

import ast
from typing import List

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
            report.report(
                call,
                f"`torch.load({path})` does not pass `weights_only=True`: before PyTorch 2.6 it unpickles "
                f"arbitrary code from the file.",
                fix=add_keyword(ctx.source, call, "weights_only=True", "Pass `weights_only=True`"),
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
