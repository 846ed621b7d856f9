"""debugpy's false "incompatible copy of pydevd already imported" warning about our plugin, hidden.

In every process debugpy follows (each torchrun rank, a ``subprocess`` child), pydevd loads the
plugins on ``sys.path`` before ``debugpy._vendored.force_pydevd`` runs its check, and the check
takes any module named ``pydev...`` whose file is outside debugpy's folder for a second pydevd:
our plugin's module (``pydevd_plugins.extensions.pydevd_plugin_torchdoctor``) is always such a
module, so each rank printed three lines of a warning that named our file, before the user's
output (docs/distributed.md; debugpy issue #1910, any plugin outside debugpy gets it).

Our plugin's import runs before that check, so it installs a filter for exactly that message
naming exactly its own file, and nothing else: a warning that lists another file as well (a
real second copy of pydevd, an installed ``pydevd`` package) still shows, whole.
"""

from __future__ import annotations

import re
import warnings

WARNING = "incompatible copy of pydevd already imported:"


def pattern(plugin_file: str) -> str:
    """The regular expression of the warning's whole text when it names ``plugin_file`` alone."""
    return re.escape(WARNING) + r"\s*" + re.escape(plugin_file) + r"\s*\Z"


def hide_for(plugin_file: str) -> None:
    """Hide the warning that names ``plugin_file`` alone (a ``UserWarning`` from debugpy)."""
    warnings.filterwarnings("ignore", message=pattern(plugin_file), category=UserWarning)
