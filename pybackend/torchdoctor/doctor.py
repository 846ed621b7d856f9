"""``torchdoctor doctor``: what a new user's environment has, and what it lacks.

Each probe returns a :class:`Finding`; a probe never raises, so one broken
package cannot hide the report on the others.
"""

from __future__ import annotations

import importlib
import platform
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Callable

MIN_PYTHON = (3, 9)


@dataclass
class Finding:
    """One line of the report: a component, its state, and the fix when it is missing."""

    name: str
    ok: bool
    detail: str
    fix: str = ""
    extra: dict = field(default_factory=dict)


def _python() -> Finding:
    version = ".".join(str(p) for p in sys.version_info[:3])
    ok = sys.version_info[:2] >= MIN_PYTHON
    return Finding(
        "python",
        ok,
        f"{version} at {sys.executable} ({platform.system()} {platform.machine()})",
        "" if ok else "Torch Doctor needs Python >= 3.9: point the setting torchDoctor.python at a newer interpreter.",
    )


def _import(module: str) -> tuple[ModuleType | None, str]:
    try:
        return importlib.import_module(module), ""
    except Exception as exc:  # any failure to import is a finding, not a crash
        return None, f"{type(exc).__name__}: {exc}"


def _torch() -> Finding:
    torch, error = _import("torch")
    if torch is None:
        return Finding(
            "torch",
            False,
            f"not importable ({error})",
            f"install it into this interpreter: {sys.executable} -m pip install torch",
        )
    where = Path(torch.__file__).parent if torch.__file__ else "an unknown location (no __file__)"
    return Finding("torch", True, f"{torch.__version__} at {where}")


def _cuda() -> Finding:
    torch, _ = _import("torch")
    if torch is None:
        return Finding("cuda", False, "unknown: torch is not importable", "install torch first")
    try:
        if not torch.cuda.is_available():
            built = torch.version.cuda or "none (CPU build)"
            return Finding("cuda", True, f"not available; torch built with CUDA {built}", extra={"available": False})
        names = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
        cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
        return Finding(
            "cuda",
            True,
            f"CUDA {torch.version.cuda}, cuDNN {cudnn}, {len(names)} device(s): {', '.join(names)}",
            extra={"available": True, "devices": names},
        )
    except Exception as exc:
        return Finding(
            "cuda", False, f"query failed: {type(exc).__name__}: {exc}", "check the NVIDIA driver (nvidia-smi)"
        )


def _version_of(module: str, purpose: str) -> Callable[[], Finding]:
    def probe() -> Finding:
        mod, error = _import(module)
        if mod is None:
            return Finding(
                module, False, f"not importable ({error})", f"{sys.executable} -m pip install {module}  ({purpose})"
            )
        version = getattr(mod, "__version__", "unknown version")
        return Finding(module, True, f"{version} at {Path(getattr(mod, '__file__', '') or '.').parent}")

    return probe


def _runtime() -> Finding:
    here = Path(__file__).resolve().parent
    runtime = here / "runtime"
    ok = runtime.is_dir()
    return Finding(
        "runtime",
        ok,
        f"{runtime}" if ok else f"missing under {here}",
        "" if ok else "reinstall Torch Doctor: the runtime package is incomplete",
    )


PROBES: list[Callable[[], Finding]] = [
    _python,
    _torch,
    _cuda,
    _version_of("numpy", "optional: numpy array summaries"),
    _version_of("debugpy", "needed to debug with the torchdoctor debug type"),
    _runtime,
]

# Without these the product cannot do its job in this interpreter.
ESSENTIAL = {"python", "torch"}


def collect() -> list[Finding]:
    return [probe() for probe in PROBES]


def render_text(findings: list[Finding], version: str) -> str:
    lines = [f"Torch Doctor {version}: environment report"]
    width = max(len(f.name) for f in findings)
    for f in findings:
        mark = "ok " if f.ok else "!! "
        lines.append(f"  {mark}{f.name.ljust(width)}  {f.detail}")
        if f.fix:
            lines.append(f"     {' ' * width}  fix: {f.fix}")
    problems = [f.name for f in findings if not f.ok and f.name in ESSENTIAL]
    lines.append("Ready." if not problems else f"Not ready: {', '.join(problems)} (see the fixes above).")
    return "\n".join(lines)


def as_json(findings: list[Finding]) -> list[dict]:
    return [asdict(f) for f in findings]


def exit_code(findings: list[Finding]) -> int:
    return 1 if any(not f.ok and f.name in ESSENTIAL for f in findings) else 0
