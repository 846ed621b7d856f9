"""``guard.quiet``: no warning of ours reaches the user, and the user's own warnings behave as if
we had never run. A warning shown once per place (Python's "default" action) must not show again
after a summary, and a ``-W error`` filter must not turn torch's warnings into our failures.

Run in a fresh interpreter: pytest records warnings around every test (its own filters), which
would hide the registries we are testing."""

import subprocess
import sys
import textwrap
from pathlib import Path

BACKEND = Path(__file__).resolve().parents[5] / "pybackend"


def _run(code: str, *flags: str) -> subprocess.CompletedProcess:
    prelude = f"import sys; sys.path.insert(0, {str(BACKEND)!r})\n"
    return subprocess.run(
        [sys.executable, *flags, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_users_once_warning_is_not_shown_again_after_a_summary():
    done = _run(
        """
        import warnings
        import torch
        from torchdoctor.runtime.stats import guard
        from torchdoctor.runtime.summary.api import summarize

        def user_step():
            warnings.warn("the user's deprecation", UserWarning)

        user_step()
        with guard.quiet():
            warnings.warn("ours, inside a summary", UserWarning)
        print(summarize(torch.randn(100)))
        user_step()
        user_step()
        print("filters kept:", warnings.filters[0][0])
        """
    )
    assert done.returncode == 0, done.stderr
    # the warning's own line; Python 3.13 also echoes the source line of ``-c`` code beneath it
    assert done.stderr.count("UserWarning: the user's deprecation") == 1, done.stderr
    assert "ours, inside a summary" not in done.stderr
    assert "tensor[100]" in done.stdout


def test_an_error_filter_of_the_user_does_not_fail_our_pass_and_is_kept():
    done = _run(
        """
        import warnings
        from torchdoctor.runtime.stats import guard

        before = list(warnings.filters)
        with guard.quiet():
            warnings.warn("ours", RuntimeWarning)  # the user's "-W error" would raise it
        assert warnings.filters == before, (warnings.filters[:2], before[:2])
        try:
            warnings.warn("the user's", RuntimeWarning)
        except RuntimeWarning:
            print("the user's filter still raises")
        """,
        "-W",
        "error",
    )
    assert done.returncode == 0, done.stderr
    assert "the user's filter still raises" in done.stdout


def test_a_filter_the_user_adds_from_another_place_is_not_lost():
    """What quiet() puts in place is taken out again by itself: a filter added meanwhile stays."""
    done = _run(
        """
        import warnings
        from torchdoctor.runtime.stats import guard

        with guard.quiet():
            warnings.filterwarnings("ignore", message="added meanwhile")
        warnings.warn("added meanwhile")
        print(sum(1 for f in warnings.filters if f[1] is not None and f[1].pattern == "added meanwhile"))
        """
    )
    assert done.returncode == 0, done.stderr
    assert "added meanwhile" not in done.stderr
