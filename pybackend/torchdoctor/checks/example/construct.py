"""Constructing the model class with no arguments, or saying why it cannot be."""

from __future__ import annotations

import inspect

from .. import result as R
from ..discovery import EXAMPLE_FUNCTION
from .core import EXAMPLE_FILE, ExampleError
from .load import user_traceback
from .snippet import example_snippet
from .snippet_library import instance_of


def construct(cls, module=None):
    """``cls()``, or an :class:`ExampleError` with the snippet to paste; ``module``: the user's module, where
    a model of the class built at module level gives the snippet hints (its vocabulary)."""
    required = _required_init_params(cls)
    if required:
        raise ExampleError(
            R.ERR_NEEDS_EXAMPLE,
            f"{cls.__name__}.__init__ needs arguments ({', '.join(required)}): Torch Doctor cannot guess them. "
            f"Add a {EXAMPLE_FUNCTION}() function to the file (or to a sibling {EXAMPLE_FILE}) that builds the model and one batch.",
            snippet=example_snippet(cls.__name__, required, forward_params(cls), cls, instance_of(module, cls)),
        )
    try:
        return cls()
    except Exception as exc:
        raise ExampleError(
            construct_kind(exc),
            _construct_message(cls.__name__, exc),
            detail=user_traceback(exc),
            snippet=example_snippet(cls.__name__, [], forward_params(cls), cls, instance_of(module, cls)),
        ) from None


# Words of torch's errors when a model asks for a GPU it cannot have: the CPU wheel says "Torch not
# compiled with CUDA enabled", the CUDA wheel (pip's default on Linux) on a machine without a GPU
# says "Found no NVIDIA driver on your system" (no "cuda" in it: seen with torch 2.13+cu130).
NO_GPU_WORDS = ("cuda", "nvidia")


def construct_kind(exc: Exception) -> str:
    """``ERR_NEEDS_CUDA`` when building the model failed for want of a GPU, else ``ERR_CONSTRUCT``."""
    import torch

    text = str(exc).lower()
    needs = any(w in text for w in NO_GPU_WORDS) and not torch.cuda.is_available()
    return R.ERR_NEEDS_CUDA if needs else R.ERR_CONSTRUCT


def _construct_message(name: str, exc: Exception) -> str:
    if construct_kind(exc) == R.ERR_NEEDS_CUDA:
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


def forward_params(cls) -> list[str]:
    """The names of ``cls.forward``'s required positional arguments (``["x"]`` when unknown), for a snippet:
    optional ones (``targets=None``, ``has_mask=True``) are not inputs."""
    try:
        sig = inspect.signature(cls.forward)
    except (TypeError, ValueError):
        return ["x"]
    names = [
        p.name
        for p in sig.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
    ]
    return names[1:] or ["x"]
