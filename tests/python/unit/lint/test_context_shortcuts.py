"""The index's shortcuts give what a look at every node or call gives.

Rules ask for the calls of a class, the reads of a name or the calls that may matter to them
from lists the context's walk fills (a long script has 51k calls and 130k names: reading each
node again costs a cache miss per attribute). These pin each shortcut to its definition, the
plain scan it replaces, on one file with imports under aliases, local classes and helpers.
"""

import ast

import pytest

from support.lint import code
from torchdoctor.lint import torchapi
from torchdoctor.lint.context import LintContext
from torchdoctor.lint.rules import dropout_mode, no_grad_backward, train_mode
from torchdoctor.lint.source import SourceText

SOURCE = """
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader as DL, DistributedSampler
from torch.nn.functional import dropout as drop
{extra}

class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)
        self.crit = {criterion}

    def forward(self, x):
        x = F.dropout(x, 0.5) + drop(x) + nn.Dropout(0.1)(x)
        return self.crit(self.fc(x), x.argmax(1))

def evaluate(model, loader):
    model.eval()
    with torch.no_grad():
        return [model(x) for x, _ in loader]

def train(model, loader, optimizer):
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y) + torch.nn.functional.nll_loss(model(x), y)
        loss.backward()
        optimizer.step()
    evaluate(model, loader)

model = Net().to("cuda")
sampler = DistributedSampler(range(8))
loader = DL(range(8), sampler=sampler, batch_size=2)
other = torch.utils.data.DataLoader(range(8))
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for epoch in range(2):
    sampler.set_epoch(epoch)
    train(model, loader, optimizer)
    net = Net.from_pretrained("x")
    model.train(False)
"""

VARIANTS = {
    "loss class": {"criterion": "nn.CrossEntropyLoss()", "extra": ""},
    "no loss class": {"criterion": "F.cross_entropy", "extra": ""},
    "star import": {"criterion": "nn.CrossEntropyLoss()", "extra": "from utils import *"},
}


def _context(name):
    text = code(SOURCE).format(**VARIANTS[name])
    return LintContext(ast.parse(text), SourceText(text))


def _last_name(call):
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None


@pytest.mark.parametrize("variant", VARIANTS)
def test_calls_by_name_and_class_are_the_scans_they_replace(variant):
    ctx = _context(variant)
    for name in ("DL", "DataLoader", "step", "eval", "Net", "from_pretrained", "missing"):
        assert ctx.calls_named(name) == [c for c in ctx.calls if _last_name(c) == name]
    classes = [
        ["torch.utils.data.DataLoader"],
        ["torch.utils.data.DistributedSampler", "torch.nn.Dropout"],
        ["local:Net"],
        ["torch.nn.CrossEntropyLoss", None],
        [],
    ]
    for wanted in classes:
        assert ctx.calls_of_class(wanted) == [c for c in ctx.calls if ctx.callee_class(c) in wanted]
    assert set(ctx.callee_classes()) == {ctx.callee_class(c) for c in ctx.calls}


@pytest.mark.parametrize("variant", VARIANTS)
def test_reads_and_imports_are_every_node_so_found(variant):
    ctx = _context(variant)
    reads = {}
    for node in ctx.parents:  # the index's order
        if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load):
            key = node.id if isinstance(node, ast.Name) else "." + node.attr
            reads.setdefault(key, []).append(node)
    assert ctx.loads == reads and list(ctx.loads) == list(reads)
    assert no_grad_backward._loads_by_key(ctx) == ctx.loads  # TD013's own scan, for the files below
    imports = [n for n in ast.walk(ctx.tree) if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert set(ctx.import_nodes) == set(imports)


def test_reads_are_left_to_td013_where_the_text_names_no_grad_mode():
    text = code("import torch\nx = torch.zeros(2)\ny = x.sum() + x\n")
    ctx = LintContext(ast.parse(text), SourceText(text))
    assert ctx.loads is None
    reads = no_grad_backward._loads_by_key(ctx)
    assert {key: [n.lineno for n in nodes] for key, nodes in reads.items()} == {
        "torch": [2],
        ".zeros": [2],
        "x": [3, 3],
        ".sum": [3],
    }


@pytest.mark.parametrize("variant", VARIANTS)
def test_rules_skip_only_calls_that_cannot_matter(variant):
    ctx = _context(variant)
    every_loss = [(c, *found) for c in ctx.calls for found in [torchapi._loss_call(ctx, c)] if found is not None]
    assert torchapi.loss_calls(ctx) == every_loss
    assert len(every_loss) == (2 if variant == "no loss class" else 3)  # with the module: self.crit(...)
    dropouts = set(dropout_mode._candidates(ctx))
    for call in ctx.calls:
        inline = isinstance(call.func, ast.Call) and ctx.callee_class(call.func) in dropout_mode._MODULES
        if ctx.qualname(call.func) in dropout_mode._FUNCTIONAL or inline:
            assert call in dropouts
    interesting = train_mode._switches_or_helpers(ctx)
    for call in ctx.calls:
        if train_mode.switch_of(call) is not None or train_mode._helper(ctx, call) is not None:
            assert call in interesting
