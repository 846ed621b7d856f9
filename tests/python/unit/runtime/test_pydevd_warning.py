"""The filter of debugpy's false "incompatible copy of pydevd" warning (``runtime/pydevd_warning.py``):
the message naming our plugin's file alone is hidden; one naming another file too still shows,
whole; other warnings are untouched. The message is built as debugpy 1.8.22's ``force_pydevd``
builds it."""

from __future__ import annotations

import warnings

import pytest

from torchdoctor.runtime import pydevd_warning

PLUGIN = "/home/user/.vscode/extensions/torch doctor/pybackend/pydevd_plugins/extensions/pydevd_plugin_torchdoctor.py"


def _debugpy_message(files) -> str:
    return "incompatible copy of pydevd already imported" + ":\n {}".format("\n  ".join(sorted(files)))


def _shown(message: str) -> list:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pydevd_warning.hide_for(PLUGIN)
        warnings.warn(message, UserWarning, stacklevel=1)
    return [str(w.message) for w in caught]


def test_the_warning_naming_our_plugin_alone_is_hidden() -> None:
    assert _shown(_debugpy_message([PLUGIN])) == []


@pytest.mark.parametrize(
    "files",
    [
        [PLUGIN, "/usr/lib/python3/site-packages/pydevd.py"],  # a real second copy of pydevd
        ["/usr/lib/python3/site-packages/pydevd.py"],
        [PLUGIN + ".bak"],  # another file, whose name starts like ours
    ],
)
def test_a_warning_naming_another_file_still_shows_whole(files) -> None:
    message = _debugpy_message(files)
    assert _shown(message) == [message]


def test_other_warnings_are_untouched() -> None:
    assert _shown("something else: " + PLUGIN) == ["something else: " + PLUGIN]
