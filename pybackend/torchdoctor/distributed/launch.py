"""``torchdoctor run --nproc-per-node N [--torchrun-arg A ...] script.py [args...]``.

Starts ``torch.distributed.run`` (torchrun) in this process with every rank running
``rank_entry`` under the anomaly watch, then says in one line which rank went wrong first.

- ``--standalone`` is added unless a rendezvous option is given, so two jobs on one machine
  never fight over port 29500.
- Exit status: 130 when interrupted; 1 when any rank reported an anomaly; otherwise the first
  failed rank's exit status (torchrun's ``ChildFailedError``); otherwise 0.
- torchrun's own failure logging (a ``ChildFailedError`` traceback naming whichever rank died
  last) is replaced by our line, which names the first.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
from typing import Any, Dict, List, Optional, Tuple

from ..runtime.anomaly import children
from . import consistency, facts, first

INTERRUPTED = 130
RENDEZVOUS = ("--standalone", "--rdzv-endpoint", "--rdzv_endpoint", "--master-addr", "--master_addr", "--nnodes")


def torchrun_argv(nproc: int, extra: List[str], script: str, args: List[str]) -> List[str]:
    """The arguments for ``torch.distributed.run``: each rank runs our entry, then the script."""
    argv = ["--nproc-per-node", str(nproc)]
    if not any(a.split("=")[0] in RENDEZVOUS for a in extra):
        argv.append("--standalone")
    return argv + list(extra) + ["-m", "torchdoctor.distributed.rank_entry", os.path.abspath(script)] + list(args)


def run(nproc: int, extra: List[str], script: str, args: List[str], config: Any) -> Tuple[int, List[Dict[str, Any]]]:
    """Run the job; (exit status, every rank's reports)."""
    with tempfile.TemporaryDirectory(prefix="torchdoctor-ranks-") as folder:
        noted = os.path.join(folder, "facts")
        os.mkdir(noted)
        children.prepare_children(json.dumps(config.to_json()), folder)
        os.environ[facts.FACTS_ENV] = noted
        try:
            failure = _torchrun(torchrun_argv(nproc, extra, script, args))
        finally:
            children.forget_children()
            os.environ.pop(facts.FACTS_ENV, None)
        reports = children.collect(folder)
        checks = consistency.findings(consistency.read(noted)) if failure == 0 else []
    for found in checks:
        print(f"[torchdoctor] distributed: {found['sentence']}", file=sys.stderr)
    line = first.summary(reports, nproc)
    reports += checks
    if line:
        print(line, file=sys.stderr)
    elif checks:
        print(f"torchdoctor run: {len(checks)} distributed problem(s) across the {nproc} ranks", file=sys.stderr)
    elif failure not in (0, INTERRUPTED):
        print(f"torchdoctor run: a rank exited with status {failure}; torchrun stopped the others", file=sys.stderr)
    if failure == INTERRUPTED:
        return INTERRUPTED, reports
    anomalies = [r for r in reports if not r.get("advice")]
    return (1 if anomalies else failure), reports


def _torchrun(argv: List[str]) -> int:
    """0, the first failed rank's exit status, or 130; never torchrun's traceback."""
    from torch.distributed import run as torchrun
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    logging.getLogger("torch.distributed.elastic").setLevel(logging.CRITICAL)
    try:
        torchrun.run(torchrun.parse_args(argv))
        return 0
    except ChildFailedError as failed:
        return _first_status(failed) or 1
    except KeyboardInterrupt:
        return INTERRUPTED


def _first_status(failed: Any) -> Optional[int]:
    """The exit status of the rank that failed first (torchrun's own ``get_first_failure``)."""
    try:
        _, failure = failed.get_first_failure()
        code = int(failure.exitcode)
    except Exception:
        return None
    return code if code > 0 else 1  # a rank killed by a signal (-15) is a failure too
