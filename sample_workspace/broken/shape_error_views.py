"""Bug: a flatten size that does not match the next Linear, seen in the shape-trace view.

``LeNetish`` (``models/shape_mismatch.py``) sizes ``fc1`` for 16 x 5 x 5 features, but its 3x3
convolutions leave 16 x 6 x 6 = 576: the first forward raises ``RuntimeError: mat1 and mat2
shapes cannot be multiplied (8x576 and 400x32)`` inside ``fc1``.

Run it with "Debug current file" and "Uncaught Exceptions" ticked in the Breakpoints view (the
default): the debugger stops at the exception. "Torch Doctor: Show Shape Trace" then shows
LeNetish -> conv1 (8, 6, 30, 30) -> conv2 (8, 16, 13, 13) -> fc1, marked as the failing module
with the error and the fix in plain words (use nn.Linear(576, ...) or fix the reshape);
clicking `fc1` opens its ``self.fc1 = nn.Linear(...)`` line.
"""

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the workspace, for `models`
from models.shape_mismatch import LeNetish  # noqa: E402


def main() -> None:
    torch.manual_seed(0)
    model = LeNetish()
    images = torch.randn(8, 3, 32, 32)
    logits = model(images)  # raises in fc1: the debugger stops here (uncaught exception)
    print(logits.shape)


if __name__ == "__main__":
    main()
