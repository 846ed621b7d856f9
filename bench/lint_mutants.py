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

    .venv/bin/python bench/lint_mutants.py [--mirrors /work/.mirror] [--work /tmp/lint_mutants]
        [--torchfix PATH/TO/torchfix]

With ``--torchfix``, the recall is measured for TorchFix too (``torchfix --select ALL``, any one
more finding on the mutant than on the original counts as caught), on the same mutants.
"""

from __future__ import annotations

import argparse
import collections
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator, List, Tuple

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


def extract(mirrors: Path, work: Path) -> None:
    """The Python files of each mirror's HEAD under ``work/<owner+name>``."""
    for project in PROJECTS:
        git = ["git", "--git-dir", str(mirrors / project / "repo")]
        names = subprocess.run(git + ["ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True)
        files = [n for n in names.stdout.splitlines() if n.endswith(".py")]
        (work / project).mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(git + ["archive", "HEAD", "--"] + files, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(work / project)], input=archive.stdout, check=True)


def torchfix_count(torchfix: str, path: Path) -> int:
    run = subprocess.run([torchfix, "--select", "ALL", str(path)], capture_output=True, text=True)
    return sum(1 for line in run.stdout.splitlines() if line.startswith(str(path)))


def rule_counts(path: Path) -> collections.Counter:
    result = lint_source(path.read_text(encoding="utf-8"), str(path))
    return collections.Counter(f.rule_id for f in result.all)


def recall(work: Path, torchfix: str = "") -> None:
    total, caught, apart = collections.Counter(), collections.Counter(), []
    peer = collections.Counter()
    missed = []
    for script in SCRIPTS:
        project, rel = script.split("/", 1)
        lines = (work / script).read_text(encoding="utf-8").splitlines()
        base = rule_counts(work / script)
        peer_base = torchfix_count(torchfix, work / script) if torchfix else 0
        for rule, line, desc, new in mutants(lines):
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / project
                shutil.copytree(work / project, copy)
                (copy / rel).write_text("\n".join(new) + "\n", encoding="utf-8")
                hit = rule_counts(copy / rel)[rule] > base[rule]
                peer_hit = bool(torchfix) and torchfix_count(torchfix, copy / rel) > peer_base
            why = NOT_BUGS.get((script, rule, line))
            if why is not None:
                apart.append(f"  {rule} {script}:{line} {desc} ({why}): {'caught' if hit else 'quiet'}")
                continue
            total[rule] += 1
            caught[rule] += hit
            peer[rule] += peer_hit
            if not hit:
                missed.append(f"  {rule} {script}:{line} {desc}")
    for rule in sorted(total):
        print(f"{rule}: {caught[rule]}/{total[rule]}")
    print(f"all: {sum(caught.values())}/{sum(total.values())} injected bugs caught")
    if torchfix:
        print(f"TorchFix on the same: {sum(peer.values())}/{sum(total.values())} {dict(sorted(peer.items()))}")
    print("missed:\n" + ("\n".join(missed) or "  none"))
    print("not bugs, counted apart:\n" + "\n".join(apart))


def findings(work: Path) -> None:
    """Every finding on the whole projects; TD015 (torch.load without weights_only) counted apart."""
    per_rule, listed = collections.Counter(), []
    for path in sorted(work.rglob("*.py")):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        for f in lint_source(text, str(path)).all:
            per_rule[f.rule_id] += 1
            if f.rule_id != "TD015":
                listed.append(f"  {path.relative_to(work)}:{f.line} {f.rule_id} {f.message[:110]}")
    files = sum(1 for _ in work.rglob("*.py"))
    print(f"whole projects: {files} files, findings per rule {dict(sorted(per_rule.items()))}")
    print("findings outside TD015 (judge each: true, acceptable or false):\n" + "\n".join(listed))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "lint_mutants")
    parser.add_argument("--torchfix", default="", help="a torchfix executable: measure it on the same mutants")
    args = parser.parse_args(argv)
    missing = [p for p in PROJECTS if not (args.mirrors / p / "repo").is_dir()]
    if missing:
        print(f"no mirror for {', '.join(missing)} under {args.mirrors}", file=sys.stderr)
        return 2
    shutil.rmtree(args.work, ignore_errors=True)
    extract(args.mirrors, args.work)
    findings(args.work)
    recall(args.work, args.torchfix)
    return 0


if __name__ == "__main__":
    sys.exit(main())
