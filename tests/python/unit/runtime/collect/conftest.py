"""Fixtures for the collection tests; helpers live in support/collect.py."""

from __future__ import annotations

import pytest

from torchdoctor.runtime.collect import install as collect_install


@pytest.fixture
def collector():
    """The collection installed for one test, reducing every pass (budget 1.0)."""
    installed = collect_install.install(1.0)
    try:
        yield installed
    finally:
        collect_install.uninstall()
