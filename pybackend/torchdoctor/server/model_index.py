"""The model classes of each document, for CodeLens and ``torchDoctor/findModels``.

- The last good discovery of a document is kept, so lenses do not vanish while the user types a
  line that does not parse yet.
- One discovery per document version: VS Code asks for lenses again on every change and on
  scroll; the same text is not parsed twice. A result that comes back after a newer version
  was asked for answers its own request but is not kept (neither as that version's result nor
  as the last good one).
- ``forget`` on ``textDocument/didClose`` (``app.py``): a reopened document's versions start at 1
  again. A version lower than one asked for before is taken the same way, as a new document;
  a result for the old text that comes back afterwards is not kept.
- Bounded and never an internal error (``checks/safe_discovery.py``): a text over
  ``MAX_ANALYSIS_BYTES`` is not parsed, and text the parser cannot take is a note with the reason.
- Off the event loop: a small document is discovered in a worker thread; one over
  ``LARGE_DOCUMENT`` in a child process (``torchdoctor/background.py``), since a thread still
  holds the interpreter while ``ast.parse`` runs (a 1 MB file: about a second per version) and
  every other request would wait for it. The same function runs there, so its notes are the
  same; a child that stops before answering (a crash, killed for memory) is a note too, and so is
  one that takes longer than its deadline (``background.DEADLINE_SECONDS``, 30 s: it is killed).

``DiscoveryIndex`` is the mechanism; ``ModelIndex`` finds model classes, and the data feature
(``data_feature.py``) gives it its own discovery of data targets.
"""

from __future__ import annotations

import asyncio
from typing import Callable, Dict, Generic, Optional, Tuple, TypeVar

from ..background import LARGE_DOCUMENT, Child, ChildStopped
from ..checks.discovery import Discovery
from ..checks.safe_discovery import MAX_ANALYSIS_BYTES, Note, discover_safely

__all__ = ["CHILD", "LARGE_DOCUMENT", "MAX_ANALYSIS_BYTES", "DiscoveryIndex", "ModelIndex", "Note", "discover_safely"]

CHILD = Child("discovery")  # model classes and data targets of large documents

Found = TypeVar("Found")
Why = TypeVar("Why")


class DiscoveryIndex(Generic[Found, Why]):
    """Per-document discovery results (see the module docstring).

    ``discover(source, path)`` -> ``(found or None, note or None)`` never raises for bad text; it
    must be a module-level function (it is sent to the child by name). ``empty()`` is what is
    shown before anything was found; ``stopped(note)`` the note when the child died or ran past
    its deadline (``note``: the sentence to show)."""

    def __init__(
        self,
        discover: Callable[[str, str], Tuple[Optional[Found], Optional[Why]]],
        empty: Callable[[], Found],
        stopped: Callable[[str], Why],
        large: int = LARGE_DOCUMENT,
    ) -> None:
        self._discover, self._empty, self._note_stopped, self._large = discover, empty, stopped, large
        self._last_good: Dict[str, Found] = {}
        self._by_version: Dict[str, Tuple[object, Found, Optional[Why]]] = {}
        self._asked: Dict[str, object] = {}  # the newest version asked for, per document
        self._opened: Dict[str, object] = {}  # per document, a token replaced when it is forgotten

    async def get(self, uri: str, path: str, source: str, version: object = None) -> Tuple[Found, Optional[Why]]:
        cached = self._by_version.get(uri)
        if version is not None and cached is not None and cached[0] == version:
            return cached[1], cached[2]
        if isinstance(version, int) and _newer(self._asked.get(uri), version):
            self.forget(uri)  # a version lower than one seen: reopened (VS Code counts from 1 again)
        opened = self._opened.setdefault(uri, object())
        if _newer(version, self._asked.get(uri)):
            self._asked[uri] = version
        found, note = await self._run(source, path)
        # asked for meanwhile, or closed (and maybe reopened) meanwhile: answer, but keep nothing
        stale = (version is not None and _newer(self._asked.get(uri), version)) or self._opened.get(uri) is not opened
        if found is not None:
            if not stale:
                self._last_good[uri] = found
        else:
            last = self._last_good.get(uri)
            found = last if last is not None else self._empty()
        if version is not None and not stale:
            self._by_version[uri] = (version, found, note)
        return found, note

    def forget(self, uri: str) -> None:
        """Drop what is known of ``uri`` (closed); a discovery still running for it is not kept."""
        self._by_version.pop(uri, None)
        self._last_good.pop(uri, None)
        self._asked.pop(uri, None)
        self._opened.pop(uri, None)

    async def _run(self, source: str, path: str) -> Tuple[Optional[Found], Optional[Why]]:
        if len(source) > self._large and len(source) <= MAX_ANALYSIS_BYTES:
            try:
                return await CHILD.run(self._discover, source, path)
            except ChildStopped as exc:  # a crash, out of memory, or past the deadline: the text says which
                return None, self._note_stopped(str(exc))
        return await asyncio.get_running_loop().run_in_executor(None, self._discover, source, path)


class ModelIndex(DiscoveryIndex[Discovery, Note]):
    """The model classes of each document (``checks/discovery.py`` through ``discover_safely``)."""

    def __init__(self, discover: Callable[[str, str], Tuple[Optional[Discovery], Optional[Note]]] = discover_safely):
        super().__init__(discover, _no_models, _stopped_note)


def _no_models() -> Discovery:
    return Discovery(models=[], hasExample=False)


def _stopped_note(note: str) -> Note:
    return Note(note)


def _newer(version: object, than: object) -> bool:
    """Whether document version ``version`` is newer than ``than``; a file on disk (None) has none."""
    if not isinstance(version, int):
        return False
    return not isinstance(than, int) or version > than
