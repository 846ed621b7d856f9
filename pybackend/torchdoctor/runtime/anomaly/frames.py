"""The user's frames: where an anomaly is shown, and the stack a report prints.

A hook runs deep inside torch (``Module._call_impl``, the autograd engine, ``Optimizer.step``)
and inside our own runtime. The user's frame is the first one, walking outwards, whose file
belongs to none of: torch, torchdoctor, debugpy/pydevd, the import machinery, ``runpy``. For a
forward hook that is the line in the user's ``forward`` (or training loop) that called the
module; for the loss and gradient checks, the ``loss.backward()`` line; for a stale gradient,
the ``optimizer.step()`` line.
"""

from __future__ import annotations

import os
import sys
from types import FrameType
from typing import Any, Dict, List, Optional, Tuple

MAX_STACK = 20

_INTERNAL: Optional[Tuple[str, ...]] = None


def _internal_prefixes() -> Tuple[str, ...]:
    global _INTERNAL
    if _INTERNAL is None:
        dirs = [os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))]  # torchdoctor/
        for name in ("torch", "debugpy", "pydevd", "_pydevd_bundle", "runpy"):
            module = sys.modules.get(name)
            path = getattr(module, "__file__", None)
            if path:
                dirs.append(path if name == "runpy" else os.path.dirname(os.path.abspath(path)))
        _INTERNAL = tuple(os.path.normcase(d) for d in dirs)
    return _INTERNAL


_VERDICTS: Dict[str, bool] = {}  # co_filename -> internal? (a handful of files, asked every step)


def is_internal(frame: FrameType) -> bool:
    filename = frame.f_code.co_filename
    verdict = _VERDICTS.get(filename)
    if verdict is None:
        verdict = filename.startswith(("<frozen", "<string>")) or os.path.normcase(
            os.path.abspath(filename)
        ).startswith(_internal_prefixes())
        if len(_VERDICTS) < 4096:
            _VERDICTS[filename] = verdict
    return verdict


def user_frame(start: Optional[FrameType] = None) -> Optional[FrameType]:
    """The innermost frame at or outside ``start`` (default: our caller) that is the user's."""
    frame: Optional[FrameType] = start if start is not None else sys._getframe(1)
    while frame is not None and is_internal(frame):
        frame = frame.f_back
    return frame


def user_stack(frame: Optional[FrameType]) -> List[str]:
    """``file:line:function`` of the user's frames, innermost first (internal ones left out).

    It ends at ``runpy``: a script run by ``torchdoctor run``, ``python -m`` or the debugger is
    called from ``runpy``, and what called that is the launcher (``.venv/bin/torchdoctor``'s
    module code, which looks like the user's), never the user's code."""
    out: List[str] = []
    runpy_files = _runpy_files()
    while frame is not None and len(out) < MAX_STACK:
        if out and frame.f_code.co_filename in runpy_files:
            break
        if not is_internal(frame):
            code = frame.f_code
            out.append(f"{code.co_filename}:{frame.f_lineno}:{code.co_name}")
        frame = frame.f_back
    return out


def _runpy_files() -> Tuple[str, ...]:
    """The names ``runpy``'s code has in frames: its file, or ``<frozen runpy>`` (Python 3.11+
    freezes it)."""
    path = getattr(sys.modules.get("runpy"), "__file__", None)
    return ("<frozen runpy>", path) if path else ("<frozen runpy>",)


def variable_name(obj: Any, frame: Optional[FrameType]) -> Optional[str]:
    """A name the user's code calls ``obj`` by (``model``), searching their frames outwards.

    ``self`` is skipped: inside the model's own ``forward`` it names the model, but the user
    thinks of it by the name the training loop gives it.
    """
    while frame is not None:
        if not is_internal(frame):
            try:
                for name, value in list(frame.f_locals.items()):
                    if name == "self" or name.startswith("_"):
                        continue
                    if value is obj or (type(value).__name__ == "OptimizedModule" and _inner(value) is obj):
                        return name  # torch.compile's wrapper: the user calls the model by its name
            except Exception:
                pass
        frame = frame.f_back
    return None


def _inner(wrapper: Any) -> Any:
    return getattr(wrapper, "__dict__", {}).get("_modules", {}).get("_orig_mod")


def module_call_codes(torch: Any) -> set:
    """The code objects of ``nn.Module``'s call (``_call_impl``, ``_wrapped_call_impl``): a frame
    running one of them has the module being called as its ``self``."""
    return {
        getattr(torch.nn.Module, name).__code__
        for name in ("_call_impl", "_wrapped_call_impl")
        if hasattr(getattr(torch.nn.Module, name, None), "__code__")
    }


def outermost_module(frame: Optional[FrameType]) -> Optional[Any]:
    """The outermost ``nn.Module`` being called on this stack: ``self`` of ``Module._call_impl``,
    or of a module's own ``forward`` that the script called directly (``model.forward(x)``: no
    hook runs for ``model`` then, and its layers were named from ``Sequential`` up)."""
    call = outermost_call(frame)
    return None if call is None else call.f_locals.get("self")


def outermost_call(frame: Optional[FrameType], own_forward: bool = True) -> Optional[FrameType]:
    """The frame of the outermost module call on this stack (``Module._call_impl``, or a ``forward``
    whose ``self`` is an ``nn.Module``), or None. ``own_forward``: a ``forward`` frame counts only
    when it is the ``forward`` of its ``self``'s class (not a parent's reached by ``super()``)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    codes = module_call_codes(torch)
    found = None
    while frame is not None:
        code = frame.f_code
        if code in codes or code.co_name == "forward":
            candidate = frame.f_locals.get("self")
            if isinstance(candidate, torch.nn.Module):
                if code in codes or not own_forward or _is_forward_of(code, candidate):
                    found = frame
        frame = frame.f_back
    return found


def called_by_loss(frame: Optional[FrameType], module: Any) -> bool:
    """Was ``module`` called by a loss module's ``forward`` (a subclass of torch's ``_Loss``, or a
    class named ``...Loss``): its parent, the next module being called on this stack? A hinge
    written as a module (``self.relu(margin - d)`` in a triplet or hinge-GAN loss) outputs zeros
    when its margin holds: the loss at its floor, not a dead unit. A frozen network inside a
    perceptual loss is not its direct child. Asked after a hit only (2026-12-07)."""
    torch = sys.modules.get("torch")
    if torch is None:
        return False
    codes = module_call_codes(torch)
    while frame is not None:
        parent = frame.f_locals.get("self") if frame.f_code in codes else None
        if parent is not None and parent is not module:
            loss_type = isinstance(parent, torch.nn.modules.loss._Loss)
            named = loss_type or type(parent).__name__.lower().endswith("loss")
            # a hinge's loss has no weights; a model computing its own loss (``RegressorWithLoss``)
            # or a learned metric does, and its ReLU can die (review, 2026-12-07)
            return named and next(iter(parent.parameters()), None) is None
        frame = frame.f_back
    return False


def _is_forward_of(code: Any, module: Any) -> bool:
    """Is ``code`` the ``forward`` of ``module``'s class (not another method named so)?"""
    forward = getattr(type(module), "forward", None)
    return getattr(forward, "__code__", None) is code
