"""``torchdoctor check overfit|lr-find|gradcheck|shapes FILE[::ClassName]`` (no torch here).

Runs the check in a worker of ``--python`` (default: this interpreter) in ``--cwd``
(default: the current folder, as the editor runs it in the workspace folder), prints
the result as text (or ``--json``), and exits 0 on PASS/WARN, 1 on FAIL, 2 when the
check could not run (usage, setup, time limit). ``::ClassName`` may be left out
when the file defines exactly one ``nn.Module`` class. The file is imported as its
project would: inside a package by its dotted name with the package root on the
import path; ``--pythonpath`` adds more folders.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from .. import background
from . import result as R
from . import text_report
from .safe_discovery import discover_safely
from .source_text import SourceError, read_source

DATA = "data"  # `torchdoctor check data FILE::NAME`: handled by torchdoctor/data_checks/cli.py


def add_check(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "check",
        help="run a model check (overfit one batch, LR finder, gradient check, shape trace) on an nn.Module class",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("check", choices=R.CHECKS + (DATA,), help="which check ('data': the data checks, docs/data.md)")
    p.add_argument("target", metavar="FILE::ClassName", help="the file and the model class in it")
    p.add_argument("--json", action="store_true", help="print the result as JSON (the view model the editor draws)")
    p.add_argument(
        "--csv", metavar="PATH", help="lr-find: also write the sweep (step, lr, loss, smoothed_loss) to PATH"
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=R.DEFAULT_TIMEOUT,
        metavar="S",
        help="time limit in seconds (default %(default)g)",
    )
    p.add_argument("--python", default="", help="interpreter with torch to run the check in (default: this one)")
    p.add_argument(
        "--cwd",
        default=None,
        metavar="DIR",
        help="folder the check runs in, where relative paths in your code start (default: the current folder, "
        "as the editor uses the workspace folder)",
    )
    p.add_argument(
        "--pythonpath",
        action="append",
        default=[],
        metavar="PATHS",
        help=f"folders to put first on the worker's import path ('{os.pathsep}'-separated, repeatable); "
        "the file's package root is added anyway",
    )
    p.add_argument("--batch-size", type=int, default=None, help="batch size of an inferred example (default 8)")
    p.add_argument(
        "--options", default="{}", metavar="JSON", help='more check options, e.g. \'{"steps": 300, "spatialSize": 28}\''
    )
    p.set_defaults(func=_cmd_check)


def _cmd_check(args: argparse.Namespace) -> int:
    if args.check == DATA:
        from ..data_checks.cli import cmd_check_data

        return cmd_check_data(args)
    import asyncio  # here, not at the top: every torchdoctor command builds this parser

    from . import jobs

    spec_or_error = _spec(args)
    if isinstance(spec_or_error, str):
        print(f"torchdoctor check: {spec_or_error}", file=sys.stderr)
        return 2
    show = _progress_printer() if sys.stderr.isatty() else None
    try:
        result = asyncio.run(jobs.run_check(spec_or_error, on_progress=show))
    except KeyboardInterrupt:  # asyncio.run cancelled the job, which killed the worker
        print("\ninterrupted: the worker was stopped", file=sys.stderr)
        return 2
    if show is not None:
        sys.stderr.write("\r\033[K")
    try:
        print(json.dumps(result, indent=2) if args.json else text_report.render(result))
        sys.stdout.flush()
    except BrokenPipeError:  # `torchdoctor check ... | head`: the reader left, the status still counts
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return R.exit_status(result)


def _spec(args: argparse.Namespace):
    """A JobSpec, or the usage error as a string."""
    from . import jobs

    try:
        options = json.loads(args.options)
    except ValueError as exc:
        return f"--options is not JSON: {exc}"
    if not isinstance(options, dict):
        return "--options must be a JSON object"
    if args.batch_size is not None:
        options["batchSize"] = args.batch_size
    if args.csv:
        if args.check != R.LR_FIND:
            return "--csv applies to lr-find only"
        options["csv"] = os.path.abspath(args.csv)  # the worker runs in --cwd
    jobs.give_budget(options, args.timeout)  # the bounded checks report what they measured before the limit
    cwd = os.path.abspath(args.cwd) if args.cwd else os.getcwd()
    if not os.path.isdir(cwd):
        return f"--cwd {args.cwd}: no such folder"
    problem = _add_python_path(args.pythonpath)
    if problem:
        return problem
    file, _, class_name = args.target.partition("::")
    if not os.path.isfile(file):
        return f"no such file: {file}"
    if not class_name:
        found = _only_class(file)
        if not found.startswith("::"):
            return found
        class_name = found[2:]
    return jobs.JobSpec(
        args.check,
        os.path.abspath(file),
        class_name,
        python=args.python,
        options=options,
        timeout=args.timeout,
        cwd=cwd,
    )


def _add_python_path(entries: list[str]) -> str | None:
    """Prepend ``--pythonpath`` folders to PYTHONPATH, which the worker inherits; or the usage error."""
    folders = [os.path.abspath(f) for e in entries for f in e.split(os.pathsep) if f]
    missing = [f for f in folders if not os.path.isdir(f)]
    if missing:
        return f"--pythonpath: no such folder: {', '.join(missing)}"
    if folders:
        old = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = os.pathsep.join(folders + ([old] if old else []))
    return None


def _only_class(file: str) -> str:
    """``::Name`` when the file has exactly one module class, else the usage error."""
    try:
        source = read_source(file)
    except SourceError as exc:
        return exc.message
    if background.parser_crashes(source):
        return f"{file}: cannot analyse this file: {background.NESTED_TOO_DEEPLY}; name the class as {file}::ClassName"
    found, note = discover_safely(source, file)
    if found is None or note is not None:
        if note is not None and note.syntax_error:
            return f"{file} has a syntax error at line {note.line + 1}, column {note.character + 1}: {note.message}"
        return f"{file}: {note.message if note else 'cannot be analysed'}; name the class as {file}::ClassName"
    models = found.models
    if len(models) == 1:
        return "::" + models[0].qualname
    names = ", ".join(m.qualname for m in models) or "none"
    return f"name the class as {file}::ClassName (nn.Module classes in the file: {names})"


def _progress_printer():
    def show(fraction: float, message: str) -> None:
        sys.stderr.write(f"\r\033[K[{fraction:4.0%}] {message}"[:200])
        sys.stderr.flush()

    return show
