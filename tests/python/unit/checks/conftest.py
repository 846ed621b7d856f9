"""Fixtures for the checks tests; helpers live in support/checks.py."""

from __future__ import annotations

import pytest

from support.checks import no_torch_python as _no_torch_python


@pytest.fixture(scope="session")
def no_torch_python(tmp_path_factory) -> str:
    return _no_torch_python(tmp_path_factory.mktemp("interp"))
