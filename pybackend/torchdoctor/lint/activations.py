"""What a tensor expression already went through at its end: softmax, log-softmax, sigmoid,
or a plain linear layer (raw logits).

The loss rules ask this of a loss's input. The answer follows names back to their
assignments, ``self.fc`` back to ``__init__``, a model call back to its class's ``forward``
(or the last layer of an ``nn.Sequential``), and sees through shape-only operations such as
``.view`` or ``.squeeze``. Anything else is "unknown", and unknown never produces a finding.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from typing import Dict, List, Optional, Tuple

from .bindings import Binding
from .context import LintContext

SOFTMAX = "softmax"
LOG_SOFTMAX = "log_softmax"
SIGMOID = "sigmoid"
LOGITS = "logits"

_FUNCTIONS = {
    "torch.softmax": SOFTMAX,
    "torch.nn.functional.softmax": SOFTMAX,
    "torch.special.softmax": SOFTMAX,
    "torch.log_softmax": LOG_SOFTMAX,
    "torch.nn.functional.log_softmax": LOG_SOFTMAX,
    "torch.special.log_softmax": LOG_SOFTMAX,
    "torch.sigmoid": SIGMOID,
    "torch.nn.functional.sigmoid": SIGMOID,
    "torch.special.expit": SIGMOID,
}
_METHODS = {"softmax": SOFTMAX, "log_softmax": LOG_SOFTMAX, "sigmoid": SIGMOID}
_LAYERS = {
    "torch.nn.Softmax": SOFTMAX,
    "torch.nn.Softmax2d": SOFTMAX,
    "torch.nn.LogSoftmax": LOG_SOFTMAX,
    "torch.nn.Sigmoid": SIGMOID,
    "torch.nn.Linear": LOGITS,
    "torch.nn.LazyLinear": LOGITS,
    "torch.nn.Bilinear": LOGITS,
}
# Operations that move or reshape values without changing what they mean.
_SHAPE_METHODS = frozenset(
    {
        "view",
        "reshape",
        "squeeze",
        "unsqueeze",
        "flatten",
        "float",
        "double",
        "half",
        "to",
        "contiguous",
        "permute",
        "transpose",
        "clone",
        "cpu",
        "cuda",
        "view_as",
        "reshape_as",
        "type_as",
        "t",
    }
)
_SHAPE_FUNCTIONS = frozenset({"torch.squeeze", "torch.unsqueeze", "torch.flatten", "torch.reshape", "torch.transpose"})
_MAX_DEPTH = 16


@dataclass(frozen=True)
class Activation:
    """The last thing applied to a tensor, and where (``node``: the call that applied it)."""

    kind: str
    node: ast.expr
    # The file ``node`` is in, when another file of the project (a model class imported from it).
    origin: Optional[LintContext] = None


class ActivationAnalysis:
    """Answers ``output_of(expr)`` for one module, caching each class's ``forward`` result."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self._forward_cache: Dict[str, Optional[Activation]] = {}
        # While ``output_alternatives`` runs: what the model would output under its other bindings.
        self._branches: Optional[List[Tuple[Optional[Activation], Binding]]] = None

    def output_alternatives(self, expr: ast.AST) -> List[Tuple[Optional[Activation], Optional[Binding]]]:
        """``output_of(expr)`` first, then, when the model it goes through is bound differently
        on different paths (``if args.model == "Transformer": model = ... else: model = ...``),
        what each other binding's model outputs, with that binding."""
        self._branches = []
        try:
            first = self.output_of(expr)
            extra = list(self._branches)
        finally:
            self._branches = None
        alternatives: List[Tuple[Optional[Activation], Optional[Binding]]] = [(first, None)]
        return alternatives + [(act, bound) for act, bound in extra]

    def output_of(self, expr: Optional[ast.AST], depth: int = 0) -> Optional[Activation]:
        if expr is None or depth > _MAX_DEPTH:
            return None
        if isinstance(expr, ast.Call):
            return self._call_output(expr, depth)
        if isinstance(expr, ast.Subscript):
            return self.output_of(expr.value, depth + 1)
        if isinstance(expr, (ast.Name, ast.Attribute)):
            value = self.ctx.value_of(expr)
            if value is None and isinstance(expr, ast.Name):
                return self._unpacked_output(expr, depth)
            if value is None or value is expr:
                return None
            return self.output_of(value, depth + 1)
        return None

    def _unpacked_output(self, name: ast.Name, depth: int) -> Optional[Activation]:
        """``logits, hidden = model(x)``: element ``i`` of what the model's forward returns."""
        bound = self.ctx.binding(name)
        if bound is None or bound.kind != "unpack" or bound.index is None or not isinstance(bound.source, ast.Call):
            return None
        func = bound.source.func
        if self.ctx.qualname(func) is not None:
            return None  # a library function: its tuple is not a model's output
        return self._module_output(func, depth + 1, bound.index)

    def _call_output(self, call: ast.Call, depth: int) -> Optional[Activation]:
        ctx = self.ctx
        func = call.func
        qual = ctx.qualname(func)
        if qual in _FUNCTIONS:
            return Activation(_FUNCTIONS[qual], call)
        if qual == "torch.log" and call.args:
            return self._log_of(call.args[0], call, depth)
        if qual in _SHAPE_FUNCTIONS and call.args:
            return self.output_of(call.args[0], depth + 1)
        if qual is None and isinstance(func, ast.Attribute):
            if func.attr in _METHODS and not self._layer_attribute(func):
                return Activation(_METHODS[func.attr], call)
            if func.attr == "log":
                return self._log_of(func.value, call, depth)
            if func.attr in _SHAPE_METHODS:
                return self.output_of(func.value, depth + 1)
            if func.attr == "forward":
                return self._module_output(func.value, depth)
        return self._module_output(func, depth)

    def _layer_attribute(self, func: ast.Attribute) -> bool:
        """``self.softmax(x)`` where ``__init__`` set ``self.softmax = nn.LogSoftmax(dim=1)``: a
        layer named like a tensor method, read through what built it (not by its name)."""
        value = func.value
        return isinstance(value, ast.Name) and value.id == "self" and self.ctx.construction_of(func) is not None

    def _log_of(self, inner: ast.AST, call: ast.Call, depth: int) -> Optional[Activation]:
        """``torch.log(softmax(x))`` is a (numerically poorer) log-softmax."""
        found = self.output_of(inner, depth + 1)
        if found is not None and found.kind == SOFTMAX:
            return Activation(LOG_SOFTMAX, call)
        return None

    def _module_output(self, callee: ast.expr, depth: int, element: Optional[int] = None) -> Optional[Activation]:
        """What calling the module ``callee`` returns (element ``element`` of a returned tuple),
        if we can see how it was built."""
        ctx = self.ctx
        own_class = self._self_class(callee)
        if own_class is not None:
            return self.forward_output(own_class, depth, element)
        if self._branches is not None and isinstance(callee, ast.Name):
            self._other_branches(callee, depth, element)
        return self._built_output(ctx.construction_of(callee), depth, element)

    def _other_branches(self, callee: ast.Name, depth: int, element: Optional[int]) -> None:
        """Note what the module ``callee`` outputs under each of its bindings but the first."""
        branches, self._branches = self._branches, None  # one level: no branches of branches
        try:
            for bound in self.ctx.alternatives(callee)[1:]:
                if bound.value is not None and branches is not None:
                    built = self.ctx.construction_of(bound.value)
                    branches.append((self._built_output(built, depth, element), bound))
        finally:
            self._branches = branches

    def _built_output(self, built: Optional[ast.Call], depth: int, element: Optional[int]) -> Optional[Activation]:
        ctx = self.ctx
        if built is None:
            return None
        if element is not None:
            local = ctx.local_class(ctx.callee_class(built))
            if local is None:
                return None
            home = ctx.context_for(local)
            if home is ctx:
                return self.forward_output(local, depth, element)
            analysis = home.shared("activations", lambda: ActivationAnalysis(home))
            found = analysis.forward_output(local, depth, element)
            return replace(found, origin=home) if found is not None and found.origin is None else found
        return self.layer_output(built, depth)

    def layer_output(self, built: ast.Call, depth: int = 0) -> Optional[Activation]:
        """What a layer built by ``built`` (``nn.Softmax(1)``, ``nn.Sequential(...)``, ``Net()``) outputs."""
        ctx = self.ctx
        cls = ctx.callee_class(built)
        if cls in _LAYERS:
            return Activation(_LAYERS[cls], built)
        if cls == "torch.nn.Sequential":
            if built.args and isinstance(built.args[-1], ast.Call) and not built.keywords:
                return self.layer_output(built.args[-1], depth + 1)
            return None
        local = ctx.local_class(cls)
        home = ctx.context_for(local) if local is not None else ctx
        if local is None or not home.is_module_class(local):
            return None
        if home is ctx:
            return self.forward_output(local, depth)
        found = home.shared("activations", lambda: ActivationAnalysis(home)).forward_output(local, depth)
        return replace(found, origin=home) if found is not None and found.origin is None else found

    def _self_class(self, callee: ast.AST) -> Optional[ast.ClassDef]:
        """``self(x)`` inside a method calls the enclosing class's ``forward``."""
        if not isinstance(callee, ast.Name):
            return None
        func = self.ctx.enclosing_function(callee)
        if func is None or not func.args.args or func.args.args[0].arg != callee.id:
            return None
        owner = self.ctx.enclosing_class(func)
        if owner is not None and self.ctx.is_module_class(owner):
            return owner
        return None

    def forward_output(self, cls: ast.ClassDef, depth: int = 0, element: Optional[int] = None) -> Optional[Activation]:
        """The activation every ``return`` of ``cls.forward`` agrees on (of element ``element``
        when the forward returns a tuple, such as ``(log_probs, hidden)``), or None."""
        key = cls.name if element is None else f"{cls.name}[{element}]"
        if key in self._forward_cache:
            return self._forward_cache[key]
        self._forward_cache[key] = None  # guards recursion through self-referencing models
        forward = self.ctx.method(cls, "forward")
        result = None
        if forward is not None:
            returns = self.ctx.own_nodes(forward, ast.Return)
            values = [r.value if element is None else _element(r.value, element) for r in returns]
            kinds = [self.output_of(v, depth + 1) if v is not None else None for v in values]
            known = [k for k in kinds if k is not None]
            if kinds and len(known) == len(kinds) and len({k.kind for k in known}) == 1:
                result = known[0]
        self._forward_cache[key] = result
        return result


def _element(value: Optional[ast.AST], index: int) -> Optional[ast.AST]:
    """Element ``index`` of a returned tuple literal (``return F.log_softmax(x), hidden``)."""
    if (
        isinstance(value, ast.Tuple)
        and index < len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in value.elts)
    ):
        return value.elts[index]
    return None
