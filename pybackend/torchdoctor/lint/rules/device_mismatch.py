"""TD014: the model is moved to a device, its inputs are created somewhere else.

``model.to(device)`` moves parameters; tensors made with ``torch.randn(...)`` (no ``device=``),
``torch.from_numpy(...)``, or taken straight from a ``DataLoader`` stay on the CPU. On a CPU-only
machine everything works, so the bug ships; on the GPU box the first forward pass fails, or a
script "falls back" to the CPU and trains many times slower than intended.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Set, Tuple

from .. import torchapi
from ..bindings import BindingNode
from ..context import LintContext, receiver, terminal_name
from ..fixes import add_keyword
from ..model import WARNING, Fix
from ..registry import Reporter, rule
from .dataloader_shuffle import is_test_file
from .loader_builders import built_by_factory, def_returned_by

_DTYPE_PREFIXES = (
    "torch.float",
    "torch.int",
    "torch.bool",
    "torch.bfloat",
    "torch.half",
    "torch.double",
    "torch.long",
    "torch.complex",
    "torch.uint",
)


@dataclass
class Move:
    call: ast.Call
    model_key: str  # the name the moved model is used under
    device: ast.expr  # the device expression (``device``, ``"cuda"``)
    device_text: str
    stmt: ast.stmt
    in_place: bool  # ``model.to(device)`` as a statement, rather than ``model = ....to(device)``


@rule(
    "TD014",
    "input-device-mismatch",
    "Model moved to a device while its inputs are created on another",
    WARNING,
    """
`model.to(device)` moves the parameters only. Inputs built with a tensor factory and no
`device=` (`torch.randn(...)`, `torch.zeros(...)`, `torch.tensor(...)`), with
`torch.from_numpy(...)`, or taken straight from a `DataLoader` are on the CPU. On a machine
without a GPU the script runs, so the bug survives until it meets one: then the forward pass
fails, or someone "fixes" it by dropping the `.to(device)` and trains on the CPU. Create
inputs with `device=device`, or move each batch: `x = x.to(device)`.
""",
)
def check(ctx: LintContext, report: Reporter) -> None:
    moves = _moves(ctx)
    if not moves:
        return
    keys = sorted({m.model_key for m in moves})  # moves sharing a name ("model") read its calls once
    by_text = _calls_by_callee_text(ctx, keys)
    by_binding = _calls_by_binding(ctx, _calls_through_parameters(ctx) + [c for k in keys for c in by_text.get(k, [])])
    # A call in another scope than the move is a use only when it is bound to the moved object,
    # and then it is in ``by_binding``: per move, only the calls of its own scope are read by
    # text (a file with many ``model(x)`` in many functions stays linear).
    by_scope: Dict[Tuple[str, int], List[ast.Call]] = {}
    for key in keys:
        for call in by_text.get(key, []):
            by_scope.setdefault((key, id(ctx.scope_of(call))), []).append(call)
    for move in moves:
        seen = set()
        target = _moved_binding(ctx, move)
        own_scope = by_scope.get((move.model_key, id(ctx.scope_of(move.call))), [])
        candidates = own_scope + by_binding.get(id(target), [])
        for call in _uses(ctx, move, candidates):
            kept_on_cpu = _cpu_lengths(ctx, call)
            for arg in list(call.args) + [k.value for k in call.keywords]:
                if id(arg) in kept_on_cpu:
                    continue
                origin = _cpu_origin(ctx, arg)
                if origin is None or id(arg) in seen:
                    continue
                seen.add(id(arg))
                what, factory = origin
                report.report(
                    arg,
                    f"`{move.model_key}` was moved to `{move.device_text}` (line {move.call.lineno}) but its input "
                    f"`{ctx.text(arg)}` is {what}: the forward pass mixes devices.",
                    fix=_fix(ctx, factory, move),
                )


def _cpu_lengths(ctx: LintContext, call: ast.Call) -> Set[int]:
    """The arguments of ``model(ids, lengths)`` that the model's ``forward`` hands to
    ``pack_padded_sequence`` as its ``lengths``, which must be a CPU tensor (PyTorch refuses
    lengths on the GPU): keeping them there is right, not a device mismatch."""
    cls = ctx.local_class(ctx.class_of(call.func))
    forward = ctx.method(cls, "forward") if cls is not None else None
    if forward is None:
        return set()
    params = [a.arg for a in forward.args.args[1:]]
    lengths = _packed_lengths(ctx, forward)
    found = {id(arg) for i, arg in enumerate(call.args) if i < len(params) and params[i] in lengths}
    return found | {id(k.value) for k in call.keywords if k.arg in lengths}


def _packed_lengths(ctx: LintContext, forward: ast.AST) -> Set[str]:
    """The names a ``forward`` hands to ``pack_padded_sequence`` as lengths; read once per
    ``forward`` (every call of the model asks: calls times the forward's size otherwise)."""
    known: Dict[int, Set[str]] = ctx.shared("device_mismatch.packed_lengths", dict)
    if id(forward) not in known:
        lengths = set()
        for packed in ast.walk(forward):
            if isinstance(packed, ast.Call) and terminal_name(packed.func) == "pack_padded_sequence":
                given = packed.args[1] if len(packed.args) > 1 else torchapi.keyword(packed, "lengths")
                given = given.value if isinstance(given, ast.keyword) else given
                while isinstance(given, ast.Call) and isinstance(given.func, ast.Attribute):
                    given = given.func.value  # ``lengths.cpu()``, ``lengths.to("cpu")``
                if isinstance(given, ast.Name):
                    lengths.add(given.id)
        known[id(forward)] = lengths
    return known[id(forward)]


def _calls_by_callee_text(ctx: LintContext, keys: List[str]) -> Dict[str, List[ast.Call]]:
    """Calls of a name or attribute chain spelled as one of ``keys`` (the moved models), by that
    text: one pass, so each move looks only at the calls spelled like its model (the rule stays
    linear in the file's length). Only callees whose last name matches a key's are spelled out."""
    last_names = {key.rsplit(".", 1)[-1] for key in keys}
    found: Dict[str, List[ast.Call]] = {}
    for call in ctx.calls_named_any(last_names):  # from the callee index, in file order
        found.setdefault(ctx.text(call.func), []).append(call)
    return found


def _calls_through_parameters(ctx: LintContext) -> List[ast.Call]:
    """Calls of a function parameter (``net(x)`` inside ``train(net, loader)``)."""
    found = []
    # Only callees spelled like some parameter of the file can be one (a script has none).
    for call in ctx.calls_named_any(_parameter_names(ctx)):
        if isinstance(call.func, ast.Name):
            bound = ctx.binding(call.func)
            if bound is not None and bound.kind == "param":
                found.append(call)
    return found


def _parameter_names(ctx: LintContext) -> List[str]:
    """Every name some function or lambda of the file takes as a parameter."""
    names: Dict[str, None] = {}
    for scope in ctx.bindings.scopes.values():
        for name, bindings in scope.names.items():
            if any(b.kind == "param" for b in bindings):
                names[name] = None
    return list(names)


def _calls_by_binding(ctx: LintContext, calls: List[ast.Call]) -> Dict[int, List[ast.Call]]:
    """The candidate calls by the statement that bound their callee (``_binding_of``), each
    resolved once whatever the number of moves."""
    found: Dict[int, List[ast.Call]] = {}
    done: Set[int] = set()
    for call in calls:
        if id(call) in done:
            continue
        done.add(id(call))
        bound = _binding_of(ctx, call.func)
        if bound is not None:
            found.setdefault(id(bound), []).append(call)
    return found


def _uses(ctx: LintContext, move: Move, candidates: List[ast.Call]) -> List[ast.Call]:
    """Calls of the moved model after the move: in its own scope, and in functions that reach
    it through the module's name, ``self.x``, or a parameter their callers pass it to."""
    scope = ctx.scope_of(move.call)
    moved_at = (move.call.lineno, move.call.col_offset)
    target = _moved_binding(ctx, move)
    in_one_test = target is not None and _fresh_in_each_test(ctx, move, target)
    uses, taken = [], set()
    for call in candidates:
        if id(call) in taken:
            continue
        if ctx.scope_of(call) is scope:
            if (call.lineno, call.col_offset) <= moved_at or ctx.text(call.func) != move.model_key:
                continue
            if not _same_object(ctx, call, move):
                continue
        elif in_one_test or target is None or _binding_of(ctx, call.func) is not target:
            continue
        taken.add(id(call))
        uses.append(call)
    return uses


def _fresh_in_each_test(ctx: LintContext, move: Move, target: BindingNode) -> bool:
    """The move is made inside a test (``def test_sample(self): self.model.cuda()``) to a model
    that test gets afresh: built in the test itself, or in ``setUp`` (unittest and pytest run it
    before every test), so the other tests still get a CPU model. A model built once for many
    tests (at module level, in ``setUpClass``) stays moved for the tests that run after."""
    func = ctx.enclosing_function(move.call)
    if func is None or not _is_test(ctx, func):
        return False
    built_in = ctx.enclosing_function(target)
    if built_in is func:
        return True
    return (
        built_in is not None
        and built_in.name in _PER_TEST_FIXTURES
        and ctx.enclosing_class(built_in) is ctx.enclosing_class(func)
    )


# Methods unittest / pytest run before each test of their class (not ``setUpClass``).
_PER_TEST_FIXTURES = frozenset({"setUp", "asyncSetUp", "setup_method"})
_TEST_CLASS = re.compile(r"Test(?:[A-Z_]|$)")


def _is_test(ctx: LintContext, func: ast.AST) -> bool:
    """A ``test*`` method of a ``TestCase`` subclass or of a pytest ``Test*`` class of a test
    file (``TestSampling``, not ``Tester``), or a ``test*`` function of a test file (a script's
    own ``def test(model)`` is an evaluation, whose move does persist)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not func.name.startswith("test"):
        return False
    owner = ctx.enclosing_class(func)
    if owner is not None and any(b.endswith("TestCase") for b in ctx.base_names(owner)):
        return True
    return (owner is None or _TEST_CLASS.match(owner.name) is not None) and is_test_file(ctx.path)


def _moved_binding(ctx: LintContext, move: Move) -> Optional[BindingNode]:
    """The statement that binds the moved object: the assignment (``model = Net().to(d)``,
    ``self.model = ...``) or, for ``model.to(d)``, the binding the move applies to."""
    if not move.in_place:
        return move.stmt
    return _binding_of(ctx, receiver(move.call))


def _binding_of(ctx: LintContext, expr: ast.AST, depth: int = 0) -> Optional[BindingNode]:
    """The statement that gave ``expr`` its object, through parameters to what callers pass."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        bound = ctx.binding(expr)
    elif isinstance(expr, ast.Attribute):
        bound = ctx.self_attr_binding(expr)
    else:
        return None
    if bound is None:
        return None
    if bound.kind == "param":
        passed = ctx.argument_for(bound)
        return _binding_of(ctx, passed, depth + 1) if isinstance(passed, (ast.Name, ast.Attribute)) else None
    return bound.stmt


def _moves(ctx: LintContext) -> List[Move]:
    moves = []
    for call in ctx.calls_named_any(("to", "cuda")):
        func = call.func
        if not isinstance(func, ast.Attribute) or func.attr not in ("to", "cuda"):
            continue
        # The statement shape first: ``x, y = x.to(d), y.to(d)`` (most moves of a script) is no
        # model move, and telling so is cheaper than asking what ``x`` is.
        key = _model_key(ctx, call)
        if key is None or not torchapi.is_model(ctx, func.value):
            continue
        device = _device_of(ctx, call)
        if device is None:
            continue
        text = ctx.text(device) if func.attr == "to" else '"cuda"'
        moves.append(Move(call, key[0], device, text, ctx.statement_of(call), key[1]))
    return moves


def _device_of(ctx: LintContext, call: ast.Call) -> Optional[ast.expr]:
    """The target device of ``.to(...)`` / ``.cuda()``; None for dtype-only or CPU moves."""
    if isinstance(call.func, ast.Attribute) and call.func.attr == "cuda":
        return call.func
    device = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "device"), None)
    if device is None or (ctx.qualname(device) or "").startswith(_DTYPE_PREFIXES):
        return None
    if _is_cpu(ctx, device):
        return None
    return device


def _is_cpu(ctx: LintContext, expr: ast.AST) -> bool:
    if isinstance(expr, ast.Constant):
        return str(expr.value).startswith("cpu")
    if isinstance(expr, ast.Call) and ctx.qualname(expr.func) == "torch.device" and expr.args:
        return _is_cpu(ctx, expr.args[0])
    if isinstance(expr, ast.Name):
        # CPU only when every assignment of the name is: ``device = accelerator if use_cuda else
        # cpu`` written as two branches binds it twice, and the last one is not the only one.
        values = _all_values(ctx, expr)
        return bool(values) and all(v is not None and v is not expr and _is_cpu(ctx, v) for v in values)
    return False


def _all_values(ctx: LintContext, name: ast.Name) -> List[Optional[ast.AST]]:
    """The values of every binding of ``name`` in the scope that defines it."""
    for scope in ctx.scope_chain(name):
        found = ctx.bindings.scopes.get(scope)
        bindings = found.names.get(name.id) if found is not None else None
        if bindings:
            return [b.value for b in bindings]
    return []


def _model_key(ctx: LintContext, call: ast.Call):
    """``(name, in_place)``: ``model = Net().to(device)`` -> ``("model", False)``;
    ``model.to(device)`` -> ``("model", True)``. None when the moved module is handed to
    something else (``DDP(model.cuda(rank), device_ids=[rank])`` moves its inputs itself)."""
    stmt = ctx.statement_of(call)
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], (ast.Name, ast.Attribute))
        and _is_move_chain(stmt.value, call)
    ):
        return ctx.text(stmt.targets[0]), False
    if isinstance(stmt, ast.Expr) and stmt.value is call:
        return ctx.text(receiver(call)), True
    return None


def _is_move_chain(value: ast.AST, call: ast.Call) -> bool:
    """``value`` is ``call``, possibly followed by more module methods (``.to(d).float()``)."""
    node = value
    while isinstance(node, ast.Call) and node is not call:
        if not (
            isinstance(node.func, ast.Attribute)
            and node.func.attr in ("to", "cuda", "float", "half", "double", "train", "eval", "bfloat16")
        ):
            return False
        node = node.func.value
    return node is call


def _same_object(ctx: LintContext, use: ast.Call, move: Move) -> bool:
    """The name called at ``use`` still refers to the moved model (not, say, a DDP wrapper
    assigned to the same name later)."""
    if not isinstance(use.func, ast.Name):
        return True
    bound = ctx.binding(use.func)
    if move.in_place:
        return bound is None or bound.pos <= (move.call.lineno, move.call.col_offset)
    return bound is not None and bound.stmt is move.stmt


def _cpu_origin(ctx: LintContext, arg: ast.AST):
    """``(description, factory call or None)`` when ``arg`` is visibly a CPU tensor."""
    if isinstance(arg, ast.Call):
        return _factory_origin(ctx, arg)
    base = arg.value if isinstance(arg, ast.Subscript) else arg
    if not isinstance(base, ast.Name) or _items_replaced_before(ctx, base):
        return None
    return _origin_of_name(ctx, base, base is arg, 0)


def _items_replaced_before(ctx: LintContext, name: ast.Name) -> bool:
    """An item of ``name`` was assigned in its scope before this use (``views[0] =
    views[0].cuda(gpu)``: SimSiam's two augmented views, moved one by one): what the container
    holds is no longer what the loader gave, so its origin is not known."""
    cache: Dict[int, Dict[str, List[Tuple[int, int]]]] = ctx.shared("device_mismatch.item_stores", dict)
    scope = ctx.scope_of(name)
    stores = cache.get(id(scope))
    if stores is None:
        stores = cache[id(scope)] = {}
        for node in ctx.own_nodes(scope, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
                    stores.setdefault(target.value.id, []).append((node.lineno, node.col_offset))
    here = (name.lineno, name.col_offset)
    return any(at < here for at in stores.get(name.id, ()))


def _origin_of_name(ctx: LintContext, name: ast.Name, whole: bool, depth: int):
    """Where the tensor a name holds was made: a factory (when the name is used whole), or a
    batch of a DataLoader, directly (``for x, y in loader``) or through ``real = data[0]`` /
    ``x, y = batch``, whose loader may be a module-level one or a parameter of the function."""
    bound = ctx.binding(name)
    if bound is None or depth > 4:
        return None
    if bound.kind == "assign" and isinstance(bound.value, ast.Call) and whole:
        return _factory_origin(ctx, bound.value)
    if bound.kind == "assign" and isinstance(bound.value, (ast.Subscript, ast.Name)):
        inner = bound.value.value if isinstance(bound.value, ast.Subscript) else bound.value
        if isinstance(inner, ast.Name):
            return _origin_of_name(ctx, inner, False, depth + 1)
    if bound.kind == "unpack" and isinstance(bound.source, ast.Name):
        return _origin_of_name(ctx, bound.source, False, depth + 1)
    if bound.kind == "for" and bound.source is not None:
        return _loader_batch(ctx, torchapi.unwrap_iterable(ctx, bound.source))
    drawn = bound.source if bound.kind == "unpack" else bound.value if bound.kind == "assign" else None
    if isinstance(drawn, ast.Call) and isinstance(drawn.func, ast.Name) and drawn.func.id == "next" and drawn.args:
        inner = drawn.args[0]  # ``x, _ = next(iter(loader))``: one batch drawn by hand
        if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "iter" and inner.args:
            return _loader_batch(ctx, inner.args[0])
    return None


def _loader_batch(ctx: LintContext, loader: ast.expr):
    """A batch of ``loader`` when it is a ``DataLoader`` whose batches stay on the CPU."""
    built = ctx.construction_of(loader)
    if built is not None and ctx.callee_class(built) != torchapi.DATALOADER:
        built = built_by_factory(ctx, built)  # ``get_data_loader(...)``, a function of the file
    if built is not None and ctx.callee_class(built) == torchapi.DATALOADER and not _collate_may_move(ctx, built):
        return f"a batch from `{ctx.text(loader)}`, still on the CPU (no `.to(device)`)", None
    return None


def _collate_may_move(ctx: LintContext, loader: ast.Call) -> bool:
    """The loader's ``collate_fn`` may put the batch on the device: unless it is a function or a
    method of a dataset class of the project whose body never moves anything (``.to(...)``,
    ``.cuda()``) nor speaks of a device (a detection dataset's ``collate_fn`` that stacks the
    images and keeps the boxes in lists)."""
    given = torchapi.keyword(loader, "collate_fn")
    if given is None:
        return False
    cache: Dict[ast.Call, bool] = ctx.shared("device_mismatch.collate_moves", dict)
    if loader not in cache:
        body = _collate_body(ctx, given.value)
        cache[loader] = body is None or any(_moves_something(node) for node in ast.walk(body))
    return cache[loader]


def _moves_something(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and terminal_name(node.func) in ("to", "cuda", "pin_memory"):
        return True
    return isinstance(node, (ast.Name, ast.Attribute)) and "device" in terminal_name(node).lower()


def _collate_body(ctx: LintContext, expr: ast.expr) -> Optional[ast.AST]:
    """The ``def`` that ``collate_fn=expr`` names: a function of this file, or a method of the
    dataset's class (``dataset.collate_fn``); None when it cannot be read."""
    if isinstance(expr, ast.Call):
        return def_returned_by(ctx, expr)  # ``collate_fn=get_collate_fn(pad_index)``
    if isinstance(expr, ast.Name):
        bound = ctx.binding(expr)
        if bound is not None and bound.kind == "assign" and isinstance(bound.value, ast.Call):
            return def_returned_by(ctx, bound.value)  # ``collate_fn = get_collate_fn(pad_index)``
        return bound.stmt if bound is not None and bound.kind == "def" else None
    if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
        cls = ctx.local_class(ctx.class_of(expr.value))
        if cls is not None:
            return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == expr.attr), None)
    return None


def _factory_origin(ctx: LintContext, call: ast.Call):
    qual = ctx.qualname(call.func)
    if qual not in torchapi.TENSOR_FACTORIES:
        return None
    if qual not in torchapi.CPU_ONLY_FACTORIES:
        device = torchapi.keyword(call, "device")
        if device is not None and not _is_cpu(ctx, device.value):
            return None
        if torchapi.has_star_kwargs(call):
            return None
    return f"created on the CPU by `{ctx.text(call.func)}` (line {call.lineno})", call


def _fix(ctx: LintContext, factory: Optional[ast.Call], move: Move) -> Optional[Fix]:
    """Add ``device=...`` to the factory, when the device expression is usable there."""
    if factory is None or ctx.qualname(factory.func) in torchapi.CPU_ONLY_FACTORIES:
        return None
    if torchapi.keyword(factory, "device") is not None:
        return None
    device = move.device_text
    if isinstance(move.device, ast.Name):
        bound = ctx.bindings.lookup(move.device.id, ctx.scope_chain(factory), (factory.lineno, factory.col_offset))
        if bound is None or bound.pos > (factory.lineno, factory.col_offset):
            return None
    elif not isinstance(move.device, ast.Constant) and terminal_name(move.call.func) != "cuda":
        return None
    return add_keyword(ctx.source, factory, f"device={device}", f"Create it on `{device}`")
