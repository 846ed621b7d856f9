"""The user's project, as far as the rules need it: classes imported from other files.

A real project keeps the model in ``model.py`` and the loop in ``train.py``; a rule looking at
``model = GPT(config)`` in ``train.py`` must see ``GPT``'s definition to know whether it has
dropout (TD008), ends in a softmax (TD003) or is a module at all (TD009). This index finds the
file an import names, relative to the importing file (its folder and the folders above it, as
``python train.py`` and ``python -m pkg.train`` would), parses it once and keeps it until the file
changes (by modification time and size), or until the editor says its unsaved text changed
(``set_text``).

Weighed against astroid and jedi, which infer far more (return types, instance attributes) but
are not in the extension's bundle and cost far more per file (measured in docs/rules.md, "How
the rules see a project"). What the rules ask is narrow — "which class is this name, and what is
in its body" — so a purpose-built, lazy, cached lookup is enough.
"""

from __future__ import annotations

import ast
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Dict, Iterator, List, Optional, Set, Tuple

from .names import ImportMap

if TYPE_CHECKING:  # pragma: no cover
    from .bindings import Function
    from .context import LintContext

_MAX_PARENTS = 4  # folders above the importing file searched for a top-level package
_MAX_REEXPORTS = 4  # ``from .model import GPT`` chains through package ``__init__`` files
_MAX_BYTES = 2_000_000  # a generated file this large is not where a model class lives
_MAX_FILES = 512  # parsed files kept; the oldest is dropped beyond this
_MAX_IMPORTER_FILES = 256  # files looked at per folder when searching who imports a module


class ProjectIndex:
    """Parsed project files by path, each with its own ``LintContext``; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._files: Dict[str, Tuple[object, Optional["LintContext"]]] = {}
        self._texts: Dict[str, str] = {}

    # -- what the editor knows ---------------------------------------------------------

    def set_text(self, path: str, text: Optional[str]) -> None:
        """The editor's unsaved text of ``path`` (None: read the file on disk again)."""
        key = os.path.abspath(path)
        with self._lock:
            if text is None:
                self._texts.pop(key, None)
            else:
                self._texts[key] = text
            self._files.pop(key, None)

    def unsaved_text(self, path: str) -> Optional[str]:
        """The editor's unsaved text of ``path``, if it gave one."""
        with self._lock:
            return self._texts.get(os.path.abspath(path))

    def unsaved_paths(self) -> List[str]:
        with self._lock:
            return list(self._texts)

    # -- lookups -----------------------------------------------------------------------

    def find_class(self, qualname: str, importer: Optional[str]) -> Optional[Tuple["LintContext", ast.ClassDef]]:
        """The class ``qualname`` (``model.GPT``, ``.model.GPT`` for a relative import) names
        when imported from the file ``importer``, with the context of the file defining it."""
        if not importer or "." not in qualname.lstrip("."):
            return None
        return self._find(qualname, os.path.abspath(importer), 0)

    def find_function(self, qualname: str, importer: Optional[str]) -> Optional[Tuple["LintContext", "Function"]]:
        """The module-level function ``qualname`` (``utils.embed``, ``.utils.embed``) names
        when imported from the file ``importer``, with the context of the file defining it."""
        if not importer or "." not in qualname.lstrip("."):
            return None
        return self._find(qualname, os.path.abspath(importer), 0, _module_function)

    def _find(self, qualname: str, importer: str, depth: int, lookup: Optional[Callable] = None):
        if depth > _MAX_REEXPORTS:
            return None
        module, _, name = qualname.rpartition(".")
        for path in _candidate_files(module, importer):
            ctx = self.context(path)
            if ctx is None:
                continue
            found = ctx.classes.get(name) if lookup is None else lookup(ctx, name)
            if found is not None:
                return ctx, found
            reexported = ctx.imports.aliases.get(name)  # ``from .model import GPT`` in __init__.py
            if reexported:
                return self._find(reexported, path, depth + 1, lookup)
            star = self.star_source(ctx, name)  # ``from .model import *`` in __init__.py
            return self._find(f"{star}.{name}", path, depth + 1, lookup) if star else None
        return None

    def star_source(self, ctx: "LintContext", name: str) -> Optional[str]:
        """Of the project modules ``ctx``'s file star-imports, the one ``name`` comes from: the
        last whose file defines it and exports it (each ``import *`` binds its names in turn, so
        the last wins; ``__all__`` and the ``_private`` rule decide what it exports)."""
        found = self._star_origin(ctx, name)
        return found[0] if found is not None else None

    def star_torch_import(self, ctx: "LintContext", name: str) -> Optional[str]:
        """What ``name`` imports from torch in the project module ``ctx``'s file star-imports it
        from (``from utils import *`` where utils.py does ``import torch``: ``torch``); None when
        it is not a torch import there."""
        found = self._star_origin(ctx, name)
        imported = _imported_only(found[1]).get(name) if found is not None else None
        return imported if imported is not None and imported.split(".")[0] == "torch" else None

    def star_class(self, ctx: "LintContext", name: str) -> Optional[str]:
        """``utils.AverageMeter`` for ``AverageMeter`` that ``from utils import *`` brings, when
        that module defines the class itself; None otherwise."""
        found = self._star_origin(ctx, name)
        return f"{found[0]}.{name}" if found is not None and name in found[1].classes else None

    def _star_origin(self, ctx: "LintContext", name: str) -> Optional[Tuple[str, "LintContext"]]:
        if not ctx.path:
            return None
        for module in reversed(star_modules(ctx)):
            path = next(_candidate_files(module, os.path.abspath(ctx.path)), None) if module.strip(".") else None
            other = self.context(path) if path else None
            if other is not None and name in _star_names(other):
                return module, other
        return None

    def importers(self, path: str, word: str) -> List["LintContext"]:
        """Parsed files of the project that may import the module at ``path`` and mention
        ``word`` (a function's name): the files of its folder and, up the package, of the
        folders above it (where ``train.py`` sits next to its ``utils/`` package). A cheap text
        test comes first; only files that pass it are parsed (and cached like any other)."""
        here = os.path.abspath(path)
        if not os.path.isfile(here):
            return []  # unsaved text with a made-up name: no folder to look in
        stem = os.path.splitext(os.path.basename(here))[0]
        found: List["LintContext"] = []
        for candidate in _importer_candidates(here):
            text = self._texts.get(candidate)
            if text is None:
                try:
                    if os.path.getsize(candidate) > _MAX_BYTES:
                        continue
                    text = Path(candidate).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    continue
            if word not in text or stem not in text:
                continue
            ctx = self.context(candidate)
            if ctx is not None:
                found.append(ctx)
        return found

    def has_module(self, module: str, importer: Optional[str]) -> bool:
        """Whether ``import module`` from ``importer`` finds a file of the project."""
        if not importer or not module:
            return False
        return next(_candidate_files(module, os.path.abspath(importer)), None) is not None

    def context(self, path: str) -> Optional["LintContext"]:
        """The parsed file at ``path`` (None when it cannot be read or parsed)."""
        key = os.path.abspath(path)
        stamp = self._stamp(key)
        if stamp is None:
            return None
        with self._lock:
            cached = self._files.get(key)
            if cached is not None and cached[0] == stamp:
                return cached[1]
        ctx = self._parse(key)
        with self._lock:
            if len(self._files) >= _MAX_FILES:
                self._files.pop(next(iter(self._files)))
            self._files[key] = (stamp, ctx)
        return ctx

    def _stamp(self, key: str):
        text = self._texts.get(key)
        if text is not None:
            return ("text", hash(text))
        try:
            st = os.stat(key)
        except OSError:
            return None
        if st.st_size > _MAX_BYTES:
            return None
        return ("disk", st.st_mtime_ns, st.st_size)

    def _parse(self, key: str) -> Optional["LintContext"]:
        from .context import LintContext
        from .source import SourceText

        text = self._texts.get(key)
        try:
            if text is None:
                text = Path(key).read_text(encoding="utf-8", errors="replace")
            tree = ast.parse(text, filename=key)
        except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        return LintContext(tree, SourceText(text), key, project=self)


def star_modules(ctx: "LintContext") -> List[str]:
    """Modules ``ctx``'s file imports everything from (``from utils import *`` -> ``utils``,
    ``from . import *`` -> ``.``), relative ones with their dots; read once per file."""
    return ctx.shared("project.star_modules", lambda: _star_modules(ctx.tree))


def _star_modules(tree: ast.Module) -> List[str]:
    # Star imports are only allowed at module level: its statements and the ``if``/``try``
    # blocks there are all that is read.
    return [
        "." * (stmt.level or 0) + (stmt.module or "")
        for stmt in _module_level(tree)
        if isinstance(stmt, ast.ImportFrom) and any(alias.name == "*" for alias in stmt.names)
    ]


def _module_level(tree: ast.Module) -> List[ast.stmt]:
    """The module's statements and those of its top-level ``if``/``try`` blocks, in source order."""
    found: List[ast.stmt] = []
    for stmt in tree.body:
        found.append(stmt)
        if isinstance(stmt, (ast.If, ast.Try)):
            nested = ast.Module(body=stmt.body + stmt.orelse, type_ignores=[])
            if isinstance(stmt, ast.Try):
                nested.body += [s for handler in stmt.handlers for s in handler.body] + stmt.finalbody
            found.extend(_module_level(nested))
    return found


def _imported_only(ctx: "LintContext") -> Dict[str, str]:
    """The module-level names of ``ctx``'s file that an import binds and nothing else does, with
    what they import: ``DataLoader`` of ``from torch.utils.data import DataLoader`` unless the
    module rebinds it (``DataLoader = functools.partial(DataLoader, shuffle=True)``, a ``def``, a
    ``global DataLoader`` in a function, an import of something else under that name)."""
    return ctx.shared("project.imported_only", lambda: _imports_alone(ctx))


def _imports_alone(ctx: "LintContext") -> Dict[str, str]:
    found: Dict[str, str] = {}
    clashing: Set[str] = set()
    for stmt in _module_level(ctx.tree):
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)) or any(a.name == "*" for a in stmt.names):
            continue
        for local, imported in ImportMap([stmt]).aliases.items():
            if found.setdefault(local, imported) != imported:
                clashing.add(local)
    module = ctx.bindings.scopes.get(ctx.tree)
    rebound = set(module.names) if module is not None else set()
    rebound.update(name for scope in ctx.bindings.scopes.values() for name in scope.globals)
    return {local: imported for local, imported in found.items() if local not in clashing and local not in rebound}


def _star_names(ctx: "LintContext") -> Set[str]:
    """The names ``from <ctx's module> import *`` binds, of those the module defines at top
    level: those of a literal ``__all__`` when it has one, else the ones without a leading ``_``."""
    return ctx.shared("project.star_names", lambda: _exported(ctx.tree))


def _exported(tree: ast.Module) -> Set[str]:
    defined: Set[str] = set()
    listed: Optional[Set[str]] = None
    for stmt in _module_level(tree):
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(stmt.name)
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in stmt.names if a.name != "*")
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            defined |= names
            if "__all__" in names:
                strings = _literal_strings(stmt.value)
                if isinstance(stmt, ast.AugAssign):  # ``__all__ += [...]``
                    listed = listed | strings if listed is not None and strings is not None else None
                else:
                    listed = strings
    if listed is not None:
        return defined & listed
    return {n for n in defined if not n.startswith("_")}


def _literal_strings(value: Optional[ast.expr]) -> Optional[Set[str]]:
    """The strings of a literal list or tuple of strings (``__all__ = ["embed", "load"]``), else None."""
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
        return None
    return {e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}


def _module_function(ctx: "LintContext", name: str) -> Optional["Function"]:
    """The last top-level ``def name`` of a module (the one an import gets)."""
    found = None
    for stmt in ctx.tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            found = stmt
    return found


def _importer_candidates(path: str) -> Iterator[str]:
    """Python files that could import ``path``: its folder's, then, while the folder is a
    package, the folder above's (non-recursive; ``__init__.py`` files re-export, not use)."""
    folder = os.path.dirname(path)
    for _ in range(_MAX_PARENTS + 1):
        try:
            names = sorted(os.listdir(folder))[:_MAX_IMPORTER_FILES]
        except OSError:
            return
        for name in names:
            full = os.path.join(folder, name)
            if name.endswith(".py") and name != "__init__.py" and full != path and os.path.isfile(full):
                yield full
        if not os.path.isfile(os.path.join(folder, "__init__.py")):
            return
        parent = os.path.dirname(folder)
        if parent == folder:
            return
        folder = parent


def _candidate_files(module: str, importer: str):
    """Files that ``import module`` could mean from ``importer``, nearest first."""
    level = len(module) - len(module.lstrip("."))
    parts = [p for p in module.lstrip(".").split(".") if p]
    here = os.path.dirname(importer)
    if level:  # ``from ..pkg.model import X``: relative to the importer's package
        base = here
        for _ in range(level - 1):
            base = os.path.dirname(base)
        bases = [base]
    else:
        bases, base = [], here
        for _ in range(_MAX_PARENTS + 1):
            bases.append(base)
            parent = os.path.dirname(base)
            if parent == base:
                break
            base = parent
    for base in bases:
        stem = os.path.join(base, *parts) if parts else base
        for path in (stem + ".py", os.path.join(stem, "__init__.py")):
            if os.path.isfile(path) and os.path.abspath(path) != importer:
                yield path


PROJECT = ProjectIndex()
"""The index every lint shares (the language server and the command line)."""
