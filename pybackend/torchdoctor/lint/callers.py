"""Across function calls, inside one file: which function a call runs, who calls a function, and
what its callers pass for a parameter (``train(model, ...)`` called as ``train(Net(), ...)``).

A mixin of ``LintContext`` (it uses the context's bindings, classes and calls); kept apart so the
context module stays about the tree and names, and this one about calls.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING, Dict, Iterable, List, Optional, Set, Tuple, Union

from .bindings import FUNCTIONS, Binding, Function
from .names import ALTERNATIVE_CONSTRUCTORS, ImportMap


class _Missing:
    """The type of ``MISSING``: an argument that cannot be told (``*args``, ``**kwargs`` at the
    call site); a class of its own so the type checker tells it from an expression."""


MISSING = _Missing()
_MISSING = MISSING
# Functions passing a parameter on to the next (``stage2(m)`` calls ``stage1(m)`` ...): each level
# costs about ten frames, so a chain of ~130 ran out of stack and the rule asking lost every finding.
# Real projects nest a few levels; past this many the argument is unknown.
MAX_ARGUMENT_DEPTH = 32


class CallerResolution:
    """Call-site questions, answered from the calls of one file and cached per function."""

    _sites: Dict[Function, List[ast.Call]]
    _resolving: Set[Tuple[ast.AST, str]]
    _arguments: Dict[Tuple[ast.AST, str], Optional[ast.expr]]
    _calls_by_name: Optional[Dict[str, List[ast.Call]]]
    _call_names: List[Optional[str]]  # the callee's last name of each of ``calls`` (None: not a name)
    _call_rank: Optional[Dict[ast.Call, int]]  # each call's position in ``calls`` (for ``calls_named_any``)
    _calls_by_class: Optional[Dict[Optional[str], List[ast.Call]]]
    _local_called: Dict[ast.Call, Optional[Function]]
    calls: List[ast.Call]
    imports: ImportMap
    star_imports: bool

    if TYPE_CHECKING:  # provided by LintContext, the class this one is mixed into

        def class_of(self, expr: Optional[ast.expr]) -> Optional[str]: ...
        def callee_class(self, call: ast.Call) -> Optional[str]: ...
        def enclosing_class(self, func: ast.AST) -> Optional[ast.ClassDef]: ...
        def enclosing_function(self, node: ast.AST) -> Optional[Function]: ...
        def binding(self, name: ast.Name) -> Optional[Binding]: ...
        def method(self, cls: ast.ClassDef, name: str) -> Optional[Function]: ...

    def argument_for(self, param: Binding) -> Optional[ast.expr]:
        """What the callers in this file pass for a parameter: ``train(model, ...)`` called as
        ``train(Net(), ...)`` makes ``model`` a Net. Only when every caller agrees on the class
        (or there is one caller); a default value counts when no caller passes the argument."""
        func = param.stmt
        key = (func, param.name)
        if key in self._arguments:
            return self._arguments[key]
        if not isinstance(func, FUNCTIONS) or key in self._resolving:
            return None  # a recursive call passes the parameter on: no new information
        if len(self._resolving) >= MAX_ARGUMENT_DEPTH:
            return None  # not memoised: asked from a shallower function it may still be found
        self._resolving.add(key)
        try:
            found = self._agreed_argument(func, param.name)
        finally:
            self._resolving.discard(key)
        self._arguments[key] = found
        return found

    def _agreed_argument(self, func: Function, name: str) -> Optional[ast.expr]:
        found = [self._argument_at(site, func, name) for site in self.callers_of(func)]
        args = [a for a in found if not isinstance(a, _Missing)]
        if not args:
            return None
        if len(args) == 1:
            return args[0]
        classes = {self.class_of(a) if a is not None else None for a in args}
        return args[0] if len(classes) == 1 and None not in classes else None

    def callers_of(self, func: Function) -> List[ast.Call]:
        """Calls in this file that run ``func``: by name, as ``self.method(...)``, and for an
        ``__init__`` the calls that build its class."""
        sites = self._sites.get(func)
        if sites is None:
            self._sites[func] = []  # recursion guard
            sites = self.call_sites(func)
            owner = self.enclosing_class(func)
            if func.name == "__init__" and owner is not None:
                sites = sites + [
                    c
                    for c in self.calls
                    if isinstance(c.func, ast.Name)
                    and c.func.id == owner.name
                    and self.callee_class(c) == "local:" + owner.name
                ]
            self._sites[func] = sites
        return sites

    def argument_at(self, site: ast.Call, func: Function, name: str) -> Optional[ast.expr]:
        """The expression ``site`` passes for parameter ``name`` of ``func`` (or its default);
        None when there is none or it cannot be told (``*args``, ``**kwargs``)."""
        found = self._argument_at(site, func, name)
        return None if isinstance(found, _Missing) else found

    def _argument_at(self, site: ast.Call, func: Function, name: str) -> Union[ast.expr, None, _Missing]:
        """The expression ``site`` passes for parameter ``name`` of ``func`` (``_MISSING`` when
        it cannot be told, e.g. ``*args``), or the parameter's default, or None."""
        params = list(getattr(func.args, "posonlyargs", [])) + list(func.args.args)
        names = [p.arg for p in params]
        is_method = self.enclosing_class(func) is not None and bool(names) and names[0] in ("self", "cls")
        if is_method:
            names = names[1:]
        for kw in site.keywords:
            if kw.arg == name:
                return kw.value
            if kw.arg is None:
                return _MISSING  # ``**kwargs``: cannot tell
        if name in names:
            index = names.index(name)
            if any(isinstance(a, ast.Starred) for a in site.args[: index + 1]):
                return _MISSING
            if index < len(site.args):
                return site.args[index]
            defaults = func.args.defaults
            offset = len(params) - len(defaults)
            position = index + (1 if is_method else 0)
            if position >= offset:
                return defaults[position - offset]
        return _MISSING

    def local_function_called(self, call: ast.Call) -> Optional[Function]:
        """The function defined in this file that ``call`` runs: ``helper(...)`` for a
        module-level or enclosing-scope def, ``self.helper(...)`` for a method of the class.
        Cached: several rules ask it of every call in every training loop."""
        cache = self._local_called
        if call in cache:
            return cache[call]
        found = cache[call] = self._local_function_called(call)
        return found

    def _local_function_called(self, call: ast.Call) -> Optional[Function]:
        func = call.func
        if isinstance(func, ast.Name):
            bound = self.binding(func)
            if bound is not None and bound.kind == "def" and isinstance(bound.stmt, FUNCTIONS):
                return bound.stmt
            return None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            method_owner = self.enclosing_function(call)
            while method_owner is not None:
                owner = self.enclosing_class(method_owner)
                if owner is not None:
                    if method_owner.args.args and method_owner.args.args[0].arg == func.value.id:
                        return self.method(owner, func.attr)
                    return None
                method_owner = self.enclosing_function(method_owner)
        return None

    def call_sites(self, func: Function) -> List[ast.Call]:
        """Calls in this file that run ``func`` (by the rules of ``local_function_called``)."""
        return [c for c in self.calls_named(func.name) if self.local_function_called(c) is func]

    def calls_named(self, name: str) -> List[ast.Call]:
        """Calls whose callee is ``name`` or ``something.name``, in source order (indexed once,
        so looking up the callers of every function stays linear in the file)."""
        index = self._calls_by_name
        if index is None:
            index = self._index_calls_by_name()
        return index.get(name, [])

    def call_names(self) -> List[str]:
        """Every name some call of the file is spelled with (``x.step_and_update_lr()``)."""
        index = self._calls_by_name
        if index is None:
            index = self._index_calls_by_name()
        return list(index)

    def calls_named_any(self, names: Iterable[str]) -> List[ast.Call]:
        """The calls named any of ``names`` (as ``calls_named`` reads names), in the order of
        ``calls``: what a loop over every call of the file that skips the other names sees,
        without that loop (a 32k-line script has 51k calls; a rule wants a few hundred)."""
        return self._in_call_order([self.calls_named(name) for name in dict.fromkeys(names)])

    def calls_of_class(self, classes: Iterable[Optional[str]]) -> List[ast.Call]:
        """The calls whose ``callee_class`` is one of ``classes``, in the order of ``calls``: what a
        loop over every call that skips the other classes sees, from an index built once (the
        loader, sampler and optimizer rules each ran that loop over the 51k calls of a long script)."""
        wanted = set(classes)
        built = self._calls_by_class is not None  # every call's class is known already
        if built or self.star_imports or any(not name or name.startswith("local:") for name in wanted):
            index = self._calls_by_class_index()
            return self._in_call_order([index.get(name, []) for name in wanted])
        # A qualified class comes from the callee's qualified name, which ends in the callee's
        # last name (``nn.DataLoader``) or is an import's (``DataLoader``), or from an alternative
        # constructor: only calls so named are asked their class.
        names = [name.rpartition(".")[2] for name in wanted if name] + list(self.imports.aliases)
        named = self.calls_named_any(names + sorted(ALTERNATIVE_CONSTRUCTORS))
        return [call for call in named if self.callee_class(call) in wanted]

    def callee_classes(self) -> List[Optional[str]]:
        """Every ``callee_class`` some call of the file has (for questions on a prefix)."""
        return list(self._calls_by_class_index())

    def _calls_by_class_index(self) -> Dict[Optional[str], List[ast.Call]]:
        index = self._calls_by_class
        if index is None:
            index = self._calls_by_class = {}
            callee_class = self.callee_class
            for call in self.calls:
                key = callee_class(call)
                found = index.get(key)
                if found is None:
                    index[key] = [call]
                else:
                    found.append(call)
        return index

    def _in_call_order(self, lists: List[List[ast.Call]]) -> List[ast.Call]:
        """The calls of ``lists`` (each in the order of ``calls``) merged into that order."""
        lists = [found for found in lists if found]
        if len(lists) <= 1:  # one list is in order already
            return list(lists[0]) if lists else []
        rank = self._call_rank
        if rank is None:  # each call's position in ``calls``, built by C code when first needed
            rank = self._call_rank = dict(zip(self.calls, range(len(self.calls))))
        found = [call for calls in lists for call in calls]
        found.sort(key=rank.__getitem__)
        return found

    def _index_calls_by_name(self) -> Dict[str, List[ast.Call]]:
        index: Dict[str, List[ast.Call]] = {}
        for key, call in zip(self._call_names, self.calls):  # names read by the index walk
            if key is None:
                continue
            found = index.get(key)
            if found is None:
                index[key] = [call]
            else:
                found.append(call)
        self._calls_by_name = index
        return index
