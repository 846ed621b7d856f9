"""How fast is ``torchdoctor lint`` compared with Python's own compiler, on the same text?

Every number is a ratio to a baseline measured in the same run, on the same files:

1. Throughput: lint every file of the project's lint corpus and sample workspace (or the
   PATHs given), against ``compile(text, path, "exec")`` of the same files (what
   ``python -m py_compile`` does, minus writing the .pyc). Parsing is part of both, so the
   ratio says how much the rules cost on top of what the interpreter does anyway.
2. Latency while typing: a generated 5,000-line training module (models, loops, evaluation,
   helpers; some of them buggy, so rules do real work) linted once, against compiling it.
   The absolute time is then compared with a typing budget. Typing itself never waits for
   the linter (it runs in the backend process, off its event loop); what a user can notice
   is how long the squiggles take to settle after they stop typing: the 300 ms debounce
   plus the lint. ``TYPING_BUDGET`` keeps that total within half a second.

3. Scaling: a long module-level script (an exported notebook: model, loader and loops at top
   level, repeated) of 4k, 8k, 16k and 32k lines. Each doubling should cost about twice as
   much (linear); the ratio to compile() should stay flat. The 32k-line script is compared
   with a one-second budget.
4. With ``--rules``: the same scaling per rule (and for the parse, the context's index and the
   teardown of tree and context, ``free``),
   each rule timed on the same context in registry order (an analysis several rules share is
   counted at the first rule that builds it), so a rule that is not linear shows by name; then
   the same on two scripts of shapes that once made rules quadratic (a loss accumulated in
   every block, a sampler and a training loader in every block).

    .venv/bin/python bench/bench_lint.py [PATH...] [--repeat 5] [--lines 5000] [--rules]

Numbers are the best of ``--repeat`` runs (the least disturbed by other processes).
"""

from __future__ import annotations

import argparse
import ast
import gc
import os
import sys
import textwrap
import time
from pathlib import Path
from typing import Callable, List, Tuple

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "pybackend"))

from torchdoctor.lint import lint_source  # noqa: E402

TYPING_BUDGET = 0.2  # seconds of lint after the 300 ms debounce: squiggles settle within 0.5 s
DEFAULT_PATHS = [REPO / "tests" / "python" / "lint_corpus", REPO / "sample_workspace"]

_BLOCKS = [
    """
    class Net{i}(nn.Module):
        def __init__(self, d_in={d}, hidden=64, classes=10):
            super().__init__()
            self.fc1 = nn.Linear(d_in, hidden)
            self.bn = nn.BatchNorm1d(hidden)
            self.drop = nn.Dropout(0.2)
            self.fc2 = nn.Linear(hidden, classes)

        def forward(self, x):
            h = F.relu(self.bn(self.fc1(x)))
            return self.fc2(self.drop(h))
    """,
    """
    def train_epoch_{i}(model, loader, optimizer, criterion, device):
        model.train()
        running = 0.0
        for step, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad(set_to_none=True)
            loss = criterion(model(x), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            running += loss.item()
        return running / max(len(loader), 1)
    """,
    """
    @torch.no_grad()
    def evaluate_{i}(model, loader, device):
        model.eval()
        correct = total = 0
        for x, y in loader:
            logits = model(x.to(device))
            correct += (logits.argmax(1).cpu() == y).sum().item()
            total += y.numel()
        return correct / max(total, 1)
    """,
    """
    def fit_{i}(epochs=3):
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        model = Net{i}().to(device)
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=epochs)
        criterion = nn.CrossEntropyLoss(label_smoothing=0.05)
        data = TensorDataset(torch.randn(256, {d}), torch.randint(0, 10, (256,)))
        train_loader = DataLoader(data, batch_size=32, shuffle=True)
        val_loader = DataLoader(data, batch_size=128)
        for epoch in range(epochs):
            loss = train_epoch_{i}(model, train_loader, optimizer, criterion, device)
            acc = evaluate_{i}(model, val_loader, device)
            scheduler.step()
            print(f"epoch {{epoch}} loss {{loss:.3f}} acc {{acc:.2%}}")
        return model
    """,
    """
    def buggy_loop_{i}(model, loader):
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        crit = nn.CrossEntropyLoss()
        total = 0.0
        for x, y in loader:
            loss = crit(F.softmax(model(x), dim=1), y)
            loss.backward()
            optimizer.step()
            total += loss
        return total
    """,
    """
    def pick_embedding_{i}(meta, table, dim={d}):
        if meta.get("id") in table:
            return table[meta["id"]]
        if meta.get("text"):
            return torch.full((dim,), float(len(meta["text"])))
        return torch.zeros(dim)
    """,
]
_HEADER = (
    "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
    "from torch.utils.data import DataLoader, TensorDataset\n"
)


_SCRIPT_BLOCK = """
model{i} = nn.Sequential(nn.Linear({d}, 32), nn.Dropout(0.1), nn.Linear(32, 4)).to(device)
optimizer{i} = torch.optim.SGD(model{i}.parameters(), lr=0.01)
loader{i} = DataLoader(TensorDataset(torch.randn(64, {d}), torch.randint(0, 4, (64,))), batch_size=8, shuffle=True)
for epoch in range(2):
    model{i}.train()
    for x, y in loader{i}:
        x, y = x.to(device), y.to(device)
        optimizer{i}.zero_grad()
        loss = nn.functional.cross_entropy(model{i}(x), y)
        loss.backward()
        optimizer{i}.step()
    model{i}.eval()
    with torch.no_grad():
        probe = model{i}(torch.randn(2, {d}))
"""
SCRIPT_BUDGET = 1.0  # seconds for a 32k-line script


# Shapes that once made a rule rescan the module per block (TD007, TD017-TD020): the loss and
# the accumulators rebound in every block or numbered per block; a sampler and a training
# loader per block, under the same names or numbered. Timed per rule by ``--rules``.
_SHAPES_HEADER = (
    "import torch\nimport torch.nn as nn\n"
    "from torch.utils.data import DataLoader, DistributedSampler, TensorDataset\n"
    "model = nn.Linear(8, 2)\noptimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "criterion = nn.CrossEntropyLoss()\ndistributed = False\n"
    "ds = TensorDataset(torch.randn(64, 8), torch.randint(0, 2, (64,)))\n"
    "loader = DataLoader(ds, batch_size=8, shuffle=True)\n"
)
_ACCUMULATING_BLOCK = """
total = 0.0
for x, y in loader:
    optimizer.zero_grad()
    loss = criterion(model(x), y)
    loss.backward()
    optimizer.step()
    total += loss
running_{i} = 0
for epoch in range(2):
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
        running_{i} = running_{i} + loss
    print(running_{i})
"""
_SAMPLER_BLOCK = """
train_sampler = DistributedSampler(ds) if distributed else None
train_loader = DataLoader(ds, batch_size=8, sampler=train_sampler)
sampler_{i} = DistributedSampler(ds)
train_loader_{i} = DataLoader(ds, batch_size=8, sampler=sampler_{i}, shuffle=True)
train_sampler = None
if distributed:
    train_sampler = DistributedSampler(ds)
train_loader = DataLoader(ds, batch_size=8, sampler=train_sampler)
for epoch in range(2):
    for x, y in train_loader:
        loss = criterion(model(x), y)
        loss.backward()
        optimizer.step()
"""


def generated_script(
    lines: int, header: str = _HEADER + "device = torch.device('cuda')\n", block: str = _SCRIPT_BLOCK
) -> str:
    """A long top-level script (every block moves a model, feeds it, evaluates it; or another
    ``block`` repeated)."""
    parts = [header]
    count, i = header.count("\n"), 0
    while count < lines:
        text = block.format(i=i, d=8 + i % 24)
        parts.append(text)
        count += text.count("\n")
        i += 1
    return "".join(parts)


def scaling(repeat: int) -> None:
    sizes = (4000, 8000, 16000, 32000)
    times = []
    for size in sizes:
        text = generated_script(size)
        # best_of_each calls both lambdas before the next iteration rebinds `text`: not a late-binding bug.
        t_compile, t_lint = best_of_each(
            max(1, repeat // 2),
            lambda: compile(text, "<script>", "exec", dont_inherit=True),  # noqa: B023
            lambda: lint_source(text, "<script>"),  # noqa: B023
        )
        times.append(t_lint)
        print(f"  {size:>6} lines: lint {t_lint / t_compile:.1f}x compile()")
    growth = [b / a for a, b in zip(times, times[1:])]
    shape = "linear" if max(growth) < 3.0 else "SUPERLINEAR"
    print(f"  each doubling costs {', '.join(f'{g:.2f}x' for g in growth)} (linear: 2x): {shape}")
    verdict = "within" if times[-1] <= SCRIPT_BUDGET else "OVER"
    print(f"  32k lines: {verdict} the {SCRIPT_BUDGET:.0f} s budget ({times[-1] / SCRIPT_BUDGET:.2f}x the budget)")


def rule_scaling(repeat: int, title: str = "the long script", make: Callable[[int], str] = generated_script) -> None:
    """Each rule's CPU time on the 4k-32k-line scripts ``make`` writes and its growth per doubling."""
    from torchdoctor.lint import all_rules
    from torchdoctor.lint.context import LintContext
    from torchdoctor.lint.registry import Reporter
    from torchdoctor.lint.source import SourceText

    sizes = (4000, 8000, 16000, 32000)
    table: dict = {}
    for size in sizes:
        text = make(size)
        best: dict = {}
        for _ in range(max(1, repeat // 2)):
            gc.disable()  # as lint_source does while it runs (engine._collector_paused)
            start = _CLOCK()
            tree = ast.parse(text)
            row = {"parse": _CLOCK() - start}
            start = _CLOCK()
            ctx = LintContext(tree, SourceText(text), "<script>")
            row["index"] = _CLOCK() - start
            for rule in all_rules():
                start = _CLOCK()
                rule.check(ctx, Reporter(rule, ctx))
                row[rule.id] = _CLOCK() - start
            # The teardown lint_source pays too, as a row of its own. Freed here, not when the next
            # round rebinds ``tree``: that counted the last tree's deallocation (70-80 ms at 32k
            # lines) in the next round's "parse".
            start = _CLOCK()
            ctx.release()
            del ctx, tree
            row["free"] = _CLOCK() - start
            gc.enable()
            for key, value in row.items():
                best[key] = min(best.get(key, float("inf")), value)
        table[size] = best
    print(f"per rule on {title} (ms at 4k/8k/16k/32k lines; each doubling; their mean, judged when 4k > 2 ms):")
    worst = []
    for key in table[sizes[0]]:
        times = [table[size][key] for size in sizes]
        growth = [b / a for a, b in zip(times, times[1:]) if a > 0.0005]
        judged = times[0] > 0.002
        mean = (times[-1] / times[0]) ** (1 / 3) if judged else 0.0
        shape = ("linear" if mean < 2.5 else "SUPERLINEAR") if judged else "-"
        if shape == "SUPERLINEAR":
            worst.append(key)
        cells = " ".join(f"{t * 1000:6.0f}" for t in times)
        steps = ", ".join(f"{g:.2f}x" for g in growth)
        print(f"  {key:>6}: {cells}   {steps}" + (f"  mean {mean:.2f}x {shape}" if judged else ""))
    print(f"  every rule linear: {'yes' if not worst else 'NO (' + ', '.join(worst) + ')'}")


def generated_module(lines: int) -> str:
    """A realistic training module of at least ``lines`` lines (unique names per block)."""
    parts, count, i = [_HEADER], _HEADER.count("\n"), 0
    while count < lines:
        for block in _BLOCKS:
            text = textwrap.dedent(block).format(i=i, d=8 + i % 24) + "\n"
            parts.append(text)
            count += text.count("\n")
        i += 1
    return "".join(parts)


def python_files(paths: List[Path]) -> List[Tuple[str, str]]:
    files = []
    for path in paths:
        candidates = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        for candidate in candidates:
            try:
                files.append((str(candidate), candidate.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return files


# CPU time of this process, not wall time: on a shared machine other processes stretch the wall
# clock (a load of 12 on two cores made the same lint 3-5x slower by the clock), much less the
# CPU time the lint itself uses. What a user waits for is wall time on their own, quieter machine.
_CLOCK = time.process_time


def best_of_each(repeat: int, *fns: Callable[[], object]) -> List[float]:
    """The best CPU time of each function over ``repeat`` rounds, the functions interleaved in
    every round so that a busy machine slows baseline and subject alike."""
    best = [float("inf")] * len(fns)
    for _ in range(repeat):
        for i, fn in enumerate(fns):
            start = _CLOCK()
            fn()
            best[i] = min(best[i], _CLOCK() - start)
    return best


def compile_all(files):
    for path, text in files:
        try:
            compile(text, path, "exec", dont_inherit=True)
        except SyntaxError:
            pass


def parse_all(files):
    for path, text in files:
        try:
            ast.parse(text, path)
        except SyntaxError:
            pass


def lint_all(files):
    return sum(len(lint_source(text, path).all) for path, text in files)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", type=Path, help="files or directories (default: lint corpus + samples)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--rules", action="store_true", help="also time each rule on the 4k-32k-line scripts")
    args = parser.parse_args(argv)
    print("load average (1, 5, 15 min): " + ", ".join(f"{x:.2f}" for x in os.getloadavg()) + "; times are CPU time")

    files = python_files(args.paths or DEFAULT_PATHS)
    if not files:
        print("no Python files found", file=sys.stderr)
        return 2
    total_lines = sum(text.count("\n") + 1 for _, text in files)
    lint_all(files)  # warm up: import the rules, fill caches of the interpreter
    t_compile, t_parse, t_lint = best_of_each(
        args.repeat, lambda: compile_all(files), lambda: parse_all(files), lambda: lint_all(files)
    )
    findings = lint_all(files)
    print(f"throughput: {len(files)} files, {total_lines} lines, {findings} findings")
    print(f"  compile(): {total_lines / t_compile:,.0f} lines/s   lint: {total_lines / t_lint:,.0f} lines/s")
    print(
        f"  lint costs {t_lint / t_compile:.1f}x compile() of the same files "
        f"({t_lint / t_parse:.1f}x ast.parse, the floor for any AST linter)"
    )

    big = generated_module(args.lines)
    big_lines = big.count("\n") + 1
    t_big_compile, t_big_parse, t_big_lint = best_of_each(
        args.repeat,
        lambda: compile(big, "<generated>", "exec", dont_inherit=True),
        lambda: ast.parse(big),
        lambda: lint_source(big, "<generated>"),
    )
    big_findings = len(lint_source(big, "<generated>").all)
    verdict = "within" if t_big_lint <= TYPING_BUDGET else "OVER"
    print(f"latency: generated module of {big_lines} lines, {big_findings} findings")
    print(
        f"  lint takes {t_big_lint / t_big_compile:.1f}x compile() of the same file, "
        f"{t_big_lint / t_big_parse:.1f}x ast.parse ({t_big_lint * 1000:.0f} ms; compile() {t_big_compile * 1000:.0f} ms, "
        f"ast.parse {t_big_parse * 1000:.0f} ms)"
    )
    print(
        f"  {verdict} the {TYPING_BUDGET * 1000:.0f} ms typing budget after the 300 ms debounce "
        f"({t_big_lint / TYPING_BUDGET:.2f}x the budget)"
    )
    print("scaling: a long top-level script")
    scaling(args.repeat)
    if args.rules:
        rule_scaling(args.repeat)
        rule_scaling(
            args.repeat,
            "a script accumulating losses",
            lambda n: generated_script(n, _SHAPES_HEADER, _ACCUMULATING_BLOCK),
        )
        rule_scaling(args.repeat, "a script of samplers", lambda n: generated_script(n, _SHAPES_HEADER, _SAMPLER_BLOCK))
    return 0


if __name__ == "__main__":
    sys.exit(main())
