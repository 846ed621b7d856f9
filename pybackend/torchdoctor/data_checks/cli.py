"""``torchdoctor check data FILE[::NAME] [--json]``: the data checks from a terminal (no numpy, no torch here).

Reached through ``torchdoctor check`` (``checks/cli.py`` hands ``data`` over) and shares its options:
``--timeout``, ``--python``, ``--cwd``, ``--pythonpath``, ``--options`` (``maxSamples``, ``maxBatches``).
NAME: a Dataset subclass, a function returning datasets/loaders, a module-level dataset, or
``torchdoctor_data`` (the default when the file defines it). Exit status: 0 nothing found,
1 findings, 2 the check could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys

from . import budget, report
from . import findings as F
from .jobs import DataJobSpec, run_data_check


def spec_from_args(args: argparse.Namespace):
    """A DataJobSpec, or the usage error as a string."""
    try:
        options = json.loads(getattr(args, "options", "{}") or "{}")
    except ValueError as exc:
        return f"--options is not JSON: {exc}"
    if not isinstance(options, dict):
        return "--options must be a JSON object"
    for key in ("maxSamples", "maxBatches"):
        value = options.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            return f"--options {key} must be a positive whole number, not {value!r}"
    problem = budget.option_error(options.get("budgetSeconds"))
    if problem is not None:
        return f"--options: {problem}"
    if getattr(args, "csv", None):
        return "--csv applies to lr-find only"
    file, _, name = args.target.partition("::")
    if not os.path.isfile(file):
        return f"no such file: {file}"
    cwd = os.path.abspath(args.cwd) if getattr(args, "cwd", None) else os.getcwd()
    if not os.path.isdir(cwd):
        return f"--cwd {args.cwd}: no such folder"
    folders = [os.path.abspath(f) for e in getattr(args, "pythonpath", []) or [] for f in e.split(os.pathsep) if f]
    missing = [f for f in folders if not os.path.isdir(f)]
    if missing:
        return f"--pythonpath: no such folder: {', '.join(missing)}"
    if folders:
        old = os.environ.get("PYTHONPATH", "")
        os.environ["PYTHONPATH"] = os.pathsep.join(folders + ([old] if old else []))
    timeout = float(getattr(args, "timeout", 120.0))
    if not timeout > 0:
        return f"--timeout must be a positive number of seconds, not {timeout:g}"
    return DataJobSpec(os.path.abspath(file), name, getattr(args, "python", "") or "", options, timeout, cwd=cwd)


def cmd_check_data(args: argparse.Namespace) -> int:
    spec = spec_from_args(args)
    if isinstance(spec, str):
        print(f"torchdoctor check data: {spec}", file=sys.stderr)
        return 2
    show = _progress_printer() if sys.stderr.isatty() else None
    try:
        result = asyncio.run(run_data_check(spec, on_progress=show))
    except KeyboardInterrupt:
        print("\ninterrupted: the worker was stopped", file=sys.stderr)
        return 2
    if show is not None:
        sys.stderr.write("\r\033[K")
    try:
        print(json.dumps(result, indent=2) if args.json else report.render(result))
        sys.stdout.flush()
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return F.exit_status(result)


def _progress_printer():
    def show(fraction: float, message: str) -> None:
        sys.stderr.write(f"\r\033[K[{fraction:4.0%}] {message}"[:200])
        sys.stderr.flush()

    return show
