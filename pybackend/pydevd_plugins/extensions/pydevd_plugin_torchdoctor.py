"""Torch Doctor's pydevd plugin: tensor summaries wherever debugpy shows a value.

pydevd (inside debugpy) imports every ``pydevd_plugins/extensions/pydevd_plugin_*.py`` on
sys.path and instantiates the classes registered with its extension ABCs:

- ``TorchDoctorStrProvider`` (a ``StrPresentationProvider``) answers the value string for
  Variables, hover, watch, repl and clipboard with ``torchdoctor.summarize``;
- ``TorchDoctorTensorResolver`` (a ``TypeResolveProvider``) lists the children of an expanded
  tensor: shape, dtype, device, stats, grad and a bounded slice of values, never properties that
  allocate (``.T``) as pydevd's default ``dir()`` walk would.

Every DAP request answers within a time budget (:mod:`torchdoctor.runtime.stats.budget`): one
deadline is shared by all the values of one request (found on the call stack: the ``request``
pydevd is answering), 100 ms for a Variables page and 150 ms for a hover, watch or REPL value
(``TORCHDOCTOR_BUDGET_VARIABLES_MS`` / ``TORCHDOCTOR_BUDGET_EVALUATE_MS`` in the debuggee's
environment change them; 0 means no limit). What does not fit says ``stats…`` and is computed
when the tensor is expanded (no limit then: the user asked for it) or at a later request. The
request also carries the stop's epoch (the pydevd frames tracker of this suspension, renewed by
anything evaluated in the REPL or assigned from the debugger), under which a model's whole line
is cached.

Importing the module (pydevd does so as it loads, before the program runs) also arranges the
runtime's hooks for the program's ``import torch`` through their one entry point,
``torchdoctor.runtime.startup.activate``: the views' collection and, when the session set
``TORCHDOCTOR_ANOMALY``, the anomaly watch (docs/anomaly.md).

Like debugpy's numpy plugin, this never imports the library it describes: a type is ours only if
``torch``/``numpy`` is already in ``sys.modules`` and the type derives from theirs. Importing this
module costs a few small imports; the summary modules (stdlib only) are imported the moment the
program has imported torch, so that the first hover does not pay for them.

Where a first hover's time went, and what this module does about it (issue 15, measured through
DAP on a 2-core machine; ``bench/bench_variables.py``):

- pydevd (debugpy 1.8.22, ``_pydevd_bundle/pydevd_net_command.py``: ``NetCommand.send``) writes
  each message to the adapter as two ``sendall`` calls, header then body, on a socket without
  ``TCP_NODELAY`` (microsoft/debugpy#2054): Nagle's algorithm holds the body until the header is
  acknowledged, which the adapter delays by 40 ms. Every response, ours or not, took 44 ms
  instead of under 1. :func:`_no_delay` sets the option on pydevd's socket when the adapter's
  ``initialize`` arrives (a socket option of the debugger's, not the program's).
- A program that has just built a model of thousands of modules owes the collector a full
  (generation 2) pass; the few thousand small objects of our model walk are what triggered it:
  65-240 ms of a first hover. :data:`_COLLECTOR` holds automatic collection off while we build a
  value (a line, an expanded value's children) and puts it back as it was; what we allocated is
  freed by then, so the pass comes when the program allocates again, as it would without us.
- The summary modules were imported by the first value shown (15-60 ms): :func:`_preload`.
"""

import gc
import inspect
import os
import socket
import sys
import threading
import weakref

from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider

# Contexts in which the user asked for the value itself rather than a glance at it.
_CLIPBOARD = "clipboard"
_CLIPBOARD_REPR_LIMIT = 20000


_RUNTIME = []  # memo: [modules] once imported, [None] once known to be missing


def _runtime():
    """The runtime modules, or None if torchdoctor is not importable (then we stay out of the way)."""
    if not _RUNTIME:
        try:
            from torchdoctor.runtime.stats import budget
            from torchdoctor.runtime.summary import api, children, kinds

            _RUNTIME.append((api, children, kinds, budget))
        except Exception:
            _RUNTIME.append(None)  # do not retry the import for every variable shown
    return _RUNTIME[0]


# What the first summary of a tensor, model, array or container imports beyond _runtime()'s
# modules (they import the standard library only): imported with torch, not in a hover.
_LAZY_MODULES = ("tensor_info", "aggregates", "module_info", "container_info", "array_stats", "training", "config_info")


def _preload(torch=None):
    """Import the runtime's summary modules (``startup.when_torch_imported``); never raises."""
    runtime = _runtime()
    if runtime is None:
        return
    for name in _LAZY_MODULES:
        try:
            __import__("torchdoctor.runtime.summary." + name)
        except Exception:
            pass  # imported again, lazily, by whoever needs it (and its error shown there)


class _CollectorPause(object):
    """Automatic garbage collection held off while we build values, then put back as it was.

    Re-entrant and shared by threads: the first to enter disables the collector if it was
    enabled, the last to leave enables it again only if it was the one that disabled it (a
    program that runs with ``gc.disable()`` keeps it so). Explicit ``gc.collect()`` is unaffected.
    """

    def __init__(self):
        self.lock = threading.Lock()
        self.depth = 0
        self.paused = False

    def __enter__(self):
        with self.lock:
            if self.depth == 0:
                # ``paused`` still True here means an exception injected into the thread (pydevd's
                # evaluation interrupt) ended an earlier pause before its exit: keep owning it, so
                # this pause's exit turns the collector back on.
                if not self.paused:
                    self.paused = gc.isenabled()
                if self.paused:
                    gc.disable()
            self.depth += 1
        return self

    def __exit__(self, *exc_info):
        with self.lock:
            self.depth -= 1
            if self.depth == 0 and self.paused:
                self.paused = False
                gc.enable()
        return False


_COLLECTOR = _CollectorPause()


def _no_delay(py_db):
    """``TCP_NODELAY`` on pydevd's socket to the adapter (see the module docstring); never raises."""
    try:
        sock = py_db.writer.sock
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            return True
    except Exception:
        pass
    return False


def _budget_seconds(name, default_ms):
    """A budget from the debuggee's environment, in seconds; None for no limit."""
    try:
        ms = float(os.environ.get(name, default_ms))
    except ValueError:
        ms = default_ms
    return ms / 1000.0 if ms > 0 else None


VARIABLES_SECONDS = _budget_seconds("TORCHDOCTOR_BUDGET_VARIABLES_MS", 100)
EVALUATE_SECONDS = _budget_seconds("TORCHDOCTOR_BUDGET_EVALUATE_MS", 150)

# pydevd's functions that answer one DAP request in the suspended thread (their local
# ``request`` is that request), and the one that holds a suspension's frames tracker.
_REQUEST_FUNCTIONS = {
    "internal_get_variable_json": "variables",
    "internal_evaluate_expression_json": "evaluate",
    "internal_set_expression_json": "evaluate",
    "internal_change_variable_json": "variables",
}
_SUSPEND_FUNCTION = "_do_wait_suspend"
_STACK_LIMIT = 48


class _Requests(object):
    """The budget of the request being answered: one per request, shared by all its values."""

    def __init__(self):
        self.lock = threading.Lock()
        self.request = None  # held strongly, so its id cannot be recycled while we compare it
        self.budget = None
        self.tracker = None  # weakref to the frames tracker of the stop we last saw
        self.mutations = -1
        self.epoch = None

    def budget_for(self, budget_module, context):
        request, kind, tracker = _find_request()
        with self.lock:
            epoch = self._epoch(tracker)
            if request is not None and request is self.request:
                return self.budget
            seconds = VARIABLES_SECONDS if kind == "variables" and context is None else EVALUATE_SECONDS
            if context == _CLIPBOARD:
                seconds = None  # Copy Value asks for the numbers themselves
            # A Variables page shows many values: one model's walk may take half of what is left.
            listing = kind == "variables" and context is None
            try:
                made = budget_module.Budget(seconds, epoch, 0.5 if kind == "variables" else 1.0, listing=listing)
            except TypeError:  # an older runtime on the path: no re-listing rule
                made = budget_module.Budget(seconds, epoch, 0.5 if kind == "variables" else 1.0)
            self.request, self.budget = request, made
            return made

    def _epoch(self, tracker):
        """The same token while at one stop with nothing run from the REPL, else a new one."""
        if tracker is None or _MUTATIONS[0] is None:
            return None
        if self.tracker is None or self.tracker() is not tracker or self.mutations != _MUTATIONS[0]:
            try:
                self.tracker = weakref.ref(tracker)
            except TypeError:
                return None
            self.mutations = _MUTATIONS[0]
            self.epoch = object()
        return self.epoch


_REQUESTS = _Requests()


def _find_request():
    """``(request, kind, frames tracker)`` of the pydevd request on this thread's stack."""
    request = kind = tracker = None
    frame = sys._getframe(2)
    for _ in range(_STACK_LIMIT):
        if frame is None:
            break
        name = frame.f_code.co_name
        if kind is None and name in _REQUEST_FUNCTIONS:
            request, kind = frame.f_locals.get("request"), _REQUEST_FUNCTIONS[name]
        elif name == _SUSPEND_FUNCTION:
            tracker = frame.f_locals.get("frames_tracker")
            break
        frame = frame.f_back
    return request, kind, tracker


# Requests that may change the program's data while it is paused (a REPL line, a value set from
# the Variables view, a hover or watch expression that is more than a look-up such as
# `model.half()`), counted when they arrive and again once they have run, so that the stop's
# epoch is renewed by them; None when pydevd's API could not be wrapped (then no epoch is ever
# trusted). Only a plain look-up in a hover/watch/clipboard/variables context is read-only.
_MUTATIONS = [None]
_READ_ONLY_CONTEXTS = ("hover", "watch", "clipboard", "variables")


def _count_mutations():
    try:
        from _pydevd_bundle import pydevd_api
        from _pydevd_bundle.pydevd_api import PyDevdAPI
    except Exception:
        return
    names = ("request_exec_or_evaluate_json", "request_set_expression_json", "request_change_variable_json")
    if any(not callable(getattr(PyDevdAPI, name, None)) for name in names):
        return
    for name in names:
        original = getattr(PyDevdAPI, name)
        if getattr(original, "_torchdoctor_counts", False):
            continue
        setattr(PyDevdAPI, name, _counting(original, name == names[0]))
    # The requests above only queue the work for the paused thread: a request answered between a
    # REPL line's arrival and its run would compute under the renewed epoch and be trusted after
    # the line changed the model. So the count moves again once the work has run.
    for name in ("internal_evaluate_expression_json", "internal_set_expression_json", "internal_change_variable_json"):
        original = getattr(pydevd_api, name, None)
        if callable(original) and not getattr(original, "_torchdoctor_counts", False):
            setattr(pydevd_api, name, _counting_after(original, name == "internal_evaluate_expression_json"))
    _MUTATIONS[0] = 0


# Names a hover or watch expression may use and stay a pure look-up (they run no user code).
_PURE_CALLS = ("len", "type", "id", "isinstance")


def _is_lookup(expression):
    """True if ``expression`` only reads: names, attributes, subscripts, constants, a few builtins.

    A hover of a selection or a watch expression can be any code (``model.half()``); only a
    look-up is taken as read-only. Properties and ``__getitem__`` are trusted not to write."""
    import ast

    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except Exception:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            if not (isinstance(node.func, ast.Name) and node.func.id in _PURE_CALLS and not node.keywords):
                return False
        elif not isinstance(node, _LOOKUP_NODES):
            return False
    return True


def _lookup_nodes():
    import ast

    kinds = [ast.Expression, ast.Name, ast.Attribute, ast.Subscript, ast.Constant, ast.Slice, ast.Tuple, ast.Load]
    kinds += [ast.UnaryOp, ast.USub, ast.Compare, ast.Is, ast.IsNot, ast.Eq, ast.NotEq]
    index = getattr(ast, "Index", None)  # Python < 3.9 wraps subscripts in it
    return tuple(kinds + ([index] if index is not None else []))


_LOOKUP_NODES = _lookup_nodes()


def _mutates(request, is_evaluate):
    """Whether answering ``request`` may change the program's data (see :data:`_MUTATIONS`)."""
    if not is_evaluate:
        return True  # setExpression, setVariable
    arguments = request.arguments
    context = getattr(arguments, "context", None)
    return context not in _READ_ONLY_CONTEXTS or not _is_lookup(getattr(arguments, "expression", "") or "")


def _set_no_delay_on_initialize():
    """Wrap ``PyDevdAPI.notify_initialize`` (the adapter's ``initialize``, the session's first
    request: the socket is connected) to set :func:`_no_delay` before its response is sent."""
    try:
        from _pydevd_bundle.pydevd_api import PyDevdAPI
    except Exception:
        return
    original = getattr(PyDevdAPI, "notify_initialize", None)
    if not callable(original) or getattr(original, "_torchdoctor_no_delay", False):
        return
    if not inspect.isfunction(inspect.getattr_static(PyDevdAPI, "notify_initialize", None)):
        return  # a staticmethod or classmethod in another pydevd: a plain wrapper would break initialize

    def notify_initialize(self, py_db, *args, **kwargs):
        _no_delay(py_db)
        return original(self, py_db, *args, **kwargs)

    notify_initialize._torchdoctor_no_delay = True
    notify_initialize.__doc__ = getattr(original, "__doc__", None)
    PyDevdAPI.notify_initialize = notify_initialize


def _counting(original, is_evaluate):
    def wrapper(self, py_db, request, *args, **kwargs):
        try:
            if _mutates(request, is_evaluate):
                _MUTATIONS[0] += 1
        except Exception:
            pass
        return original(self, py_db, request, *args, **kwargs)

    wrapper._torchdoctor_counts = True
    wrapper.__name__ = getattr(original, "__name__", "wrapper")
    wrapper.__doc__ = getattr(original, "__doc__", None)
    return wrapper


def _counting_after(original, is_evaluate):
    """``original`` (pydevd's function that runs the request in the paused thread), counting a
    change once it has run, too. Keeps pydevd's name: :func:`_find_request` looks for it."""

    def counted(py_db, request, *args, **kwargs):
        try:
            return original(py_db, request, *args, **kwargs)
        finally:
            try:
                if _mutates(request, is_evaluate):
                    _MUTATIONS[0] += 1
            except Exception:
                pass

    counted._torchdoctor_counts = True
    counted.__doc__ = getattr(original, "__doc__", None)
    return counted


def _is_tensor_type(cls):
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(cls, type) and issubclass(cls, torch.Tensor)


def _is_ours(cls):
    """Tensors, nn.Modules, numpy arrays, plain containers (which may hold them), training
    objects (optimizers, LR schedulers, DataLoaders, datasets, samplers, GradScaler, Generator)
    and model configs (their line only: expanding one lists its fields as pydevd does)."""
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
    if runtime is None:
        return False
    kinds = runtime[2]
    return kinds.is_plain_container(cls) or kinds.is_training_object(cls) or kinds.is_model_config(cls)


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
        budget = runtime[3]
        with _COLLECTOR, budget.activate(_REQUESTS.budget_for(budget, context)):
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
    """Children of an expanded tensor or module, in a fixed, useful order, with evaluate names."""

    def can_provide(self, type_object, type_name):
        try:
            return _runtime() is not None and _runtime()[1].can_expand(type_object)  # tensors and modules
        except Exception:
            return False

    def get_contents_debug_adapter_protocol(self, obj, fmt=None):
        runtime = _runtime()
        budget = runtime[3]
        # Expanding is asking for this tensor's statistics: no deadline, but the stop's epoch.
        epoch = _REQUESTS.budget_for(budget, None).epoch
        with _COLLECTOR, budget.activate(budget.Budget(None, epoch)):
            return runtime[1].children_of(obj)

    def get_dictionary(self, obj):
        return {name: value for name, value, _ in self.get_contents_debug_adapter_protocol(obj)}

    def resolve(self, obj, attribute):
        return self.get_dictionary(obj).get(attribute)


if not sys.platform.startswith("java"):
    StrPresentationProvider.register(TorchDoctorStrProvider)
    TypeResolveProvider.register(TorchDoctorTensorResolver)
    try:
        _count_mutations()
    except Exception:
        _MUTATIONS[0] = None  # no epochs: every model line is described afresh (still right)
    try:
        _set_no_delay_on_initialize()
    except Exception:
        pass  # pydevd's own latency, as without us


def _hide_false_pydevd_warning():
    """debugpy calls this file "an incompatible copy of pydevd" in every process it follows (each
    torchrun rank): hidden for this file alone (``runtime/pydevd_warning.py``). Never raises."""
    try:
        from torchdoctor.runtime import pydevd_warning

        pydevd_warning.hide_for(__file__)
    except Exception:
        pass


def _activate_runtime():
    """Arrange the runtime's hooks for when the program imports torch (``runtime/startup.py``:
    the views' collection, the anomaly watch), as the debuggee's environment asks, and the
    summary modules' import (:func:`_preload`). Never raises."""
    try:
        from torchdoctor.runtime import startup

        startup.activate()
    except Exception:
        pass
    try:
        from torchdoctor.runtime import startup

        startup.when_torch_imported("summaries", _preload)
    except Exception:
        pass  # the first value shown imports them, as before


_hide_false_pydevd_warning()
_activate_runtime()
