"""A model passed down a long chain of functions: the rules run out of no stack and keep their findings.

``stage1(m)`` calls ``stage0(m)``, ``stage2(m)`` calls ``stage1(m)`` ...: each level of "what is
``m`` here?" costs about ten frames, and a chain of ~130 raised RecursionError inside a rule, which
then lost every finding it had, on unrelated loops too; the guard left behind by the failed lookup
made later rules' answers depend on which rule had asked first. Past ``MAX_ARGUMENT_DEPTH`` levels
the argument is unknown instead.
"""

import textwrap

import pytest

from torchdoctor.lint import lint_source
from torchdoctor.lint.callers import MAX_ARGUMENT_DEPTH

HEAD = textwrap.dedent(
    """
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(4, 3)
            self.drop = nn.Dropout(0.2)

        def forward(self, x):
            return F.softmax(self.fc(self.drop(x)), dim=1)

    def stage0(m, loader):
        opt = torch.optim.SGD(m.parameters(), lr=0.1)
        for x, y in loader:
            opt.zero_grad()
            F.cross_entropy(m(x), y).backward()
            opt.step()
        return m
    """
)

TAIL = textwrap.dedent(
    """
    model = Net()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(3):
        for x, y in [(torch.randn(2, 4), torch.tensor([0, 1]))]:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            model(torch.randn(2, 4))
    """
)


def _chain(levels: int) -> str:
    stages = [
        f"def stage{i}(m, loader):\n    stage{i - 1}(m, loader)\n    return stage{i - 1}(m, loader)\n"
        for i in range(1, levels)
    ]
    calls = f"stage{levels - 1}(Net(), [])\nstage{levels - 1}(Net(), [])\n"
    return HEAD + "\n" + "\n".join(stages) + calls + TAIL


@pytest.mark.parametrize("levels", [8, 150])
def test_the_top_level_loop_keeps_its_findings_below_a_long_chain(levels):
    result = lint_source(_chain(levels), "train.py")
    assert result.internal_errors == []
    found = {(f.rule_id, f.line) for f in result.findings}
    lines = _chain(levels).splitlines()
    softmax_loss = next(i for i, t in enumerate(lines, 1) if "loss = F.cross_entropy(model(x), y)" in t)
    eval_line = next(i for i, t in enumerate(lines, 1) if t.strip() == "model.eval()")
    assert ("TD003", softmax_loss) in found  # Net ends in softmax: the loss squashes twice
    assert ("TD010", eval_line) in found  # eval() in the loop and no train() again


def test_a_short_chain_still_resolves_the_class_inside_it():
    # stage0's own softmax-then-cross-entropy is found through its callers (value lookups stop
    # near ten levels of their own; the stack limit above is not what cuts short chains)
    levels = 8
    assert levels < MAX_ARGUMENT_DEPTH
    result = lint_source(_chain(levels), "train.py")
    stage0_loss = next(i for i, t in enumerate(_chain(levels).splitlines(), 1) if "F.cross_entropy(m(x), y)" in t)
    assert ("TD003", stage0_loss) in {(f.rule_id, f.line) for f in result.findings}
