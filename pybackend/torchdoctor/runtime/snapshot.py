"""Kept for the extension's ``__import__('torchdoctor.runtime.snapshot', ...).dump(...)``: see ``runtime/collect/snapshot.py``."""

from .collect.snapshot import SCHEMA, VERSION, build, dump, status_line  # noqa: F401
