"""``torchdoctor run [--anomaly break|log] [--threshold X] [--skip-steps N] script.py [args...]``.

Runs a training script in this interpreter (``runpy``, as ``python script.py`` would: same
``sys.argv``, script directory first on ``sys.path``) with the anomaly watch the debugger uses.

- ``--anomaly break`` (default): the first anomaly stops the script; its report (sentence,
  module, step, input/output summaries, user stack) goes to stderr when it happens; exit status 1.
  The report is printed even when the script catches the stop (a bare ``except:``) or the
  anomaly is in a thread (that thread stops; a line says so, not a traceback of ours). The run's
  last line repeats the sentence (``torchdoctor run: stopped at the anomaly reported above: ...``,
  or ``the script caught the stop ...``), below what the script printed after the report (its
  ``finally:`` blocks, other threads).
- Non-daemon threads still running when the main body ends are waited for, as Python does, with
  the watch on: a training loop in a ``threading.Thread`` is watched to its end.
- ``--anomaly log``: every anomaly (at most one per step) is reported and the script goes on;
  exit status 1 if there was any. The closing line counts them all, though only 100 reports
  are kept, the first 50 and the latest 50 (``--json`` says how many were reported in
  ``anomalies_reported``).
- Output paths (``--json``, ``--report``, ``--tensorboard``) are relative to the directory the
  command was started in, whatever the script's ``os.chdir``.
- Loss trends (not decreasing, oscillating) are advice: printed as ``[torchdoctor] advice: ...``
  and written to ``--json`` with ``"advice": true``, they never stop the script nor change the
  exit status.
- No anomaly: the script's own exit status.

Exit status precedence (first that applies): 130 when the run was interrupted (Ctrl-C,
``KeyboardInterrupt``; a line says so); the script's own non-zero status (``sys.exit(3)`` gives
3, an uncaught exception 1) even when anomalies were reported, since it is the more specific
failure; 1 when an anomaly was reported (or stopped the script); otherwise 0. Tracebacks of the
script's uncaught exceptions show its frames only (none of ours, runpy's or the launcher's).

Nothing here imports torch: the watch installs itself when the script does.
"""

from __future__ import annotations

import argparse
import json
import os
import runpy
import signal
import sys
import tempfile
import threading
import traceback
from typing import Any, Dict, List, Optional, Tuple

from .runtime.anomaly import children
from .runtime.anomaly.config import BREAK, LOG, from_mapping, parse
from .runtime.monitor import run as monitor_run

INTERRUPTED = 130  # as a shell reports a SIGINT death (128 + 2)


class AnomalyStop(BaseException):
    """Stops the script at a "break" anomaly. A BaseException so that the script's own
    ``except Exception`` handlers let it through (its ``finally`` blocks still run)."""

    def __init__(self, report: Dict[str, Any]) -> None:
        super().__init__(report.get("sentence", "anomaly"))
        self.report = report


# Break stops that reached us in this run (the script's end or a thread's), and the reports of
# those raised, first first: the run's closing line repeats the first one's sentence.
_STOPS = {"ended": 0}
_STOPPED: List[Dict[str, Any]] = []


def add_run(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "run",
        help="run a training script with the anomaly watch (NaN/Inf, explosions, dead layers, loss health)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--anomaly",
        choices=(BREAK, LOG),
        default=BREAK,
        help="break: stop at the first anomaly (exit 1); log: report every one and go on",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=None,
        metavar="X",
        help="|value| above X in an output or gradient is an explosion (default 1e4)",
    )
    p.add_argument("--skip-steps", type=int, default=None, metavar="N", help="report nothing before step N (warm-up)")
    p.add_argument(
        "--config",
        default=None,
        metavar="JSON",
        help="full watch settings, as in TORCHDOCTOR_ANOMALY (the options above override it)",
    )
    p.add_argument("--json", default=None, metavar="PATH", help="also write every report to PATH as JSON")
    p.add_argument(
        "--nproc-per-node",
        type=int,
        default=None,
        metavar="N",
        help="run the script under torchrun with N processes, every rank watched (docs/distributed.md)",
    )
    p.add_argument(
        "--torchrun-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more torchrun option, e.g. --torchrun-arg=--master-port=29511 (repeatable)",
    )
    monitor_run.add_arguments(p)
    p.add_argument("script", help="the Python script to run")
    p.add_argument("args", nargs=argparse.REMAINDER, help="arguments for the script")
    p.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    if not os.path.isfile(args.script):
        print(f"torchdoctor run: no such file: {args.script}", file=sys.stderr)
        return 2
    if args.json:  # written after the script, which may have changed directory
        args.json = os.path.abspath(args.json)
    config = _config(args)
    for problem in config.problems:
        print(f"torchdoctor run: {problem}", file=sys.stderr)
    monitoring = monitor_run.start(args)  # --monitor, --report, --tensorboard (docs/monitor.md)
    if monitoring and "problem" in monitoring:
        print(f"torchdoctor run: {monitoring['problem']}", file=sys.stderr)
        return 2
    if args.nproc_per_node:
        return _cmd_run_distributed(args, config)
    status, from_children = _run_watched(args, config)
    if status == INTERRUPTED:
        print("torchdoctor run: interrupted (KeyboardInterrupt), exit status 130", file=sys.stderr)
    from .runtime.anomaly import watch

    here = watch.reports()
    found = here + from_children
    _say_children(from_children)
    # trends are advice: no effect on the status, not counted
    from_here = watch.anomalies_reported()
    in_children = _anomalies(from_children)
    total = from_here + in_children
    if args.json:
        _write_json(args.json, found, total)
    if total and config.mode == LOG:
        kept = _anomalies(here)
        print(f"torchdoctor run: {_total_line(total, kept, from_here, in_children, args.json)}", file=sys.stderr)
    status = status if status != 0 else (1 if total else 0)
    status = monitor_run.finish(monitoring, args, status)
    _say_stop()
    return status


def _run_watched(args: argparse.Namespace, config: Any) -> Tuple[int, List[Dict[str, Any]]]:
    """The script's status and its children's reports. Our thread hook stays on until the
    script's last non-daemon thread has ended (:func:`_run_script` waits for them)."""
    from .runtime.anomaly import startup, watch

    watch.clear_reports()
    startup.reset()
    startup.activate(config=config, on_break=_stop)
    _STOPS["ended"] = 0
    del _STOPPED[:]
    previous_hook = threading.excepthook
    threading.excepthook = _thread_hook(previous_hook)
    with tempfile.TemporaryDirectory(prefix="torchdoctor-children-") as folder:
        children.prepare_children(json.dumps(config.to_json()), folder)
        try:
            status = _run_script(args.script, args.args)
        finally:
            children.forget_children()
            threading.excepthook = previous_hook
        return status, children.collect(folder)


def _anomalies(reports: List[Dict[str, Any]]) -> int:
    """The reports that are anomalies: a loss trend is advice, not counted."""
    return sum(1 for r in reports if not r.get("advice"))


def _total_line(total: int, kept: int, from_here: int, in_children: int, json_path: Optional[str]) -> str:
    """``300 anomalies reported (100 kept in the JSON: the first and the latest)``: every one
    counted, and which the JSON has (the watch keeps the first half and the latest half)."""
    line = f"{total} anomal{'y' if total == 1 else 'ies'} reported"
    if kept >= from_here or not json_path:
        return line  # nothing dropped, or no JSON to say it of (each was printed when it happened)
    if in_children:
        return (
            f"{line} ({kept} of this process's {from_here} kept in the JSON, the first and the latest; every child's)"
        )
    return f"{line} ({kept} kept in the JSON: the first and the latest)"


def _cmd_run_distributed(args: argparse.Namespace, config: Any) -> int:
    """Every rank stops at its first anomaly, in both modes: the others would hang in the next
    collective, or all-reduce the NaN and report it once per rank (distributed/rank_entry.py)."""
    from .distributed import launch

    config.mode, config.first_only = BREAK, True
    status, found = launch.run(args.nproc_per_node, args.torchrun_arg, args.script, args.args, config)
    if args.json:
        _write_json(args.json, found, _anomalies(found))
    if status == INTERRUPTED:
        print("torchdoctor run: interrupted (KeyboardInterrupt), exit status 130", file=sys.stderr)
    return status


def _say_children(found: List[Dict[str, Any]]) -> None:
    anomalies = [r for r in found if not r.get("advice")]
    if anomalies:
        where = sorted({str(r.get("process") or f"process {r.get('pid')}") for r in anomalies})
        print(
            f"torchdoctor run: {len(anomalies)} anomal{'y' if len(anomalies) == 1 else 'ies'} reported "
            f"in child processes ({', '.join(where)})",
            file=sys.stderr,
        )


def _config(args: argparse.Namespace):
    config = parse(args.config) if args.config else from_mapping({})
    config.mode = args.anomaly
    if args.anomaly == LOG:
        config.first_only = False  # log mode reports every hit (one per step)
    if args.threshold is not None:
        config.threshold = args.threshold
    if args.skip_steps is not None:
        config.skip_steps = max(args.skip_steps, 0)
    return config


def _stop(report: Dict[str, Any]) -> None:
    """A break: the report now, under its sentence, then the stop. Now, not when the stop reaches
    us: a bare ``except:`` may swallow it, a ``finally:`` may hang (joining workers, a process
    group) or the process be killed. :func:`_say_stop` repeats the sentence at the very end."""
    from .runtime.anomaly.render import render_report

    sys.stdout.flush()
    print(render_report(report, with_sentence=False), file=sys.stderr)  # the sentence is out already
    _STOPPED.append(report)
    raise AnomalyStop(report)


def _say_stop() -> None:
    """The run's last line after a break: the first stop's sentence again, below whatever the
    script printed after its report (its ``finally:`` blocks, other threads) and our summaries,
    as a traceback ends with the exception's line. Not a ``[torchdoctor] anomaly:`` line: those
    count anomalies."""
    if not _STOPPED:
        return
    caught = len(_STOPPED) > _STOPS["ended"]
    how = (
        "the script caught the stop at the anomaly reported above (a bare `except:` or `except BaseException:`)"
        if caught
        else "stopped at the anomaly reported above"
    )
    more = f" ({len(_STOPPED)} stops in all)" if len(_STOPPED) > 1 else ""
    sys.stdout.flush()
    print(f"torchdoctor run: {how}{more}: {_STOPPED[0].get('sentence', 'anomaly')}", file=sys.stderr)


def _thread_hook(previous: Any) -> Any:
    """``threading.excepthook`` for the run: a thread stopped at an anomaly gets one line (its
    report is out), not a traceback through our frames; any other exception goes to ``previous``."""

    def hook(args: Any) -> None:
        if not isinstance(args.exc_value, AnomalyStop):
            previous(args)
            return
        _STOPS["ended"] += 1
        sys.stdout.flush()
        name = getattr(args.thread, "name", None) or "a thread"
        print(
            f"torchdoctor run: thread {name!r} stopped at the anomaly reported above (break mode); "
            "the script's other threads went on",
            file=sys.stderr,
        )

    return hook


def _run_script(path: str, argv: List[str]) -> int:
    """The script's exit status, as ``python script.py`` would give it, once its non-daemon
    threads have ended: the watch is on until then."""
    path = os.path.abspath(path)
    sys.argv = [path] + list(argv)
    sys.path.insert(0, os.path.dirname(path))
    try:
        return _wait_for_threads(_run_main(path))
    finally:
        from .runtime.anomaly import startup, watch

        watch.uninstall()
        startup.reset()


def _run_main(path: str) -> int:
    """The status of the script's main body (its uncaught exception's traceback printed)."""
    try:
        runpy.run_path(path, run_name="__main__")
        return 0
    except AnomalyStop:
        _STOPS["ended"] += 1  # its report was printed when it was raised (_stop)
        return 1
    except SystemExit as exc:
        return _exit_status(exc.code)
    except KeyboardInterrupt:
        return INTERRUPTED
    except BaseException as exc:
        sys.stdout.flush()
        if not children.explain_child_stop(exc):  # a spawned child's stop: one line, no torch traceback
            print_user_traceback(exc)
        monitor_run.note_exception(exc)  # a torch.OutOfMemoryError gets its explanation (cuda_oom)
        return 1


def _wait_for_threads(status: int) -> int:
    """What Python does when a main module ends, done before we stop watching: wait for the
    non-daemon threads (a training loop in a ``Thread``), so that they keep the watch and our
    thread hook. ``threading._shutdown()`` is that very step: it runs the threading-atexit hooks
    first (an idle ``ThreadPoolExecutor``'s workers, a ``ProcessPoolExecutor``'s manager are
    non-daemon threads that only end there: a plain ``join`` would wait for them forever), then
    joins; the interpreter's own call at exit finds it done. Restoring the hook later instead (an
    ``atexit``) would be too late for the watch, the exit status and ``--json``."""
    try:
        if not _other_threads():
            return status  # nothing to wait for: nothing shut down, main() can run again in-process
        shutdown = getattr(threading, "_shutdown", None)
        main = threading.main_thread()
        if shutdown is not None and threading.current_thread() is main and main.is_alive():
            if _interrupted_during(shutdown):
                return INTERRUPTED
        else:  # no such step in this Python, or it has run already (main() called again in one process)
            _join_threads()
    except KeyboardInterrupt:  # Ctrl-C while waiting, as in the script
        return INTERRUPTED
    except Exception as exc:  # a threading-atexit hook failed: Python would print it and go on
        print_user_traceback(exc)
    return status


def _interrupted_during(wait: Any) -> bool:
    """``wait()``; whether a Ctrl-C interrupted it. Python 3.13's ``threading._shutdown`` prints the
    ``KeyboardInterrupt`` of a Ctrl-C as a traceback and goes on waiting (3.11 and 3.12 raise it), so
    the script's SIGINT handler is wrapped meanwhile: its ``KeyboardInterrupt`` is noted, and from 3.13
    not raised into a wait that would only print it (the threads are waited for either way: the
    interpreter joins them at exit). A handler that does not raise (a graceful stop) is no interruption."""
    previous = signal.getsignal(signal.SIGINT)
    if not callable(previous):  # ignored or the OS default: nothing raises here
        wait()
        return False
    seen: List[int] = []

    def noting(signum: int, frame: Any) -> Any:
        try:
            return previous(signum, frame)
        except KeyboardInterrupt:
            seen.append(signum)
            if sys.version_info < (3, 13):
                raise
        return None

    signal.signal(signal.SIGINT, noting)
    try:
        wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return bool(seen)


def _other_threads() -> List[threading.Thread]:
    current = threading.current_thread()
    return [t for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]


def _join_threads() -> None:
    while True:  # a thread may start another while we wait
        pending = _other_threads()
        if not pending:
            return
        for thread in pending:
            thread.join()


def print_user_traceback(exc: BaseException, stream: Any = None) -> None:
    """The traceback as Python prints it, less our frames, runpy's and the launcher's."""
    ours = (os.path.dirname(os.path.abspath(__file__)) + os.sep, os.path.abspath(runpy.__file__))
    tb = exc.__traceback__
    while tb is not None and _not_users(tb.tb_frame.f_code.co_filename, ours):
        tb = tb.tb_next
    _cut_stops(exc)
    shown = traceback.TracebackException(type(exc), exc, tb)
    _drop_our_frames(shown, ours[0])
    print("".join(shown.format()), end="", file=stream if stream is not None else sys.stderr)


def _drop_our_frames(shown: traceback.TracebackException, package: str) -> None:
    """Our frames inside the user's stack too: the watch's ``backward()`` wrappers sit between the
    script's ``loss.backward()`` and torch's when autograd raises (an in-place modification)."""
    seen = set()
    link: Optional[traceback.TracebackException] = shown
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        link.stack = traceback.StackSummary.from_list([f for f in link.stack if not f.filename.startswith(package)])
        link = link.__cause__ or link.__context__


def _cut_stops(exc: BaseException) -> None:
    """An exception the script raised while handling our stop (``except: raise RuntimeError``)
    is shown without the stop's traceback through our frames (its report is out already)."""
    link: Optional[BaseException] = exc
    seen = set()
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        if isinstance(link.__cause__, AnomalyStop):
            link.__cause__ = None
            link.__suppress_context__ = True
        if isinstance(link.__context__, AnomalyStop):
            link.__suppress_context__ = True
        link = link.__cause__ if link.__cause__ is not None else None if link.__suppress_context__ else link.__context__


def _not_users(filename: str, ours: Tuple[str, str]) -> bool:
    path = os.path.abspath(filename)
    return filename.startswith("<frozen") or path.startswith(ours[0]) or path == ours[1]


def _exit_status(code: Any) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def _write_json(path: str, found: List[Dict[str, Any]], total: int) -> None:
    """``anomalies``: the reports kept (the first 50 and the latest 50 of this process, every child's);
    ``anomalies_reported``: every anomaly reported, kept or not (advice not counted)."""
    with open(path, "w", encoding="utf-8") as out:
        json.dump({"anomalies": found, "anomalies_reported": total}, out, indent=2)
