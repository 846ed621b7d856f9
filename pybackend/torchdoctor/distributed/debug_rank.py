"""A rank of the VS Code torchrun launch: the distributed checks a debug session can run.

Under ``torchdoctor run`` each rank starts through ``rank_entry``; under the debugger it runs
the user's script directly (torchrun under debugpy, every rank a child session), with only the
pydevd plugin's ``runtime.startup.activate``. This is what that activation adds when the
process is a rank of a job of two or more (``RANK`` and ``WORLD_SIZE`` set by torchrun):

- the unused-parameter check (``unused.py``): at the first training forward after a backward
  that left some parameters of a DDP model without a gradient, the rank's line
  (``[rank1]: [torchdoctor] distributed: ...``) goes to the Debug Console and the rank pauses
  on the user's ``model(x)`` line, with the sentence in VS Code's exception widget, before DDP
  raises its own error there ("Expected to have finished reduction"). The extension's
  exception stop pauses the other ranks too (the one waiting in the all-reduce included).
  Continue lets DDP raise as it would have.

The cross-rank consistency checks (``facts.py``) need the launcher to read every rank's facts
when the job ends, so they stay with ``torchdoctor run``.
"""

from __future__ import annotations

import sys
from typing import Any, Dict, Mapping

from . import ranks

NAME = "distributed"
LINE_PREFIX = "[torchdoctor] distributed: "


def wanted(environ: Mapping[str, str]) -> bool:
    """A rank of a multi-process job, in a Torch Doctor debug session."""
    return (
        environ.get("TORCHDOCTOR_RUNTIME") == "1" and ranks.rank(environ) is not None and ranks.world_size(environ) > 1
    )


def install(torch: Any) -> None:
    """Called once torch is imported (``runtime.startup.when_torch_imported``)."""
    from . import unused

    unused.install(_report)


def _report(found: Dict[str, Any]) -> None:
    """Say it, then pause this rank at the user's frame when a debugger client is connected."""
    from ..runtime.anomaly import frames, pause

    sentence = found["sentence"]
    pause.announce(sentence, prefix=ranks.prefix() + LINE_PREFIX)
    frame = frames.user_frame(sys._getframe(1))
    if frame is not None and pause.debugger_attached():
        pause.pause(frame, sentence, found)
