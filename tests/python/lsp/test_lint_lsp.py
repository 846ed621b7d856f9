"""Lint diagnostics over the real backend (``python -m torchdoctor.server``): publish on open
and change (debounced, latest version wins), quick fixes that clear their finding, the
ignore action, hover explanations, and the ``torchDoctor.lint.*`` settings."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Callable, List

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[3]
BUGGY = ROOT / "tests" / "python" / "lint_corpus" / "buggy"
ZERO_GRAD = (BUGGY / "td001_missing_zero_grad.py").read_text()  # TD001 at line 18
TWO_RULES = (BUGGY / "aliases_and_attributes.py").read_text()  # TD003 at 18, TD001 at 20
URI = "file:///workspace/train%20loop.py"
pytestmark = pytest.mark.timeout(60)

# The ``torchDoctor`` section the client answers with, per test (default: empty).
SETTINGS = {
    "test_disabled_rules_setting_applies_from_the_first_publish": {"lint": {"disabledRules": ["TD003"]}},
    "test_lint_can_be_disabled": {"lint.enable": False},
}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=[sys.executable, "-m", "torchdoctor.server", "--stdio"]))
async def client(lsp_client: LanguageClient, request):
    """A client that answers ``workspace/configuration`` with the test's entry in ``SETTINGS``."""
    lsp_client.set_configuration(SETTINGS.get(request.node.originalname, {}), section="torchDoctor")
    lsp_client.published = []  # every publishDiagnostics, in order (the client keeps only the last)
    original = lsp_client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]

    def record(params: types.PublishDiagnosticsParams):
        lsp_client.published.append(params)
        return original(params)

    lsp_client.protocol.fm.features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = record
    capabilities = types.ClientCapabilities(
        workspace=types.WorkspaceClientCapabilities(configuration=True),
        text_document=types.TextDocumentClientCapabilities(
            hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown]),
        ),
    )
    await lsp_client.initialize_session(types.InitializeParams(capabilities=capabilities))
    yield
    await lsp_client.shutdown_session()


# -- helpers --------------------------------------------------------------------------------------


def open_doc(client: LanguageClient, text: str, uri: str = URI, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def change_doc(client: LanguageClient, text: str, version: int, uri: str = URI) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def published(
    client: LanguageClient,
    predicate: Callable[[types.PublishDiagnosticsParams], bool],
    uri: str = URI,
    timeout: float = 60.0,
) -> types.PublishDiagnosticsParams:
    """The first publish for ``uri`` (already received or coming) that satisfies ``predicate``.

    ``timeout`` is a ceiling for a loaded machine (it returns as soon as the publish is in)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for params in client.published:
            if params.uri == uri and predicate(params):
                return params
        await asyncio.sleep(0.02)
    raise AssertionError(f"no matching publish for {uri}; got {[(p.version, codes(p)) for p in client.published]}")


def codes(params: types.PublishDiagnosticsParams) -> List[tuple]:
    return sorted((str(d.code), d.range.start.line) for d in params.diagnostics)


def apply(text: str, edits: List[types.TextEdit]) -> str:
    """Apply LSP edits (ASCII text here, so UTF-16 units are characters)."""
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for edit in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[edit.range.start.line] + edit.range.start.character
        end = offsets[edit.range.end.line] + edit.range.end.character
        text = text[:start] + edit.new_text + text[end:]
    return text


async def actions_for(client: LanguageClient, diagnostic: types.Diagnostic) -> List[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    return list(result or [])


# -- tests ------------------------------------------------------------------------------------------


async def test_diagnostics_on_open(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    params = await published(client, lambda p: bool(p.diagnostics))
    (diag,) = params.diagnostics
    assert (diag.code, diag.source, diag.severity) == ("TD001", "Torch Doctor", types.DiagnosticSeverity.Warning)
    assert diag.range.start == types.Position(line=17, character=4)
    assert "`optimizer.zero_grad()`" in diag.message
    assert params.version == 1


async def test_changes_are_debounced_and_the_latest_version_wins(client: LanguageClient):
    clean = ZERO_GRAD.replace("    loss.backward()", "    optimizer.zero_grad()\n    loss.backward()")
    open_doc(client, clean)
    await published(client, lambda p: p.version == 1 and not p.diagnostics)
    # The burst is sent back to back, but the server reads each message through a few thread
    # hops: a server stalled over 0.3 s (the debounce) between two of them on a loaded machine
    # lints the one before. So one of three fresh bursts must publish only its last version (a
    # debounce that does not hold publishes every version of all three).
    seen = []
    for trial in range(3):
        first = 2 + 5 * trial
        for i, version in enumerate(range(first, first + 5)):  # a burst of typing: buggy, clean, buggy, clean, buggy
            change_doc(client, ZERO_GRAD if i % 2 == 0 else clean, version)
        final = await published(client, lambda p, last=first + 4: p.version == last)
        assert codes(final) == [("TD001", 17)]
        await asyncio.sleep(0.5)
        burst = [p.version for p in client.published if p.version and p.version >= first]
        seen.append(burst)
        if burst == [first + 4]:
            break
    assert burst == [first + 4], f"only the last version of a burst is published: {seen}"


async def test_quick_fix_inserts_zero_grad_and_clears_the_finding(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    (diag,) = (await published(client, lambda p: bool(p.diagnostics))).diagnostics
    actions = await actions_for(client, diag)
    fix = next(a for a in actions if a.is_preferred)
    assert fix.kind == types.CodeActionKind.QuickFix and "optimizer.zero_grad()" in fix.title
    new_text = apply(ZERO_GRAD, fix.edit.changes[URI])
    assert "    optimizer.step()\n    optimizer.zero_grad()\n" in new_text
    change_doc(client, new_text, 2)
    await published(client, lambda p: p.version == 2 and not p.diagnostics)


async def test_ignore_action_adds_a_comment_and_clears_the_finding(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    (diag,) = (await published(client, lambda p: bool(p.diagnostics))).diagnostics
    ignore = next(a for a in await actions_for(client, diag) if a.title == "Ignore TD001 on this line")
    new_text = apply(ZERO_GRAD, ignore.edit.changes[URI])
    assert "    optimizer.step()  # torchdoctor: ignore[TD001]\n" in new_text
    change_doc(client, new_text, 2)
    await published(client, lambda p: p.version == 2 and not p.diagnostics)


async def test_code_actions_honour_the_requested_kinds(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    (diag,) = (await published(client, lambda p: bool(p.diagnostics))).diagnostics

    async def titles(only):
        result = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=URI),
                range=diag.range,
                context=types.CodeActionContext(diagnostics=[diag], only=only),
            )
        )
        return sorted(a.title for a in result or [])

    assert len(await titles([types.CodeActionKind.QuickFix])) == 2
    assert await titles([types.CodeActionKind.SourceOrganizeImports]) == []


async def test_code_actions_without_diagnostics_use_the_range(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    await published(client, lambda p: bool(p.diagnostics))
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(start=types.Position(line=17, character=6), end=types.Position(line=17, character=6)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert sorted(a.title for a in result) == [
        "Ignore TD001 on this line",
        "Insert `optimizer.zero_grad()` after the step (TD001)",
    ]
    nothing = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=URI),
            range=types.Range(start=types.Position(line=2, character=0), end=types.Position(line=2, character=0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    assert not nothing


async def test_hover_explains_a_flagged_range_only(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    await published(client, lambda p: bool(p.diagnostics))
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=17, character=8)
        )
    )
    assert hover is not None and hover.contents.kind == types.MarkupKind.Markdown
    assert "TD001" in hover.contents.value and "zero_grad" in hover.contents.value
    assert "# torchdoctor: ignore[TD001]" in hover.contents.value
    elsewhere = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=types.Position(line=9, character=2)
        )
    )
    assert elsewhere is None


async def test_ignore_comment_in_the_source(client: LanguageClient):
    open_doc(client, TWO_RULES.replace("self.optimizer.step()", "self.optimizer.step()  # torchdoctor: ignore[TD001]"))
    params = await published(client, lambda p: bool(p.diagnostics))
    assert codes(params) == [("TD003", 17)]


async def test_disabled_rules_setting_applies_from_the_first_publish(client: LanguageClient):
    open_doc(client, TWO_RULES)
    params = await published(client, lambda p: p.version == 1)
    assert codes(params) == [("TD001", 19)]


async def test_lint_can_be_disabled(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    params = await published(client, lambda p: p.version == 1)
    assert not params.diagnostics


async def test_configuration_change_relints_open_documents(client: LanguageClient):
    open_doc(client, TWO_RULES)
    await published(client, lambda p: codes(p) == [("TD001", 19), ("TD003", 17)])
    client.set_configuration({"lint": {"disabledRules": ["TD001"]}}, section="torchDoctor")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await published(client, lambda p: codes(p) == [("TD003", 17)])
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"torchDoctor": {"lint": {"enable": False}}})
    )
    await published(client, lambda p: not p.diagnostics and p.version == 1)


async def test_close_clears_and_syntax_errors_keep_the_last_diagnostics(client: LanguageClient):
    open_doc(client, ZERO_GRAD)
    await published(client, lambda p: bool(p.diagnostics))
    change_doc(client, ZERO_GRAD + "\nfor broken in\n", 2)
    await asyncio.sleep(0.8)
    assert not any(p.version == 2 for p in client.published), "a text that does not parse republishes nothing"
    assert codes(client.published[-1]) == [("TD001", 17)]
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=URI))
    )
    await published(client, lambda p: p.version is None and not p.diagnostics)


async def test_ranges_are_in_utf16_units(client: LanguageClient):
    text = 'import torch\nlabel = "😀"; state = torch.load(path, weights_only=False)\n'
    open_doc(client, text)
    (diag,) = (await published(client, lambda p: bool(p.diagnostics))).diagnostics
    line = text.splitlines()[1]
    utf16_col = len(line[: line.index("weights_only")].encode("utf-16-le")) // 2
    assert diag.range.start == types.Position(line=1, character=utf16_col)


async def test_an_unsaved_change_to_the_model_file_relints_the_training_script(client: LanguageClient, tmp_path):
    """train.py imports Classifier from model.py: the rules see model.py as the editor holds it,
    and editing model.py re-publishes train.py (no save needed)."""
    plain = (
        "from torch import nn\n\n\nclass Classifier(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.fc = nn.Linear(4, 3)\n\n    def forward(self, x):\n"
        "        return self.fc(x)\n"
    )
    softmax = plain.replace("return self.fc(x)", "return self.fc(x).softmax(dim=1)")
    (tmp_path / "model.py").write_text(plain, encoding="utf-8")
    train = (
        "from torch import nn\nfrom model import Classifier\n\n\ndef train(model, loader, criterion):\n"
        "    for x, y in loader:\n        loss = criterion(model(x), y)\n        loss.backward()\n\n\n"
        "train(Classifier(), [], nn.CrossEntropyLoss())\n"
    )
    train_uri, model_uri = (tmp_path / "train.py").as_uri(), (tmp_path / "model.py").as_uri()
    open_doc(client, train, uri=train_uri)
    await published(client, lambda p: p.version == 1 and not p.diagnostics, uri=train_uri)
    open_doc(client, plain, uri=model_uri)
    change_doc(client, softmax, 2, uri=model_uri)
    relinted = await published(client, lambda p: bool(p.diagnostics), uri=train_uri)
    assert codes(relinted) == [("TD003", 6)]  # 0-based: the loss line
    assert "model.py line 10" in relinted.diagnostics[0].message


async def test_a_large_document_is_linted_in_the_background_and_hovers_still_answer(client: LanguageClient):
    # Over 256 KB the lint runs in a child process (lint/background.py): its findings are the
    # same, and a hover on a small file is answered while it runs.
    padding = "".join(f"value_{i} = [{i}] * 16  # padding line to make the file large\n" for i in range(5000))
    big_uri = "file:///workspace/big.py"
    assert len(ZERO_GRAD + padding) > 256 * 1024
    open_doc(client, ZERO_GRAD + padding, uri=big_uri)
    open_doc(client, ZERO_GRAD)
    small = await published(client, lambda p: bool(p.diagnostics))
    hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=URI), position=small.diagnostics[0].range.start
        )
    )
    assert hover is not None
    big = await published(client, lambda p: bool(p.diagnostics), uri=big_uri, timeout=120)
    assert codes(big) == [("TD001", 17)]
