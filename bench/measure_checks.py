"""The four model checks on every model of the real-model corpus, as a user runs them; and the public peers.

A measurement to quote (issue 14), not a test and not part of ``make bench`` (its name does not match
``bench_*.py``): it takes tens of minutes on a small machine. The corpus is
``tests/python/unit/checks/real_models/models.py``, read when the script runs: every
``example_<name>()`` there is one model built from its example (the file this script writes has a
``torchdoctor_example()`` returning it), and every class there that has no example and whose
constructor needs no argument is one model checked as the class alone (inputs, targets and loss
inferred, as the CodeLens runs it). A model whose example returns ``None`` (transformers missing) is
left out and said so.

**The table** (default): each check runs the way a user runs it, through the CLI and its worker
process: ``torchdoctor check <check> FILE::Class --json --timeout 120``, one after the other. Each
cell is the verdict and the wall-clock seconds the command took (worker start, torch import and
the model's own imports included: what a user waits for). Non-PASS cells are explained below the
table by their headline.

**--compare** adds, on the same models and the same example (the worker's own example code builds
it in a child process, seed 0, one torch thread), the public tools beside ours:

- shape trace vs ``torchinfo.summary`` (1.8.0): rows (one per module call), milliseconds of one
  summary / one trace in the same process (best of 3 after a warm-up forward), and the top-level
  output as each shows it (does it handle tuple / dict / ``ModelOutput`` outputs, keyword inputs;
  a dict batch goes in as ``input_data=dict``, keyword arguments next to positional ones as
  ``summary(..., **kwargs)``);
- LR finder vs ``torch_lr_finder.LRFinder.range_test`` (0.2.2): both sweep Adam from 1e-7 to 10 in
  100 exponential steps on the example batch; its suggestion is ``plot(suggest_lr=True)``'s
  (steepest gradient of its smoothed loss, default ``skip_start=10, skip_end=5``), ours the
  worker's ``suggestedLr`` rule (``lr_finder.suggestions``) on our sweep, run in process;
  seconds of each sweep; whether each puts the state back exactly: before the sweep the optimizer
  has taken one step (it holds Adam moments, the parameters hold gradients), and after it (after
  ``LRFinder.reset()`` for the peer) the model's ``state_dict`` (weights, buffers), the optimizer's
  ``state_dict``, the gradients, the train/eval modes and torch's RNG are compared exactly. The peer
  calls ``model(inputs)`` with one argument and ``criterion(outputs, labels)``: a model with more
  than one input, keyword inputs or its own loss is fed through an adapter module (``adapter``),
  which a user would have to write;
- gradient check vs ``torch.autograd.gradcheck(fast_mode=True)`` on a float64 copy in eval mode (as
  ours), every evaluation under one fixed seed (a VAE's noise is then a function of the weights):
  (a) the whole model: every trainable parameter an input of ``gradcheck``; (b) 20 sampled
  elements of the largest parameter. Each in its own process, stopped after ``--peer-timeout``
  seconds (on a mismatch fast mode falls back to the full numerical Jacobian). Ours is the CLI's
  verdict from the table, and the seconds of the check itself (``details.seconds``: its sampling
  budget is half the time limit).

Peers are imported optionally, from ``--peers DIR`` (default ``/tmp/peers``) or the environment;
they are not dependencies of the project. Install them into a throwaway folder::

    .venv/bin/python -m pip install --target /tmp/peers torchinfo==1.8.0 torch-lr-finder==0.2.2 --no-deps

    nice -n 10 .venv/bin/python bench/measure_checks.py [--compare] [--models A,B] [--checks overfit,shapes]
                                                       [--timeout 120] [--peer-timeout 120] [--list]

The seconds come from whatever machine runs it: on a shared one only their relations mean
something. The load average is printed before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import inspect
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "python" / "unit" / "checks" / "real_models"
sys.path.insert(0, str(REPO / "pybackend"))

CHECKS = ("overfit", "lr-find", "gradcheck", "shapes")
TITLES = {"overfit": "overfit", "lr-find": "LR finder", "gradcheck": "gradient check", "shapes": "shape trace"}
PEERS_DEFAULT = "/tmp/peers"
INSTALL = (
    ".venv/bin/python -m pip install --target /tmp/peers torchinfo==1.8.0 torch-lr-finder==0.2.2 --no-deps"
    "  (then --peers /tmp/peers)"
)
SEED = 1234  # the seed every evaluation of the peer gradcheck runs under
SAMPLED = 20  # elements of the largest parameter for the peer gradcheck (b)
LR_START, LR_END, LR_ITER = 1e-7, 10.0, 100


@dataclass
class Model:
    label: str  # the row's name
    how: str  # "example" | "class alone"
    class_name: str
    class_module: str
    example_fn: str | None  # example_<name> in models.py, None for a class alone

    def source(self) -> str:
        head = f"import sys\nsys.path.insert(0, {str(CORPUS)!r})\nimport models\n"
        head += f"from {self.class_module} import {self.class_name}\n"
        if self.example_fn is None:
            return head
        return head + f"\n\ndef torchdoctor_example():\n    return models.{self.example_fn}()\n"


# ------------------------------------------------------------------------------------------- corpus
def load_corpus_module():
    """models.py under the name ``models`` (the name the written files import it by)."""
    import importlib.util

    if "models" in sys.modules and getattr(sys.modules["models"], "__file__", "") == str(CORPUS / "models.py"):
        return sys.modules["models"]
    spec = importlib.util.spec_from_file_location("models", CORPUS / "models.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["models"] = module  # before exec: dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _needs_arguments(cls) -> bool:
    try:
        params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return True
    return any(p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params)


def corpus(module=None) -> tuple[list[Model], list[str]]:
    """Every model of models.py as it is now: its examples, then classes alone; and what was left out."""
    import torch
    import torch.nn as nn

    module = module or load_corpus_module()
    models: list[Model] = []
    skipped: list[str] = []
    with_example: set = set()
    for name, fn in vars(module).items():
        if not (name.startswith("example_") and callable(fn)):
            continue
        torch.manual_seed(0)
        returned = fn()
        if returned is None:
            skipped.append(f"{name}() returned None (transformers not installed?)")
            continue
        model = returned["model"] if isinstance(returned, dict) else returned[0]
        cls = type(model)
        with_example.add(cls)
        models.append(Model(cls.__name__, "example", cls.__name__, cls.__module__, name))
    for name, cls in vars(module).items():
        if (
            isinstance(cls, type)
            and issubclass(cls, nn.Module)
            and cls.__module__ == module.__name__
            and cls not in with_example
            and not _needs_arguments(cls)
        ):
            models.append(Model(name, "class alone", name, cls.__module__, None))
    seen: dict = {}
    for m in models:  # two examples of one class: name the rows by their example function
        seen[m.label] = seen.get(m.label, 0) + 1
    for m in models:
        if seen[m.label] > 1 and m.example_fn:
            m.label = f"{m.label} ({m.example_fn})"
    return models, skipped


def write_files(models: list[Model], folder: str) -> dict:
    paths = {}
    for m in models:
        stem = m.example_fn or f"alone_{m.class_name.lower()}"
        path = os.path.join(folder, f"td_{stem}.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(f'"""Written by bench/measure_checks.py: {m.label}, {m.how}."""\n' + m.source())
        paths[m.label] = path
    return paths


# -------------------------------------------------------------------------------- ours, via the CLI
def run_cli(check: str, path: str, class_name: str, timeout: float) -> dict:
    """``torchdoctor check CHECK FILE::Class --json --timeout T`` in the file's folder: the result and the wall time."""
    cmd = [sys.executable, "-m", "torchdoctor", "check", check, f"{path}::{class_name}", "--json"]
    cmd += ["--timeout", f"{timeout:g}"]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(REPO / "pybackend"), os.environ.get("PYTHONPATH", "")]))
    started = time.monotonic()
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, cwd=os.path.dirname(path), env=env, timeout=timeout + 60
        )
    except subprocess.TimeoutExpired:
        return {
            "verdict": "ERROR",
            "error": {"kind": "cli-hung"},
            "headline": "the CLI itself did not return",
            "seconds": time.monotonic() - started,
            "details": {},
        }
    seconds = time.monotonic() - started
    try:
        result = json.loads(out.stdout)
    except ValueError:
        result = {
            "verdict": "ERROR",
            "error": {"kind": "no-json"},
            "headline": (out.stderr.strip().splitlines() or ["no output"])[-1],
            "details": {},
        }
    result["seconds"] = seconds
    return result


def cell(result: dict | None) -> str:
    if result is None:
        return "—"
    verdict = result.get("verdict", "?")
    kind = (result.get("error") or {}).get("kind")
    if verdict == "ERROR" and kind:
        verdict = f"ERROR ({kind})"
    return f"{verdict} {_secs(result['seconds'])}"


def _secs(s: float) -> str:
    return f"{s:.1f}" if s < 10 else f"{s:.0f}"


def table_lines(models: list[Model], results: dict, checks=CHECKS) -> list[str]:
    lines = [
        "| model | built from | " + " | ".join(f"{TITLES[c]} (s)" for c in checks) + " |",
        "|---|---|" + "---|" * len(checks),
    ]
    for m in models:
        lines.append(f"| {m.label} | {m.how} | " + " | ".join(cell(results.get((m.label, c))) for c in checks) + " |")
    return lines


def notes_lines(models: list[Model], results: dict, checks=CHECKS) -> list[str]:
    lines = []
    for m in models:
        for c in checks:
            r = results.get((m.label, c))
            if r is not None and r.get("verdict") != "PASS":
                headline = " ".join(str(r.get("headline") or "").split())
                lines.append(f"- {m.label} / {TITLES[c]}: {r.get('verdict')}: {headline[:220]}")
    return lines


def load_line(when: str) -> str:
    return f"load average {when}: " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


# ------------------------------------------------------------------------ children: one measurement
def build_example(path: str, class_name: str):
    """The example exactly as the worker builds it (its code), seed 0, one thread."""
    import torch

    from torchdoctor.checks import example as E

    torch.set_num_threads(1)
    torch.manual_seed(0)
    module = E.load_user_module(path)
    return E.complete(E.build(module, class_name, {}), {})


def _first_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text[:160]}"


def child_shapes(path: str, class_name: str) -> dict:
    import torch

    from torchdoctor.checks import shape_trace as S

    ex = build_example(path, class_name)
    model, inputs, kwargs = ex.model, ex.inputs, ex.call_kwargs()
    with torch.no_grad():
        model(*inputs, **kwargs)  # warm-up, for both

    def ours():
        tr = S.trace(model, inputs, kwargs)
        rows = [r.cells() for r in tr.rows]
        return tr, rows

    out: dict = {
        "inputs": "kwargs" if kwargs and not inputs else ("args+kwargs" if kwargs else f"{len(inputs)} arg(s)"),
    }
    best = math.inf
    for _ in range(3):
        started = time.perf_counter()
        tr, rows = ours()
        best = min(best, time.perf_counter() - started)
    out.update(
        ours_rows=len(rows),
        ours_ms=best * 1e3,
        ours_failed=tr.failure is not None,
        ours_out=S.fmt(tr.rows[0].outputs) if tr.rows else None,
    )
    try:
        from torchinfo import summary
    except ImportError as exc:
        out["torchinfo"] = _first_line(exc)
        return out
    data = list(inputs) if inputs else dict(kwargs)
    extra = dict(kwargs) if inputs else {}
    best, error, stats = math.inf, None, None
    for _ in range(3):
        started = time.perf_counter()
        try:
            stats = summary(
                model,
                input_data=data,
                depth=99,
                verbose=0,
                col_names=("input_size", "output_size", "num_params"),
                **extra,
            )
            str(stats)  # the table, as printed
        except Exception as exc:  # torchinfo wraps the cause: "Failed to run torchinfo..."
            error = _first_line(exc.__cause__ or exc)
            break
        best = min(best, time.perf_counter() - started)
    if error is not None:
        out["torchinfo_error"] = error
    else:
        top = stats.summary_list[0] if stats.summary_list else None
        out.update(ti_rows=len(stats.summary_list), ti_ms=best * 1e3, ti_out=str(top.output_size) if top else None)
    return out


def _snapshot(model, optimizer) -> dict:
    import torch

    return {
        "weights": {k: v.detach().clone() for k, v in model.state_dict().items()},
        "optimizer": copy.deepcopy(optimizer.state_dict()),
        "grads": [None if p.grad is None else p.grad.detach().clone() for p in model.parameters()],
        "modes": [m.training for m in model.modules()],
        "RNG": torch.get_rng_state(),
    }


def _same(a, b) -> bool:
    import torch

    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return (
            isinstance(a, torch.Tensor)
            and isinstance(b, torch.Tensor)
            and a.shape == b.shape
            and a.dtype == b.dtype
            and torch.equal(a, b)
        )
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def state_differences(before: dict, after: dict, model) -> list[str]:
    """What differs between two snapshots: weights, buffers, optimizer, grads, modes, RNG."""
    params = {n for n, _ in model.named_parameters(remove_duplicate=False)}
    w0, w1 = before["weights"], after["weights"]
    diff = []
    if not _same({k: v for k, v in w0.items() if k in params}, {k: v for k, v in w1.items() if k in params}):
        diff.append("weights")
    if not _same({k: v for k, v in w0.items() if k not in params}, {k: v for k, v in w1.items() if k not in params}):
        diff.append("buffers")
    for key in ("optimizer", "grads", "modes", "RNG"):
        if not _same(before[key], after[key]):
            diff.append(key)
    return diff


def _one_step(ex, optimizer) -> None:
    """A step of training before the sweep: the optimizer holds moments, the parameters gradients."""
    optimizer.zero_grad()
    ex.loss(ex.output()).backward()
    optimizer.step()


def child_lr(path: str, class_name: str) -> dict:
    import torch

    from torchdoctor.checks import lr_finder as L

    ex = build_example(path, class_name)
    model = ex.model
    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.Adam(params, lr=LR_START)
    _one_step(ex, optimizer)
    for group in optimizer.param_groups:
        group["lr"] = LR_START
    out: dict = {}
    before = _snapshot(model, optimizer)
    started = time.perf_counter()
    try:  # ours: the worker's lr_find and suggestion, in this process
        sweep = L.lr_find(
            model,
            optimizer,
            lambda: ex.loss(ex.output()),
            start_lr=LR_START,
            end_lr=LR_END,
            num_iter=LR_ITER,
            time_budget=60.0,
        )
        out.update(
            ours_s=time.perf_counter() - started, ours_lr=L.suggestions(sweep)["steepest"], ours_points=len(sweep.lrs)
        )
    except Exception as exc:
        out["ours_error"] = _first_line(exc)
    out["ours_diff"] = state_differences(before, _snapshot(model, optimizer), model)

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from torch_lr_finder import LRFinder
    except ImportError as exc:
        out["peer_error"] = _first_line(exc)
        return out
    from torch.utils.data import DataLoader, Dataset

    single = len(ex.inputs) == 1 and isinstance(ex.inputs[0], torch.Tensor) and not ex.call_kwargs()
    if single:  # the peer's own way: model(inputs), criterion(outputs, labels)
        net, batch, fed = model, (ex.inputs[0], ex.targets), "direct"
        criterion = lambda output, labels: ex.loss(output, labels)  # noqa: E731
    else:

        class Adapter(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model

            def forward(self, _):
                return ex.output()

        net, batch, fed = Adapter(), (0, 0), "adapter"
        criterion = lambda output, _labels: ex.loss(output)  # noqa: E731

    class OneBatch(Dataset):
        def __len__(self):
            return 1

        def __getitem__(self, i):
            return batch

    out["fed"] = fed
    before = _snapshot(model, optimizer)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            finder = LRFinder(net, optimizer, criterion)
            finder.range_test(DataLoader(OneBatch(), batch_size=None), end_lr=LR_END, num_iter=LR_ITER)
        out["peer_s"] = time.perf_counter() - started
        out["peer_points"] = len(finder.history["lr"])
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                _, ax = plt.subplots()
                out["peer_lr"] = finder.plot(ax=ax, suggest_lr=True)[1]  # skip_start=10, skip_end=5
        except Exception as exc:  # fewer than 17 points
            out["peer_lr_error"] = _first_line(exc)
        finder.reset()
        out["peer_diff"] = state_differences(before, _snapshot(model, optimizer), model)
    except Exception as exc:
        out["peer_error"] = _first_line(exc)
    return out


def _double_loss(ex):
    """``loss_at(overrides)``: the example's loss in float64, eval mode, the parameters in ``overrides``
    replacing the model's (``torch.func.functional_call``), every evaluation under one seed."""
    import torch

    from torchdoctor.checks.example import map_tensors

    def conv(t):
        return t.detach().double() if t.is_floating_point() else t

    inputs, kwargs, targets = (map_tensors(v, conv) for v in (ex.inputs, ex.kwargs, ex.targets))
    ex.model.double().eval()

    def loss_at(overrides: dict):
        def call(*args, **kw):
            return torch.func.functional_call(ex.model, overrides, args, kw)

        torch.manual_seed(SEED)
        return ex.loss(ex.output(model=call, inputs=inputs, kwargs=kwargs), targets)

    return loss_at


def child_gradcheck(path: str, class_name: str, which: str) -> dict:
    import torch
    from torch.autograd.gradcheck import GradcheckError  # the module: torch.autograd.gradcheck is the function

    ex = build_example(path, class_name)
    loss_at = _double_loss(ex)
    named = [(n, p) for n, p in ex.model.named_parameters() if p.requires_grad]
    if which == "whole":
        names = [n for n, _ in named]
        leaves = tuple(p.detach().clone().requires_grad_(True) for _, p in named)

        def f(*values):
            return loss_at(dict(zip(names, values)))

        what = f"{len(leaves)} tensors, {sum(t.numel() for t in leaves)} elements"
    else:
        name, p = max(named, key=lambda np_: np_[1].numel())
        base = p.detach().clone()
        idx = torch.randperm(base.numel(), generator=torch.Generator().manual_seed(0))[:SAMPLED]
        leaves = (base.flatten()[idx].clone().requires_grad_(True),)

        def f(values):
            return loss_at({name: base.flatten().index_put((idx,), values).view_as(base)})

        what = f"{len(idx)} of {base.numel()} in {name}"
    started = time.perf_counter()
    try:
        torch.autograd.gradcheck(f, leaves, fast_mode=True)
        verdict = "PASS"
        error = None
    except GradcheckError as exc:
        verdict, error = "FAIL", _first_line(exc)
    except Exception as exc:
        verdict, error = "ERROR", _first_line(exc)
    return {"verdict": verdict, "s": time.perf_counter() - started, "what": what, "error": error}


CHILDREN = {
    "shapes": child_shapes,
    "lr": child_lr,
    "gc-whole": lambda path, cls: child_gradcheck(path, cls, "whole"),
    "gc-one": lambda path, cls: child_gradcheck(path, cls, "one"),
}


def run_child(kind: str, path: str, class_name: str, timeout: float, peers: str) -> dict:
    """One measurement in a child process (a hang or a slow fallback is stopped after ``timeout``)."""
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", kind, path, class_name, "--peers", peers]
    started = time.monotonic()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=os.path.dirname(path), timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": timeout, "wall": time.monotonic() - started}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    tail = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return {"crash": f"exit {out.returncode}: {tail[:160]}"}


# ------------------------------------------------------------------------------- compare: the tables
def _ms(x: float) -> str:
    return f"{x:.1f}" if x < 10 else f"{x:.0f}"


def _lr(x) -> str:
    return "—" if x is None else f"{x:.1e}"


def _diff(d) -> str:
    if d is None:
        return "—"
    return "exact" if not d else "differ: " + ", ".join(d)


def _what(r: dict) -> str:
    return f" ({r['what']})" if r.get("what") else ""


def _gc(r: dict, cap: float) -> str:
    if "timeout" in r:
        return f"TIMEOUT >{cap:g}"
    if "crash" in r:
        return "crash"
    return f"{r['verdict']} {_secs(r['s'])}"


def compare_lines(models: list[Model], peer: dict, ours: dict, cap: float) -> list[str]:
    lines = [
        "### Shape trace vs torchinfo.summary (in process, ms: best of 3)",
        "",
        "| model | inputs | ours rows | ours ms | ours top output | torchinfo rows | torchinfo ms | torchinfo top output |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in models:
        r = peer.get((m.label, "shapes"), {})
        if "ours_rows" not in r:
            lines.append(f"| {m.label} | — | {r.get('crash') or r.get('timeout') or '—'} | | | | | |")
            continue
        ti = (
            f"error | — | {r['torchinfo_error']}"
            if "torchinfo_error" in r
            else f"{r['ti_rows']} | {_ms(r['ti_ms'])} | {r['ti_out']}"
            if "ti_rows" in r
            else f"— | — | {r.get('torchinfo', '—')}"
        )
        lines.append(
            f"| {m.label} | {r['inputs']} | {r['ours_rows']}{' (FAIL)' if r['ours_failed'] else ''} | "
            f"{_ms(r['ours_ms'])} | {r['ours_out']} | {ti} |"
        )
    lines += [
        "",
        "### LR finder vs torch_lr_finder (Adam 1e-7 → 10, 100 steps, in process)",
        "",
        "| model | fed | ours steepest | torch_lr_finder steepest | decades apart | ours s | peer s | "
        "ours: state after | peer: state after reset() |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for m in models:
        r = peer.get((m.label, "lr"), {})
        if "ours_diff" not in r:
            lines.append(f"| {m.label} | | {r.get('crash') or r.get('timeout') or '—'} | | | | | | |")
            continue
        a, b = r.get("ours_lr"), r.get("peer_lr")
        apart = f"{math.log10(b / a):+.1f}" if a and b else "—"
        peer_lr = _lr(b) if b is not None else ("— (" + r.get("peer_lr_error", r.get("peer_error", ""))[:60] + ")")
        ours_lr = _lr(a) if "ours_error" not in r else r["ours_error"][:60]
        peer_s = _secs(r["peer_s"]) if "peer_s" in r else r.get("peer_error", "—")[:80]
        lines.append(
            f"| {m.label} | {r.get('fed', '—')} | {ours_lr} | {peer_lr} | {apart} | "
            f"{_secs(r['ours_s']) if 'ours_s' in r else '—'} | {peer_s} | {_diff(r['ours_diff'])} | "
            f"{_diff(r.get('peer_diff'))} |"
        )
    lines += [
        "",
        f"### Gradient check vs torch.autograd.gradcheck (fast_mode, float64, eval, capped at {cap:g} s)",
        "",
        "| model | ours (CLI) | ours: check's own s | gradcheck, whole model | gradcheck, 20 elements of the largest parameter |",
        "|---|---|---|---|---|",
    ]
    notes = []
    for m in models:
        o = ours.get((m.label, "gradcheck"))
        whole, one = peer.get((m.label, "gc-whole"), {}), peer.get((m.label, "gc-one"), {})
        own = (o or {}).get("details", {}).get("seconds")
        lines.append(
            f"| {m.label} | {cell(o)} | {_secs(own) if isinstance(own, (int, float)) else '—'} | "
            f"{_gc(whole, cap)}{_what(whole)} | {_gc(one, cap)}{_what(one)} |"
        )
        for tag, r in (("whole", whole), ("sampled", one)):
            if r.get("error"):
                notes.append(f"- {m.label}, gradcheck {tag}: {r['error']}")
            if r.get("crash"):
                notes.append(f"- {m.label}, gradcheck {tag}: {r['crash']}")
    for m in models:
        r = peer.get((m.label, "shapes"), {})
        if r.get("torchinfo_error"):
            notes.append(f"- {m.label}, torchinfo: {r['torchinfo_error']}")
        r = peer.get((m.label, "lr"), {})
        for key in ("ours_error", "peer_error", "peer_lr_error"):
            if r.get(key):
                notes.append(f"- {m.label}, {key.replace('_', ' ')}: {r[key]}")
    return lines + ([""] + notes if notes else [])


def peers_missing(peers: str) -> list[str]:
    missing = []
    for name in ("torchinfo", "torch_lr_finder"):
        try:
            __import__(name)
        except ImportError as exc:
            missing.append(f"{name} ({exc})")
    return missing


def _add_peers(peers: str) -> None:
    if peers and os.path.isdir(peers) and peers not in sys.path:
        sys.path.append(peers)  # after the venv: never shadows the project's own packages


# ---------------------------------------------------------------------------------------------- main
def parse(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--compare", action="store_true", help="also run torchinfo, torch_lr_finder and gradcheck")
    p.add_argument("--models", default="", help="comma-separated row names (default: the whole corpus)")
    p.add_argument("--checks", default=",".join(CHECKS), help="comma-separated checks (default: all four)")
    p.add_argument("--timeout", type=float, default=120.0, help="--timeout of each CLI check (default 120)")
    p.add_argument("--peer-timeout", type=float, default=120.0, help="cap on each peer gradcheck (default 120)")
    p.add_argument(
        "--peers",
        default=os.environ.get("TORCHDOCTOR_PEERS", PEERS_DEFAULT),
        help=f"folder the peers were pip-installed into with --target (default {PEERS_DEFAULT})",
    )
    p.add_argument("--list", action="store_true", help="list the corpus and exit")
    p.add_argument("--child", nargs=3, metavar=("KIND", "FILE", "CLASS"), help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    _add_peers(args.peers)
    if args.child:
        kind, path, class_name = args.child
        result = CHILDREN[kind](path, class_name)
        print("RESULT " + json.dumps(result, default=str), flush=True)
        return 0
    checks = [c for c in args.checks.split(",") if c]
    unknown = [c for c in checks if c not in CHECKS]
    if unknown:
        print(f"unknown check(s): {', '.join(unknown)} (choose from {', '.join(CHECKS)})", file=sys.stderr)
        return 2
    if args.compare:
        missing = peers_missing(args.peers)
        if missing:
            print(
                f"--compare needs the peers, missing: {'; '.join(missing)}.\nInstall them into a throwaway "
                f"folder, not the project:\n    {INSTALL}",
                file=sys.stderr,
            )
            return 2
    models, skipped = corpus()
    if args.models:
        wanted = [w.strip() for w in args.models.split(",") if w.strip()]
        unknown = [w for w in wanted if w not in {m.label for m in models}]
        if unknown:
            print(
                f"unknown model(s): {', '.join(unknown)}; the corpus: {', '.join(m.label for m in models)}",
                file=sys.stderr,
            )
            return 2
        models = [m for m in models if m.label in wanted]
    if args.list:
        for m in models:
            print(f"{m.label}: {m.how} ({m.example_fn or m.class_name})")
        for s in skipped:
            print(f"left out: {s}")
        return 0

    python = os.path.relpath(sys.executable) if sys.executable.startswith(os.getcwd()) else sys.executable
    print("command: " + " ".join([python, "bench/measure_checks.py", *(sys.argv[1:] if argv is None else argv)]))
    print(load_line("before"), flush=True)
    results: dict = {}
    peer: dict = {}
    with tempfile.TemporaryDirectory(prefix="td_measure_") as folder:
        paths = write_files(models, folder)
        print("", *table_lines([], {}, checks), sep="\n", flush=True)
        for m in models:
            for c in checks:
                results[(m.label, c)] = run_cli(c, paths[m.label], m.class_name, args.timeout)
            print(table_lines([m], results, checks)[-1], flush=True)
        print("", *notes_lines(models, results, checks), sep="\n")
        print(load_line("after the table"), flush=True)
        if args.compare:
            for m in models:
                for kind in ("shapes", "lr", "gc-whole", "gc-one"):
                    cap = args.peer_timeout if kind.startswith("gc") else 900
                    peer[(m.label, kind)] = run_child(kind, paths[m.label], m.class_name, cap, args.peers)
                print(f"compared: {m.label}", file=sys.stderr, flush=True)
            print("", *compare_lines(models, peer, results, args.peer_timeout), sep="\n")
            print(load_line("after the comparison"), flush=True)
    for s in skipped:
        print(f"left out: {s}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
