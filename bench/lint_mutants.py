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
together) after; and the split itself rewritten, into the same part names, as an index-array
split (``X[tr_idx]`` / ``X[te_idx]``, ``X[perm[:100]]`` / ``X[perm[100:]]``), a split of windows a
loop appends (``wins.append(X[i : i + 8])``) or a call of a helper that slices what it is given
(``_holdout(X)``, defined at the top of the file), with a leak before it, and once without the leak (a
healthy rewrite: any finding is a false alarm). Recall is printed per kind of leak; the findings
of the leakage projects are listed apart.

TD012 (implicit None) has its own run (``--implicit-none-only``): in every file of
``NONE_PROJECTS`` that imports torch, each function that returns a tensor (``tensor_functions``)
gets one mutant per shape that applies (``none_mutants``): its final ``return`` put under an
``if <first parameter> is not None:``, dropped after an early return, wrapped in a ``try`` whose
``except`` only prints, moved into its last loop under a condition; an ``if``/``else`` or
``elif`` chain that returns in every branch losing its ``else``. At most ``--per-shape`` mutants
of each shape per file (evenly spread); the mutant is written over the file and put back after
(the project's other files read it from disk). Caught: more TD012 findings than the original.

    .venv/bin/python bench/lint_mutants.py [--mirrors /work/.mirror] [--work /tmp/lint_mutants]
        [--torchfix PATH/TO/torchfix] [--leakage-only | --implicit-none-only [--per-shape 3] | --third-corpus]

``--third-corpus`` takes ``THIRD_PROJECTS`` whole (a GAN zoo, beginners' tutorials, Lightning's
tutorials) and injects ``mutants()`` into every file, not into chosen scripts; the mutants judged
not to be the rule's bug (a validation loader's ``shuffle``, a gradient plot without an optimizer)
are listed in ``THIRD_NOT_BUGS`` with the reason and counted apart.

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
# The third corpus (``--third-corpus``, 2026-12-04): GAN zoo, beginners' tutorials, a CIFAR
# benchmark, Lightning's tutorials. Every file gets ``mutants()``, not a chosen list of scripts:
# bugs in code nobody picked for being easy.
THIRD_PROJECTS = (
    "eriklindernoren+PyTorch-GAN hunkim+PyTorchZeroToAll kuangliu+pytorch-cifar MorvanZhou+PyTorch-Tutorial "
    "L1aoXingyu+pytorch-beginner Lightning-AI+tutorials"
).split()
_UVA = "Lightning-AI+tutorials/course_UvA-DL/"
_GANS = "eriklindernoren+PyTorch-GAN/implementations/"
_VAL_LOADER = "the shuffle=True dropped is a validation/test loader's"
_GRAD_PLOT = "a gradient plot of one batch, no optimizer"
# (file, rule, line of the mutation): why that mutant of the third corpus is not the rule's bug.
THIRD_NOT_BUGS = {
    (_UVA + "01-introduction-to-pytorch/notebook.py", "TD017", 699): "a loader shown with next(iter()), no epoch",
    (_UVA + "02-activation-functions/notebook.py", "TD001", 453): _GRAD_PLOT,
    (_UVA + "02-activation-functions/notebook.py", "TD013", 454): _GRAD_PLOT,
    (_UVA + "02-activation-functions/notebook.py", "TD001", 463): _GRAD_PLOT,
    (_UVA + "03-initialization-and-optimization/notebook.py", "TD001", 271): _GRAD_PLOT,
    (_UVA + "03-initialization-and-optimization/notebook.py", "TD013", 272): _GRAD_PLOT,
    (_UVA + "03-initialization-and-optimization/notebook.py", "TD001", 281): _GRAD_PLOT,
    (_UVA + "12-meta-learning/notebook.py", "TD017", 252): "a sampler's own shuffle default, not a loader's",
    (_UVA + "12-meta-learning/notebook.py", "TD017", 259): "a sampler's own shuffle default, not a loader's",
    (_UVA + "12-meta-learning/notebook.py", "TD017", 353): "a batch sampler's shuffle argument",
    (_UVA + "12-meta-learning/notebook.py", "TD017", 974): "a sampler's own shuffle default, not a loader's",
    (_UVA + "12-meta-learning/notebook.py", "TD001", 889): "a fresh inner-loop optimizer, cleared before use",
    (_UVA + "12-meta-learning/notebook.py", "TD001", 920): "opt.zero_grad() after each step clears it",
    (_UVA + "12-meta-learning/notebook.py", "TD001", 945): "self.model.zero_grad() before the tasks clears it",
    ("MorvanZhou+PyTorch-Tutorial/tutorial-contents/305_batch_train.py", "TD017", 23): "a loop printing batches",
    ("MorvanZhou+PyTorch-Tutorial/tutorial-contents/503_dropout.py", "TD002", 68): "each step still after its backward",
    (_GANS + "bgan/bgan.py", "TD017", 116): "the loader is never iterated (the loop uses mnist_loader)",
    (_GANS + "dragan/dragan.py", "TD017", 134): "the loader is never iterated (the loop uses mnist_loader)",
    (_GANS + "bicyclegan/bicyclegan.py", "TD017", 97): _VAL_LOADER,
    (_GANS + "cluster_gan/clustergan.py", "TD017", 375): _VAL_LOADER,
    (_GANS + "context_encoder/context_encoder.py", "TD017", 98): _VAL_LOADER,
    (_GANS + "cyclegan/cyclegan.py", "TD017", 130): _VAL_LOADER,
    (_GANS + "discogan/discogan.py", "TD017", 107): _VAL_LOADER,
    (_GANS + "dualgan/dualgan.py", "TD017", 101): _VAL_LOADER,
    (_GANS + "munit/munit.py", "TD017", 134): _VAL_LOADER,
    (_GANS + "pix2pix/pix2pix.py", "TD017", 99): _VAL_LOADER,
    (_GANS + "stargan/stargan.py", "TD017", 134): _VAL_LOADER,
    (_GANS + "unit/unit.py", "TD017", 145): _VAL_LOADER,
    ("hunkim+PyTorchZeroToAll/13_2_rnn_classification.py", "TD017", 20): _VAL_LOADER,
    (_GANS + "cluster_gan/clustergan.py", "TD001", 406): "optimizer_GE.zero_grad() clears it too",
    (_GANS + "cluster_gan/clustergan.py", "TD001", 407): "optimizer_GE.zero_grad() clears it too",
    (_GANS + "cluster_gan/clustergan.py", "TD001", 408): "optimizer_D.zero_grad() clears it too",
    (_GANS + "cluster_gan/clustergan.py", "TD001", 417): "generator/encoder.zero_grad() clear it too",
    ("hunkim+PyTorchZeroToAll/09_2_softmax_mnist.py", "TD013", 64): "the mutant names torch, never imported",
    ("hunkim+PyTorchZeroToAll/13_3_char_rnn.py", "TD001", 100): "a training function never called",
    ("kuangliu+pytorch-cifar/main.py", "TD007", 128): "a test total under no_grad",
    ("kuangliu+pytorch-cifar/utils.py", "TD017", 17): "a loader for the mean and std, not training",
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


_HOLDOUT = ["def _holdout(rows, frac=0.8):", "    n = int(frac * len(rows))", "    return rows[:n], rows[n:]", ""]
# Helpers that normalise what they are given (the leak inside them; the caller then splits).
_NORMALISERS = {
    "scaler fitted in a helper, split by the caller": (
        "_scaled",
        "from sklearn.preprocessing import StandardScaler",
        "def _scaled(rows):",
        "    return StandardScaler().fit_transform(rows)",
        "",
    ),
    "mean/std in a helper, split by the caller": (
        "_standardised",
        "def _standardised(rows):",
        "    rows = (rows - rows.mean(axis=0)) / rows.std(axis=0)",
        "    return rows",
        "",
    ),
}


def _rewritten_splits(a: str, parts: List[str], lib: str) -> Dict[str, List[str]]:
    """The split rewritten into the same part names as an index-array split, or as a split of
    windows that a loop appends (the shapes TD011 first missed); a leak goes before each, and
    each is also linted without it (a healthy rewrite, which must stay silent)."""
    p, q = parts if len(parts) == 2 and a not in parts else (f"{a}_tr", f"{a}_te")
    perm = f"torch.randperm(len({a}))" if lib == "torch" else f"np.random.permutation(len({a}))"
    stack = "torch.stack(wins)" if lib == "torch" else "np.array(wins)"
    return {
        "index-array split": [
            f"perm = {perm}",
            f"cut = int(0.8 * len({a}))",
            "tr_idx, te_idx = perm[:cut], perm[cut:]",
            f"{p}, {q} = {a}[tr_idx], {a}[te_idx]",
        ],
        "inline index-array split": [f"perm = {perm}", f"{p} = {a}[perm[:100]]", f"{q} = {a}[perm[100:]]"],
        "split in a helper function": [f"{p}, {q} = _holdout({a})"],
        "windows appended in a loop": [
            "wins = []",
            f"for i in range(len({a}) - 8):",
            f"    wins.append({a}[i : i + 8])",
            f"wins = {stack}",
            "cut = int(0.8 * len(wins))",
            f"{p}, {q} = wins[:cut], wins[cut:]",
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
        leak = f"{array} = ({array} - {array}.mean(axis=0)) / {array}.std(axis=0)"
        for kind, split in _rewritten_splits(array, parts, lib).items():
            # a helper at the top of the file does the split (it takes no indentation of the site's)
            helper = _HOLDOUT if kind == "split in a helper function" else []
            for healthy in (False, True):
                written = split if healthy else [leak] + split
                new = helper + lines[: first.lineno - 1] + [ind + s for s in written] + lines[end:]
                said = f"healthy {kind}" if healthy else f"mean/std, then {kind}"
                yield "TD011", first.lineno, f"{said} ({array} split on line {first.lineno})", new
        for kind, (name, *helper) in _NORMALISERS.items():  # healthy: the helper defined, never called
            for healthy in (False, True):
                call = [] if healthy else [ind + f"{array} = {name}({array})"]
                new = helper + lines[: first.lineno - 1] + call + lines[first.lineno - 1 :]
                said = f"healthy {kind}" if healthy else kind
                yield "TD011", first.lineno, f"{said} ({array} split on line {first.lineno})", new


# -- TD012: a path of a tensor-returning function made to fall off its end ----------------------

# TD012 is measured on the PROJECTS and on timm's models, layers and training scripts.
NONE_PROJECTS = PROJECTS + ["huggingface+pytorch-image-models"]
_TORCH_NAMES = frozenset({"torch", "F", "nn"})
# Lightning hooks and dunders whose None is meant (the rule leaves them alone by design).
_NONE_MEANT = re.compile(r"^(training_step|validation_step|test_step|predict_step|on_\w+|\w+_epoch_end|__\w+__)$")
_NOT_TENSOR_VALUES = (ast.Constant, ast.JoinedStr, ast.Dict, ast.List, ast.Set, ast.Compare, ast.BoolOp, ast.Lambda)


def _own(func: ast.AST, kinds) -> List[ast.AST]:
    """Nodes of ``kinds`` in ``func``'s own body (not in nested functions, classes or lambdas)."""
    found, stack = [], list(ast.iter_child_nodes(func))
    while stack:
        node = stack.pop()
        if isinstance(node, kinds):
            found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def _tensor_value(value: Optional[ast.expr]) -> bool:
    """A returned expression that may be a tensor (not a constant, string, container display,
    comparison or ``len(...)``-style call)."""
    if value is None or isinstance(value, _NOT_TENSOR_VALUES):
        return False
    if isinstance(value, (ast.ListComp, ast.DictComp, ast.SetComp)):
        return False
    plain = ("len", "str", "int", "float", "bool", "repr", "isinstance", "list", "dict", "tuple", "set", "sorted")
    return not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in plain)


def tensor_functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    """Functions that return tensors: ``forward`` methods, and functions whose own code calls
    ``torch``/``F``/``nn``, with a tensor-like ``return`` value, not a generator, no
    ``Optional`` return annotation, not a hook whose None is meant."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or _NONE_MEANT.match(node.name):
            continue
        if node.returns is not None and re.search(r"Optional|None", ast.unparse(node.returns)):
            continue
        if _own(node, (ast.Yield, ast.YieldFrom)):
            continue
        torchy = node.name == "forward" or any(n.id in _TORCH_NAMES for n in _own(node, (ast.Name,)))
        if torchy and any(_tensor_value(r.value) for r in _own(node, (ast.Return,))):
            yield node


def _block(lines: List[str], stmt: ast.stmt) -> Tuple[int, int]:
    """0-based first line and end (exclusive) of ``stmt``'s lines."""
    return stmt.lineno - 1, stmt.end_lineno or stmt.lineno


def _first_param(func: ast.FunctionDef) -> Optional[str]:
    params = [a.arg for a in func.args.posonlyargs + func.args.args if a.arg not in ("self", "cls")]
    return params[0] if params else None


def _ends(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.Return, ast.Raise))


def none_mutants(lines: List[str]) -> Iterator[Mutant]:
    """One TD012 mutant per (tensor-returning function, shape); the shape is the description
    up to `` (``. Each leaves one path of the function falling off its end."""
    tree = ast.parse("\n".join(lines))
    for func in tensor_functions(tree):
        last = func.body[-1]
        where = f"({func.name}, line {func.lineno})"
        final_value = isinstance(last, ast.Return) and _tensor_value(last.value)
        start, end = _block(lines, last)
        ind = _indent(lines[start])
        body = ["    " + line for line in lines[start:end]]
        param = _first_param(func)
        if final_value and param is not None:  # ``if mask is not None: return x``
            new = lines[:start] + [f"{ind}if {param} is not None:"] + body + lines[end:]
            yield "TD012", last.lineno, f"final return under an if {where}", new
        earlier = [r for r in _own(func, (ast.Return,)) if r is not last and _tensor_value(r.value)]
        if final_value and earlier:  # an early ``if ...: return a``, the last line lost
            yield "TD012", last.lineno, f"early return, final return dropped {where}", lines[:start] + lines[end:]
        if final_value:  # the return wrapped in a try whose handler only reports
            handler = [f"{ind}except Exception as err:", f"{ind}    print(f'failed: {{err}}')"]
            new = lines[:start] + [f"{ind}try:"] + body + handler + lines[end:]
            yield "TD012", last.lineno, f"try/except without a return {where}", new
        yield from _loop_and_chain_mutants(lines, func, where)


def _loop_and_chain_mutants(lines: List[str], func: ast.FunctionDef, where: str) -> Iterator[Mutant]:
    """Where the function has them: a loop that returns inside, then a final return/raise
    (dropped); an ``if``/``elif`` chain whose branches all end (final ``else`` dropped, or the
    return/raise after the chain dropped)."""
    last = func.body[-1]
    before = func.body[-2] if len(func.body) > 1 else None
    start, end = _block(lines, last)
    if _ends(last) and isinstance(before, (ast.For, ast.While)) and _own(before, (ast.Return,)):
        yield "TD012", last.lineno, f"loop returns inside, final statement dropped {where}", lines[:start] + lines[end:]
    if _ends(last) and isinstance(before, ast.If) and before.orelse and isinstance(before.orelse[0], ast.If):
        branches = _chain(before)  # no final ``else``: the statement after the chain is reached
        if not branches[-1] and all(_ends(b[-1]) for b in branches[:-1]) and _own(before, (ast.Return,)):
            yield "TD012", last.lineno, f"elif chain, final statement dropped {where}", lines[:start] + lines[end:]
    if isinstance(last, ast.If) and last.orelse:
        branches = _chain(last)
        if branches[-1] and all(b and _ends(b[-1]) for b in branches) and _own(last, (ast.Return,)):
            at = branches[-1][0].lineno - 1  # the ``else:`` line (0-based), maybe that of its body
            while at > 0 and not lines[at].strip().startswith("else"):
                at -= 1
            kind = "elif chain" if len(branches) > 2 else "if/else"
            yield "TD012", at + 1, f"{kind}, final else dropped {where}", lines[:at] + lines[end:]
    loop = before if isinstance(before, ast.For) and isinstance(before.target, ast.Name) else None
    if loop is not None and loop.body[0].lineno == loop.lineno:
        loop = None  # ``for x in xs: f(x)`` on one line
    param = _first_param(func)
    if loop is not None and param is not None and isinstance(last, ast.Return) and _tensor_value(last.value):
        # the result returned from inside the loop, once a condition holds, and nothing after it
        inner = _indent(lines[loop.body[0].lineno - 1])
        moved = [f"{inner}if {loop.target.id} == {param}:"] + [inner + "    " + ln.strip() for ln in lines[start:end]]
        loop_end = loop.end_lineno or loop.lineno
        new = lines[:loop_end] + moved + lines[loop_end:start] + lines[end:]
        yield "TD012", last.lineno, f"loop returns inside, nothing after it {where}", new


def _chain(node: ast.If) -> List[List[ast.stmt]]:
    """The bodies of an ``if``/``elif``/``else`` chain, the final ``else``'s last (``[]`` when none)."""
    bodies = [node.body]
    while len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
        node = node.orelse[0]
        bodies.append(node.body)
    bodies.append(node.orelse)
    return bodies


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


def extract(mirrors: Path, work: Path, projects: List[str]) -> None:
    """The Python files of each mirror's HEAD under ``work/<owner+name>``; for the leakage
    projects, their notebooks too (as ``<name>.ipynb.py``). Files whose blob the mirror does not
    hold (large ones may be absent) are skipped."""
    for project in projects:
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
            if desc.startswith("healthy"):  # a rewrite without a bug: a finding is a false alarm
                total["TD011 false alarms on healthy rewrites"] += 1
                caught["TD011 false alarms on healthy rewrites"] += hit
                continue
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


def third_recall(work: Path) -> None:
    """``mutants()`` on every file of the third corpus, each mutant linted in place (written over
    the file, the original put back): caught when the rule finds more than on the original."""
    total, caught, apart, missed = collections.Counter(), collections.Counter(), [], []
    for path in sorted(p for project in THIRD_PROJECTS for p in (work / project).rglob("*.py")):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        script, base = str(path.relative_to(work)), None
        for rule, line, desc, new in mutants(lines):
            base = base if base is not None else rule_counts(path)
            with _in_place(path, new) as text:
                hit = sum(1 for f in lint_source(text, str(path)).all if f.rule_id == rule) > base[rule]
            why = THIRD_NOT_BUGS.get((script, rule, line))
            if why is not None:
                apart.append(f"  {rule} {script}:{line} {desc} ({why}): {'caught' if hit else 'quiet'}")
                continue
            total[rule] += 1
            caught[rule] += hit
            if not hit:
                missed.append(f"  {rule} {script}:{line} {desc}")
    for rule in sorted(total):
        print(f"{rule}: {caught[rule]}/{total[rule]}")
    print(f"all: {sum(caught.values())}/{sum(total.values())} injected bugs caught")
    print("missed:\n" + ("\n".join(missed) or "  none"))
    print(f"not bugs, counted apart ({len(apart)}):\n" + ("\n".join(apart) or "  none"))


@contextlib.contextmanager
def _in_place(path: Path, new: List[str]) -> Iterator[str]:
    """The mutant written over ``path`` (its project's other files read it from disk), then the
    original put back."""
    old = path.read_bytes()
    text = "\n".join(new) + "\n"
    path.write_text(text, encoding="utf-8")
    try:
        yield text
    finally:
        path.write_bytes(old)


def _spread(items: List[Mutant], most: int) -> List[Mutant]:
    """At most ``most`` of ``items``, evenly spread (a big model file has hundreds of forwards)."""
    if len(items) <= most:
        return items
    return [items[round(i * (len(items) - 1) / (most - 1))] for i in range(most)]


def none_recall(work: Path, per_shape: int) -> None:
    """TD012's recall on ``none_mutants`` of every torch file of ``NONE_PROJECTS`` (at most
    ``per_shape`` mutants of each shape per file), per shape and per project, with the severity
    of what was caught."""
    total, caught, severity, missed = collections.Counter(), collections.Counter(), collections.Counter(), []
    for project in NONE_PROJECTS:
        for path in sorted((work / project).rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            if not re.search(r"^\s*(import torch|from torch)", text, re.M):
                continue
            try:
                made = list(none_mutants(text.splitlines()))
            except SyntaxError:
                continue
            shapes: Dict[str, List[Mutant]] = collections.defaultdict(list)
            for mutant in made:
                shapes[mutant[2].split(" (")[0]].append(mutant)
            base = collections.Counter(f.severity for f in lint_source(text, str(path)).all if f.rule_id == "TD012")
            for shape, found in shapes.items():
                for _, line, desc, new in _spread(found, per_shape):
                    with _in_place(path, new) as mutated:
                        now = lint_source(mutated, str(path)).all
                    new_sev = collections.Counter(f.severity for f in now if f.rule_id == "TD012") - base
                    for key in ("TD012", f"TD012 {shape}", f"TD012 in {project}"):
                        total[key] += 1
                        caught[key] += bool(new_sev)
                    severity.update(new_sev.keys())
                    if not new_sev:
                        missed.append(f"  {path.relative_to(work)}:{line} {desc}")
    for key in sorted(total):
        print(f"{key}: {caught[key]}/{total[key]}")
    print(f"caught as: {dict(severity)}")
    print("missed:\n" + ("\n".join(missed) or "  none"))


def findings(work: Path, projects: List[str], title: str, only: str = "") -> None:
    """Every finding on the whole projects (of the rule ``only``, when given); TD015 (torch.load
    without weights_only) counted apart."""
    per_rule, listed = collections.Counter(), []
    paths = sorted(p for project in projects for p in (work / project).rglob("*.py"))
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for f in lint_source(text, str(path)).all:
            if only and f.rule_id != only:
                continue
            per_rule[f.rule_id] += 1
            if f.rule_id != "TD015":
                listed.append(f"  {path.relative_to(work)}:{f.line} {f.rule_id} {f.severity} {f.message[:110]}")
    print(f"{title}: {len(paths)} files, findings per rule {dict(sorted(per_rule.items()))}")
    print("findings outside TD015 (judge each: true, acceptable or false):\n" + ("\n".join(listed) or "  none"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lint_mutants")
    parser.add_argument("--torchfix", default="", help="a torchfix executable: measure it on the same mutants")
    parser.add_argument("--leakage-only", action="store_true", help="only TD011's scripts and projects")
    parser.add_argument("--implicit-none-only", action="store_true", help="only TD012's projects and mutants")
    parser.add_argument("--per-shape", type=int, default=3, help="TD012 mutants of each shape per file, at most")
    parser.add_argument("--third-corpus", action="store_true", help="every file of THIRD_PROJECTS, all mutants")
    args = parser.parse_args(argv)
    wanted = NONE_PROJECTS if args.implicit_none_only else PROJECTS + LEAKAGE_PROJECTS
    wanted = THIRD_PROJECTS if args.third_corpus else wanted
    missing = [p for p in wanted if not (args.mirrors / p / "repo").is_dir()]
    if missing:
        print(f"no mirror for {', '.join(missing)} under {args.mirrors}", file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    extract(args.mirrors, args.work, wanted)
    if args.third_corpus:
        findings(args.work, THIRD_PROJECTS, "third corpus")
        third_recall(args.work)
        return 0
    if args.implicit_none_only:
        findings(args.work, NONE_PROJECTS, "TD012 projects", only="TD012")
        none_recall(args.work, args.per_shape)
        return 0
    if not args.leakage_only:
        findings(args.work, PROJECTS, "whole projects")
    findings(args.work, LEAKAGE_PROJECTS, "leakage projects (tabular and toy-data scripts, notebooks)")
    recall(args.work, args.torchfix, args.leakage_only)
    return 0


if __name__ == "__main__":
    sys.exit(main())
