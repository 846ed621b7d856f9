"""What the example modules produce (:class:`Example`) and raise (:class:`ExampleError`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .. import result as R

EXAMPLE_FILE = "torchdoctor_example.py"  # a sibling of the user's file that holds torchdoctor_example()


class ExampleError(Exception):
    """No model or no batch: ``kind`` is one of ``result.ERR_*``; ``snippet`` is code to add."""

    def __init__(self, kind: str, message: str, *, detail: str = "", snippet: str | None = None, inferred=None):
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.detail = detail
        self.snippet = snippet
        self.inferred = list(inferred or [])


@dataclass
class Example:
    """A model, its forward inputs, its targets and the loss that joins them."""

    model: Any
    inputs: tuple
    targets: Any = None
    loss_fn: Callable | None = None
    loss_name: str | None = None  # "cross-entropy" | "mse" | "custom"
    source: str = "inferred"  # or "torchdoctor_example"
    inferred: list = field(default_factory=list)

    def output(self, model=None, inputs: tuple | None = None):
        """Run the forward and return the output tensor (the first tensor of a tuple/dict)."""
        out = (self.model if model is None else model)(*(self.inputs if inputs is None else inputs))
        return pick_output(out)

    def loss(self, output, targets=None):
        return self.loss_fn(output, self.targets if targets is None else targets)

    @property
    def is_classification(self) -> bool:
        return self.targets is not None and not self.targets.is_floating_point() and self.targets.dim() >= 1

    def describe(self) -> dict:
        t = self.targets
        return {
            "source": self.source,
            "inputShapes": [list(x.shape) if hasattr(x, "shape") else None for x in self.inputs],
            "inputDtypes": [str(x.dtype) if hasattr(x, "dtype") else type(x).__name__ for x in self.inputs],
            "targetShape": list(t.shape) if t is not None else None,
            "targetDtype": str(t.dtype) if t is not None else None,
            "loss": self.loss_name,
        }


def pick_output(out):
    """The tensor a loss is computed on: models may return tuples or dicts."""
    import torch

    if isinstance(out, torch.Tensor):
        return out
    values = out.values() if isinstance(out, dict) else out if isinstance(out, (tuple, list)) else ()
    for v in values:
        if isinstance(v, torch.Tensor):
            return v
    raise ExampleError(
        R.ERR_BAD_EXAMPLE, f"the forward returned {type(out).__name__}, not a tensor Torch Doctor can put a loss on"
    )
