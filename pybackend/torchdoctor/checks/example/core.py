"""What the example modules produce (:class:`Example`) and raise (:class:`ExampleError`).

An example is a model, the arguments of one forward call (positional ``inputs`` and keyword
``kwargs``, any nesting of tuples, lists and dicts of tensors) and the loss, in one of three ways
(``loss_sees``):

- ``"output"``: ``loss_fn(first output tensor, targets)`` (a loss we chose, or the old contract's);
- ``"all"``: ``loss_fn(whatever forward returned, targets)`` (a VAE's recon + KL needs mu, logvar);
- ``"model"``: the forward computes its own loss (nanoGPT's ``(logits, loss)``, a Hugging Face
  ``ModelOutput`` with ``.loss``); the targets go in as the keyword ``target_kwarg`` when the
  forward takes them (``targets=``), and serve the accuracy.

The checks use three calls that work for all three: ``out = ex.output()``, ``ex.loss(out)`` (a
scalar tensor) and ``ex.prediction(out)`` (the tensor that accuracy and shapes are read from).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from .. import result as R

EXAMPLE_FILE = "torchdoctor_example.py"  # a sibling of the user's file that holds torchdoctor_example()
OUTPUT, ALL, MODEL = "output", "all", "model"  # what the loss sees


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
    """A model, its forward arguments, its targets and the loss that joins them."""

    model: Any
    inputs: tuple
    targets: Any = None
    loss_fn: Callable | None = None
    loss_name: str | None = None  # "cross-entropy" | "mse" | "custom" | "model"
    source: str = "inferred"  # or "torchdoctor_example"
    inferred: list = field(default_factory=list)
    kwargs: dict = field(default_factory=dict)
    loss_sees: str = OUTPUT  # OUTPUT | ALL | MODEL, see the module docstring
    target_kwarg: str | None = None  # the forward's keyword the targets are passed as (own-loss models)

    def call_kwargs(self, kwargs: dict | None = None) -> dict:
        """The keyword arguments of the forward call: the example's, and the targets for an own-loss model."""
        kw = dict(self.kwargs if kwargs is None else kwargs)
        if self.target_kwarg is not None:
            kw[self.target_kwarg] = self.targets
        return kw

    def forward(self, model=None, inputs: tuple | None = None, kwargs: dict | None = None):
        """One forward call with the example's arguments; whatever the model returns."""
        model = self.model if model is None else model
        return model(*(self.inputs if inputs is None else inputs), **self.call_kwargs(kwargs))

    def output(self, model=None, inputs: tuple | None = None, kwargs: dict | None = None):
        """What :meth:`loss` takes: the first output tensor, or the whole return when the loss needs it."""
        out = self.forward(model, inputs, kwargs)
        return pick_output(out) if self.loss_sees == OUTPUT else out

    def loss(self, output, targets=None):
        if self.loss_sees == MODEL:
            return model_loss(output)
        if self.loss_fn is None:
            raise ExampleError(R.ERR_INTERNAL, "no loss: complete() was not called on this example")
        if self.loss_sees == OUTPUT and not _is_tensor(output):
            output = pick_output(output)
        return self.loss_fn(output, self.targets if targets is None else targets)

    def prediction(self, output):
        """The tensor the model predicts with (logits, not the loss), for accuracy and shapes."""
        return output if _is_tensor(output) else pick_output(output)

    @property
    def is_classification(self) -> bool:
        t = self.targets
        return _is_tensor(t) and not t.is_floating_point() and not t.is_complex() and t.dim() >= 1

    def batch_size(self) -> int | None:
        """The first dimension of the first positional tensor; with keyword inputs only (a Hugging Face
        ``**batch``), the first dimension they all share (labels included), None when they disagree: a
        keyword's order says nothing, and ``position_ids`` of shape (1, T) is no batch of 1."""
        for x in tensors_in(self.inputs):
            return int(x.shape[0]) if x.dim() else None
        firsts = {int(x.shape[0]) for x in tensors_in(self.call_kwargs()) if x.dim()}
        return firsts.pop() if len(firsts) == 1 else None

    def describe(self) -> dict:
        t = self.targets
        return {
            "source": self.source,
            # positional arguments, then keyword arguments (inputNames: None for a positional one)
            "inputShapes": [shape_of(x) for x in self.inputs] + [shape_of(v) for v in self.kwargs.values()],
            "inputDtypes": [dtype_of(x) for x in self.inputs] + [dtype_of(v) for v in self.kwargs.values()],
            "inputNames": [None] * len(self.inputs) + [str(k) for k in self.kwargs],
            "targetShape": list(t.shape) if _is_tensor(t) else None,
            "targetDtype": str(t.dtype) if _is_tensor(t) else None,
            "loss": self.loss_name,
        }


def _is_tensor(x) -> bool:
    import torch

    return isinstance(x, torch.Tensor)


def shape_of(x):
    """A tensor's shape as a list; nested tuples/lists/dicts of tensors keep their structure."""
    if _is_tensor(x):
        return list(x.shape)
    if isinstance(x, dict):
        return {str(k): shape_of(v) for k, v in x.items()}
    if isinstance(x, (tuple, list)):
        return [shape_of(v) for v in x]
    return None


def dtype_of(x) -> str:
    if _is_tensor(x):
        return str(x.dtype)
    found = list(tensors_in(x))
    return "/".join(sorted({str(t.dtype) for t in found})) if found else type(x).__name__


def tensors_in(obj):
    """Every tensor in a nest of tuples, lists and dicts (a ``ModelOutput`` is a dict), in order."""
    if _is_tensor(obj):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from tensors_in(v)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            yield from tensors_in(v)


def map_tensors(obj, fn):
    """The same nest with ``fn`` applied to every tensor (e.g. ``.double()`` for the gradient check)."""
    if _is_tensor(obj):
        return fn(obj)
    if isinstance(obj, dict):
        return {k: map_tensors(v, fn) for k, v in obj.items()}
    if isinstance(obj, tuple):
        return tuple(map_tensors(v, fn) for v in obj)
    if isinstance(obj, list):
        return [map_tensors(v, fn) for v in obj]
    return obj


def pick_output(out):
    """The tensor a loss or an accuracy is computed on: ``logits`` of a dict / ``ModelOutput``, else the
    first tensor that is not a scalar (nanoGPT's ``(logits, loss)``, an RNN's ``(output, hidden)``)."""
    if _is_tensor(out):
        return out
    if isinstance(out, dict) and _is_tensor(out.get("logits")):
        return out["logits"]
    found = list(tensors_in(out))
    for v in found:
        if v.dim() > 0:
            return v
    if found:
        return found[0]
    raise ExampleError(
        R.ERR_BAD_EXAMPLE, f"the forward returned {type(out).__name__}, not a tensor Torch Doctor can put a loss on"
    )


def own_loss(out):
    """The loss a forward returned, or None: ``out["loss"]`` / ``out.loss`` of a dict or ``ModelOutput``,
    else the scalar tensor next to others in a tuple (nanoGPT's ``(logits, loss)``)."""
    if isinstance(out, dict):
        v = out.get("loss")
        return v if _is_tensor(v) and v.dim() == 0 else None
    if isinstance(out, (tuple, list)) and len(out) >= 2:
        for v in out:
            if _is_tensor(v) and v.dim() == 0 and v.is_floating_point():
                return v
    return None


def model_loss(out, targets=None):
    """The model's own loss (the loss function of a ``loss_sees == "model"`` example)."""
    loss = own_loss(out)
    if loss is None:
        raise ExampleError(
            R.ERR_BAD_EXAMPLE,
            f'the example says "loss": "model", but the forward returned {type(out).__name__} without a loss '
            '(a scalar tensor next to the logits, or a "loss" key / .loss attribute)',
        )
    return loss


def class_dim(output, targets) -> int | None:
    """Where the classes are in ``output`` for integer ``targets``: 1 (torch's ``(B, C, ...)``, also
    ``(B, C)``), -1 (a language model's ``(B, T, V)`` against ``(B, T)``), or None (no match)."""
    if not (_is_tensor(output) and _is_tensor(targets)) or output.dim() != targets.dim() + 1 or output.dim() < 2:
        return None
    if output.shape[0] == targets.shape[0] and output.shape[2:] == targets.shape[1:]:
        return 1
    if output.shape[:-1] == targets.shape:
        return -1
    return None


def cross_entropy(output, targets):
    """``F.cross_entropy`` for both layouts: ``(B, C, ...)`` and a language model's ``(B, T, V)``."""
    import torch.nn.functional as F

    if class_dim(output, targets) == -1 and output.dim() > 2:
        return F.cross_entropy(output.reshape(-1, output.shape[-1]), targets.reshape(-1))
    return F.cross_entropy(output, targets)
