"""The model and one batch a check runs on (worker side: imports torch).

Two ways, the first wins:

1. The user's own example, a function named ``torchdoctor_example`` in the file
   or in a sibling file ``torchdoctor_example.py``::

       def torchdoctor_example():            # or torchdoctor_example(class_name)
           model = Net(hidden=32)
           inputs = torch.randn(8, 20)         # a tuple of tensors for forward(a, b)
           targets = torch.randint(0, 10, (8,))
           return model, (inputs, targets)     # optionally a third item: loss_fn(output, targets)

   ``targets`` may be None: the target and the loss are then inferred as below.

2. Inference: construct the class with no arguments; the input from the first
   layer (Linear in_features; Conv1d/2d/3d in_channels at a default spatial size
   of 64 / 32x32 / 16x16x16; Embedding integer indices of length 16; RNN/LSTM/GRU
   input_size, 16 steps); the loss from the output: (B, C) with C >= 2 gives
   cross-entropy with random classes, anything else MSE against random targets.

Every guess is written in ``Example.inferred`` so the result can say it. When a
guess is impossible, :class:`ExampleError` says exactly why, with the snippet to add.
All random draws use a private ``torch.Generator``.
"""

from __future__ import annotations

import importlib.util
import inspect
import os
import sys
import traceback
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Callable

from . import result as R
from .discovery import EXAMPLE_FUNCTION

DEFAULT_BATCH = 8
DEFAULT_SPATIAL = {1: 64, 2: 32, 3: 16}  # Conv1d length, Conv2d HxW, Conv3d DxHxW
DEFAULT_SEQ_LEN = 16
EXAMPLE_FILE = "torchdoctor_example.py"


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
    raise ExampleError(R.ERR_BAD_EXAMPLE, f"the forward returned {type(out).__name__}, not a tensor Torch Doctor can put a loss on")


# --- loading the user's file -------------------------------------------------------------


def load_user_module(path: str, source: str | None = None) -> ModuleType:
    """Import the user's file as a module named after it, so a sibling ``torchdoctor_example.py``
    that does ``from <stem> import Net`` gets the very same class objects."""
    path = os.path.abspath(path)
    if source is None:
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise ExampleError(R.ERR_USAGE, f"cannot read {path}: {exc}") from None
    try:
        code = compile(source, path, "exec")
    except SyntaxError as exc:
        raise _syntax_error(exc, path, source) from None
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # sibling imports work as when the user runs the file
    stem = os.path.splitext(os.path.basename(path))[0]
    name = stem if stem.isidentifier() and stem not in sys.modules else "torchdoctor_user_module"
    module = ModuleType(name)
    module.__file__ = path
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as exc:  # the user's module-level code raised: say where
        del sys.modules[name]
        raise ExampleError(
            R.ERR_IMPORT,
            f"importing {os.path.basename(path)} raised {type(exc).__name__}: {exc}",
            detail=_user_traceback(exc),
        ) from None
    return module


def _syntax_error(exc: SyntaxError, path: str, source: str) -> ExampleError:
    """Line and column, and the line itself with a caret (from the text we compiled, not from disk)."""
    lines = source.splitlines()
    line = lines[exc.lineno - 1] if exc.lineno and 0 < exc.lineno <= len(lines) else ""
    caret = " " * max((exc.offset or 1) - 1, 0) + "^"
    where = f"line {exc.lineno}, column {exc.offset}" if exc.lineno else "an unknown position"
    return ExampleError(R.ERR_SYNTAX, f"{os.path.basename(path)} has a syntax error at {where}: {exc.msg}", detail=f"{line}\n{caret}" if line else "")


def _user_traceback(exc: BaseException) -> str:
    """The traceback without the worker's own frames above the user's code."""
    frames = traceback.extract_tb(exc.__traceback__)
    first_user = next((i for i, f in enumerate(frames) if not f.filename.startswith(_THIS_DIR)), 0)
    lines = traceback.format_list(frames[first_user:])
    return "Traceback (most recent call last):\n" + "".join(lines) + f"{type(exc).__name__}: {exc}"


_THIS_DIR = os.path.dirname(os.path.abspath(__file__))


def find_class(module: ModuleType, class_name: str):
    import torch

    obj: Any = module
    for part in class_name.split("."):
        obj = getattr(obj, part, None)
    if not (inspect.isclass(obj) and issubclass(obj, torch.nn.Module)):
        found = [n for n, v in vars(module).items() if inspect.isclass(v) and issubclass(v, torch.nn.Module) and v.__module__ == module.__name__]
        raise ExampleError(
            R.ERR_NO_CLASS,
            f"{class_name} is not an nn.Module class of {os.path.basename(module.__file__ or '?')}"
            + (f" (module classes there: {', '.join(found)})" if found else ""),
        )
    return obj


# --- the user's torchdoctor_example() -------------------------------------------------------


def user_example_function(module: ModuleType) -> tuple[Callable | None, str]:
    """``torchdoctor_example`` from the file, else from a sibling ``torchdoctor_example.py``."""
    fn = getattr(module, EXAMPLE_FUNCTION, None)
    if callable(fn):
        return fn, os.path.basename(module.__file__ or "")
    sibling = os.path.join(os.path.dirname(module.__file__ or "."), EXAMPLE_FILE)
    if not os.path.isfile(sibling):
        return None, ""
    spec = importlib.util.spec_from_file_location("torchdoctor_example", sibling)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except Exception as exc:
        raise ExampleError(R.ERR_IMPORT, f"importing {EXAMPLE_FILE} raised {type(exc).__name__}: {exc}", detail=_user_traceback(exc)) from None
    fn = getattr(mod, EXAMPLE_FUNCTION, None)
    return (fn, EXAMPLE_FILE) if callable(fn) else (None, "")


def from_user_function(fn: Callable, where: str, cls, options: dict) -> Example | None:
    """Call the user's function; None when it builds a different class (then we infer)."""
    try:
        takes_name = len(inspect.signature(fn).parameters) >= 1
        returned = fn(cls.__name__) if takes_name else fn()
    except Exception as exc:
        raise ExampleError(
            _construct_kind(exc),
            f"{EXAMPLE_FUNCTION}() in {where} raised {type(exc).__name__}: {exc}",
            detail=_user_traceback(exc),
        ) from None
    model, inputs, targets, loss_fn = _unpack_user_example(returned, where)
    if not isinstance(model, cls):
        return None
    inferred = [f"Model and batch from {EXAMPLE_FUNCTION}() in {where}."]
    ex = Example(model=model, inputs=inputs, targets=targets, loss_fn=loss_fn, source=EXAMPLE_FUNCTION, inferred=inferred)
    if loss_fn is not None:
        ex.loss_name = "custom"
        inferred.append(f"Loss: the loss_fn returned by {EXAMPLE_FUNCTION}().")
    return ex


def _unpack_user_example(returned, where: str):
    import torch

    contract = f"{EXAMPLE_FUNCTION}() in {where} must return (model, (inputs, targets)) or (model, (inputs, targets), loss_fn)"
    if not isinstance(returned, (tuple, list)) or len(returned) not in (2, 3):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; it returned {type(returned).__name__}", snippet=example_snippet("Net", [], ["x"]))
    model, batch = returned[0], returned[1]
    loss_fn = returned[2] if len(returned) == 3 else None
    if not isinstance(model, torch.nn.Module):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; its first item is a {type(model).__name__}, not an nn.Module")
    if not isinstance(batch, (tuple, list)) or len(batch) != 2:
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; its second item must be the pair (inputs, targets)")
    inputs, targets = batch
    inputs = tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; inputs must be a tensor or a tuple of tensors")
    if targets is not None and not isinstance(targets, torch.Tensor):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; targets must be a tensor or None")
    if loss_fn is not None and not callable(loss_fn):
        raise ExampleError(R.ERR_BAD_EXAMPLE, f"{contract}; loss_fn must be callable")
    return model, inputs, targets, loss_fn


# --- inference -------------------------------------------------------------------------------


def build(module: ModuleType, class_name: str, options: dict) -> Example:
    """The model and its inputs (targets not yet: the shape trace does not need them)."""
    cls = find_class(module, class_name)
    fn, where = user_example_function(module)
    notes: list[str] = []
    if fn is not None:
        ex = from_user_function(fn, where, cls, options)
        if ex is not None:
            return ex
        notes.append(f"{EXAMPLE_FUNCTION}() in {where} builds another class, not {class_name}: inferring instead.")
    model = construct(cls)
    inputs, how = infer_inputs(model, cls, options)
    return Example(model=model, inputs=inputs, source="inferred", inferred=notes + [f"Constructed {cls.__name__}() with no arguments.", how])


def construct(cls):
    required = _required_init_params(cls)
    if required:
        raise ExampleError(
            R.ERR_NEEDS_EXAMPLE,
            f"{cls.__name__}.__init__ needs arguments ({', '.join(required)}): Torch Doctor cannot guess them. "
            f"Add a {EXAMPLE_FUNCTION}() function to the file (or to a sibling {EXAMPLE_FILE}) that builds the model and one batch.",
            snippet=example_snippet(cls.__name__, required, _forward_params(cls)),
        )
    try:
        return cls()
    except Exception as exc:
        raise ExampleError(
            _construct_kind(exc),
            _construct_message(cls.__name__, exc),
            detail=_user_traceback(exc),
            snippet=example_snippet(cls.__name__, [], _forward_params(cls)),
        ) from None


def _construct_kind(exc: Exception) -> str:
    import torch

    return R.ERR_NEEDS_CUDA if "cuda" in str(exc).lower() and not torch.cuda.is_available() else R.ERR_CONSTRUCT


def _construct_message(name: str, exc: Exception) -> str:
    if _construct_kind(exc) == R.ERR_NEEDS_CUDA:
        return (
            f"{name}() needs CUDA, and the torch of this interpreter sees no GPU ({type(exc).__name__}: {exc}). "
            f"Write a {EXAMPLE_FUNCTION}() that builds the model on the CPU, or point torchDoctor.python at an interpreter with a GPU."
        )
    return f"{name}() raised {type(exc).__name__}: {exc}"


def _required_init_params(cls) -> list[str]:
    try:
        sig = inspect.signature(cls)
    except (TypeError, ValueError):
        return []
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def _forward_params(cls) -> list[str]:
    try:
        sig = inspect.signature(cls.forward)
    except (TypeError, ValueError):
        return ["x"]
    names = [p.name for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return names[1:] or ["x"]


def _required_forward_inputs(model) -> list[str]:
    try:
        sig = inspect.signature(model.forward)
    except (TypeError, ValueError):
        return ["x"]
    return [
        p.name
        for p in sig.parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]


def _generator(options: dict):
    import torch

    return torch.Generator().manual_seed(int(options.get("seed", 0)))


def infer_inputs(model, cls, options: dict) -> tuple[tuple, str]:
    """One batch for ``model`` from its first layer; the sentence says what was assumed."""
    import torch.nn as nn

    required = _required_forward_inputs(model)
    if len(required) > 1:
        raise ExampleError(
            R.ERR_NEEDS_EXAMPLE,
            f"{cls.__name__}.forward takes {len(required)} inputs ({', '.join(required)}): Torch Doctor infers a single input only. "
            f"Add a {EXAMPLE_FUNCTION}() function that returns the inputs as a tuple.",
            snippet=example_snippet(cls.__name__, [], required),
        )
    batch = int(options.get("batchSize", DEFAULT_BATCH))
    found = _first_layer(model)
    if found is None:
        raise _no_layer_error(cls, model)
    name, layer = found
    g = _generator(options)
    dtype, device = _float_dtype_and_device(model)
    where = f"first layer {name} ({type(layer).__name__}"
    if isinstance(layer, (nn.Embedding, nn.EmbeddingBag)):
        seq = int(options.get("seqLen", DEFAULT_SEQ_LEN))
        x = _randint(layer.num_embeddings, (batch, seq), g, device)
        return (x,), f"Input: integer indices of shape {tuple(x.shape)} in [0, {layer.num_embeddings}) from the {where}, num_embeddings={layer.num_embeddings})."
    if isinstance(layer, nn.RNNBase):
        seq = int(options.get("seqLen", DEFAULT_SEQ_LEN))
        shape = (batch, seq, layer.input_size) if layer.batch_first else (seq, batch, layer.input_size)
        order = "batch_first" if layer.batch_first else "sequence first, batch_first=False"
        return (_randn(shape, g, dtype, device),), f"Input: {shape} ({order}) from the {where}, input_size={layer.input_size})."
    if isinstance(layer, nn.modules.conv._ConvNd):
        dims = len(layer.kernel_size)
        size = int(options.get("spatialSize", DEFAULT_SPATIAL[dims]))
        if layer.in_channels == 0:
            raise _no_layer_error(cls, model)
        shape = (batch, layer.in_channels) + (size,) * dims
        return (_randn(shape, g, dtype, device),), (
            f"Input: {shape} (N, C{', L' if dims == 1 else ', H, W' if dims == 2 else ', D, H, W'}) from the {where}, "
            f"in_channels={layer.in_channels}); spatial size {size} is Torch Doctor's default (option spatialSize)."
        )
    if layer.in_features == 0:  # a lazy Linear decides its size on the first batch
        raise _no_layer_error(cls, model)
    shape = (batch, layer.in_features)
    return (_randn(shape, g, dtype, device),), f"Input: {shape} from the {where}, in_features={layer.in_features})."


def _first_layer(model):
    """The first layer (registration order) whose constructor says what input it takes."""
    import torch.nn as nn

    known = (nn.Linear, nn.modules.conv._ConvNd, nn.Embedding, nn.EmbeddingBag, nn.RNNBase)
    for name, m in model.named_modules():
        if isinstance(m, known) and not isinstance(m, nn.modules.lazy.LazyModuleMixin):
            return name, m
        if isinstance(m, nn.modules.lazy.LazyModuleMixin):
            return None
    return None


def _no_layer_error(cls, model) -> ExampleError:
    hidden = unregistered_layers(model)
    if hidden:  # the real bug, and the reason nothing is visible
        return ExampleError(R.ERR_NEEDS_EXAMPLE, " ".join(hidden), snippet=example_snippet(cls.__name__, [], _forward_params(cls)))
    leaves = [type(m).__name__ for m in model.modules() if not list(m.children())]
    first = leaves[0] if leaves else "none"
    return ExampleError(
        R.ERR_NEEDS_EXAMPLE,
        f"No layer of {cls.__name__} tells the input size (Torch Doctor reads it from a first Linear, Conv, Embedding or RNN layer; "
        f"the first layer here is {first}). Add a {EXAMPLE_FUNCTION}() function that builds one batch.",
        snippet=example_snippet(cls.__name__, [], _forward_params(cls)),
    )


def has_trainable_parameters(model) -> bool:
    return any(p.requires_grad for p in model.parameters())


def nothing_to_train(model, result: dict, what: str) -> dict:
    """The WARN result of a check that needs parameters, on a model that has none."""
    result["verdict"] = R.WARN
    result["headline"] = f"{type(model).__name__} has no trainable parameters: {what}."
    result["sentences"] = unregistered_layers(model) + ["Run the Overfit test: it says why the optimizer has nothing to train."]
    return result


def unregistered_layers(model) -> list[str]:
    """Sentences about layers nn.Module cannot see: modules in plain lists/dicts, bare tensors that require grad."""
    import torch

    found = []
    for m_name, module in model.named_modules():
        for attr, value in vars(module).items():
            if attr == "_modules":  # nn.Module's own registry
                continue
            where = f"`{(m_name + '.' if m_name else '') + attr}`"
            items = list(value.values()) if isinstance(value, dict) else value if isinstance(value, (list, tuple)) else ()
            if any(isinstance(v, torch.nn.Module) for v in items):
                container = "ModuleDict" if isinstance(value, dict) else "ModuleList"
                found.append(
                    f"{where} is a plain {type(value).__name__} of layers: nn.Module does not register them, so their parameters "
                    f"are not in model.parameters() and the optimizer never updates them. Use nn.{container}."
                )
            elif isinstance(value, torch.Tensor) and value.requires_grad and not isinstance(value, torch.nn.Parameter):
                found.append(f"{where} is a tensor that requires grad but is not an nn.Parameter: the optimizer never sees it.")
    return found


def _float_dtype_and_device(model):
    import torch

    for p in model.parameters():
        if p.is_floating_point():
            return p.dtype, p.device
    return torch.float32, torch.device("cpu")


def _randn(shape, g, dtype, device):
    import torch

    return torch.randn(shape, generator=g).to(dtype=dtype, device=device)


def _randint(high, shape, g, device):
    import torch

    return torch.randint(0, high, shape, generator=g).to(device)


def complete(ex: Example, options: dict) -> Example:
    """Targets and loss, inferred from one forward when the user gave none."""
    if ex.targets is not None and ex.loss_fn is not None:
        return ex
    import torch
    import torch.nn.functional as F

    try:
        with torch.no_grad():
            out = ex.output()
    except ExampleError:
        raise
    except Exception as exc:
        from .shape_trace import explain_forward_failure

        why = explain_forward_failure(ex.model, ex.inputs) or f"{type(exc).__name__}: {exc}"
        raise ExampleError(
            R.ERR_FORWARD,
            f"The forward of {type(ex.model).__name__} raises, so this check cannot run: {why} Run the Shape trace to see where.",
            detail=_user_traceback(exc),
            inferred=ex.inferred,
        ) from None
    if ex.targets is not None:  # user targets, no loss: pick one from their types
        ex.loss_fn, ex.loss_name = _loss_for_targets(out, ex.targets)
        ex.inferred.append(f"Loss: {ex.loss_name}, chosen from the output {tuple(out.shape)} and targets {tuple(ex.targets.shape)} {ex.targets.dtype}.")
        return ex
    g = _generator({"seed": int(options.get("seed", 0)) + 1})
    if out.dim() == 2 and out.shape[1] >= 2:
        ex.targets = _randint(out.shape[1], (out.shape[0],), g, out.device)
        ex.loss_fn, ex.loss_name = F.cross_entropy, "cross-entropy"
        ex.inferred.append(f"Output {tuple(out.shape)} is (batch, classes): cross-entropy against random classes in [0, {out.shape[1]}).")
    else:
        ex.targets = torch.randn(tuple(out.shape), generator=g).to(dtype=out.dtype, device=out.device)
        ex.loss_fn, ex.loss_name = F.mse_loss, "mse"
        ex.inferred.append(f"Output {tuple(out.shape)} is not (batch, classes): MSE against random targets of the same shape.")
    return ex


def _loss_for_targets(out, targets):
    import torch.nn.functional as F

    if not targets.is_floating_point() and out.dim() >= 2 and out.shape[0] == targets.shape[0] and out.dim() == targets.dim() + 1:
        return F.cross_entropy, "cross-entropy"
    return F.mse_loss, "mse"


def example_snippet(class_name: str, init_args: list[str], forward_inputs: list[str]) -> str:
    """The function to paste into the user's file, with the blanks named."""
    args = ", ".join(f"{a}=..." for a in init_args)
    lines = [
        "import torch",
        "",
        "",
        f"def {EXAMPLE_FUNCTION}():",
        '    """Torch Doctor\'s checks call this: the model and one small batch."""',
        f"    model = {class_name}({args})" + ("  # fill in the constructor arguments" if init_args else ""),
    ]
    if len(forward_inputs) > 1:
        parts = ", ".join(f"torch.randn(8, ...)" for _ in forward_inputs)
        lines.append(f"    inputs = ({parts})  # one tensor per forward argument: {', '.join(forward_inputs)}")
    else:
        lines.append("    inputs = torch.randn(8, ...)  # one batch, as your DataLoader yields it")
    lines += [
        "    targets = torch.randint(0, ..., (8,))  # class indices; a float tensor for regression",
        "    return model, (inputs, targets)",
    ]
    return "\n".join(lines) + "\n"
