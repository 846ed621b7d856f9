"""``names.ImportMap``: a name imported twice means what its last import says, as when the module
runs, whatever order the context's walk hands the imports over in (it visits the last statement
first)."""

import ast

from support.lint import code
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.names import ImportMap
from torchdoctor.lint.source import SourceText

TWICE = """
import torch.nn.functional as F
import torch
F = None
from torch.nn import functional as F
import numpy as np
from torch import nn as np
"""


def _imports(text):
    return [node for node in ast.walk(ast.parse(code(text))) if isinstance(node, (ast.Import, ast.ImportFrom))]


def test_the_last_import_of_a_name_wins_in_any_order_given():
    nodes = _imports(TWICE)
    for order in (nodes, nodes[::-1]):
        aliases = ImportMap(order).aliases
        assert aliases["np"] == "torch.nn" and aliases["F"] == "torch.nn.functional"


def test_the_context_reads_its_imports_so_too():
    text = code(TWICE)
    ctx = LintContext(ast.parse(text), SourceText(text))
    assert ctx.imports.aliases["np"] == "torch.nn"
