"""Where a ``DataLoader`` with a ``DistributedSampler`` is, and the names that hold it.

A loader is sharded when its ``sampler=`` may hold a ``DistributedSampler(...)`` (inline, either
arm of a conditional, or assigned to the name on some path). Its holders: the name or ``self.x``
it is assigned to, and, when a function returns it (alone or in a tuple), the names its callers
unpack it into, in this file or, for a function imported from another file of the project
(``train_loader, val_loader = build_loader(config)``), in the importing file.

Used by TD020 (``rules/shard_metric.py``). Reads of names and the calls each name flows into are
indexed once per file (``Index``).
"""

from __future__ import annotations

import ast
import re
from typing import Dict, Iterator, List, Optional, Set, Tuple

from . import torchapi
from .bindings import Function
from .context import LintContext, terminal_name, walk

SAMPLERS = frozenset({"torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler"})
_LOADER_NAME = re.compile(r"loader", re.IGNORECASE)


class Sharded:
    """One sharded loader: the ``DataLoader`` call, its sampler, and the file they are in."""

    def __init__(self, loader: ast.Call, sampler: ast.Call, home: LintContext, holders: List[ast.expr]) -> None:
        self.loader, self.sampler, self.home, self.holders = loader, sampler, home, holders

    def where(self, ctx: LintContext) -> str:
        """``line 12`` here, ``line 12 of data/build.py`` in another file."""
        if self.home is ctx or not self.home.path:
            return f"line {self.sampler.lineno}"
        return f"line {self.sampler.lineno} of {self.home.path.replace(chr(92), '/').split('/')[-1]}"


def sharded_loaders(ctx: LintContext) -> List[Sharded]:
    """Every sharded loader this file can reach, with the names of this file that hold it."""
    found = [Sharded(call, sampler, ctx, _uses(ctx, call)) for call, sampler in _sharded_loaders(ctx)]
    return found + list(_imported(ctx))


def _imported(ctx: LintContext) -> Iterator[Sharded]:
    """``a, b = build_loader(cfg)`` where ``build_loader`` (another file) returns a sharded loader,
    itself or through the functions it returns the result of (Swin-Transformer's ``data.build_loader``
    returns ``data.build.build_loader(config)``)."""
    roots = _project_roots(ctx)
    if not roots:  # nothing imported but torch: no call can name a function of another file
        return
    for call in ctx.calls:
        root = call.func
        while root.__class__ is ast.Attribute:
            root = root.value  # type: ignore[attr-defined]  # an Attribute's object
        if root.__class__ is not ast.Name or root.id not in roots:  # type: ignore[attr-defined]
            continue  # the callee's name starts with no import of the project's: not imported from it
        # ``x = call(...)``: the call is the value of the statement, so its direct parent (no
        # walk up to the statement, for the 51k calls of a long script)
        stmt = ctx.parents.get(call)
        if not (isinstance(stmt, ast.Assign) and stmt.value is call and len(stmt.targets) == 1):
            continue
        # ``_imported_function``'s own gate first: most calls of a script (``model(x)``, torch
        # factories) name nothing imported from the project, and their target's text is never needed.
        if not _may_be_imported(ctx, call) or not _LOADER_NAME.search(ctx.text(stmt.targets[0])):
            continue
        found = _imported_function(ctx, call)
        if found is None:
            continue
        for index, loader, sampler, home in _returned_loaders(found[0], found[1], 0):
            if not (_only_in_a_group(home, sampler) and not _starts_a_group(ctx)):
                yield Sharded(loader, sampler, home, _kept_at(ctx, call, index))


def _only_in_a_group(home: LintContext, sampler: ast.Call) -> bool:
    """The factory builds the sampler under ``if dist.is_initialized():`` (a plain sampler
    otherwise): it shards only in a process that has started a process group."""
    node: Optional[ast.AST] = sampler
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = home.parents.get(node)
        if isinstance(parent, ast.If) and node in parent.body:
            if any(
                isinstance(c, ast.Call) and terminal_name(c.func) == "is_initialized" for c in ast.walk(parent.test)
            ):
                return True
        node = parent
    return False


def _starts_a_group(ctx: LintContext) -> bool:
    """The script may start a process group: ``init_process_group(...)``, a helper named for it
    (DeiT's and DETR's ``utils.init_distributed_mode(args)``, ``setup_distributed()``, the DDP
    tutorial's ``setup(rank, world_size)``, ``ddp_setup``), a launcher (``mp.spawn``,
    ``Accelerator()``, ``fabric.launch()``). When unsure, it may: the finding stays."""
    return any(_GROUP_START.search(name) for name in ctx.call_names())


_GROUP_START = re.compile(
    r"init_process_group|distributed|init_dist|dist_init|ddp|setup|launch|spawn|accelerator|fabric", re.IGNORECASE
)


def _project_roots(ctx: LintContext) -> Set[str]:
    """The names bound by imports whose calls may name a function of another file of the
    project: every import but torch's (a qualname starting with ``torch`` is never one of the
    project's, and ``find_function`` needs a dotted name). Tested on each call's leftmost name before
    anything else: the 51k calls of a 32k-line script that imports only torch are passed over
    without a lookup in the tree's parents (a dict of ~260k nodes, whose lookups made this rule grow
    faster than the file)."""
    return {local for local, imported in ctx.imports.aliases.items() if imported.split(".")[0] != "torch"}


def _may_be_imported(ctx: LintContext, call: ast.Call) -> bool:
    """Whether ``call``'s callee is an import that may come from the project (not torch): the
    first test of ``_imported_function``, alone."""
    qualname = ctx.qualname(call.func)
    return qualname is not None and qualname != "" and not qualname.startswith("torch.")


def _imported_function(ctx: LintContext, call: ast.Call) -> Optional[Tuple[LintContext, Function]]:
    qualname = ctx.qualname(call.func)
    if not qualname or qualname.startswith("torch."):
        return None
    found = ctx.project.find_function(qualname, ctx.path)
    return None if found is None or found[0] is ctx else found


def _returned_loaders(home: LintContext, func: Function, depth: int) -> Iterator[Tuple]:
    """(position in the returned tuple or None, loader, sampler, file) for each sharded loader
    ``func`` returns."""
    for loader, sampler in _sharded_loaders(home):
        if home.enclosing_function(loader) is not func:
            continue
        held = _held_name(home, loader)
        for ret in home.own_nodes(func, ast.Return):
            index = _returned_at(ret.value, loader, held)
            if index is not False:
                yield index, loader, sampler, home
    if depth >= 3:
        return
    for ret in home.own_nodes(func, ast.Return):
        if isinstance(ret.value, ast.Call):
            local = home.local_function_called(ret.value)
            inner = (home, local) if local is not None else _imported_function(home, ret.value)
            if inner is not None and inner[1] is not func:
                yield from _returned_loaders(inner[0], inner[1], depth + 1)


def _sharded_loaders(ctx: LintContext) -> Iterator[Tuple[ast.Call, ast.Call]]:
    """(a DataLoader call, its DistributedSampler call)."""
    for call in ctx.calls_of_class([torchapi.DATALOADER]):
        given = torchapi.keyword(call, "sampler") or _batch_sampler_of(ctx, call)
        if given is None:
            continue
        sampler = _distributed_sampler(ctx, given.value)
        if sampler is not None:
            yield call, sampler


def _batch_sampler_of(ctx: LintContext, call: ast.Call) -> Optional[ast.keyword]:
    """``batch_sampler=BatchSampler(sampler, ...)`` (inline or through a name): the sampler it
    draws from, as a ``sampler=`` keyword would give it."""
    given = torchapi.keyword(call, "batch_sampler")
    built = ctx.construction_of(given.value) if given is not None else None
    if built is None or terminal_name(built.func) != "BatchSampler":
        return None
    inner = built.args[0] if built.args else torchapi.keyword(built, "sampler")
    return ast.keyword(arg="sampler", value=inner) if isinstance(inner, ast.expr) else inner


def _distributed_sampler(ctx: LintContext, expr: ast.expr) -> Optional[ast.Call]:
    """The ``DistributedSampler(...)`` that ``expr`` may hold: inline, in either arm of a
    conditional, or assigned to the name on some path (``if distributed: s = ... else: s = None``)."""
    candidates: List[ast.expr] = [expr]
    if isinstance(expr, ast.IfExp):
        candidates = [expr.body, expr.orelse]
    elif isinstance(expr, ast.Name):
        candidates = [b.value for b in ctx.alternatives(expr) if b.kind == "assign" and b.value is not None]
    elif isinstance(expr, ast.Attribute):
        value = ctx.value_of(expr)
        candidates = [value] if value is not None else []
    for candidate in candidates:
        if isinstance(candidate, ast.Call) and ctx.callee_class(candidate) in SAMPLERS:
            return candidate
    return None


def _uses(ctx: LintContext, loader_call: ast.Call) -> List[ast.expr]:
    """Names and ``self.x`` that hold the loader ``loader_call`` builds: where it is assigned,
    and, when a function of this file returns it (alone or in a tuple), where its callers keep it."""
    stmt = ctx.statement_of(loader_call)
    found: List[ast.expr] = []
    held: Optional[str] = None
    if isinstance(stmt, ast.Assign) and stmt.value is loader_call and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            held = target.id
            found += _loads(ctx, target.id, value=loader_call)
        elif isinstance(target, ast.Attribute):
            text = ctx.text(target)
            found += [
                n
                for n in name_index(ctx).attributes.get(target.attr, [])
                if ctx.text(n) == text and ctx.value_of(n) is loader_call
            ]
    func = ctx.enclosing_function(loader_call)
    if func is not None:
        for ret in ctx.own_nodes(func, ast.Return):
            index = _returned_at(ret.value, loader_call, held)
            if index is not False:
                found += _kept_by_callers(ctx, func, index)
    return found


def _returned_at(value: Optional[ast.expr], loader_call: ast.Call, held: Optional[str]):
    """None when ``value`` is the loader, its position in a returned tuple, else False."""

    def same(e: ast.expr) -> bool:
        return e is loader_call or (held is not None and isinstance(e, ast.Name) and e.id == held)

    if value is None:
        return False
    if same(value):
        return None
    if isinstance(value, ast.Tuple):
        return next((i for i, e in enumerate(value.elts) if same(e)), False)
    return False


def _kept_by_callers(ctx: LintContext, func: ast.AST, index: Optional[int]) -> List[ast.expr]:
    found: List[ast.expr] = []
    for site in ctx.call_sites(func):  # type: ignore[arg-type]
        found += _kept_at(ctx, site, index)
    return found


def _kept_at(ctx: LintContext, site: ast.Call, index: Optional[int]) -> List[ast.expr]:
    """Reads of the name ``site``'s result (or its element ``index``) is assigned to."""
    stmt = ctx.statement_of(site)
    if not (isinstance(stmt, ast.Assign) and stmt.value is site and len(stmt.targets) == 1):
        return []
    target = stmt.targets[0]
    if index is None and isinstance(target, ast.Name):
        return _loads(ctx, target.id, value=site)
    if index is not None and isinstance(target, ast.Tuple) and index < len(target.elts):
        element = target.elts[index]
        if isinstance(element, ast.Name) and not any(isinstance(e, ast.Starred) for e in target.elts):
            return _loads(ctx, element.id, stmt=stmt)
    return []


def _held_name(ctx: LintContext, loader_call: ast.Call) -> Optional[str]:
    stmt = ctx.statement_of(loader_call)
    if isinstance(stmt, ast.Assign) and stmt.value is loader_call and len(stmt.targets) == 1:
        target = stmt.targets[0]
        if isinstance(target, ast.Name):
            return target.id
    return None


# Reads of a name grouped by a node of their binding (its value or its statement).
_ReadsOf = Dict[ast.AST, List[ast.Name]]


class Index:
    """Built once per file: every read of each name, and the calls each name flows into (as an
    argument, or as the object a method is called on)."""

    def __init__(self, ctx: LintContext) -> None:
        self.ctx = ctx
        self.reads: Dict[str, List[ast.Name]] = {}
        self.attributes: Dict[str, List[ast.Attribute]] = {}
        self._flows: Optional[Tuple[Dict[str, List[ast.Call]], Dict[str, List[ast.Call]]]] = None
        self._by_binding: Dict[str, Tuple[_ReadsOf, _ReadsOf]] = {}
        for node in walk(ctx.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                self.reads.setdefault(node.id, []).append(node)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                self.attributes.setdefault(node.attr, []).append(node)

    @property
    def args(self) -> Dict[str, List[ast.Call]]:
        """Each name -> the calls it is an argument of (inside any argument expression)."""
        return self._calls_by_name()[0]

    @property
    def receivers(self) -> Dict[str, List[ast.Call]]:
        """Each name -> the method calls made on an object it is part of (``name.x.update()``)."""
        return self._calls_by_name()[1]

    def _calls_by_name(self) -> Tuple[Dict[str, List[ast.Call]], Dict[str, List[ast.Call]]]:
        """Built on the first question (TD020's): TD017 shares the reads, and needs none of this."""
        if self._flows is None:
            args: Dict[str, List[ast.Call]] = {}
            receivers: Dict[str, List[ast.Call]] = {}
            for call in self.ctx.calls:
                for name in {n.id for a in _arguments(call) for n in walk(a) if isinstance(n, ast.Name)}:
                    args.setdefault(name, []).append(call)
                if isinstance(call.func, ast.Attribute):
                    for name in {n.id for n in walk(call.func.value) if isinstance(n, ast.Name)}:
                        receivers.setdefault(name, []).append(call)
            self._flows = (args, receivers)
        return self._flows

    def reads_by_binding(self, ctx: LintContext, name: str) -> Tuple[_ReadsOf, _ReadsOf]:
        """The reads of ``name`` by the value assigned by their binding (``kind == "assign"``
        only) and by their binding's statement: grouped once per name, where each loader
        looked up the binding of every read of its name (a script rebinding ``train_loader``
        in every block read them all once per block)."""
        found = self._by_binding.get(name)
        if found is None:
            by_value: _ReadsOf = {}
            by_stmt: _ReadsOf = {}
            for node in self.reads.get(name, []):
                bound = ctx.binding(node)
                if bound is None:
                    continue
                if bound.kind == "assign" and bound.value is not None:
                    by_value.setdefault(bound.value, []).append(node)
                by_stmt.setdefault(bound.stmt, []).append(node)
            found = self._by_binding[name] = (by_value, by_stmt)
        return found


def name_index(ctx: LintContext) -> Index:
    return ctx.shared("sharded.index", lambda: Index(ctx))


def _loads(
    ctx: LintContext, name: str, value: Optional[ast.expr] = None, stmt: Optional[ast.AST] = None
) -> List[ast.expr]:
    """The reads of ``name`` bound by assigning ``value``, or bound by ``stmt``, in source order."""
    by_value, by_stmt = name_index(ctx).reads_by_binding(ctx, name)
    found = by_value.get(value, []) if value is not None else by_stmt.get(stmt, []) if stmt is not None else []
    return list(found)


def _arguments(call: ast.Call) -> List[ast.expr]:
    return list(call.args) + [k.value for k in call.keywords]
