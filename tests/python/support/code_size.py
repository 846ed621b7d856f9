"""Source files over 500 lines and functions over 80 lines (the code standards' limits).

Python functions are measured with ``ast`` (``def`` line to last line, decorators excluded);
TypeScript and the webview scripts with the TypeScript compiler the project already installs
(``node_modules/typescript``), so a brace inside a string or a template never miscounts.

Run it directly to list every file and function over a limit:
``PYTHONPATH=tests/python .venv/bin/python -m support.code_size``. ``test_code_size.py`` asserts the limits
with an allow-list.
"""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from typing import Iterator, List, Optional, Sequence

from .paths import REPO

REPO_ROOT = str(REPO)

FILE_LIMIT = 500  # lines in a source file
FUNCTION_LIMIT = 80  # lines in one function

PYTHON_ROOTS = ("pybackend/torchdoctor",)
SCRIPT_ROOTS = ("extension/src", "extension/media")
_SCRIPT_ENDINGS = (".ts", ".js", ".mjs")

# Lists every function-like node of each file as [name, first line, last line] (1-based).
# Arrow functions and function expressions take the name of the variable, property or class
# member they are assigned to; anonymous callbacks are "<anonymous>". A webview script's wrapping
# ``(function () { ... })();`` is its file scope and is not counted as a function.
_TS_LISTER = r"""
const ts = require(process.argv[1] + "/node_modules/typescript");
const fs = require("fs");
const out = {};
for (const file of process.argv.slice(2)) {
  const text = fs.readFileSync(file, "utf8");
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found = [];
  const line = (pos) => src.getLineAndCharacterOfPosition(pos).line + 1;
  const nameOf = (node) => {
    if (node.name && node.name.getText) return node.name.getText(src);
    const p = node.parent;
    if (p && (ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p))) {
      return p.name.getText(src);
    }
    if (ts.isConstructorDeclaration(node)) return "constructor";
    return "<anonymous>";
  };
  // ``(function () { ... })();`` at the top of a webview script is the file's scope, not a function.
  const wrapsFile = (node) => {
    let p = node.parent;
    while (p && ts.isParenthesizedExpression(p)) p = p.parent;
    return !!p && ts.isCallExpression(p) && p.parent && ts.isExpressionStatement(p.parent)
      && p.parent.parent && ts.isSourceFile(p.parent.parent);
  };
  const visit = (node) => {
    if (ts.isFunctionLike(node) && node.body && !wrapsFile(node)) {
      found.push([nameOf(node), line(node.getStart(src)), line(node.end)]);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  out[file] = found;
}
process.stdout.write(JSON.stringify(out));
"""


@dataclass(frozen=True)
class Oversize:
    """A file or function over its limit. ``function`` is None for a whole file."""

    path: str  # relative to the repository root, with forward slashes
    function: Optional[str]
    lines: int
    line: int = 1  # where the function starts

    @property
    def key(self) -> str:
        """How an allow-list names it: ``path`` for a file, ``path::function`` for a function."""
        return self.path if self.function is None else f"{self.path}::{self.function}"


def _files(roots: Sequence[str], endings: Sequence[str]) -> Iterator[str]:
    for root in roots:
        for folder, dirs, names in os.walk(os.path.join(REPO_ROOT, root)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "node_modules"))
            for name in sorted(names):
                if name.endswith(tuple(endings)) and not name.endswith(".d.ts"):
                    yield os.path.join(folder, name)


def _relative(path: str) -> str:
    return os.path.relpath(path, REPO_ROOT).replace(os.sep, "/")


def _line_count(path: str) -> int:
    with open(path, encoding="utf-8") as f:
        return sum(1 for _ in f)


def python_oversizes(roots: Sequence[str] = PYTHON_ROOTS) -> List[Oversize]:
    """Python files and functions over the limits under ``roots`` (relative to the repository, or absolute)."""
    found: List[Oversize] = []
    for path in _files(roots, (".py",)):
        rel = _relative(path)
        count = _line_count(path)
        if count > FILE_LIMIT:
            found.append(Oversize(rel, None, count))
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), path)
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > FUNCTION_LIMIT:
                    found.append(Oversize(rel, node.name, length, node.lineno))
    return found


def script_oversizes(roots: Sequence[str] = SCRIPT_ROOTS) -> List[Oversize]:
    """TypeScript and webview scripts; raises RuntimeError when node or typescript is missing."""
    node = shutil.which("node")
    if node is None or not os.path.isdir(os.path.join(REPO_ROOT, "node_modules", "typescript")):
        raise RuntimeError("node and node_modules/typescript are needed: run `make setup` (npm ci)")
    paths = list(_files(roots, _SCRIPT_ENDINGS))
    done = subprocess.run(
        [node, "-e", _TS_LISTER, REPO_ROOT, *paths], capture_output=True, text=True, check=True, timeout=300
    )
    functions = json.loads(done.stdout)
    found: List[Oversize] = []
    for path in paths:
        rel = _relative(path)
        count = _line_count(path)
        if count > FILE_LIMIT:
            found.append(Oversize(rel, None, count))
        for name, first, last in functions.get(path, []):
            if last - first + 1 > FUNCTION_LIMIT:
                found.append(Oversize(rel, name, last - first + 1, first))
    return found


def main() -> int:
    rows = python_oversizes() + script_oversizes()
    for row in sorted(rows, key=lambda r: (r.path, r.line)):
        what = "file" if row.function is None else f"{row.function}() at line {row.line}"
        print(f"{row.lines:5d} lines  {row.path}  {what}")
    print(f"{len(rows)} over the limits ({FILE_LIMIT} lines a file, {FUNCTION_LIMIT} a function)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
