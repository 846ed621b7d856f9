"""The children's ``sitecustomize`` (``runtime/anomaly/boot``) runs the one it hides as itself."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from support.anomaly import PYBACKEND

BOOT = Path(PYBACKEND) / "torchdoctor" / "runtime" / "anomaly" / "boot"

USERS = """
import os
HERE = os.path.dirname(__file__)
class Stand:  # a class a spawned child gets pickled by name (a dataset stand-in, hogwild)
    pass
def __getattr__(name):
    if name == "LATE":
        return 42
    raise AttributeError(name)
"""

CHILD = """
import pickle, sitecustomize
print(sitecustomize.HERE)
print(type(pickle.loads(pickle.dumps(sitecustomize.Stand()))).__qualname__)
print(sitecustomize.LATE)
"""


def test_the_hidden_sitecustomize_is_this_module(tmp_path):
    user = tmp_path / "user site"
    user.mkdir()
    (user / "sitecustomize.py").write_text(textwrap.dedent(USERS))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BOOT), str(user)]))
    env.pop("TORCHDOCTOR_ANOMALY_REPORTS", None)  # the watch itself is not armed: stdlib only
    done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str(user), "Stand", "42"]
    assert "[torchdoctor]" not in done.stderr


def test_a_failing_hidden_sitecustomize_is_said_and_the_program_runs(tmp_path):
    (tmp_path / "sitecustomize.py").write_text("raise RuntimeError('broken site')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(BOOT), str(tmp_path)]))
    env.pop("TORCHDOCTOR_ANOMALY_REPORTS", None)
    done = subprocess.run([sys.executable, "-c", "print('ran')"], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == "ran\n"
    assert "the environment's sitecustomize failed: broken site" in done.stderr
