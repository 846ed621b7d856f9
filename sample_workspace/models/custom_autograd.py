"""A model with a hand-written backward that is subtly wrong.

``SwishFn`` computes swish(x) = x * sigmoid(beta * x) with a learnable ``beta``.
Its backward for ``x`` is right; the one for ``beta`` forgets the (1 - sigmoid)
factor of the sigmoid's derivative. Training still runs and the loss still moves,
so nothing crashes; the Gradient check names ``act.beta`` and ``SwishFn``.
"""

import torch
import torch.nn as nn


class SwishFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, beta):
        s = torch.sigmoid(beta * x)
        ctx.save_for_backward(x, beta, s)
        return x * s

    @staticmethod
    def backward(ctx, grad_out):
        x, beta, s = ctx.saved_tensors
        grad_x = grad_out * (s + beta * x * s * (1 - s))  # right
        grad_beta = (grad_out * x * x * s).sum().reshape(beta.shape)  # BUG: missing * (1 - s)
        return grad_x, grad_beta


class LearnableSwish(nn.Module):
    def __init__(self):
        super().__init__()
        self.beta = nn.Parameter(torch.ones(1))

    def forward(self, x):
        return SwishFn.apply(x, self.beta)


class SwishNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 64)
        self.act = LearnableSwish()
        self.fc2 = nn.Linear(64, 3)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))
