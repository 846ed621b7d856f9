"""Started by Python itself in every child process of a ``torchdoctor run`` (see ``anomaly/children.py``).

``torchdoctor run`` puts this folder first on the children's ``PYTHONPATH``; Python's ``site``
imports the first ``sitecustomize`` it finds there, so a spawned child (``torch.multiprocessing``
spawn, a ``spawn`` DataLoader worker, ``subprocess.run([sys.executable, ...])``) arms the watch
before its own code runs. The ``sitecustomize`` that this one hides (a virtual environment's, a
distribution's) is then run too. Stdlib only until the watch is wanted; never raises.
"""

import os
import sys


def _arm() -> None:
    if not os.environ.get("TORCHDOCTOR_ANOMALY_REPORTS"):
        return
    try:
        from torchdoctor.runtime.anomaly import children

        children.start_in_child()
    except Exception as exc:  # the child's program must run whatever happens here
        sys.stderr.write(f"[torchdoctor] the anomaly watch could not start in this process: {exc}\n")


def _chain() -> None:
    """Run the ``sitecustomize`` found after this folder on ``sys.path``, if there is one, as
    *this* module: what it defines must be ``sitecustomize.X`` (a class it defines is pickled by
    that name to a spawned child; a separate module object left the child unable to find it),
    and its ``__file__`` is its own (code that finds files beside it)."""
    import importlib.machinery

    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is None or spec.loader is None:
        return
    namespace = globals()
    namespace.update(__file__=spec.origin, __spec__=spec, __loader__=spec.loader)
    namespace.pop("__cached__", None)
    try:
        spec.loader.exec_module(sys.modules[__name__])
    except Exception as exc:
        sys.stderr.write(f"[torchdoctor] the environment's sitecustomize failed: {exc}\n")


_arm()
_chain()
