"""The monitor's part of ``torchdoctor run``: ``--monitor``, ``--report``, ``--tensorboard``, ``--fail-on``.

``anomaly_cli`` calls :func:`add_arguments`, :func:`start` before the script and :func:`finish`
after it. Findings are printed to stderr as ``[torchdoctor] monitor: KIND (severity, steps A-B):
sentence (file:line)``. Exit status: the script's own (or the anomaly watch's) when not 0; else
1 when a finding is an error (``loss_nan``, ``cuda_oom``), or a warning with ``--fail-on
warning``; else 0. Trend verdicts never stop the run.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Dict, List, Optional

PREFIX = "[torchdoctor] monitor: "


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--monitor", action="store_true", help="record the training curves and judge them (docs/monitor.md)")
    p.add_argument("--report", default=None, metavar="FILE", help="write the monitor's report: FILE.json or FILE.html")
    p.add_argument(
        "--tensorboard", default=None, metavar="DIR", help="write the monitor's series to TensorBoard in DIR"
    )
    p.add_argument(
        "--fail-on",
        choices=("error", "warning"),
        default="error",
        help="exit 1 on a monitor finding of this severity or worse (default: error)",
    )


def start(args: argparse.Namespace) -> Optional[Dict[str, Any]]:
    """Arm the monitor when asked; ``{"problem": text}`` for a usage error (exit 2)."""
    wanted = args.monitor or args.report or args.tensorboard
    if not wanted:
        return None
    if args.report and not args.report.lower().endswith((".json", ".html", ".htm")):
        return {"problem": f"--report must name a .json or .html file, not {args.report}"}
    # Resolved now, against the directory the command was started in: the script may chdir before
    # the writer opens (at its import torch) or the report is written (after it ends).
    args.report = os.path.abspath(args.report) if args.report else None
    args.tensorboard = os.path.abspath(args.tensorboard) if args.tensorboard else None
    from . import children, startup
    from .config import MonitorConfig

    startup.reset()
    config = MonitorConfig(tensorboard=args.tensorboard)
    startup.activate(config=config)
    children.watch()
    return {"config": config}


def note_exception(exc: BaseException) -> None:
    """The script's uncaught exception (an OOM gets its explanation as ``cuda_oom``)."""
    from . import recorder

    monitor = recorder.current()
    if monitor is not None:
        monitor.note_exception(exc)


def finish(session: Optional[Dict[str, Any]], args: argparse.Namespace, status: int) -> int:
    if session is None:
        return status
    from . import children, startup

    monitor = startup.finish()
    started = children.stop()
    for problem in startup.problems():
        print(f"{PREFIX}{problem}", file=sys.stderr)
    startup.reset()
    if monitor is None:
        print(f"{PREFIX}the script never imported torch: nothing was recorded", file=sys.stderr)
        return status
    findings = monitor.findings()
    _say(findings, monitor.total_steps(), started)
    if args.report:
        from . import report

        try:
            report.write(args.report, report.build(monitor, args.script))
            print(f"{PREFIX}report written to {args.report}", file=sys.stderr)
        except OSError as exc:
            print(f"{PREFIX}cannot write {args.report}: {exc}", file=sys.stderr)
            return status or 2
    failing = ("error",) if args.fail_on == "error" else ("error", "warning")
    if status != 0:
        return status
    return 1 if any(f["severity"] in failing for f in findings) else 0


def _say(findings: List[Dict[str, Any]], steps: int, children: int = 0) -> None:
    print(f"{PREFIX}{steps} training steps, {len(findings)} finding(s)", file=sys.stderr)
    if not steps:
        print(f"{PREFIX}{_why_no_steps(children)}", file=sys.stderr)
    for f in findings:
        where = f.get("where") or {}
        at = f" ({os.path.basename(str(where.get('path')))}:{where.get('line')})" if where else ""
        span = f.get("range") or [f.get("step"), f.get("step")]
        print(f"{PREFIX}{f['kind']} ({f['severity']}, steps {span[0]}-{span[1]}): {f['sentence']}{at}", file=sys.stderr)


def _why_no_steps(children: int) -> str:
    """Why nothing was recorded: the monitor follows only the process it was started in."""
    if children:
        return (
            f"no step ran in this process, which started {children} child process(es) (multiprocessing): "
            "training there (hogwild, torch.multiprocessing.spawn) is not recorded; the monitor records "
            "the process it runs in"
        )
    return "no step ran: no optimizer.step() and no loss.backward() was seen in this process"
