"""Kept for the pydevd plugin's earlier import path: see ``runtime/summary/children.py``."""

from .summary.children import tensor_children  # noqa: F401
