"""Settings shared by every Python test layer (unit, LSP, DAP, E2E).

One Hypothesis profile, loaded by default, so no property test depends on how busy the machine
is: no per-example deadline and no ``too_slow`` health check (a shared 2-core CI box can take
seconds to draw an example), and no example database in CI (a clean clone must not replay
examples found elsewhere; locally the database still helps reproduce a failure). Each test keeps
its own ``max_examples``.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "torchdoctor",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None if os.environ.get("CI") else settings.default.database,
    print_blob=True,
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "torchdoctor"))
