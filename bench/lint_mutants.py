"""Recall of the lint rules on bugs injected into real training scripts, and every finding on
the whole real projects (for precision), as quoted in docs/rules.md ("Measured on real code").

The real code is never committed: this script extracts the Python files of git mirrors
(``<mirrors>/<owner+name>/repo``, bare repositories) into a scratch folder, injects one bug at a
time into the scripts of ``SCRIPTS`` the way an engineer would write it (a ``zero_grad()``
removed, a ``step()`` moved before its ``backward()``, ``.item()`` dropped from a loss total,
``shuffle=True`` dropped, the forward pass wrapped in ``torch.no_grad()``), and lints each mutant
in place of the original, in a copy of its repository, so imports of the project's other files
resolve as they do for the original. Caught: the mutant has more findings of the target rule
than the original. ``NOT_BUGS`` lists the mutants that are not that rule's bug, counted apart.

TD011 (data leakage) has scripts of its own (``LEAKAGE_SCRIPTS``: tabular and toy-data training
scripts, some of them notebooks whose code cells are extracted as scripts): at each place one
splits a data array into train and test (``split_sites``), one leak at a time is written in
(``leakage_mutants``): the array normalised with its own statistics or a scaler fitted on it
before the split, the whole array's statistics or a scaler fitted on it (or on the parts put back
together) after. Recall is printed per kind of leak; the findings of the leakage projects are
listed apart.

    .venv/bin/python bench/lint_mutants.py [--mirrors /work/.mirror] [--work /tmp/lint_mutants]
        [--torchfix PATH/TO/torchfix] [--leakage-only]

With ``--torchfix``, the recall is measured for TorchFix too (``torchfix --select ALL``, any one
more finding on the mutant than on the original counts as caught), on the same mutants.
"""

from __future__ import annotations

import argparse
import ast
import collections
import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))

from torchdoctor.lint import lint_source  # noqa: E402

PROJECTS = (
    "pytorch+examples karpathy+nanoGPT karpathy+minGPT karpathy+build-nanogpt rasbt+LLMs-from-scratch "
    "yunjey+pytorch-tutorial davidtvs+pytorch-lr-finder facebookresearch+detr"
).split()
SCRIPTS = """
karpathy+build-nanogpt/train_gpt2.py
karpathy+minGPT/mingpt/trainer.py
karpathy+nanoGPT/train.py
pytorch+examples/dcgan/main.py
pytorch+examples/fast_neural_style/neural_style/neural_style.py
pytorch+examples/imagenet/main.py
pytorch+examples/mnist/main.py
pytorch+examples/mnist_forward_forward/main.py
pytorch+examples/mnist_rnn/main.py
pytorch+examples/reinforcement_learning/reinforce.py
pytorch+examples/siamese_network/main.py
pytorch+examples/super_resolution/main.py
pytorch+examples/time_sequence_prediction/train.py
pytorch+examples/vae/main.py
pytorch+examples/word_language_model/main.py
rasbt+LLMs-from-scratch/ch05/01_main-chapter-code/gpt_train.py
rasbt+LLMs-from-scratch/ch06/01_main-chapter-code/gpt_class_finetune.py
yunjey+pytorch-tutorial/tutorials/02-intermediate/convolutional_neural_network/main.py
yunjey+pytorch-tutorial/tutorials/02-intermediate/language_model/main.py
yunjey+pytorch-tutorial/tutorials/03-advanced/generative_adversarial_network/main.py
""".split()
# TD011 (data leakage) needs scripts that load data arrays and split them into train and test:
# tabular and toy-data training scripts, half of them notebooks (their code cells are extracted
# as ``<name>.ipynb.py``, shell and magic lines commented out, as jupytext would).
LEAKAGE_PROJECTS = "rasbt+machine-learning-book patrickloeber+pytorchTutorial mrdbourke+pytorch-deep-learning skorch-dev+skorch".split()
NOTEBOOK_PROJECTS = ("mrdbourke+pytorch-deep-learning", "skorch-dev+skorch")  # the book ships its notebooks as .py
LEAKAGE_SCRIPTS = """
mrdbourke+pytorch-deep-learning/01_pytorch_workflow.ipynb.py
mrdbourke+pytorch-deep-learning/02_pytorch_classification.ipynb.py
patrickloeber+pytorchTutorial/08_logistic_regression.py
pytorch+examples/time_sequence_prediction/train.py
rasbt+machine-learning-book/ch11/ch11.py
rasbt+machine-learning-book/ch12/ch12_part2.py
rasbt+machine-learning-book/ch13/ch13_part1.py
rasbt+machine-learning-book/ch13/ch13_part2.py
skorch-dev+skorch/examples/benchmarks/mnist.py
skorch-dev+skorch/examples/optuna/skorch_example.py
skorch-dev+skorch/notebooks/Learning_Rate_Scheduler.ipynb.py
skorch-dev+skorch/notebooks/MNIST.ipynb.py
rasbt+machine-learning-book/ch03/ch03.py
rasbt+machine-learning-book/ch04/ch04.py
rasbt+machine-learning-book/ch05/ch05.py
""".split()
# (script, rule, line of the mutation): why that mutant is not the rule's bug.
NOT_BUGS = {
    ("pytorch+examples/word_language_model/main.py", "TD001", 178): "manual-SGD branch, no optimizer",
    ("rasbt+LLMs-from-scratch/ch05/01_main-chapter-code/gpt_train.py", "TD007", 46): "eval helper under no_grad",
    (
        "rasbt+LLMs-from-scratch/ch06/01_main-chapter-code/gpt_class_finetune.py",
        "TD007",
        165,
    ): "eval helper under no_grad",
    (
        "rasbt+LLMs-from-scratch/ch05/01_main-chapter-code/gpt_train.py",
        "TD017",
        176,
    ): "loader factory shuffles by default",
}
Mutant = Tuple[str, int, str, List[str]]  # rule, 1-based line, description, new lines


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def mutants(lines: List[str]) -> Iterator[Mutant]:
    for i, line in enumerate(lines):
        s = line.strip()
        if re.fullmatch(r"[\w.\[\]]+\.zero_grad\([^)]*\)", s):
            yield "TD001", i + 1, f"remove {s}", lines[:i] + [_indent(line) + "pass"] + lines[i + 1 :]
        if re.search(r"\.backward\(", s) and not s.startswith("#"):
            for j in range(i + 1, min(i + 7, len(lines))):
                t = lines[j].strip()
                step = re.fullmatch(r"[\w.\[\]]*(opt|optim)[\w.\[\]]*\.step\(\)|scaler\.step\([\w.]+\)", t)
                if step and _indent(lines[j]) == _indent(line):
                    new = lines[:i] + [_indent(line) + t] + lines[i:j] + lines[j + 1 :]
                    yield "TD002", i + 1, f"step of line {j + 1} moved before this backward", new
                    break
        m = re.search(r"(\+=\s*|\.append\()([\w.]*loss[\w.]*)\.item\(\)", line)
        if m:
            new_line = line.replace(m.group(0), m.group(1) + m.group(2))
            yield "TD007", i + 1, "drop .item()", lines[:i] + [new_line] + lines[i + 1 :]
        if "shuffle=True" in line and not re.search(r"val|test|eval", line, re.I):
            new_line = re.sub(r",\s*shuffle=True|shuffle=True,\s*|shuffle=True", "", line)
            yield "TD017", i + 1, "drop shuffle=True", lines[:i] + [new_line] + lines[i + 1 :]
        m2 = re.fullmatch(r"([\w, ]+) = (model|net|self\.model|netG|G|transformer|cnn|rnn)\((.*)\)", s)
        if m2 and any(".backward(" in other for other in lines[i + 1 : i + 8]):
            ind = _indent(line)
            new = lines[:i] + [ind + "with torch.no_grad():", ind + "    " + s] + lines[i + 1 :]
            yield "TD013", i + 1, "forward under no_grad", new


# -- TD011: leakage injected around a split of a data array ------------------------------------

Site = Tuple[ast.stmt, ast.stmt, str, List[str]]  # first and last statement of a split, array, parts
_SPLITTERS = ("train_test_split", "random_split")
_LABELS = re.compile(r"^(y|labels?|targets?)(_|$)", re.I)


def _parents(tree: ast.AST) -> Dict[ast.AST, ast.AST]:
    return {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}


def _statement(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> ast.stmt:
    while not isinstance(node, ast.stmt):
        node = parents[node]
    return node


def _assigned(stmt: ast.stmt, inner: ast.AST) -> Optional[str]:
    """The name ``stmt`` assigns the value holding ``inner`` to (``x_tr = t(x[:n])``,
    ``X_tr, y_tr = X[:n], y[:n]``)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, ast.Name):
        return target.id
    if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
        for name, part in zip(target.elts, value.elts):
            if isinstance(name, ast.Name) and any(n is inner for n in ast.walk(part)):
                return name.id
    return None


def _bounds(node: ast.Subscript) -> Tuple[Optional[str], Optional[str]]:
    """``(lower, upper)`` source of the row slice of ``a[lo:hi]`` / ``a[lo:hi, cols]``."""
    rows = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) and node.slice.elts else node.slice
    if not isinstance(rows, ast.Slice) or rows.step is not None:
        return None, None
    text = lambda e: ast.unparse(e) if e is not None else None  # noqa: E731
    return text(rows.lower), text(rows.upper)


def split_sites(tree: ast.Module) -> List[Site]:
    """Where a script splits a data array (not labels) into train and test: a splitter call, or
    complementary row slices ``a[:n]`` / ``a[n:]``; with the names of the first two parts."""
    parents, sites = _parents(tree), []
    slices: Dict[Tuple[ast.AST, str], List[ast.Subscript]] = collections.defaultdict(list)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Name):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            stmt = _statement(node, parents)
            if callee in _SPLITTERS and not _LABELS.match(node.args[0].id) and isinstance(stmt, ast.Assign):
                target = stmt.targets[0]
                parts = [e.id for e in getattr(target, "elts", [])[:2] if isinstance(e, ast.Name)]
                sites.append((stmt, stmt, node.args[0].id, parts))
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and _bounds(node) != (None, None):
            scope = next(p for p in _ancestors(node, parents) if isinstance(p, (ast.Module, ast.FunctionDef)))
            if not _LABELS.match(node.value.id):
                slices[(scope, node.value.id)].append(node)
    for (_, name), found in slices.items():
        for cluster in _clusters(sorted(found, key=lambda n: n.lineno)):
            site = _slice_site(cluster, name, parents)
            if site is not None:
                sites.append(site)
    return sorted(sites, key=lambda site: site[0].lineno)


def _clusters(nodes: List[ast.Subscript], gap: int = 3) -> Iterator[List[ast.Subscript]]:
    """Slices of one array in runs of nearby lines (a notebook re-splits the same name later)."""
    run: List[ast.Subscript] = []
    for node in nodes:
        if run and node.lineno - run[-1].lineno > gap:
            yield run
            run = []
        run.append(node)
    if run:
        yield run


def _slice_site(found: List[ast.Subscript], name: str, parents: Dict[ast.AST, ast.AST]) -> Optional[Site]:
    """A split when ``a[:n]`` comes with an ``a[n:...]`` and both parts are assigned to names
    (halves of a prediction sliced for a plot are not a split)."""
    bounds = [(n, *_bounds(n)) for n in found]
    lowers = {lo for _, lo, _ in bounds if lo is not None}
    cuts = {hi for _, lo, hi in bounds if lo is None and hi in lowers}
    heads = [n for n, lo, hi in bounds if lo is None and hi in cuts]
    rests = [n for n, lo, _ in bounds if lo in cuts]
    # one part of each side: ``input``/``test_input`` of ``data[3:, :-1]``/``data[:3, :-1]``
    parts = [
        next((p for p in (_assigned(_statement(n, parents), n) for n in side) if p), None) for side in (heads, rests)
    ]
    if None in parts:
        return None
    stmts = sorted({_statement(n, parents) for n in heads + rests}, key=lambda st: st.lineno)
    return stmts[0], stmts[-1], name, [p for p in parts if p]


def _ancestors(node: ast.AST, parents: Dict[ast.AST, ast.AST]) -> Iterator[ast.AST]:
    while node in parents:
        node = parents[node]
        yield node


def _leaks_before(a: str, lib: str) -> Dict[str, List[str]]:
    """The array normalised with its own statistics, or a scaler fitted on it, before the split."""
    axis = "dim" if lib == "torch" else "axis"
    return {
        "mean/std, methods": [f"{a} = ({a} - {a}.mean(axis=0)) / {a}.std(axis=0)"],
        "mean/std, functions": [f"{a} = ({a} - {lib}.mean({a}, {axis}=0)) / {lib}.std({a}, {axis}=0)"],
        "min/max": [f"{a} = ({a} - {a}.min()) / ({a}.max() - {a}.min())"],
        "named statistics": [f"mu, sigma = {a}.mean(axis=0), {a}.std(axis=0)", f"{a} = ({a} - mu) / sigma"],
        "in place": [f"{a} -= {a}.mean(axis=0)", f"{a} /= {a}.std(axis=0)"],
        "StandardScaler().fit_transform": [
            "from sklearn.preprocessing import StandardScaler",
            f"{a} = StandardScaler().fit_transform({a})",
        ],
        "scaler.fit, .transform": [
            "from sklearn.preprocessing import MinMaxScaler",
            "scaler = MinMaxScaler()",
            f"scaler.fit({a})",
            f"{a} = scaler.transform({a})",
        ],
    }


def _leaks_after(a: str, parts: List[str], lib: str) -> Dict[str, List[str]]:
    """The parts normalised with the whole array's statistics, or a scaler fitted on the whole
    array (or on the parts put back together), after the split (``np.mean(X)`` written where
    ``np.mean(X_train)`` was meant)."""
    if len(parts) < 2 or a in parts:
        return {}  # ``X_tr, X_val = split(X_tr)``: after it, ``X_tr`` is the training part
    p, q = parts
    join = "torch.cat" if lib == "torch" else f"{lib}.concatenate"
    return {
        "whole-array mean/std on the parts": [
            f"{p} = ({p} - {a}.mean(axis=0)) / {a}.std(axis=0)",
            f"{q} = ({q} - {a}.mean(axis=0)) / {a}.std(axis=0)",
        ],
        "whole-array named statistics on the parts": [
            f"mu, sigma = {a}.mean(axis=0), {a}.std(axis=0)",
            f"{p} = ({p} - mu) / sigma",
            f"{q} = ({q} - mu) / sigma",
        ],
        "scaler fitted on the whole array after the split": [
            "from sklearn.preprocessing import StandardScaler",
            f"scaler = StandardScaler().fit({a})",
            f"{p} = scaler.transform({p})",
            f"{q} = scaler.transform({q})",
        ],
        "scaler fitted on the parts put back together": [
            "from sklearn.preprocessing import StandardScaler",
            "scaler = StandardScaler()",
            f"scaler.fit({join}([{p}, {q}]))",
            f"{p} = scaler.transform({p})",
            f"{q} = scaler.transform({q})",
        ],
    }


def _renamed(lines: List[str], first: int, last: int, a: str, new: str) -> List[str]:
    """The split statement's lines reading ``new`` where they read the array ``a``."""
    pattern = re.compile(rf"(?<![\w.]){re.escape(a)}(?=\s*[\[,)])")
    return lines[: first - 1] + [pattern.sub(new, line) for line in lines[first - 1 : last]] + lines[last:]


def leakage_mutants(lines: List[str]) -> Iterator[Mutant]:
    """One TD011 mutant per (split site, kind); the kind is the description up to `` (``."""
    text = "\n".join(lines)
    lib = "np" if re.search(r"^\s*import numpy as np\b", text, re.M) else "torch"
    for first, last, array, parts in split_sites(ast.parse(text)):
        ind = _indent(lines[first.lineno - 1])
        end = last.end_lineno or last.lineno
        for kind, inserted in _leaks_before(array, lib).items():
            new = lines[: first.lineno - 1] + [ind + s for s in inserted] + lines[first.lineno - 1 :]
            yield "TD011", first.lineno, f"{kind} ({array} before line {first.lineno})", new
        # normalised into a new name, which the split then reads
        renamed = _renamed(lines, first.lineno, end, array, f"{array}_norm")
        normalise = f"{array}_norm = ({array} - {array}.mean(axis=0)) / {array}.std(axis=0)"
        new = renamed[: first.lineno - 1] + [ind + normalise] + renamed[first.lineno - 1 :]
        yield "TD011", first.lineno, f"mean/std into a new name ({array} before line {first.lineno})", new
        if array.startswith("df"):  # the numeric columns of a table, in place
            cols = f"{array}.select_dtypes('number').columns"
            column_kinds = {
                "DataFrame columns, by hand": [
                    f"num = {cols}",
                    f"{array}[num] = ({array}[num] - {array}[num].mean()) / {array}[num].std()",
                ],
                "DataFrame columns, scaler": [
                    "from sklearn.preprocessing import StandardScaler",
                    f"num = {cols}",
                    f"{array}[num] = StandardScaler().fit_transform({array}[num])",
                ],
            }
            for kind, inserted in column_kinds.items():
                new = lines[: first.lineno - 1] + [ind + s for s in inserted] + lines[first.lineno - 1 :]
                yield "TD011", first.lineno, f"{kind} ({array} before line {first.lineno})", new
        for kind, inserted in _leaks_after(array, parts, lib).items():
            new = lines[:end] + [ind + s for s in inserted] + lines[end:]
            yield "TD011", end + 1, f"{kind} ({array} split on line {first.lineno})", new


def notebook_script(text: str) -> str:
    """A notebook's code cells as one script, as jupytext writes it: ``!pip`` and ``%magic``
    lines commented out, and whole ``%%writefile``-style cells (their body is not Python)."""
    lines: List[str] = []
    for cell in json.loads(text).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else source
        magic_cell = source.lstrip().startswith("%%")
        lines += [("# " + s) if magic_cell or re.match(r"\s*[!%]", s) else s for s in source.splitlines()] + [""]
    return "\n".join(lines) + "\n"


def extract(mirrors: Path, work: Path) -> None:
    """The Python files of each mirror's HEAD under ``work/<owner+name>``; for the leakage
    projects, their notebooks too (as ``<name>.ipynb.py``). Files whose blob the mirror does not
    hold (large ones may be absent) are skipped."""
    for project in PROJECTS + LEAKAGE_PROJECTS:
        git = ["git", "--git-dir", str(mirrors / project / "repo")]
        listing = subprocess.run(git + ["ls-tree", "-r", "HEAD"], capture_output=True, text=True).stdout
        wanted = (".py", ".ipynb") if project in NOTEBOOK_PROJECTS else (".py",)
        blobs = [line.split(None, 3)[2:] for line in listing.splitlines()]
        blobs = [(sha, name) for sha, name in blobs if name.endswith(wanted)]
        check = "\n".join(sha for sha, _ in blobs)
        present = subprocess.run(git + ["cat-file", "--batch-check"], input=check, capture_output=True, text=True)
        absent = {line.split()[0] for line in present.stdout.splitlines() if line.endswith(" missing")}
        for sha, name in blobs:
            if sha in absent:
                continue
            data = subprocess.run(git + ["cat-file", "blob", sha], capture_output=True, check=True).stdout
            if name.endswith(".ipynb"):
                try:
                    name, data = name + ".py", notebook_script(data.decode("utf-8")).encode("utf-8")
                except ValueError:  # not JSON (truncated, or an LFS pointer)
                    continue
            out = work / project / name
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)


def torchfix_count(torchfix: str, path: Path) -> int:
    run = subprocess.run([torchfix, "--select", "ALL", str(path)], capture_output=True, text=True)
    return sum(1 for line in run.stdout.splitlines() if line.startswith(str(path)))


def rule_counts(path: Path) -> collections.Counter:
    result = lint_source(path.read_text(encoding="utf-8"), str(path))
    return collections.Counter(f.rule_id for f in result.all)


@contextlib.contextmanager
def _mutated(work: Path, script: str, new: List[str]) -> Iterator[Path]:
    """The mutated script, in a copy of its project (so its imports resolve as the original's)."""
    project, rel = script.split("/", 1)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / project
        shutil.copytree(work / project, copy)
        (copy / rel).write_text("\n".join(new) + "\n", encoding="utf-8")
        yield copy / rel


def recall(work: Path, torchfix: str = "", leakage_only: bool = False) -> None:
    total, caught, apart = collections.Counter(), collections.Counter(), []
    peer = collections.Counter()
    missed = []
    jobs = [] if leakage_only else [(script, mutants) for script in SCRIPTS]
    jobs += [(script, leakage_mutants) for script in LEAKAGE_SCRIPTS]
    for script, make in jobs:
        lines = (work / script).read_text(encoding="utf-8").splitlines()
        base = rule_counts(work / script)
        peer_base = torchfix_count(torchfix, work / script) if torchfix else 0
        for rule, line, desc, new in make(lines):
            with _mutated(work, script, new) as path:
                hit = rule_counts(path)[rule] > base[rule]
                peer_hit = bool(torchfix) and torchfix_count(torchfix, path) > peer_base
            why = NOT_BUGS.get((script, rule, line))
            if why is not None:
                apart.append(f"  {rule} {script}:{line} {desc} ({why}): {'caught' if hit else 'quiet'}")
                continue
            for key in (rule, f"{rule} {desc.split(' (')[0]}") if rule == "TD011" else (rule,):
                total[key] += 1
                caught[key] += hit
            peer[rule] += peer_hit
            if not hit:
                missed.append(f"  {rule} {script}:{line} {desc}")
    for rule in sorted(total):
        print(f"{rule}: {caught[rule]}/{total[rule]}")
    rules = [r for r in total if " " not in r]
    print(f"all: {sum(caught[r] for r in rules)}/{sum(total[r] for r in rules)} injected bugs caught")
    if torchfix:
        print(f"TorchFix on the same: {sum(peer.values())}/{sum(total[r] for r in rules)} {dict(sorted(peer.items()))}")
    print("missed:\n" + ("\n".join(missed) or "  none"))
    print("not bugs, counted apart:\n" + ("\n".join(apart) or "  none"))


def findings(work: Path, projects: List[str], title: str) -> None:
    """Every finding on the whole projects; TD015 (torch.load without weights_only) counted apart."""
    per_rule, listed = collections.Counter(), []
    paths = sorted(p for project in projects for p in (work / project).rglob("*.py"))
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for f in lint_source(text, str(path)).all:
            per_rule[f.rule_id] += 1
            if f.rule_id != "TD015":
                listed.append(f"  {path.relative_to(work)}:{f.line} {f.rule_id} {f.message[:110]}")
    print(f"{title}: {len(paths)} files, findings per rule {dict(sorted(per_rule.items()))}")
    print("findings outside TD015 (judge each: true, acceptable or false):\n" + ("\n".join(listed) or "  none"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lint_mutants")
    parser.add_argument("--torchfix", default="", help="a torchfix executable: measure it on the same mutants")
    parser.add_argument("--leakage-only", action="store_true", help="only TD011's scripts and projects")
    args = parser.parse_args(argv)
    missing = [p for p in PROJECTS + LEAKAGE_PROJECTS if not (args.mirrors / p / "repo").is_dir()]
    if missing:
        print(f"no mirror for {', '.join(missing)} under {args.mirrors}", file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    extract(args.mirrors, args.work)
    if not args.leakage_only:
        findings(args.work, PROJECTS, "whole projects")
    findings(args.work, LEAKAGE_PROJECTS, "leakage projects (tabular and toy-data scripts, notebooks)")
    recall(args.work, args.torchfix, args.leakage_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
