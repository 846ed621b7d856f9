"""Kept for the pydevd plugin's earlier import path: see ``runtime/summary/kinds.py``."""

from .summary.kinds import classify, is_plain_container  # noqa: F401
