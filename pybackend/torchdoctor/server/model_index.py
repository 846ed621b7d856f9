"""The model classes of each document, for CodeLens and ``torchDoctor/findModels``.

- The last good discovery of a document is kept, so lenses do not vanish while the user types a
  line that does not parse yet.
- One discovery per document version: VS Code asks for lenses again on every change and on
  scroll; the same text is not parsed twice.
- Bounded and never an internal error (``checks/safe_discovery.py``): a text over
  ``MAX_ANALYSIS_BYTES`` is not parsed, and text the parser cannot take is a note with the reason.
- Off the event loop: the walk over the tree is Python code in a worker thread, so other requests
  are answered between its steps.
"""

from __future__ import annotations

import asyncio
from typing import Dict, Optional, Tuple

from ..checks.discovery import Discovery
from ..checks.safe_discovery import MAX_ANALYSIS_BYTES, Note, discover_safely

__all__ = ["MAX_ANALYSIS_BYTES", "ModelIndex", "Note", "discover_safely"]


class ModelIndex:
    """Per-document discovery results (see the module docstring)."""

    def __init__(self) -> None:
        self._last_good: Dict[str, Discovery] = {}
        self._by_version: Dict[str, Tuple[object, Discovery, Optional[Note]]] = {}

    async def get(self, uri: str, path: str, source: str, version: object = None) -> Tuple[Discovery, Optional[Note]]:
        cached = self._by_version.get(uri)
        if version is not None and cached is not None and cached[0] == version:
            return cached[1], cached[2]
        loop = asyncio.get_running_loop()
        found, note = await loop.run_in_executor(None, discover_safely, source, path)
        if found is not None:
            self._last_good[uri] = found
        else:
            found = self._last_good.get(uri, Discovery(models=[], hasExample=False))
        if version is not None:
            self._by_version[uri] = (version, found, note)
        return found, note

    def forget(self, uri: str) -> None:
        self._by_version.pop(uri, None)
        self._last_good.pop(uri, None)
