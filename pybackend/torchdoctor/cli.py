"""The ``torchdoctor`` command: the product's checks from a terminal or CI.

Each sub-command is an ``add_NAME(sub)`` function that adds its parser and sets
``func`` (args -> exit status); ``SUBCOMMANDS`` lists them. A sub-command with
more than a few lines lives in its own module and only its ``add_`` is here.
Exit status: 0 fine, 1 findings or failure, 2 usage or setup error.
"""

from __future__ import annotations

import argparse
import json
import sys

from . import __version__
from .anomaly_cli import add_run
from .checks.cli import add_check
from .lint.cli import add_lint


def _cmd_doctor(args: argparse.Namespace) -> int:
    from . import doctor

    findings = doctor.collect()
    if args.json:
        print(json.dumps({"version": __version__, "findings": doctor.as_json(findings)}, indent=2))
    else:
        print(doctor.render_text(findings, __version__))
    return doctor.exit_code(findings)


def add_doctor(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="report on this environment: Python, torch, CUDA, numpy, debugpy")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.set_defaults(func=_cmd_doctor)


SUBCOMMANDS = [add_doctor, add_check, add_lint, add_run]


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="torchdoctor",
        description="Find the PyTorch training bugs that never crash.",
    )
    parser.add_argument("--version", action="version", version=f"torchdoctor {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return 2
    try:
        return args.func(args)
    except KeyboardInterrupt:
        print("torchdoctor: interrupted", file=sys.stderr)
        return 130
    except (RecursionError, MemoryError) as exc:
        # a sentence and the usage status, not a traceback: these come from what was asked of us
        print(f"torchdoctor {args.command}: {type(exc).__name__}: {str(exc)[:500]}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
