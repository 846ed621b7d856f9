""":func:`build`: the user's ``torchdoctor_example()`` when it builds the class, else inference."""

from __future__ import annotations

from types import ModuleType

from ..discovery import EXAMPLE_FUNCTION
from .construct import construct
from .contract import from_user_function, user_example_function
from .core import Example
from .infer import infer_inputs
from .load import find_class


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
    model = construct(cls, module)
    inputs, how = infer_inputs(model, cls, options)
    return Example(
        model=model,
        inputs=inputs,
        source="inferred",
        inferred=notes + [f"Constructed {cls.__name__}() with no arguments.", how],
    )
