"""Everything rules share about one parsed module: the tree, parents, scopes, and name
resolution through imports and simple assignments.

Built once per lint; indexes are computed in a single walk so that each rule stays a
linear pass even on a 5,000-line file.
"""

from __future__ import annotations

import ast
import bisect
from collections import defaultdict
from operator import attrgetter, itemgetter
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterator, List, Optional, Set, Tuple, TypeVar, Union, cast

from .bindings import BINDING_KINDS, FUNCTIONS, SCOPES, Binding, Bindings, Function
from .callers import CallerResolution
from .names import ImportMap
from .source import SourceText
from .values import ValueResolution

if TYPE_CHECKING:  # project.py imports this module
    from .project import ProjectIndex

_T = TypeVar("_T")
Loop = Union[ast.For, ast.AsyncFor, ast.While]
# One entry of the per-owner index: (start, end, node), positions as ``_position`` ints.
_Owned = Tuple[int, int, ast.AST]
# A position as one int, ``line << _COLUMN_BITS | column``: it orders as (line, column) does (a
# column is a C int in CPython's AST, below 2**31), and ints sort and bisect 4x faster than pairs.
_COLUMN_BITS = 32

_OWNER_KINDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_OWNER_SET = frozenset(_OWNER_KINDS)
_FUNCTION_KINDS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_IMPORT_KINDS = (ast.Import, ast.ImportFrom)
_SCOPE_KINDS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_WITH_KINDS = (ast.With, ast.AsyncWith)
# Fields holding only operator / load-store singletons or plain strings and numbers: nothing
# a rule looks at or up from, so the walk does not look into them (``Name`` and ``Constant``,
# half the nodes of a file, then have no field to visit at all).
_LEAF_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "name", "arg", "asname", "module", "level", "kind", "type_comment"}
    | {"is_async", "conversion", "rest", "kwd_attrs"}
)
_LEAF_FIELDS_OF = {ast.Constant: {"value"}, ast.Global: {"names"}, ast.Nonlocal: {"names"}}
if hasattr(ast, "MatchSingleton"):
    _LEAF_FIELDS_OF[ast.MatchSingleton] = {"value"}
_CHILD_FIELDS: Dict[type, Tuple[str, ...]] = {}
# Node types ``own_nodes`` can answer for.
_OWN_INDEXED = frozenset(
    {ast.Call, ast.Return, ast.Yield, ast.YieldFrom, ast.AugAssign, ast.Assign, ast.AnnAssign, ast.Expr}
)
# What the index does with each node kind (bit flags; absent = nothing).
_F_OWNED, _F_LIST, _F_BINDS, _F_SCOPE, _F_OWNER, _F_CALL = 1, 2, 4, 8, 16, 32


def _flags() -> Dict[type, int]:
    flags: Dict[type, int] = {}

    def add(kinds, flag):
        for kind in kinds:
            flags[kind] = flags.get(kind, 0) | flag

    add(_OWN_INDEXED, _F_OWNED)
    add(_LOOPS + _FUNCTION_KINDS + (ast.ClassDef,) + _IMPORT_KINDS + _WITH_KINDS, _F_LIST)
    add((ast.Call,), _F_CALL)  # listed in ``calls`` with the callee's name, by the walk itself
    add(BINDING_KINDS, _F_BINDS)
    add(_SCOPE_KINDS, _F_SCOPE)
    add(_OWNER_KINDS, _F_OWNER)
    return flags


_FLAGS = _flags()
_UNKNOWN = object()  # a cache's "not asked yet" (None is a valid answer)
# Kinds with no child to visit and nothing for the index to record: the walk notes their
# parent and owner without pushing them (about half the nodes of a file).
_LEAF_KINDS = frozenset({ast.Name, ast.Constant, ast.Pass, ast.Break, ast.Continue})


_START = itemgetter(0)
# The names a no-grad block is opened with: only a file whose text has one (or a star import,
# ``no_grad_backward``'s own scan) can need the reads of every name (``loads``).
_GRAD_MODES = ("no_grad", "inference_mode", "set_grad_enabled")


def _position(node: Any) -> Tuple[int, int]:
    """``node``'s start and end as ``_COLUMN_BITS`` ints."""
    return (node.lineno << _COLUMN_BITS | node.col_offset, node.end_lineno << _COLUMN_BITS | node.end_col_offset)


def _within(entries: Any, start: int, end: int) -> List[_Owned]:
    """The entries (sorted by start) that lie within ``start``-``end``."""
    found = []
    index, count = bisect.bisect_left(entries, (start,)), len(entries)
    while index < count:  # not islice(entries, index): that steps over the first ``index`` ones
        entry = entries[index]
        if entry[0] >= end:
            break
        if entry[1] <= end:
            found.append(entry)
        index += 1
    return found


def _child_fields(kind: Any) -> Tuple[str, ...]:
    """The fields of ``kind`` that can hold nodes (``_CHILD_FIELDS``' entry, made once)."""
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        leaves = _LEAF_FIELDS | _LEAF_FIELDS_OF.get(kind, set())
        fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in leaves)
    return fields


def _kind_info(kind: type) -> Tuple[int, Tuple[str, ...]]:
    return _FLAGS.get(kind, 0), _child_fields(kind)


# kind -> (flags, child fields): what the index walk needs of a node's kind, in one lookup.
_KIND_INFO: Dict[type, Tuple[int, Tuple[str, ...]]] = {}


class LintContext(ValueResolution, CallerResolution):
    """Shared, read-only facts about one module, for the rules."""

    def __init__(
        self, tree: ast.Module, source: SourceText, path: Optional[str] = None, project: Optional[ProjectIndex] = None
    ) -> None:
        self.tree = tree
        self.source = source
        self.path = path
        if project is None:
            from .project import PROJECT

            project = PROJECT
        self.project: ProjectIndex = project
        # classes found in other files of the project -> the context of the file defining them
        self._foreign: Dict[ast.ClassDef, "LintContext"] = {}
        self._sites: Dict[Function, List[ast.Call]] = {}
        self._resolving: Set[Tuple[ast.AST, str]] = set()
        self._arguments: Dict[Tuple[ast.AST, str], Optional[ast.expr]] = {}
        self._calls_by_name: Optional[Dict[str, List[ast.Call]]] = None
        self._call_names: List[Optional[str]] = []
        self._call_rank: Optional[Dict[ast.Call, int]] = None
        self._calls_by_class: Optional[Dict[Optional[str], List[ast.Call]]] = None
        self._local_called: Dict[ast.Call, Optional[Function]] = {}
        self.parents: Dict[ast.AST, ast.AST] = {}
        # every name and attribute read (``x``, ``.x``), in the order of ``parents``, by the walk;
        # None where the text names no grad mode (TD013 alone reads them, after a no-grad block)
        self.loads: Optional[Dict[str, List[Union[ast.Name, ast.Attribute]]]] = None
        self.calls: List[ast.Call] = []
        self.loops: List[Loop] = []
        self.withs: List[Union[ast.With, ast.AsyncWith]] = []  # every ``with`` block, in walk order
        self.functions: List[Function] = []
        self.classes: Dict[str, ast.ClassDef] = {}
        # owner (function, lambda, class or module) -> node type -> [(start, end, node)] by start
        self._owned: Dict[ast.AST, Dict[type, List[_Owned]]] = {}
        # node -> the innermost function, lambda or class strictly around it (module: the tree);
        # leaves (``Name``, ``Constant``) are not stored: ``owner_of`` reads them via their parent
        self._owner: Dict[ast.AST, ast.AST] = {}
        self._chains: Dict[ast.AST, List[ast.AST]] = {}
        import_nodes: List[Union[ast.Import, ast.ImportFrom]] = []
        self.import_nodes = import_nodes  # every ``import`` of the module, in any scope
        self.bindings = Bindings()
        self._index(tree, import_nodes, any(name in source.text for name in _GRAD_MODES))
        self.bindings.finish()
        self.imports = ImportMap(import_nodes)
        # ``from utils import *``: names not imported here may still be torch's (``_star_qualname``)
        self.star_imports = any(
            isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names) for node in import_nodes
        )
        self._shared: Dict[str, object] = {}
        self._values: Dict[ast.AST, Optional[ast.expr]] = {}
        self._constructions: Dict[ast.AST, Optional[ast.Call]] = {}
        self._bound: Dict[ast.Name, Optional[Binding]] = {}
        self._loops_around: Dict[ast.AST, List[Loop]] = {}
        self._qualnames: Dict[ast.AST, Optional[str]] = {}
        self._callee_classes: Dict[ast.Call, Optional[str]] = {}

    def release(self) -> None:
        """Drop everything this context holds (the lint is over): the analyses in ``shared``
        hold the context, so without this the whole graph waits for the cyclic collector."""
        self.__dict__.clear()

    def shared(self, key: str, factory: Callable[[], _T]) -> _T:
        """An analysis several rules use (training structure, activations), built once."""
        if key not in self._shared:
            self._shared[key] = factory()
        return self._shared[key]  # type: ignore[return-value]  # each key is built by one factory

    # -- indexing -------------------------------------------------------------------

    def _index(self, tree: ast.Module, import_nodes: List[Union[ast.Import, ast.ImportFrom]], reads: bool) -> None:
        """One pass over the tree: parents, the node lists rules iterate, and per-owner
        position-sorted lists of the node types rules look for inside a loop or function."""
        parents = self.parents
        owned = self._owned
        owner_map = self._owner
        record = self.bindings.record
        node_type, leaf_kinds = cast(Any, ast.AST), _LEAF_KINDS  # Any: its nodes are read generically
        class_nodes: List[ast.ClassDef] = []
        lists = self._index_lists(class_nodes, import_nodes)
        # What rules read of every call and name (51k and 130k in a 32k-line script), read while
        # the walk is at it (later, a cache miss per node): (start, callee's last name, call); reads.
        call_entries: List[Tuple[int, Optional[str], ast.Call]] = []
        loads: Dict[str, List[Any]] = defaultdict(list)
        name_kind, attribute_kind, load_kind = ast.Name, ast.Attribute, ast.Load
        read_name, read_attribute = (name_kind, attribute_kind) if reads else (None, None)
        # Nodes are read generically (``Any``): a kind's flags say which attributes it has.
        stack: List[Tuple[Any, ast.AST]] = [(tree, tree)]
        kind_info = _KIND_INFO
        while stack:
            node, owner = stack.pop()
            owner_map[node] = owner
            kind = node.__class__
            # One lookup per node for what the index does with its kind and which fields to visit.
            info = kind_info.get(kind)
            if info is None:
                info = kind_info[kind] = _kind_info(kind)
            flags, fields = info
            child_owner = owner
            if flags:  # the few node kinds anything is done with; most nodes take the fast path
                if flags & _F_OWNED:
                    start = node.lineno << _COLUMN_BITS | node.col_offset
                    entry = (start, node.end_lineno << _COLUMN_BITS | node.end_col_offset, node)
                    # get-or-create, not setdefault: that builds an empty dict and list per node
                    by_kind = owned.get(owner)
                    if by_kind is None:
                        by_kind = owned[owner] = {}
                    entries = by_kind.get(kind)
                    if entries is None:
                        by_kind[kind] = [entry]
                    else:
                        entries.append(entry)
                    if flags & _F_CALL:
                        func, func_kind = node.func, node.func.__class__
                        name = func.attr if func_kind is attribute_kind else func.id if func_kind is name_kind else None
                        call_entries.append((start, name, node))
                if flags & _F_LIST:
                    lists[kind].append(node)
                if flags & _F_BINDS:
                    record(node, owner, parents.get(owner))
                if flags & _F_SCOPE:
                    self.bindings.begin_scope(node)
                if flags & _F_OWNER:
                    child_owner = node
            for field in fields:
                value = getattr(node, field, None)
                if value.__class__ is list:
                    for item in value:
                        if isinstance(item, node_type):
                            parents[item] = node
                            item_kind = item.__class__
                            # ``Name``, ``Constant``: nothing inside, and their owner is read
                            # through their parent (``owner_of``): not pushed, not stored.
                            if item_kind not in leaf_kinds:
                                stack.append((item, child_owner))
                                if item_kind is read_attribute and item.ctx.__class__ is load_kind:
                                    loads["." + item.attr].append(item)
                            elif item_kind is read_name and item.ctx.__class__ is load_kind:
                                loads[item.id].append(item)
                elif isinstance(value, node_type):
                    parents[value] = node
                    value_kind = value.__class__
                    if value_kind not in leaf_kinds:
                        stack.append((value, child_owner))
                        if value_kind is read_attribute and value.ctx.__class__ is load_kind:
                            loads["." + value.attr].append(value)
                    elif value_kind is read_name and value.ctx.__class__ is load_kind:
                        loads[value.id].append(value)
        self.loads = dict(loads) if reads else None  # a plain dict: a lookup adds no key
        self._finish_index(class_nodes, call_entries)

    def _index_lists(self, class_nodes: List[ast.ClassDef], import_nodes: List[Any]) -> Dict[type, List[Any]]:
        """The list each listed kind goes to: one dict lookup per node instead of a chain of tests."""
        lists: Dict[type, List[Any]] = {ast.ClassDef: class_nodes}
        lists.update({k: self.loops for k in _LOOPS})
        lists.update({k: self.functions for k in _FUNCTION_KINDS})
        lists.update({k: import_nodes for k in _IMPORT_KINDS})
        lists.update({k: self.withs for k in _WITH_KINDS})
        return lists

    def _finish_index(self, class_nodes: List[ast.ClassDef], call_entries: List[Tuple[Any, Any, ast.Call]]) -> None:
        """The index's lists in source order, the classes by name."""
        for node in class_nodes:  # in walk order, as before: the first seen of a name is kept
            self.classes.setdefault(node.name, node)
        # C-level sort keys (a lambda per element cost 10% of the index on a long script). The
        # calls are sorted by the start the walk read: reading each call's position again cost
        # as much as the sort.
        call_entries.sort(key=_START)
        self.calls.extend([entry[2] for entry in call_entries])
        self._call_names = [entry[1] for entry in call_entries]  # as ``calls``: for ``calls_named``
        key = attrgetter("lineno", "col_offset")
        self.loops.sort(key=key)
        self.functions.sort(key=key)
        for by_kind in self._owned.values():
            for entries in by_kind.values():
                entries.sort(key=_START)

    def own_nodes(self, node: ast.AST, *kinds: type) -> List[Any]:
        """Nodes of ``kinds`` that run when ``node`` runs (not inside nested functions,
        lambdas or classes), in source order. ``kinds`` must be among ``_OWN_INDEXED``."""
        owner = node if isinstance(node, _OWNER_KINDS) or node is self.tree else self.owner_of(node)
        by_kind = self._owned.get(owner)
        if by_kind is None:
            return []
        if owner is node:
            lists = [by_kind.get(kind, ()) for kind in kinds]
        else:
            # Anything but an owner or the module is a statement or expression: it has a span.
            start, end = _position(node)
            lists = [_within(by_kind.get(kind, ()), start, end) for kind in kinds]
        lists = [entries for entries in lists if entries]
        if len(lists) <= 1:  # one kind found (most questions): in order already, no merge
            return [e[2] for e in lists[0]] if lists else []
        found = [e for entries in lists for e in entries]
        found.sort(key=_START)  # stable: as the per-kind order when two nodes start together
        return [e[2] for e in found]

    def all_nodes(self, kind: type) -> List[Any]:
        """Every node of ``kind`` in the file, in source order, from the index (no walk).
        ``kind`` must be among ``_OWN_INDEXED``."""
        entries = [e for by_kind in self._owned.values() for e in by_kind.get(kind, ())]
        entries.sort(key=_START)
        return [e[2] for e in entries]

    def owner_of(self, node: ast.AST) -> ast.AST:
        """The innermost function, lambda or class around ``node`` (the module at top level)."""
        owner = self._owner.get(node)
        if owner is None:
            # A leaf (``Name``, ``Constant``, ``pass``: half the nodes, not in ``_owner``): its
            # parent, when that is a def, lambda or class, else its parent's owner.
            parent = self.parents.get(node)
            if parent is None:
                return self.tree
            return parent if parent.__class__ in _OWNER_SET else self._owner.get(parent, self.tree)
        return owner

    # -- tree navigation ------------------------------------------------------------

    def ancestors(self, node: ast.AST) -> Iterator[ast.AST]:
        current = self.parents.get(node)
        while current is not None:
            yield current
            current = self.parents.get(current)

    def is_inside(self, node: ast.AST, around: ast.AST) -> bool:
        """Whether ``around`` is one of ``node``'s ancestors."""
        return any(anc is around for anc in self.ancestors(node))

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The function, lambda or module whose namespace ``node`` evaluates in."""
        return self.scope_chain(node)[0]

    def scope_chain(self, node: ast.AST) -> List[ast.AST]:
        """The namespaces searched for a name used at ``node``: functions and lambdas around
        it, innermost first, then the module (class bodies are skipped, as Python does)."""
        owner = self.owner_of(node)
        chain = self._chains.get(owner)
        if chain is None:
            chain = []
            current: Optional[ast.AST] = owner
            while current is not None and current is not self.tree:
                if isinstance(current, SCOPES):
                    chain.append(current)
                current = self._owner.get(current)
            chain.append(self.tree)
            self._chains[owner] = chain
        return chain

    def enclosing_function(self, node: ast.AST) -> Optional[Function]:
        """The ``def`` around ``node`` (through classes, not through lambdas), or None."""
        current: Optional[ast.AST] = self.owner_of(node)
        while current is not None and current is not self.tree:
            if isinstance(current, FUNCTIONS):
                return current
            if isinstance(current, ast.Lambda):
                return None
            current = self._owner.get(current)
        return None

    def enclosing_class(self, func: ast.AST) -> Optional[ast.ClassDef]:
        """The class ``func`` is a method of (directly), or None."""
        parent = self.parents.get(func)
        return parent if isinstance(parent, ast.ClassDef) else None

    def statement_of(self, node: ast.AST) -> ast.stmt:
        """The statement that contains ``node`` (itself when it is one)."""
        current = node
        while not isinstance(current, ast.stmt):
            parent = self.parents.get(current)
            if parent is None:
                break
            current = parent
        return current  # type: ignore[return-value]

    def own_calls(self, node: ast.AST) -> List[ast.Call]:
        """Calls that run when ``node`` runs, in source order."""
        return self.own_nodes(node, ast.Call)

    def enclosing_loops(self, node: ast.AST) -> List[Loop]:
        """Loops around ``node`` within its function (body, not header), innermost first."""
        cached = self._loops_around.get(node)
        if cached is not None:
            return cached
        loops: List[Loop] = []
        child = node
        for anc in self.ancestors(node):
            if isinstance(anc, _OWNER_KINDS):
                break
            if isinstance(anc, _LOOPS) and (child in anc.body or child in anc.orelse):
                loops.append(anc)
            child = anc
        self._loops_around[node] = loops
        return loops

    # -- names and values -----------------------------------------------------------

    def qualname(self, expr: ast.AST) -> Optional[str]:
        found = self._qualnames.get(expr, _UNKNOWN)  # one lookup: asked of most calls by most rules
        if found is _UNKNOWN:
            found = self.imports.qualname(expr)
            if found is None and self.star_imports:
                found = self._star_qualname(expr)
            self._qualnames[expr] = found
        return found  # type: ignore[return-value]  # never the marker: it was replaced above

    def _star_qualname(self, expr: ast.AST) -> Optional[str]:
        """``torch.no_grad`` in a file that gets ``torch`` from ``from utils import *`` (utils.py
        imports it): the torch name, as for a direct import. Only torch imports are taken, and
        only for a name the file does not bind itself; each name is looked up once."""
        root = expr
        while isinstance(root, ast.Attribute):
            root = root.value
        if not isinstance(root, ast.Name):
            return None
        cache: Dict[str, Optional[ImportMap]] = self.shared("context.star_torch_names", dict)
        if root.id not in cache:
            module_names = self.bindings.scopes.get(self.tree)
            bound_here = module_names is not None and root.id in module_names.names
            imported = None if bound_here else self.project.star_torch_import(self, root.id)
            cache[root.id] = (
                ImportMap([ast.Import(names=[ast.alias(name=imported, asname=root.id)])]) if imported else None
            )
        found = cache[root.id]
        return found.qualname(expr) if found is not None else None

    def context_for(self, node: ast.AST) -> "LintContext":
        """The context of the file ``node`` comes from (a class found by ``local_class``)."""
        found = self._foreign.get(node) if isinstance(node, ast.ClassDef) else None
        return found if found is not None else self

    def text(self, node: ast.AST) -> str:
        return self.source.segment(node)


def walk(node: ast.AST) -> List[ast.AST]:
    """``ast.walk(node)`` as a list (breadth-first too), several times faster: it looks only
    into the fields that can hold nodes (``_CHILD_FIELDS``, shared with the index walk)."""
    found = [node]
    child_fields = _CHILD_FIELDS
    node_type = ast.AST
    index = 0
    while index < len(found):
        current = found[index]
        index += 1
        kind = type(current)
        fields = child_fields.get(kind)
        if fields is None:
            fields = _child_fields(kind)
        for name in fields:
            value = getattr(current, name, None)
            if value.__class__ is list:
                for item in value:  # a loop, not a generator: most lists hold one or two nodes
                    if isinstance(item, node_type):
                        found.append(item)
            elif isinstance(value, node_type):
                found.append(value)
    return found


def terminal_name(expr: Optional[ast.AST]) -> str:
    """The last identifier of a name chain: ``self.train_loader`` -> ``train_loader``."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Call):
        return terminal_name(expr.func)
    return ""


def receiver(call: ast.Call) -> ast.expr:
    """The object a method call is made on: ``net`` of ``net.eval()`` or ``model.to(device)``
    (the callee itself when the call is not a method call)."""
    func = call.func
    return func.value if isinstance(func, ast.Attribute) else func
