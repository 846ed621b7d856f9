"""What every mixin of :class:`watch.Watch` reads from the watch: declared once for the type checker.

``DeadRule``, ``GradientChecks`` and ``LossChecks`` are parts of one object kept in files of their
own; this base names the state and the reporting methods they share (the values and bodies are
:class:`watch.Watch`'s). It adds nothing at run time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Optional

if TYPE_CHECKING:
    from .config import AnomalyConfig
    from .names import ModuleNames
    from .steps import OptimizerSteps


class WatchHost:
    config: AnomalyConfig
    names: ModuleNames
    optimizers: OptimizerSteps
    step: int
    updates: int  # optimizer steps seen

    if TYPE_CHECKING:

        def _may_report(
            self, action: str, step: Optional[int] = None, advice: bool = False, nonfinite: bool = False
        ) -> bool: ...

        def _emit(
            self,
            report: Dict[str, Any],
            frame: Any,
            step: Optional[int] = None,
            about: Any = None,
            count: bool = True,
        ) -> None: ...

        def _error(self, exc: BaseException) -> None: ...

        def _qualify(self, path: str, module: Any, frame: Any) -> str: ...
