"""Torch Doctor's pydevd plugin: tensor summaries wherever debugpy shows a value.

pydevd (inside debugpy) imports every ``pydevd_plugins/extensions/pydevd_plugin_*.py`` on
sys.path and instantiates the classes registered with its extension ABCs:

- ``TorchDoctorStrProvider`` (a ``StrPresentationProvider``) answers the value string for
  Variables, hover, watch, repl and clipboard with ``torchdoctor.summarize``;
- ``TorchDoctorTensorResolver`` (a ``TypeResolveProvider``) lists the children of an expanded
  tensor: shape, dtype, device, stats, grad and a bounded slice of values, never properties that
  allocate (``.T``) as pydevd's default ``dir()`` walk would.

Importing the module (pydevd does so as it loads, before the program runs) also arranges the
runtime's hooks for the program's ``import torch`` through their one entry point,
``torchdoctor.runtime.startup.activate``: the views' collection and, when the session set
``TORCHDOCTOR_ANOMALY``, the anomaly watch (docs/anomaly.md).

Like debugpy's numpy plugin, this never imports the library it describes: a type is ours only if
``torch``/``numpy`` is already in ``sys.modules`` and the type derives from theirs. Importing this
module costs two small imports; the runtime (and through it torch) is touched only when a
tensor, module, array or container of them is actually shown.
"""

import sys

from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider

# Contexts in which the user asked for the value itself rather than a glance at it.
_CLIPBOARD = "clipboard"
_CLIPBOARD_REPR_LIMIT = 20000


_RUNTIME = []  # memo: [modules] once imported, [None] once known to be missing


def _runtime():
    """The runtime modules, or None if torchdoctor is not importable (then we stay out of the way)."""
    if not _RUNTIME:
        try:
            from torchdoctor.runtime.summary import api, children, kinds

            _RUNTIME.append((api, children, kinds))
        except Exception:
            _RUNTIME.append(None)  # do not retry the import for every variable shown
    return _RUNTIME[0]


def _is_tensor_type(cls):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(cls, type) and issubclass(cls, torch.Tensor)


def _is_ours(cls):
    """Tensors, nn.Modules, numpy arrays and plain containers (which may hold them)."""
    if not isinstance(cls, type):
        return False
    if _is_tensor_type(cls):
        return True
    nn = sys.modules.get("torch.nn")
    if nn is not None and issubclass(cls, nn.Module):
        return True
    numpy = sys.modules.get("numpy")
    if numpy is not None and issubclass(cls, numpy.ndarray):
        return True
    runtime = _runtime()
    return runtime is not None and runtime[2].is_plain_container(cls)


class TorchDoctorStrProvider(object):
    """The one-line summary as the value string, in every context."""

    def can_provide(self, type_object, type_name):
        try:
            return _is_ours(type_object)
        except Exception:
            return False

    def get_str_in_context(self, val, context):
        runtime = _runtime()
        if runtime is None:
            return None  # pydevd falls back to its own repr
        line = runtime[0].summarize_if_ours(val)
        if line is None:
            return None  # e.g. a list without tensors keeps pydevd's usual presentation
        if context == _CLIPBOARD:
            return line + "\n" + _bounded_repr(val)
        return line

    def get_str(self, val):
        return self.get_str_in_context(val, None)


def _bounded_repr(val):
    """torch's own repr (it elides big tensors itself), capped: Copy Value pastes the numbers too."""
    try:
        text = repr(val)
    except Exception as exc:
        return "<repr failed: %s>" % (type(exc).__name__,)
    return text if len(text) <= _CLIPBOARD_REPR_LIMIT else text[:_CLIPBOARD_REPR_LIMIT] + "..."


class TorchDoctorTensorResolver(object):
    """Children of an expanded tensor, in a fixed, useful order, with evaluate names."""

    def can_provide(self, type_object, type_name):
        try:
            return _is_tensor_type(type_object) and _runtime() is not None
        except Exception:
            return False

    def get_contents_debug_adapter_protocol(self, obj, fmt=None):
        return _runtime()[1].tensor_children(obj)

    def get_dictionary(self, obj):
        return {name: value for name, value, _ in self.get_contents_debug_adapter_protocol(obj)}

    def resolve(self, obj, attribute):
        return self.get_dictionary(obj).get(attribute)


if not sys.platform.startswith("java"):
    StrPresentationProvider.register(TorchDoctorStrProvider)
    TypeResolveProvider.register(TorchDoctorTensorResolver)


def _activate_runtime():
    """Arrange the runtime's hooks for when the program imports torch (``runtime/startup.py``:
    the views' collection, the anomaly watch), as the debuggee's environment asks. Never raises."""
    try:
        from torchdoctor.runtime import startup

        startup.activate()
    except Exception:
        pass


_activate_runtime()
