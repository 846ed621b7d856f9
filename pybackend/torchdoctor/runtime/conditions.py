"""Kept for anomaly breakpoints already saved in users' workspaces: see ``runtime/anomaly/conditions.py``."""

from .anomaly.conditions import any_nonfinite, exceeds, grad_norm_exceeds, last_error, loss_spiked  # noqa: F401
