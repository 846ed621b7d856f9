"""Lint diagnostics in the editor: squiggles, quick fixes, hover explanations.

- ``didOpen`` / ``didSave``: lint now; ``didChange``: lint after a pause in typing
  (``DEBOUNCE_SECONDS``, ``LARGE_DEBOUNCE_SECONDS`` above ``LARGE_DOCUMENT``; a newer change cancels the pending run, and a result is published
  only if the document is still at the version that was linted); ``didClose``: clear (``close``,
  called by ``app.py``'s one didClose handler).
- The linter runs in a worker thread (``run_in_executor``); a document over ``LARGE_DOCUMENT``
  is linted in a child process (``lint/background.py``), since a thread still holds the
  interpreter while it parses and analyses, and other requests would wait for it. A child that
  stops on the text (a crash, out of memory, past its deadline) is one Information diagnostic
  saying so. While the text does not parse, the last diagnostics are kept rather than
  flickering away; the Python language server reports the syntax error itself.
- ``textDocument/codeAction``: the rule's safe fix (preferred), and "ignore this rule on this
  line", which appends ``# torchdoctor: ignore[TDxxx]``.
- ``textDocument/hover``: over a flagged range only, the rule's explanation in markdown.
- Settings ``torchDoctor.lint.enable`` and ``torchDoctor.lint.disabledRules`` (``settings.py``).
- A document over ``MAX_ANALYSIS_BYTES`` is not linted (``ast.parse`` holds the GIL: a 2 MB file
  stalled every request for seconds on each keystroke); one Information diagnostic says so.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace.position_codec import ServerTextPosition, ServerTextRange

from ..checks.safe_discovery import MAX_ANALYSIS_BYTES
from ..checks.source_text import too_large_message
from ..lint import Finding, all_rules, background, get_rule, lint_source
from ..lint.ignore import ignore_edit
from ..lint.model import Span, TextEdit
from ..lint.project import PROJECT
from ..lint.source import split_lines
from .settings import Settings, settings_for

log = logging.getLogger(__name__)

SOURCE = "Torch Doctor"
DEBOUNCE_SECONDS = 0.3
LARGE_DOCUMENT = background.LARGE_DOCUMENT  # ~8,000 lines: felt by other requests, so wait longer
LARGE_DEBOUNCE_SECONDS = 2.0
SETTINGS_WAIT = 2.0  # the first lint waits this long for the client's settings
_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


@dataclass
class Linted:
    """What was found in one version of one document (what the client was last shown)."""

    version: Optional[int]
    lines: List[str]
    findings: List[Finding]
    note: Optional[str] = None  # not linted, and why (the lint's child process stopped on this text)


class LintService:
    """Per-document lint runs and their results, for one server."""

    def __init__(self, server: LanguageServer, settings: Settings) -> None:
        self.server = server
        self.settings = settings
        self._pending: Dict[str, asyncio.Task] = {}
        self._linted: Dict[str, Linted] = {}

    # -- settings -----------------------------------------------------------------------

    @property
    def enabled(self) -> bool:
        return self.settings.get("lint.enable", True) is not False

    @property
    def disabled_rules(self) -> List[str]:
        rules = self.settings.get("lint.disabledRules", [])
        return [r for r in rules if isinstance(r, str)] if isinstance(rules, list) else []

    # -- scheduling -----------------------------------------------------------------------

    def schedule(self, uri: str, delay: float) -> None:
        """Lint ``uri`` after ``delay`` seconds, replacing any run still pending for it."""
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        task = asyncio.ensure_future(self._run(uri, delay))
        self._pending[uri] = task
        task.add_done_callback(functools.partial(self._forget, uri))

    def _forget(self, uri: str, task: asyncio.Task) -> None:
        if self._pending.get(uri) is task:
            del self._pending[uri]
        if not task.cancelled() and task.exception() is not None:
            log.error("lint of %s failed", uri, exc_info=task.exception())

    def debounce(self, uri: str) -> float:
        """The pause in typing to wait for: a large document's parse holds the GIL, so less often."""
        document = self._document(uri)
        large = document is not None and len(document.source) > LARGE_DOCUMENT
        return LARGE_DEBOUNCE_SECONDS if large else DEBOUNCE_SECONDS

    def relint_all(self) -> None:
        for document in list(self.server.workspace.text_documents.values()):
            self.schedule(document.uri, 0)

    def relint_importers(self, uri: str) -> None:
        """Lint again, after the debounce, the open documents that import ``uri``'s module:
        a model changed in ``model.py`` changes what ``train.py``'s rules see."""
        path = to_fs_path(uri) or uri
        stem = os.path.splitext(os.path.basename(path))[0]
        if stem == "__init__":
            stem = os.path.basename(os.path.dirname(path))
        pattern = re.compile(rf"^\s*(from|import)\s+[\w.]*\b{re.escape(stem)}\b", re.MULTILINE)
        for document in list(self.server.workspace.text_documents.values()):
            if document.uri != uri and pattern.search(document.source):
                self.schedule(document.uri, DEBOUNCE_SECONDS)

    def close(self, uri: str) -> None:
        PROJECT.set_text(to_fs_path(uri) or uri, None)  # the file on disk again
        pending = self._pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        self._linted.pop(uri, None)
        self._publish(uri, None, [])

    # -- running ------------------------------------------------------------------------------

    async def _run(self, uri: str, delay: float) -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await self.settings.wait_ready(SETTINGS_WAIT)
        document = self._document(uri)
        if document is None:
            return
        if not self.enabled:
            self._linted.pop(uri, None)
            self._publish(uri, document.version, [])
            return
        if _too_large(document.source):
            self._linted.pop(uri, None)
            self._publish(uri, document.version, [_too_large_note(document.source)])
            return
        linted = await self.lint(uri)
        if linted is None:
            return  # does not parse: keep what the user sees
        current = self._document(uri)
        if current is None or current.version != linted.version:
            return  # a newer version is on its way; its own run will publish
        self._linted[uri] = linted
        diagnostics = [self._diagnostic(linted.lines, f) for f in linted.findings]
        if linted.note is not None:
            diagnostics.append(_information(linted.note))
        self._publish(uri, linted.version, diagnostics)

    async def lint(self, uri: str) -> Optional[Linted]:
        """Lint the document's current text off the event loop; None when it does not parse."""
        document = self._document(uri)
        if document is None or _too_large(document.source):
            return None
        version, text = document.version, document.source
        path = to_fs_path(uri) or uri
        PROJECT.set_text(path, text)  # other files importing this one see the unsaved text
        disabled = tuple(self.disabled_rules)
        if len(text) > background.LARGE_DOCUMENT:
            # A long file's lint holds the interpreter for a second or more: in a child
            # process, so hovers and CodeLenses on other files are answered meanwhile.
            own = os.path.abspath(path)
            texts = {}
            for other in PROJECT.unsaved_paths():
                unsaved = PROJECT.unsaved_text(other)
                if other != own and unsaved is not None:
                    texts[other] = unsaved
            result = await background.lint(text, path, disabled, texts)
        else:
            result = await asyncio.get_running_loop().run_in_executor(None, lint_source, text, path, disabled)
        if result.syntax_error is not None:
            return None
        return Linted(version, split_lines(text), result.findings, result.note)

    async def findings_now(self, uri: str) -> Optional[Linted]:
        """Findings for the document as it is now: the published ones when current, else fresh."""
        if not self.enabled:
            return None
        document = self._document(uri)
        if document is None:
            return None
        cached = self._linted.get(uri)
        if cached is not None and cached.version == document.version:
            return cached
        return await self.lint(uri)

    def _document(self, uri: str):
        document = self.server.workspace.text_documents.get(unquote(uri))
        if document is None or not _is_python(document):
            return None
        return document

    # -- protocol objects ------------------------------------------------------------------------

    def _publish(self, uri: str, version: Optional[int], diagnostics: List[types.Diagnostic]) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, version=version, diagnostics=diagnostics)
        )

    def client_range(self, lines: List[str], span: Span) -> types.Range:
        codec = self.server.workspace.position_codec
        server_range = ServerTextRange(
            ServerTextPosition(span.start_line, span.start_col), ServerTextPosition(span.end_line, span.end_col)
        )
        return codec.range_to_client_units(lines, server_range)

    def _diagnostic(self, lines: List[str], finding: Finding) -> types.Diagnostic:
        return types.Diagnostic(
            range=self.client_range(lines, finding.span),
            message=finding.message,
            severity=_SEVERITY.get(finding.severity, types.DiagnosticSeverity.Warning),
            code=finding.rule_id,
            source=SOURCE,
        )

    def text_edit(self, lines: List[str], edit: TextEdit) -> types.TextEdit:
        return types.TextEdit(range=self.client_range(lines, edit.span), new_text=edit.new_text)


def _too_large(text: str) -> bool:
    return len(text) > MAX_ANALYSIS_BYTES


def _too_large_note(text: str) -> types.Diagnostic:
    return _information(f"{too_large_message(len(text), MAX_ANALYSIS_BYTES)}: Torch Doctor does not lint this file")


def _information(message: str) -> types.Diagnostic:
    """A note on line 1 about the whole file (no rule: no quick fix, no hover)."""
    return types.Diagnostic(
        range=types.Range(types.Position(0, 0), types.Position(0, 0)),
        message=message,
        severity=types.DiagnosticSeverity.Information,
        source=SOURCE,
    )


def _is_python(document) -> bool:
    language = getattr(document, "language_id", None)
    if language:
        return language == "python"
    return document.uri.endswith(".py")


# -- code actions and hover ------------------------------------------------------------------------


def _matching(service: LintService, linted: Linted, params: types.CodeActionParams) -> List[Finding]:
    """The findings the client asks about: those behind its diagnostics, else those under the range."""
    ours = [d for d in params.context.diagnostics if d.source == SOURCE and d.code]
    if ours:
        wanted = {(str(d.code), _range_key(d.range)) for d in ours}
        return [
            f for f in linted.findings if (f.rule_id, _range_key(service.client_range(linted.lines, f.span))) in wanted
        ]
    start, end = params.range.start, params.range.end
    return [
        f
        for f in linted.findings
        if _overlaps(service.client_range(linted.lines, f.span), start.line, start.character, end.line, end.character)
    ]


def _range_key(r: types.Range):
    return (r.start.line, r.start.character, r.end.line, r.end.character)


def _overlaps(r: types.Range, sl: int, sc: int, el: int, ec: int) -> bool:
    return (r.start.line, r.start.character) <= (el, ec) and (sl, sc) <= (r.end.line, r.end.character)


def _actions(
    service: LintService, uri: str, linted: Linted, finding: Finding, diagnostics: Sequence[types.Diagnostic]
) -> List[types.CodeAction]:
    related = [d for d in diagnostics if d.source == SOURCE and str(d.code) == finding.rule_id] or None
    actions = []
    if finding.fix is not None:
        edits = [service.text_edit(linted.lines, e) for e in finding.fix.edits]
        actions.append(
            types.CodeAction(
                title=f"{finding.fix.title} ({finding.rule_id})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=related,
                edit=types.WorkspaceEdit(changes={uri: edits}),
                is_preferred=True,
            )
        )
    ignore = ignore_edit(linted.lines, finding.span.start_line, finding.rule_id)
    actions.append(
        types.CodeAction(
            title=f"Ignore {finding.rule_id} on this line",
            kind=types.CodeActionKind.QuickFix,
            diagnostics=related,
            edit=types.WorkspaceEdit(changes={uri: [service.text_edit(linted.lines, ignore)]}),
        )
    )
    return actions


def _wants_quick_fixes(only) -> bool:
    """``context.only`` absent, or asking for "quickfix" (or a parent kind such as "")."""
    if not only:
        return True
    quick_fix = types.CodeActionKind.QuickFix.value
    for kind in only:
        value = getattr(kind, "value", kind)  # enum members print as "CodeActionKind.X"
        if quick_fix == value or quick_fix.startswith(f"{value}.") or value == "":
            return True
    return False


def hover_markdown(findings: Sequence[Finding]) -> str:
    """The explanation of each rule flagged at the cursor."""
    parts = []
    for finding in findings:
        rule = get_rule(finding.rule_id)
        if rule is None:
            continue
        parts.append(
            f"**Torch Doctor {rule.id}: {rule.title}**\n\n{rule.explanation}\n\n"
            f"_Silence this line with_ `# torchdoctor: ignore[{rule.id}]`."
        )
    return "\n\n---\n\n".join(parts)


# -- registration ------------------------------------------------------------------------------------


def register(server: LanguageServer) -> LintService:
    """Attach diagnostics, code actions and hover for the lint rules."""
    all_rules()  # import the rules now, not during the first keystroke
    settings = settings_for(server)
    service = LintService(server, settings)
    settings.on_change(service.relint_all)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        """Lint a document as soon as it is opened."""
        service.schedule(params.text_document.uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        """Lint after a pause in typing; each change restarts the wait (longer for a large document)."""
        service.schedule(params.text_document.uri, service.debounce(params.text_document.uri))
        service.relint_importers(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        """Lint right away on save, without waiting for the debounce."""
        service.schedule(params.text_document.uri, 0)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    async def code_action(ls: LanguageServer, params: types.CodeActionParams) -> Optional[List[types.CodeAction]]:
        """The safe fix of each finding in range, and "ignore this rule on this line"."""
        if not _wants_quick_fixes(params.context.only):
            return None
        uri = params.text_document.uri
        linted = await service.findings_now(uri)
        if linted is None:
            return None
        actions: List[types.CodeAction] = []
        for finding in _matching(service, linted, params):
            actions.extend(_actions(service, uri, linted, finding, params.context.diagnostics))
        return actions or None

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: LanguageServer, params: types.HoverParams) -> Optional[types.Hover]:
        """Over a flagged range only: what the rule means and why it trains silently wrong."""
        uri = params.text_document.uri
        linted = await service.findings_now(uri)
        if linted is None:
            return None
        pos = params.position
        under = [
            f
            for f in linted.findings
            if _overlaps(service.client_range(linted.lines, f.span), pos.line, pos.character, pos.line, pos.character)
        ]
        if not under:
            return None
        return types.Hover(
            contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=hover_markdown(under)),
            range=service.client_range(linted.lines, under[0].span),
        )

    return service
