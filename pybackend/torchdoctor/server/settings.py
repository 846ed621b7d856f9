"""The client's ``torchDoctor`` settings, kept current for every feature.

The section is read with ``workspace/configuration`` once the client is initialized and
again on every ``workspace/didChangeConfiguration`` (or taken from that notification when
the client pushes it). Features get the shared object with ``settings_for(server)`` and read
``settings.current`` (a nested dict: ``{"lint": {"enable": True, ...}, ...}``) or
``settings.get("lint.enable", True)``; ``settings.on_change(callback)`` tells them when it
changed. This module owns the ``workspace/didChangeConfiguration`` notification: features
subscribe here rather than registering it themselves.
"""

from __future__ import annotations

import asyncio
import copy
import logging
from typing import Any, Callable, Dict, List, Optional

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from . import protocol

log = logging.getLogger(__name__)

SECTION = protocol.CONFIG_SECTION  # "torchDoctor"
REQUEST_TIMEOUT = 5.0  # seconds a client gets to answer workspace/configuration


class Settings:
    """The latest ``torchDoctor`` section and the features listening to it."""

    def __init__(self) -> None:
        self._values: Dict[str, Any] = {}
        self._listeners: List[Callable[[], None]] = []
        self._ready: Optional[asyncio.Event] = None

    @property
    def current(self) -> Dict[str, Any]:
        """A copy of the whole section, nested by dotted key."""
        return copy.deepcopy(self._values)

    def get(self, dotted: str, default: Any = None) -> Any:
        """``get("lint.disabledRules", [])``: one value by its dotted key below the section."""
        node: Any = self._values
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                return default
            node = node[part]
        return node

    def on_change(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def update(self, raw: Any) -> None:
        """Replace the section with ``raw`` (nested or dotted keys) and notify listeners."""
        values = normalize(raw)
        changed = values != self._values
        self._values = values
        self._event().set()
        if changed:
            for callback in list(self._listeners):
                try:
                    callback()
                except Exception:  # noqa: BLE001 - one listener must not block the others
                    log.exception("settings listener failed")

    async def wait_ready(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for the first read, so first results honour it."""
        try:
            await asyncio.wait_for(self._event().wait(), timeout)
        except asyncio.TimeoutError:
            self._event().set()  # the client is slow or silent: go on with defaults

    def mark_ready(self) -> None:
        self._event().set()

    def _event(self) -> asyncio.Event:
        if self._ready is None:
            self._ready = asyncio.Event()
        return self._ready


def normalize(raw: Any) -> Dict[str, Any]:
    """``{"lint.enable": False}`` and ``{"lint": {"enable": False}}`` both become the latter."""
    if not isinstance(raw, dict):
        return {}
    result: Dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            continue
        if isinstance(value, dict):
            value = normalize(value)
        node = result
        parts = key.split(".")
        for part in parts[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                break
        else:
            last = parts[-1]
            if isinstance(value, dict) and isinstance(node.get(last), dict):
                node[last].update(value)
            else:
                node[last] = value
    return result


def settings_for(server: LanguageServer) -> Settings:
    """The server's shared ``Settings``; the first call wires it to the protocol."""
    existing = getattr(server, "_torchdoctor_settings", None)
    if existing is not None:
        return existing
    settings = Settings()
    server._torchdoctor_settings = settings  # type: ignore[attr-defined]
    _wire(server, settings)
    return settings


async def refresh(server: LanguageServer, settings: Settings) -> None:
    """Pull the section with ``workspace/configuration`` (when the client supports it)."""
    if not _client_pulls(server):
        settings.mark_ready()
        return
    request = types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
    try:
        answer = await asyncio.wait_for(server.workspace_configuration_async(request), REQUEST_TIMEOUT)
    except Exception as exc:  # noqa: BLE001 - a client that cannot answer leaves the defaults
        log.info("workspace/configuration for %r failed (%r): keeping current settings", SECTION, exc)
        settings.mark_ready()
        return
    settings.update(answer[0] if answer else None)


def _client_pulls(server: LanguageServer) -> bool:
    try:
        caps = server.client_capabilities.workspace
    except AttributeError:
        return False
    return bool(caps and caps.configuration)


def _wire(server: LanguageServer, settings: Settings) -> None:
    def read_now() -> None:
        asyncio.ensure_future(refresh(server, settings))

    _after_initialized(server, read_now)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: LanguageServer, params: types.DidChangeConfigurationParams) -> None:
        """Take the pushed section when there is one, else pull it again."""
        pushed = params.settings.get(SECTION) if isinstance(params.settings, dict) else None
        if isinstance(pushed, dict):
            settings.update(pushed)
        else:
            read_now()


def _after_initialized(server: LanguageServer, callback: Callable[[], None]) -> None:
    """Run ``callback`` after the ``initialized`` notification has been handled.

    pygls allows one user handler per method and ``app.py`` already owns ``initialized``,
    so this chains onto pygls's built-in handler instead (which itself runs the user one):
    nothing registered elsewhere is displaced, whatever the registration order.
    """
    builtins = server.protocol.fm.builtin_features
    original = builtins.get(types.INITIALIZED)

    def initialized(*args):
        result = None
        if original is not None:
            result = yield from original(*args)
        callback()
        return result

    builtins[types.INITIALIZED] = initialized
