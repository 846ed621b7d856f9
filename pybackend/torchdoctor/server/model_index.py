"""The model classes of each document, for CodeLens and ``torchDoctor/findModels``.

- The last good discovery of a document is kept, so lenses do not vanish while the user types a
  line that does not parse yet.
- One discovery per document version: VS Code asks for lenses again on every change and on
  scroll; the same text is not parsed twice.
- Bounded: a text over ``MAX_ANALYSIS_BYTES`` is not parsed at all (``ast.parse`` holds the GIL,
  and a 2 MB file held every request of the server for seconds); the note says so.
- Never an internal error: text the parser cannot take (100,000-term sums, thousands of ``elif``,
  a lone surrogate, a null byte) is a note with the reason, like a syntax error.
- Off the event loop: the walk over the tree is Python code in a worker thread, so other requests
  are answered between its steps.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Dict, Optional, Tuple

from ..checks.discovery import Discovery, SourceSyntaxError, discover
from ..checks.source_text import too_large_message

MAX_ANALYSIS_BYTES = 1024 * 1024  # ~30,000 lines of typical code; parsing more stalls the server


@dataclass
class Note:
    """Why the classes shown are not from the current text (LSP positions)."""

    message: str
    line: int = 0
    character: int = 0

    def to_json(self) -> dict:
        return {"message": self.message, "line": self.line, "character": self.character}


def discover_safely(source: str, path: str) -> Tuple[Optional[Discovery], Optional[Note]]:
    """``discover`` with every way it can fail turned into a ``Note``."""
    size = len(source)
    if size > MAX_ANALYSIS_BYTES:
        return None, Note(f"{too_large_message(size, MAX_ANALYSIS_BYTES)}: no CodeLenses or model checks for it")
    try:
        return discover(source, path), None
    except SourceSyntaxError as exc:
        return None, Note(exc.message, exc.line, exc.character)
    except RecursionError:
        return None, Note("cannot analyse this file: an expression or statement is nested too deeply to parse")
    except MemoryError:
        return None, Note("cannot analyse this file: parsing it ran out of memory")
    except UnicodeEncodeError as exc:  # a lone surrogate cannot be encoded for the parser
        return None, Note(f"cannot analyse this file: it contains text Python cannot read ({exc.reason})")
    except ValueError as exc:  # a null byte (Python < 3.12 raises ValueError, not SyntaxError)
        return None, Note(f"cannot analyse this file: {exc}")


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
