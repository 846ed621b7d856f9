"""The text a feature analyses: the editor's unsaved text when the document is open, else the file.

pygls keys its open documents by the *unquoted* URI, while clients send URIs with %-escapes
(``file:///c%3A/...`` on Windows, ``%20`` for a space): a raw lookup missed every such document and
the checks read the file on disk instead of what the user sees. ``open_document`` looks up the
way pygls stores; ``source`` also reads unopened files through ``checks.source_text`` (size limit,
regular files only, BOM and coding cookies) and says why when it cannot.
"""

from __future__ import annotations

from typing import Any, Optional, Tuple
from urllib.parse import unquote

from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from ..checks.source_text import MAX_SOURCE_BYTES, SourceError, read_source, too_large_message


def open_document(ls: LanguageServer, uri: str) -> Optional[Any]:
    """The open document for ``uri`` (escaped or not), or None."""
    if not uri:
        return None
    return ls.workspace.text_documents.get(unquote(uri))


def fs_path(uri: str) -> str:
    """The file system path of ``uri``; the URI itself when it is not a file URI."""
    try:
        return to_fs_path(uri) or uri
    except Exception:  # a malformed URI: keep the text, the read will say what is wrong
        return uri


def source(ls: LanguageServer, uri: str) -> Tuple[Optional[str], Optional[str]]:
    """``(text, None)``, or ``(None, why)`` when there is no text to analyse."""
    doc = open_document(ls, uri)
    if doc is not None:
        text = doc.source
        if len(text) > MAX_SOURCE_BYTES:
            return None, too_large_message(len(text.encode("utf-8", "surrogatepass")))
        return text, None
    if not uri.startswith("file:"):
        return None, f"cannot read {uri}: not a file URI"
    try:
        return read_source(fs_path(uri)), None
    except SourceError as exc:
        return None, exc.message
