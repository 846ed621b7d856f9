"""Static analysis of PyTorch training code: the bugs that never crash, found in the source.

Pure ``ast``; never imports torch. Entry points:

- ``lint_source(text, path=None, disabled=())`` -> ``LintResult`` (never raises);
- ``all_rules()`` / ``get_rule(id)``: the registry, with each rule's explanation;
- ``torchdoctor lint PATH...`` on the command line (``lint.cli``).

What lives here: ``engine`` (parse, run the rules, collect findings), ``registry`` and ``rules/``
(one module per rule), ``context`` (one parsed file: tree index, scopes, navigation) with its two
mixins ``values`` (what a name or ``self.x`` holds, which class built it) and ``callers`` (what
callers pass for a parameter), ``bindings`` and ``names`` (assignments, imports), ``project`` (the
index of the user's other files), shared analyses (``training``, ``activations``, ``modes``,
``flow``, ``torchapi``), ``fixes``, ``ignore`` (``# torchdoctor: ignore``), ``source``, ``model``,
``background`` (a large document linted in a child process, for the language server).
May import: the standard library, ``torchdoctor.__version__`` and ``torchdoctor.background`` only; never torch or numpy,
never ``runtime``, ``server``, ``checks`` or ``diagnosis``.
"""

from __future__ import annotations

from .engine import lint_source
from .model import ERROR, HINT, INFORMATION, SYNTAX_ERROR_ID, WARNING, Finding, Fix, LintResult, Span, TextEdit
from .registry import Rule, all_rules, get_rule

__all__ = [
    "ERROR",
    "HINT",
    "INFORMATION",
    "SYNTAX_ERROR_ID",
    "WARNING",
    "Finding",
    "Fix",
    "LintResult",
    "Rule",
    "Span",
    "TextEdit",
    "all_rules",
    "get_rule",
    "lint_source",
]
