"""What each rank of ``torchdoctor run --nproc-per-node N`` runs: ``python -m
torchdoctor.distributed.rank_entry script.py [args...]``, started by torchrun.

The rank's anomaly watch is armed by ``runtime/anomaly/boot/sitecustomize.py`` at its
``import torch``, like any child of ``torchdoctor run``. Here, on top of that:

- every report carries ``rank`` and ``time`` (the launcher names the earliest), and the rank's
  lines start with ``[rankK]: `` as torchrun's own tracebacks do;
- the first anomaly stops this rank (exit 1) in both modes: the other ranks would otherwise wait
  in the next collective until its timeout, or all-reduce the NaN into every replica and report
  it N times. torchrun then stops the other ranks;
- a rank that fails because another one stopped first (its collective's peer left) says so in
  one line instead of a gloo/NCCL traceback that points at the wrong rank;
- parameters of a DDP model that got no gradient are named at the next forward (``unused.py``),
  and DDP's "Expected to have finished reduction" error that follows is explained in one line.
"""

from __future__ import annotations

import os
import runpy
import sys
import time
from typing import Any, Dict, List, Optional

from ..runtime.anomaly import children
from . import ranks, unused


def main(argv: List[str]) -> int:
    if not argv:
        print("usage: python -m torchdoctor.distributed.rank_entry script.py [args...]", file=sys.stderr)
        return 2
    script = os.path.abspath(argv[0])
    sys.argv = [script] + argv[1:]
    sys.path[0] = os.path.dirname(script)  # as `python script.py`: the script's folder first
    _arm()
    try:
        return _run(script)
    finally:
        _release()


def _run(script: str) -> int:
    try:
        runpy.run_path(script, run_name="__main__")
        return 0
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:
        explained = _explain(exc)
        if explained is not None:
            return explained
        first = _first_elsewhere()
        if first is None:
            raise  # this rank's own failure: Python's traceback, as without us
        ranks.say(
            f"[torchdoctor] stopped: rank {first.get('rank')} went wrong first "
            f"(step {first.get('step')}), and this rank's {type(exc).__name__} followed from it"
        )
        return 1


def _arm() -> None:
    """Give the watch (installed at ``import torch``) this rank's sink, stop and line prefix."""
    import torch  # noqa: F401  (arms the watch now, before the script's own code runs)

    from ..runtime.anomaly import watch

    prefix = ranks.prefix()
    if prefix:
        # The watch reads these module constants at each report.
        watch.LINE_PREFIX = prefix + watch.LINE_PREFIX
        watch.ADVICE_PREFIX = prefix + watch.ADVICE_PREFIX
    from . import facts

    facts.install(ranks.rank() or 0)
    unused.install(_report_distributed)
    watch.set_sink(_write)
    current = watch.current()
    if current is not None:
        current.on_break = _stop


def _write(report: Dict[str, Any]) -> None:
    children.write_report(dict(report, rank=ranks.rank(), time=time.time()))


def _report_distributed(report: Dict[str, Any]) -> None:
    """A rank's own distributed finding: its line now (the rank may be about to fail), and the report."""
    ranks.say(f"[torchdoctor] distributed: {report['sentence']}")
    _write(report)


def _explain(exc: BaseException) -> Optional[int]:
    """DDP's error about parameters without gradients, in one line: 1, or None for other errors."""
    watch = unused.current()
    line = watch.explain(exc) if watch is not None else None
    if line is None:
        return None
    ranks.say(f"[torchdoctor] stopped: {line}")
    if watch is not None and not watch.found:
        raise exc  # nothing of ours named the parameters: keep DDP's own message
    return 1


def _stop(report: Dict[str, Any]) -> None:
    from ..runtime.anomaly.render import render_report

    ranks.say(render_report(report, with_sentence=False))
    raise SystemExit(1)


def _release() -> None:
    """Drop our references to the script's objects while the interpreter still runs.

    The watch's module names keep the DDP model, and with it its gloo process group, alive:
    destroyed only in the interpreter's finalization, after the script's
    ``destroy_process_group()``, its threads were torn down too late and the rank aborted
    ("terminate called without an active exception") in about 1 job in 4 here.
    """
    import gc

    from ..runtime.anomaly import watch
    from . import facts

    watch.uninstall()
    facts.forget()
    unused.forget()
    gc.collect()


def _first_elsewhere() -> Optional[Dict[str, Any]]:
    """The earliest report another rank wrote, if any (they share the reports folder)."""
    from .first import first_report

    folder = os.environ.get(children.REPORTS_ENV)
    mine = ranks.rank()
    found = [r for r in children.collect(folder) if r.get("rank") != mine] if folder else []
    return first_report(found)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
