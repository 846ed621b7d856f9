"""The model and one batch a check runs on (worker side: these modules import torch lazily).

Two ways, the first wins:

1. The user's own example, a function named ``torchdoctor_example`` in the file
   or in a sibling file ``torchdoctor_example.py`` (``contract.py``, docs/checks.md)::

       def torchdoctor_example():            # or torchdoctor_example(class_name)
           model = Net(hidden=32)
           x = torch.randn(8, 20)
           return {"model": model, "inputs": (x,), "kwargs": {}, "targets": torch.randint(0, 10, (8,)),
                   "loss": None}            # a loss(all outputs, targets), "model", or None

   ``inputs``/``kwargs`` may nest tuples, lists and dicts of tensors (an LSTM's hidden tuple, a
   Hugging Face ``**batch``). Without a loss, a forward that returns its own loss is used as such
   (``own.py``: nanoGPT's ``(logits, loss)`` given ``targets=``, a ``ModelOutput.loss``); else the
   loss is inferred as below. The first contract, ``(model, (inputs, targets)[, loss_fn])``, still
   works. ``targets`` may be None: the target and the loss are then inferred.

2. Inference: construct the class with no arguments (``construct.py``); the input from the first
   layer (``infer.py``: Linear in_features; Conv1d/2d/3d in_channels at a default spatial size
   of 64 / 32x32 / 16x16x16; Embedding integer indices of length 16; RNN/LSTM/GRU
   input_size, 16 steps); the targets and loss from the output (``infer_targets.py``): a
   reconstruction (autoencoder, VAE) gets MSE against its input, a token model's ``(B, T, V)``
   next-token cross-entropy, ``(B, C)`` with C >= 2 cross-entropy with random classes, anything
   else MSE against random targets.

Every guess is written in ``Example.inferred`` so the result can say it. When a
guess is impossible, :class:`ExampleError` says exactly why, with the snippet to add
(``snippet.py``). All random draws use a private ``torch.Generator``.

One module per job: ``load`` (the user's file and class), ``contract`` (``torchdoctor_example()``),
``own`` (a model's own loss),
``construct`` (the model), ``infer`` (inputs, targets, loss; ``infer_targets``: targets
without the user's; ``spatial``: a conv model's input size
solved from its first Linear), ``snippet`` (the code to paste),
``assemble`` (:func:`build`: the first of the two ways that works). ``core`` holds the
:class:`Example` they produce and the :class:`ExampleError` they raise. These modules import
only each other and ``checks.result`` / ``checks.discovery`` / ``checks.preconditions``;
``complete`` imports ``checks.shape_trace`` to explain a failing forward.
"""

from __future__ import annotations

from .assemble import build
from .construct import construct
from .contract import from_user_function, user_example_function
from .core import (
    EXAMPLE_FILE,
    Example,
    ExampleError,
    class_dim,
    cross_entropy,
    map_tensors,
    model_loss,
    own_loss,
    pick_output,
    tensors_in,
)
from .infer import DEFAULT_BATCH, DEFAULT_SEQ_LEN, DEFAULT_SPATIAL, complete, infer_inputs
from .load import find_class, load_user_module
from .snippet import example_snippet

__all__ = [
    "DEFAULT_BATCH",
    "DEFAULT_SEQ_LEN",
    "DEFAULT_SPATIAL",
    "EXAMPLE_FILE",
    "Example",
    "ExampleError",
    "build",
    "class_dim",
    "cross_entropy",
    "map_tensors",
    "model_loss",
    "own_loss",
    "tensors_in",
    "complete",
    "construct",
    "example_snippet",
    "find_class",
    "from_user_function",
    "infer_inputs",
    "load_user_module",
    "pick_output",
    "user_example_function",
]
