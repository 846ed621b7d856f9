// Tracebacks and source lookup of a check result (extension/src/checks/traceback.ts).
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import { findSymbolLine, parseTraceback } from '../../../../extension/src/checks/traceback';

const SOURCE = `import torch
from torch import nn


class SwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        return x

    @staticmethod
    def backward(ctx, grad):
        return grad, None


class SwishNet(nn.Module):
    scale: float = 1.0

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.act: nn.Module = LearnableSwish()
        # self.fc2 is below
        self.fc2 = nn.Linear(64, 3)

    def forward(self, x):
        if self.fc1 == None:
            pass
        return self.fc2(self.act(self.fc1(x)))


def fc1():
    pass
`;

test('findSymbolLine: a class, its layers, a method, a class attribute; the class when a member is missing', () => {
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet' }), 14);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet', member: 'fc1' }), 19);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet', member: 'act' }), 20);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet', member: 'fc2' }), 22);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet', member: 'scale' }), 15);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishFn', member: 'backward' }), 10);
  assert.equal(findSymbolLine(SOURCE, { className: 'SwishNet', member: 'nothere' }), 14);
  assert.equal(findSymbolLine(SOURCE, { className: 'Outer.SwishNet' }), 14);
  assert.equal(findSymbolLine(SOURCE, { className: 'Missing' }), null);
  assert.equal(findSymbolLine(SOURCE, { className: 'Swish' }), null, 'whole names only');
});

test('parseTraceback ignores text that is not a frame', () => {
  assert.deepEqual(parseTraceback(''), []);
  assert.deepEqual(
    parseTraceback('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\nValueError: x').map((f) => f.user),
    [false],
  );
});
