"""Bug: dead ReLUs from a bad initialisation, seen in the gradient-flow view.

Every Linear starts with weight -1 and bias -5 (seed 002's broken network 2): from the second
hidden layer on, every pre-activation is negative, so `act2` outputs only zeros. No gradient
flows back through it: `fc2` and `fc1` get gradients of exactly 0 and never learn; only `out`
(its bias) moves. The loss sits near ln 2. Nothing crashes.

Set a breakpoint on the marked line, run "Debug current file", then
"Torch Doctor: Show Gradient Flow". It says:

- `act2` (ReLU): 100% of its 32 units output exactly 0 for every sample: dead units (verdict,
  warning), with the next step: re-initialise `fc2` (Kaiming) or switch to LeakyReLU. (`act1`
  is not dead: 97% of its outputs are 0, but each unit fires for a few samples.)
- `fc1.weight`, `fc1.bias`, `fc2.weight`, `fc2.bias`, `out.weight`: every gradient value is
  exactly 0 (vanishing), pointing at the dead ReLU; the `fc2` rows also say they feed it.
- `out` (Linear): its output is the same for every sample (collapsed activations).
"""

import torch
from torch import nn


class DeadMLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.act1 = nn.ReLU()
        self.fc2 = nn.Linear(32, 32)
        self.act2 = nn.ReLU()
        self.out = nn.Linear(32, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.act2(self.fc2(self.act1(self.fc1(x)))))


def bad_init(model: nn.Module) -> None:
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.Linear):
                m.weight.fill_(-1.0)  # the bug
                m.bias.fill_(-5.0)


def main(steps: int = 5) -> float:
    torch.manual_seed(42)
    x = torch.randn(64, 10)
    y = (x[:, 0] > 0).long()
    model = DeadMLP()
    bad_init(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    loss = torch.tensor(0.0)
    for step in range(steps):
        optimizer.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        dead = float((model.fc2.weight.grad == 0).float().mean())  # Set a breakpoint here (after backward)
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}, fc2 gradients exactly 0: {dead:.0%}")
    return loss.item()


if __name__ == "__main__":
    main()
