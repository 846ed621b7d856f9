"""What names and objects refer to: bindings through ``self.x`` and parameters, the call that
built an object, its class, and the project's classes (in this file or imported from another).

A mixin of ``LintContext`` (it uses the context's bindings, imports, classes and tree
navigation); kept apart so the context module stays about the tree and its index, this one
about values, and ``callers.py`` about calls.
"""

from __future__ import annotations

import ast
import os
from typing import TYPE_CHECKING, Any, Dict, Iterator, List, Optional, cast

from .bindings import FUNCTIONS, Binding, Bindings, Function
from .names import ALTERNATIVE_CONSTRUCTORS, ImportMap

if TYPE_CHECKING:  # context.py and project.py import this module
    from .context import LintContext
    from .project import ProjectIndex

# Methods of nn.Module that return the module itself: ``Net().to(device)`` is still a Net.
_SELF_RETURNING = frozenset(
    {
        "to",
        "cuda",
        "cpu",
        "float",
        "double",
        "half",
        "bfloat16",
        "train",
        "eval",
        "requires_grad_",
        "share_memory",
        "to_empty",
        "xpu",
        "mps",
    }
)
# Wrappers whose instances behave like the module they wrap.
_WRAPPERS = frozenset(
    {
        "torch.compile",
        "torch.nn.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.jit.script",
    }
)
_MAX_DEPTH = 12
_UNKNOWN = object()  # a cache's "not asked yet" (None is a valid answer)
# Qualified names of libraries: never looked up in the user's project.
LIBRARIES = (
    "torch.",
    "torchvision.",
    "torchaudio.",
    "transformers.",
    "timm.",
    "lightning.",
    "pytorch_lightning.",
    "sklearn.",
    "numpy.",
    "pandas.",
    "tensorflow.",
    "jax.",
    "flax.",
    "accelerate.",
    "peft.",
    "datasets.",
)


_BRANCHING = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def _same_block(home: ast.AST, a: ast.AST, b: ast.AST) -> bool:
    """Whether statements ``a`` and ``b`` (children of ``home``) are in the same statement list
    (not one in an ``if``'s body and the other in its ``else``). Only ``if``, loops and ``try``
    have more than one list: the others (a module's body, thousands long) are never searched."""
    if not isinstance(home, _BRANCHING):
        return True
    for field in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(home, field, None)
        if isinstance(block, list) and a in block:
            return b in block
    return False


class ValueResolution:
    """Name, value and class questions, answered from one file's bindings and cached per node."""

    bindings: Bindings
    imports: ImportMap
    classes: Dict[str, ast.ClassDef]
    project: ProjectIndex
    path: Optional[str]
    star_imports: bool
    _foreign: Dict[ast.ClassDef, LintContext]
    _values: Dict[ast.AST, Optional[ast.expr]]
    _constructions: Dict[ast.AST, Optional[ast.Call]]
    _callee_classes: Dict[ast.Call, Optional[str]]
    _bound: Dict[ast.Name, Optional[Binding]]

    if TYPE_CHECKING:  # provided by LintContext and CallerResolution

        def qualname(self, expr: ast.AST) -> Optional[str]: ...
        def scope_chain(self, node: ast.AST) -> List[ast.AST]: ...
        def enclosing_function(self, node: ast.AST) -> Optional[Function]: ...
        def enclosing_class(self, func: ast.AST) -> Optional[ast.ClassDef]: ...
        def argument_for(self, param: Binding) -> Optional[ast.expr]: ...
        def ancestors(self, node: ast.AST) -> Iterator[ast.AST]: ...
        def text(self, node: ast.AST) -> str: ...
        def shared(self, key: str, factory: Any) -> Any: ...

        parents: Dict[ast.AST, ast.AST]

    def binding(self, name: ast.Name) -> Optional[Binding]:
        found = self._bound.get(name, _UNKNOWN)  # one lookup: the most asked question of all
        if found is _UNKNOWN:
            found = self._bound[name] = self.bindings.lookup(
                name.id, self.scope_chain(name), (name.lineno, name.col_offset)
            )
        return found  # type: ignore[return-value]  # never the marker: it was replaced above

    def alternatives(self, name: ast.Name) -> List[Binding]:
        """The bindings of ``name`` that may hold where it is read, ``binding(name)`` first:
        ``model`` after ``if a: model = A() else: model = B()`` is an A or a B."""
        first = self.binding(name)
        if first is None:
            return []
        chain = self.scope_chain(name)
        if (
            self.bindings.binds_here(name.id, chain[0])
            and first.pos <= (name.lineno, name.col_offset)
            and self._dominates(first.stmt, name)
        ):
            return [first]  # the common case, answered without looking at the other bindings
        found = self.bindings.reaching(
            name.id, chain, (name.lineno, name.col_offset), lambda b: self._dominates(b.stmt, name)
        )
        if first in found:
            found.remove(first)
            found.insert(0, first)
        return found

    def _dominates(self, stmt: ast.AST, use: ast.AST) -> bool:
        """Whether every path to ``use`` runs ``stmt``: ``stmt`` is in a block (a statement
        list) that also holds ``use`` or a statement around it."""
        home = self.parents.get(stmt)
        while isinstance(home, (ast.With, ast.AsyncWith)) and stmt in home.body:
            stmt, home = home, self.parents.get(home)  # a ``with`` body always runs: the ``with`` decides
        if home is None:
            return True
        node: Optional[ast.AST] = use
        while node is not None:
            if node is stmt:
                return True
            parent = self.parents.get(node)
            if parent is home and isinstance(node, ast.stmt):
                return _same_block(home, stmt, node)
            node = parent
        return False

    def conditions(self, node: ast.AST) -> Dict[str, bool]:
        """The ``if`` tests around ``node`` in its function, by source text, each with whether
        ``node`` runs when the test is true (``if not c`` counts as ``c`` false)."""
        found: Dict[str, bool] = {}
        child: ast.AST = node
        for anc in self.ancestors(node):
            if isinstance(anc, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                break
            if isinstance(anc, ast.If) and child is not anc.test:
                test, side = anc.test, child in anc.body
                while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
                    test, side = test.operand, not side
                found.setdefault(self.text(test), side)
            child = anc
        return found

    def never_together(self, a: ast.AST, b: ast.AST) -> bool:
        """Whether ``a`` and ``b`` run under opposite outcomes of the same test: ``if
        args.use_optimizer: opt.step()`` and, elsewhere, ``if args.use_optimizer: ... else:
        model.zero_grad()`` (the flag is not reassigned in between, as for parsed arguments)."""
        first = self.conditions(a)
        return any(first.get(test, side) != side for test, side in self.conditions(b).items())

    def exclusive(self, a: ast.AST, b: ast.AST) -> bool:
        """Whether ``a`` and ``b`` are in different branches of one ``if`` (never both run)."""
        around_a = {}
        child: ast.AST = a
        for anc in self.ancestors(a):
            if isinstance(anc, ast.If):
                around_a[anc] = child in anc.body
            child = anc
        child = b
        for anc in self.ancestors(b):
            if anc in around_a:
                return isinstance(anc, ast.If) and around_a[anc] != (child in anc.body) and child is not anc.test
            child = anc
        return False

    def self_attr_binding(self, attr: ast.Attribute) -> Optional[Binding]:
        """Resolve ``self.x`` inside a method to the assignment made in the class."""
        if not isinstance(attr.value, ast.Name):
            return None
        func = self.enclosing_function(attr)
        while func is not None:
            owner = self.enclosing_class(func)
            if owner is not None:
                args = func.args.args
                if args and args[0].arg == attr.value.id:
                    return self.bindings.self_attr(owner, attr.attr)
                return None
            func = self.enclosing_function(func)
        return None

    def _instance_attr_binding(self, attr: ast.Attribute, depth: int) -> Optional[Binding]:
        """``net.fc`` where ``net = Net()`` and ``Net.__init__`` sets ``self.fc``."""
        if not isinstance(attr.value, ast.Name) or self.imports.is_module_alias(attr.value.id) or depth >= _MAX_DEPTH:
            return None
        owner = self.local_class(self.class_of(attr.value))
        if owner is None:
            return None
        return self.bindings.self_attr(owner, attr.attr)

    def value_of(self, expr: Optional[ast.expr], depth: int = 0) -> Optional[ast.expr]:
        """Follow names and ``self.x`` to the expression last assigned to them.

        Returns ``expr`` itself when it is not a name, and None when the trail is lost.
        """
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return expr
        if depth == 0:
            if expr not in self._values:
                self._values[expr] = self._follow(expr, 0)
            return self._values[expr]
        return self._follow(expr, depth)

    def _follow(self, expr: Optional[ast.expr], depth: int) -> Optional[ast.expr]:
        while depth < _MAX_DEPTH:
            if isinstance(expr, ast.Name):
                bound = self.binding(expr)
            elif isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
                bound = self.self_attr_binding(expr) or self._instance_attr_binding(expr, depth)
                if bound is None:
                    return expr
            else:
                return expr
            if bound is not None and bound.kind == "param" and bound.value is None:
                expr = self.argument_for(bound)
                if expr is None:
                    return None
                depth += 1
                continue
            if bound is None or bound.value is None:
                return None
            expr = bound.value
            depth += 1
        return None

    def construction_of(self, expr: Optional[ast.expr], depth: int = 0) -> Optional[ast.Call]:
        """The call that built the object ``expr`` refers to, through names, ``self.x``,
        module methods that return ``self`` (``.to(device)``) and wrappers (``torch.compile``)."""
        if depth > _MAX_DEPTH or expr is None:
            return None
        if depth == 0:
            if expr not in self._constructions:
                self._constructions[expr] = None  # recursion guard
                try:
                    self._constructions[expr] = self._construction(expr, 0)
                except BaseException:
                    # a RecursionError must not leave the guard behind as the answer: a later
                    # rule asking again would quietly get None and its findings would depend on
                    # which rule asked first
                    del self._constructions[expr]
                    raise
            return self._constructions[expr]
        return self._construction(expr, depth)

    def _construction(self, expr: ast.expr, depth: int) -> Optional[ast.Call]:
        value = self.value_of(expr)
        if not isinstance(value, ast.Call):
            return None
        func = value.func
        if isinstance(func, ast.Attribute) and func.attr in _SELF_RETURNING and self.qualname(func) is None:
            inner = self.construction_of(func.value, depth + 1)
            if inner is not None:
                return inner
        if self.qualname(func) in _WRAPPERS and value.args:
            return self.construction_of(value.args[0], depth + 1)
        return value

    def class_of(self, expr: Optional[ast.expr]) -> Optional[str]:
        """The class of the object ``expr`` refers to: a qualified name for imported classes
        (``torch.nn.CrossEntropyLoss``), ``local:Net`` for classes defined in this file."""
        call = self.construction_of(expr)
        if call is None:
            return None
        return self.callee_class(call)

    def callee_class(self, call: ast.Call) -> Optional[str]:
        """What ``call`` instantiates, if its callee names a class we can identify; an
        alternative constructor (``GPT.from_pretrained(...)``) builds its class. Memoised: the
        loader and sampler rules each ask it of every call in the file."""
        cache = self._callee_classes
        if call in cache:
            return cache[call]
        found = cache[call] = self._callee_class(call)
        return found

    def _callee_class(self, call: ast.Call) -> Optional[str]:
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in ALTERNATIVE_CONSTRUCTORS:
            inner = self.qualname(func.value)
            if isinstance(func.value, ast.Name) and func.value.id in self.classes:
                return "local:" + func.value.id
            if inner is not None and self.is_project_class(inner):
                return inner
        qual = self.qualname(func)
        if qual is not None:
            return qual
        if isinstance(func, ast.Name) and func.id in self.classes:
            return "local:" + func.id
        if isinstance(func, ast.Name) and self.star_imports and func.id[:1].isupper():
            # ``from utils import *``, then ``AverageMeter()``: a class utils.py defines
            return self.project.star_class(cast("LintContext", self), func.id)
        return None

    def local_class(self, class_name: Optional[str]) -> Optional[ast.ClassDef]:
        """The definition of a class of this project: ``local:Net`` in this file, or an import
        from another file of the project (``model.GPT``, ``.model.GPT``). Analyse a class found
        in another file with ``context_for(cls)``, which knows that file's imports."""
        if not class_name:
            return None
        if class_name.startswith("local:"):
            return self.classes.get(class_name[len("local:") :])
        if self._library(class_name):
            return None
        found = self.project.find_class(class_name, self.path)
        if found is None:
            return None
        ctx, cls = found
        self._foreign[cls] = ctx
        return cls

    def is_project_class(self, class_name: Optional[str]) -> bool:
        """Whether ``class_name`` names a class of the user's own code: defined here, imported
        relatively, or from a module that is a file of the project (not an installed library)."""
        if not class_name or self._library(class_name):
            return False
        if class_name.startswith(("local:", ".")):
            return True
        return self.project.has_module(class_name.rpartition(".")[0], self.path)

    def _library(self, class_name: str) -> bool:
        """A class of an installed library, unless a file of the script's own folder has the
        library's name (``datasets.py`` beside ``train.py``): Python imports that file first."""
        if not class_name.startswith(LIBRARIES):
            return False
        top = class_name.split(".", 1)[0]
        if top.startswith("torch") or not self.path:
            return True
        shadowed: Dict[str, bool] = self.shared("values.shadowed_libraries", dict)
        if top not in shadowed:
            here = os.path.dirname(os.path.abspath(self.path))
            shadowed[top] = os.path.isfile(os.path.join(here, top + ".py")) or os.path.isfile(
                os.path.join(here, top, "__init__.py")
            )
        return not shadowed[top]

    def base_names(self, cls: ast.ClassDef) -> List[str]:
        """Qualified names of a class's bases, local bases as ``local:Name``, transitively."""
        names: List[str] = []
        seen = set()
        stack = [cls]
        while stack:
            current = stack.pop()
            if current.name in seen:
                continue
            seen.add(current.name)
            for base in current.bases:
                qual = self.qualname(base)
                if qual:
                    names.append(qual)
                elif isinstance(base, ast.Name) and base.id in self.classes:
                    names.append("local:" + base.id)
                    stack.append(self.classes[base.id])
                elif isinstance(base, (ast.Name, ast.Attribute)):
                    names.append(base.id if isinstance(base, ast.Name) else base.attr)
        return names

    def is_module_class(self, cls: ast.ClassDef) -> bool:
        """Whether ``cls`` derives from ``nn.Module`` (or a Lightning module), as far as we see."""
        for base in self.base_names(cls):
            last = base.rsplit(".", 1)[-1]
            if last in ("Module", "LightningModule", "Sequential", "ModuleList"):
                return True
        return any(isinstance(item, ast.FunctionDef) and item.name == "forward" for item in cls.body)

    def method(self, cls: ast.ClassDef, name: str) -> Optional[Function]:
        for item in cls.body:
            if isinstance(item, FUNCTIONS) and item.name == name:
                return item
        return None
