"""Model discovery that never raises: every way a text can defeat the parser becomes a ``Note``.

``discover`` raises ``SourceSyntaxError`` for a syntax error, but the parser has other ways to
fail: ``RecursionError`` on a 100,000-term ``a+a+...`` or an attribute chain as long,
``MemoryError``, ``UnicodeEncodeError`` on a lone surrogate, ``ValueError`` on a null byte
(Python < 3.12). Each was a JSON-RPC internal error or a CLI traceback; here each is a sentence.
Texts over ``MAX_ANALYSIS_BYTES`` are not parsed at all: ``ast.parse`` holds the GIL, and a
2 MB file stalled every request of the language server for seconds.

Shared by the language server (CodeLens, findModels) and the CLI (the only class of a file).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

from .discovery import Discovery, SourceSyntaxError, discover
from .source_text import too_large_message

MAX_ANALYSIS_BYTES = 1024 * 1024  # ~30,000 lines of typical code; parsing more stalls the server


@dataclass
class Note:
    """Why the classes shown are not from the current text (LSP positions)."""

    message: str
    line: int = 0
    character: int = 0
    syntax_error: bool = False  # the position is the parser's

    def to_json(self) -> dict:
        return {"message": self.message, "line": self.line, "character": self.character}


def discover_safely(source: str, path: str) -> Tuple[Optional[Discovery], Optional[Note]]:
    """``discover`` with every way it can fail turned into a ``Note``."""
    size = len(source)
    if size > MAX_ANALYSIS_BYTES:
        return None, Note(
            f"{too_large_message(size, MAX_ANALYSIS_BYTES)}: Torch Doctor does not look for model classes in it"
        )
    try:
        return discover(source, path), None
    except SourceSyntaxError as exc:
        return None, Note(exc.message, exc.line, exc.character, syntax_error=True)
    except RecursionError:
        return None, Note("cannot analyse this file: an expression or statement is nested too deeply to parse")
    except MemoryError:
        return None, Note("cannot analyse this file: parsing it ran out of memory")
    except UnicodeEncodeError as exc:  # a lone surrogate cannot be encoded for the parser
        return None, Note(f"cannot analyse this file: it contains text Python cannot read ({exc.reason})")
    except ValueError as exc:  # a null byte (Python < 3.12 raises ValueError, not SyntaxError)
        return None, Note(f"cannot analyse this file: {exc}")
