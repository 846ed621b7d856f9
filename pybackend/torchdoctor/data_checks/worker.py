"""The data-check worker: ``python -m torchdoctor.data_checks.worker --file F [--name N] [--options JSON]``.

Runs in the user's interpreter, started by ``jobs.py``, with the model checks' protocol and guard
(``checks/worker.py``'s ``Channel``: progress lines, then one result line signed with the run's
nonce; ``checks/worker_guard.py``: die with the backend, stay within memory). Everything the
user's code does wrong becomes an ERROR result, never a crash.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
import traceback

from ..checks import worker_guard
from ..checks.worker import Channel
from . import budget, result_line, watch
from . import findings as F
from .collate_errors import CollateError
from .errors import SampleError, user_frames
from .loader_errors import LoaderWorkerError, drawing_words


def _parse(argv: list) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m torchdoctor.data_checks.worker")
    p.add_argument("--file", required=True)
    p.add_argument("--name", default="")
    p.add_argument("--options", default="{}")
    p.add_argument("--stdin", action="store_true", help="read the source of --file from stdin")
    p.add_argument("--watch", default="", help="a folder for the notes and stacks the backend reads (watch.py)")
    return p.parse_args(argv)


def run(args: argparse.Namespace, progress, send=None) -> dict:
    file = os.path.abspath(args.file)
    target = args.name or os.path.basename(file)
    try:
        import numpy  # noqa: F401 - the checks' arithmetic
    except ImportError as exc:
        return F.error_result(target, file, "no-numpy", f"numpy is not installed in {sys.executable}", str(exc))
    try:
        import torch

        torch.set_num_threads(int(json.loads(args.options or "{}").get("threads", 1)))
    except ImportError:
        pass  # numpy-only data (arrays, tables) can still be checked
    from ..checks.example.core import ExampleError
    from ..checks.example.load import load_user_module
    from . import engine, load

    try:
        options = json.loads(args.options or "{}")
        source = sys.stdin.buffer.read().decode("utf-8", "surrogatepass") if args.stdin else None
        progress(0.0, f"importing {os.path.basename(file)}")
        watch.note("", "import")
        module = load_user_module(file, source)
        watch.note("", "build")
        splits, model, notes = load.resolve(module, args.name)
        watch.idle()
        where = next((n["origin"] for n in notes if isinstance(n, dict) and "origin" in n), None)
        loss = next((n["loss"] for n in notes if isinstance(n, dict) and "loss" in n), None)
        notes = [n for n in notes if not isinstance(n, dict)]
        target = args.name or load.default_name(module)
        if send is not None:  # a draw given up on (stuck.py's watchdog): the result is sent from there
            from . import stuck

            stuck.on_give_up(lambda r: send(dict(r, notes=notes + r["notes"])))
        # What exists now (torch, numpy, the user's module and datasets) lives until the worker exits:
        # out of the cyclic collector's reach, a gen-2 pass during the draws no longer walks it
        # (~100 ms each; ~4 ms a check on average in bench_data_checks.py's process, 0.2 ms frozen).
        gc.freeze()
        result = engine.run(splits, model, options, progress, target=target, file=file, origin=where, loss=loss)
        result["notes"] = notes + result["notes"]
        return result
    except ExampleError as exc:
        result = F.error_result(target, file, exc.kind, exc.message, exc.detail)
        result["snippet"] = exc.snippet
        return result
    except SystemExit as exc:
        return _exited(target, file, exc)
    except (LoaderWorkerError, CollateError) as exc:
        result = F.error_result(target, file, "dataset-error", str(exc), exc.traceback_text())
        result["error"].update(exc.to_error())
        return result
    except SampleError as exc:
        if type(exc.error).__name__ == "BdbQuit":
            return _at_breakpoint(target, file, exc)
        return F.error_result(
            target,
            file,
            "dataset-error",
            f"{exc}. Next step: open that sample (its file or row) and fix the dataset's __getitem__ "
            "(the traceback ends in it), or make it skip samples it cannot read",
            user_frames(exc.error),
        )
    except Exception as exc:  # noqa: BLE001 - the user's dataset raised while drawn: report it
        return F.error_result(
            target,
            file,
            "dataset-error",
            f"drawing the data raised {type(exc).__name__}: {str(exc)[:500]}",
            traceback.format_exc(),
        )


def _at_breakpoint(target: str, file: str, exc: SampleError) -> dict:
    """A ``breakpoint()`` or ``pdb.set_trace()`` in the dataset: the worker has no terminal, so the
    debugger read the end of its input and quit (``BdbQuit``), which is not the sample's fault."""
    from .loader_errors import is_user_file

    frames = [f for f in traceback.extract_tb(exc.error.__traceback__) if is_user_file(f.filename)]
    at = f" just before {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    result = F.error_result(
        target,
        file,
        "dataset-error",
        f"{exc.split}: the dataset paused at a breakpoint() or pdb.set_trace(){at} while drawing sample "
        f"{exc.index!r}; the check runs without a terminal, so the debugger quit and the sample could not be drawn. "
        "Next step: remove the breakpoint for the check (from a terminal: PYTHONBREAKPOINT=0 torchdoctor check "
        "data ...); to look at the data while paused, run your script under the debugger and use Check Data from "
        "the Variables view",
        user_frames(exc.error),
    )
    result["error"].update(cause="breakpoint", split=exc.split, index=exc.index, stage="__getitem__")
    return result


def _exited(target: str, file: str, exc: SystemExit) -> dict:
    """``sys.exit()`` in the data's code: at import, or while a split was drawn (then with the
    sample, as a crash of the process is said: ``ended.py``)."""
    note = watch.current()
    stage = note.get("stage")
    if stage in (None, watch.IDLE, "import", "build"):
        return F.error_result(
            target,
            file,
            "import-error" if stage != "build" else "constructor-error",
            f'the data code called sys.exit({exc.code!r}): keep it under `if __name__ == "__main__":`',
            user_frames(exc),
        )
    split = note.get("split") or ""
    result = F.error_result(
        target,
        file,
        "dataset-error",
        f"{split}: the dataset's code called sys.exit({exc.code!r}) {drawing_words(note)}, which would end the "
        f"data-check worker. The check could not draw {split}. Next step: raise an exception instead, which the "
        "check reports with the sample's index and your traceback",
        user_frames(exc),
    )
    result["error"].update(
        cause="process-ended",
        split=split or None,
        stage=note.get("stage"),
        index=note.get("index"),
        batch=note.get("batch"),
        exit=f"sys.exit({exc.code!r})",
    )
    return result


def main(argv: list | None = None) -> int:
    nonce = worker_guard.install()
    args = _parse(sys.argv[1:] if argv is None else argv)
    if args.watch:
        watch.install(args.watch)
    channel = Channel(nonce, result_line.encode)  # the gallery's pixels written as they are
    # the splits are drawn in this (main) thread: a dataset's objects may belong to it (a sqlite connection
    # opened in __init__, the default device, grad mode, signal handlers); under a budget a watchdog thread
    # gives up on a draw that never returns, sends the result and ends the process (stuck._watched)
    budget.draw_in_threads(False)
    started = time.monotonic()

    def send(result: dict) -> None:
        result["durationSeconds"] = round(time.monotonic() - started, 3)
        result["python"] = sys.executable
        channel.result(result)

    def send_and_end(result: dict) -> None:  # from stuck.py's watchdog: the main thread is stuck
        send(result)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)

    send(run(args, channel.progress, send_and_end))
    stuck = sys.modules.get(f"{__package__}.stuck")  # imported by the checks (it needs numpy: not here)
    probe = sys.modules.get(f"{__package__}.model_info")  # a forward on a zero sample given up on
    if (stuck is not None and stuck.left_running()) or (probe is not None and probe.left_running()):
        # a draw given up on under a time budget, or the model's forward: no thread
        sys.stdout.flush()  # can be stopped, so the process is (its DataLoader workers follow it)
        sys.stderr.flush()
        os._exit(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
