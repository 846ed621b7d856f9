"""The code standards' size limits: no source file over 500 lines, no function over 80 lines, in
the backend (pybackend/torchdoctor) and the extension (extension/src, extension/media).

What stays over a limit is named in ``ALLOWED`` with the reason; an entry that is no longer over
its limit fails too, so the list only shrinks. Measured by ``support.code_size`` (``ast`` for
Python, the TypeScript compiler for TypeScript and the webview scripts).
"""

from __future__ import annotations

import shutil
import textwrap

import pytest

from support import code_size

# Over a limit on purpose, or owned by a change in progress elsewhere (key: path or path::function).
ALLOWED: dict = {}


def _over(rows):
    return {row.key: row for row in rows}


def test_python_sources_within_limits():
    found = _over(code_size.python_oversizes())
    allowed_here = {k for k in ALLOWED if not k.split("::")[0].endswith((".ts", ".js", ".mjs"))}
    unexpected = sorted(f"{key} ({row.lines} lines)" for key, row in found.items() if key not in ALLOWED)
    assert not unexpected, "over the size limits (split them, or add to ALLOWED with a reason): " + ", ".join(
        unexpected
    )
    stale = sorted(allowed_here - set(found))
    assert not stale, "in ALLOWED but within the limits now (remove them): " + ", ".join(stale)


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to parse TypeScript")
def test_extension_sources_within_limits():
    found = _over(code_size.script_oversizes())
    allowed_here = {k for k in ALLOWED if k.split("::")[0].endswith((".ts", ".js", ".mjs"))}
    unexpected = sorted(f"{key} ({row.lines} lines)" for key, row in found.items() if key not in ALLOWED)
    assert not unexpected, "over the size limits (split them, or add to ALLOWED with a reason): " + ", ".join(
        unexpected
    )
    stale = sorted(allowed_here - set(found))
    assert not stale, "in ALLOWED but within the limits now (remove them): " + ", ".join(stale)


def _python_function(name: str, body_lines: int) -> str:
    body = "\n".join(f"    x{i} = {i}" for i in range(body_lines))
    return f"def {name}():\n{body}\n"


def test_measures_python_functions_and_files(tmp_path):
    """The measure itself: an 81-line function and a 501-line file are over, 80 lines is not."""
    (tmp_path / "long.py").write_text(_python_function("long_one", 80) + _python_function("short_one", 79))
    (tmp_path / "big.py").write_text("\n".join(f"x{i} = {i}" for i in range(501)) + "\n")
    keys = {row.key.rsplit("/", 1)[-1]: row.lines for row in code_size.python_oversizes(roots=(str(tmp_path),))}
    assert keys == {"long.py::long_one": 81, "big.py": 501}


@pytest.mark.skipif(shutil.which("node") is None, reason="node is needed to parse TypeScript")
def test_measures_script_functions(tmp_path):
    """Functions, methods and arrow functions are measured; a webview script's wrapping
    ``(function () { ... })();`` is its file scope, not a function."""
    inner = "\n".join(f"    const v{i} = {i};" for i in range(80))
    source = textwrap.dedent(
        """\
        (function () {{
          function drawLong() {{
        {inner}
          }}
          const arrowLong = () => {{
        {inner}
          }};
          class Page {{
            render() {{
        {inner}
            }}
          }}
        }})();
        """
    ).format(inner=inner)
    (tmp_path / "page.js").write_text(source)
    found = code_size.script_oversizes(roots=(str(tmp_path),))
    assert {row.function for row in found} == {"drawLong", "arrowLong", "render"}
