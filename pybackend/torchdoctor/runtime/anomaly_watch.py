"""Kept for Debug Console and Watch expressions written from earlier docs: see ``runtime/anomaly/watch.py``."""

from .anomaly.watch import last_report  # noqa: F401
