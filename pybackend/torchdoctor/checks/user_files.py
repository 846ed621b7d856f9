"""Whether a source file is the user's own code or a library's (stdlib only, backend and worker side).

One test for both sides that ask it: the data checks (``data_checks/loader_errors``: the user's
innermost frame of a DataLoader worker's traceback) and the example snippet (``example/snippet``:
a class of an installed package is imported by the user's file, not edited there). The snippet's
own test looked for ``site-packages`` in the path only: a class of the standard library, or one
from a ``pip install --user`` outside any ``site-packages`` folder name, passed for the user's.
"""

from __future__ import annotations

import os
import sysconfig

PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # torchdoctor/


def library_roots() -> list:
    """The standard library, the interpreter's installed packages and Torch Doctor, each ending in a separator."""
    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return [os.path.abspath(r) + os.sep for r in roots if r] + [PACKAGE + os.sep]


def is_user_file(path: str) -> bool:
    """A file of the user's code: not in an installed package, the standard library or Torch Doctor."""
    if path.startswith("<"):  # <frozen ...>, <string>
        return False
    if not os.path.isabs(path) and not os.path.exists(path):  # a compiled package's source name
        return False  # (numpy's "numpy/random/_mt19937.pyx"): no file of the user's
    norm = path.replace("\\", "/")
    if "/site-packages/" in norm or "/dist-packages/" in norm:
        return False
    full = os.path.abspath(path)
    return not any(full.startswith(root) for root in library_roots())
