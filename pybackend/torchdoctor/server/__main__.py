"""Entry point: ``python -m torchdoctor.server`` speaks LSP over stdin/stdout.

Logs go to stderr, which vscode-languageclient copies into the "Torch Doctor"
output channel: stdout belongs to the protocol and must never be printed to.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from .. import __version__


def _parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m torchdoctor.server", description=__doc__)
    parser.add_argument("--stdio", action="store_true", help="speak LSP over stdio (the default)")
    parser.add_argument("--log-level", default=os.environ.get("TORCHDOCTOR_LOG_LEVEL", "INFO"))
    parser.add_argument("--version", action="version", version=__version__)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(sys.argv[1:] if argv is None else argv)
    logging.basicConfig(
        stream=sys.stderr,
        level=args.log_level.upper(),
        format="%(asctime)s [%(levelname)s] %(name)s: %(message)s",
    )
    # pygls narrates every message at INFO: keep it to warnings unless debugging.
    logging.getLogger("pygls").setLevel(logging.DEBUG if args.log_level.upper() == "DEBUG" else logging.WARNING)
    # Imported after logging is set up so import-time problems are logged too.
    from . import log_bridge
    from .app import build_server

    server = build_server()
    log_bridge.install(server, logging.getLogger().level)
    logging.getLogger(__name__).debug(
        "starting Torch Doctor backend %s on Python %s (%s), pid %d",
        __version__,
        sys.version.split()[0],
        sys.executable,
        os.getpid(),
    )
    try:
        server.start_io()
    finally:
        from ..background import stop_all

        stop_all()  # a child busy on a large file is killed, not waited for
    return 0


if __name__ == "__main__":
    sys.exit(main())
