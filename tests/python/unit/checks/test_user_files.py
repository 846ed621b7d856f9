"""One test of "the user's file or a library's", asked by the data checks and the example snippet."""

from __future__ import annotations

import json

from torchdoctor.checks import user_files
from torchdoctor.checks.example.snippet import _installed


def test_library_files_are_not_the_users():
    assert not user_files.is_user_file(json.__file__)  # the standard library
    assert not user_files.is_user_file(user_files.__file__)  # Torch Doctor itself
    assert not user_files.is_user_file("/opt/env/lib/python3.11/site-packages/pkg/mod.py")
    assert user_files.is_user_file(__file__)


def test_the_snippet_takes_a_standard_library_class_as_installed():
    """Its own test looked for "site-packages" in the path: json's encoder passed for the user's
    class, and the snippet told the user to leave out an import "in json.encoder.py itself"."""
    assert _installed(json.JSONEncoder)
    assert not _installed(type("Local", (), {}))  # no source file: nothing to tell
