"""Numerical gradient check (seed 002, technique 1 and exercise 5), bounded on models of any size.

On the model in float64 and eval() mode (converted in place and restored exactly afterwards), for every parameter:
the analytical gradient from one backward, and the central difference
(loss(w + eps) - loss(w - eps)) / (2 eps) on a random sample of its elements (a private
torch.Generator):

    rel_diff = |analytical - numerical| / max(|analytical|, |numerical|, floor)

OK below 1e-5, WARN below 1e-3, FAIL above (the seed's thresholds).

Bounded: elements are sampled breadth first (a few of every parameter, then more of each, up to
``samples``) until ``timeBudgetSeconds`` is spent; what was not reached is listed, never waited
for. torch.autograd.gradcheck is never run on a whole parameter (on a mismatch its fast mode falls
back to the full numerical Jacobian: 564 s on a 313,600-element weight), only on the loss as a
function of the handful of elements we sampled: its fallback then costs 2 x that many forwards.

A finite difference has an error of its own, measured and subtracted before judging:

    rel_diff = max(0, |analytical - numerical| - fd_error) / max(|analytical|, |numerical|, floor)

``fd_error`` is the larger of twice the gap between the central differences at eps and eps/2
(truncation) and the loss's rounding wobble over eps (rounding: the loss's change when single
weights move by far less than one ulp of the loss, times 4; a deep sum over a 64x64 image wobbles
by far more than a few ulps). ``floor`` is 1e-5 x max(1, |loss|), torch's absolute tolerance. A
gradient of 2e-6 that the finite difference resolves to 2e-8 only is therefore not "suspicious",
while one 10% off is still a FAIL. Where the two differences disagree beyond rounding (a ReLU or
max switching inside the step) the element sits on a kink: it is skipped and another is sampled.

The numerical differences run on the first 2 samples of the batch when the loss runs on them: a
backward is right or wrong whatever the batch, and each forward costs a quarter of a batch of 8.

Random losses (dropout left on by a custom forward, a VAE's reparameterisation): two evaluations
at the same weights differ. Then every evaluation runs under the same fixed seed
(``torch.random.fork_rng``), which makes the loss a deterministic function of the weights, and the
result says so.

A model whose own code casts float64 down anywhere in the forward or the loss (Hugging Face losses
call ``logits.float()``, ``T5LayerNorm`` computes its variance in float32 although the loss stays
float64) is kept in float64 through those casts (``keep_double.py`` watches for them); only when
that breaks its forward does the check go on in the model's lowest precision, with a coarser step,
and say that it sees gross errors only.

Custom ``torch.autograd.Function``s are found in the forward and checked directly
(``custom_functions.py``): a wrong one is named with its file and line, not the parameters
upstream that inherit its error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from dataclasses import dataclass
from typing import Callable

from . import custom_functions as CF
from .gradcheck_words import OK_BELOW, status
from .keep_double import Precision, keep_double_if_needed

EPS = 3e-6
SAMPLES = 20
NOISE = 1e-5
TIME_BUDGET = 60.0  # seconds of numerical differences when the caller gives none
ROUNDS_SHARE = 0.75  # of the budget for our sampled elements; the rest for torch.autograd.gradcheck
ROUNDS = (1, 3, 8)  # elements per parameter after each breadth-first round, then ``samples``
KINK_TOLERANCE = 1e-5
ROUNDING_MARGIN = 100
MAX_TRIES = 3  # look at up to 3x ``samples`` elements to find smooth ones
TORCH_ELEMENTS = 6  # elements of each parameter handed to torch.autograd.gradcheck
LOW_PRECISION_EPS = 1e-3  # the step when the loss comes out in float32: its rounding over 3e-6 is noise
RANDOM_SEED = 1234  # the seed every evaluation of a random loss runs under
SMALL_BATCH = 2  # samples kept for the numerical differences: correctness needs no more, time does
WOBBLE_PROBES = 6
WOBBLE_MARGIN = 4  # x the loss's measured rounding wobble, for the error of a central difference
_EPS_MACH = 2.220446049250313e-16


@dataclass
class ParamCheck:
    name: str
    shape: list
    checked: int
    numel: int
    max_rel_diff: float
    worst_index: list
    analytical: float
    numerical: float
    torch_gradcheck: bool | None
    source: str | None  # "SwishFn (custom autograd.Function)" when its backward made this gradient
    kinks: int = 0  # sampled elements skipped: the loss is not differentiable there (ReLU, max)
    noise: float = 0.0  # the central difference's own error at the worst element
    smooth: list = dataclasses.field(default_factory=list)  # flat indices checked, for torch's opinion
    tried: int = 0

    @property
    def status(self) -> str:
        return status(self.checked, self.max_rel_diff)


@dataclass
class Outcome:
    params: list
    functions: list
    random_loss: bool  # the loss differed between two evaluations: each one ran under a fixed seed
    unreached: list  # parameters the time budget did not reach
    seconds: float
    batch: tuple | None = None  # (kept, of) when the check ran on the first samples of the batch
    loss_dtype: str | None = None  # "float32" when the model's code casts the loss down from float64
    kept_double: bool = False  # the model's own downcasts were kept in float64 (keep_double.py)
    precision: Precision = dataclasses.field(default_factory=Precision)  # its casts, kept or the precision left


@contextlib.contextmanager
def to_double(ex):
    """The example in float64: its model converted in place (restored exactly on exit: parameters,
    buffers, gradients, modes) and a float64 copy of every floating tensor it holds.

    In place, not on a deep copy: a forward may reach its layers through a closure, which
    ``copy.deepcopy`` does not copy (minGPT's ``self.mlpf = lambda x: m.c_proj(m.act(m.c_fc(x)))``
    keeps calling the float32 originals from the copy: "mat1 and mat2 must have the same dtype")."""
    import torch

    def conv(v):
        if isinstance(v, torch.Tensor):
            return v.detach().double() if v.is_floating_point() else v
        if isinstance(v, (tuple, list)):
            items = [conv(x) for x in v]
            return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
        if isinstance(v, dict):
            return {k: conv(x) for k, x in v.items()}
        return v

    model = ex.model
    saved = _save(model)
    try:
        model.double().eval()
        changes = {f.name: conv(getattr(ex, f.name)) for f in dataclasses.fields(ex) if f.name != "model"}
        changes["inferred"] = list(ex.inferred)
        yield dataclasses.replace(ex, **changes)
    finally:
        _restore(model, saved)


def _save(model) -> list:
    saved = []
    for m in model.modules():
        params = {
            n: (p, p.data, None if p.grad is None else p.grad.detach().clone())
            for n, p in m._parameters.items()
            if p is not None
        }
        saved.append((m, m.training, params, dict(m._buffers)))
    return saved


def _restore(model, saved: list) -> None:
    for m, training, params, buffers in saved:
        m.training = training
        for p, data, grad in params.values():
            p.data = data
            p.grad = grad
        m._buffers.update(buffers)


def _loss_of(dex) -> Callable:
    def loss_fn():
        return dex.loss(dex.output())

    return loss_fn


def _seeded(fn: Callable) -> Callable:
    import torch

    def run():
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(RANDOM_SEED)
            return fn()

    return run


def check(ex, options: dict, report: Callable[[float, str], None] | None = None) -> Outcome:
    with to_double(ex) as dex:
        return _check(dex, options, report)


def _check(dex, options: dict, report) -> Outcome:
    import torch

    started = time.monotonic()
    budget = float(options.get("timeBudgetSeconds", TIME_BUDGET))
    deadline = started + budget
    model = dex.model
    eps = float(options.get("eps", EPS))
    samples = int(options.get("samples", SAMPLES))
    g = torch.Generator().manual_seed(int(options.get("seed", 0)))
    dex, kept = _small_batch(dex)
    loss_fn, precision = keep_double_if_needed(_loss_of(dex))
    with torch.no_grad(), torch.random.fork_rng(devices=[]):
        random_loss = float(loss_fn()) != float(loss_fn())
    if random_loss:
        loss_fn = _seeded(loss_fn)
    model.zero_grad(set_to_none=True)
    loss, calls = CF.record(loss_fn)
    sources = custom_function_sources(loss, model)
    loss.backward()
    functions = CF.check_calls(calls, int(options.get("seed", 0)), lambda: time.monotonic() > deadline)
    value = float(loss.detach())
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    grads = {n: (p.grad.detach().clone() if p.grad is not None else torch.zeros_like(p)) for n, p in named}
    results = [_new_check(n, p, sources.get(id(p))) for n, p in named]
    pads = _padding_rows(model)
    orders = [_without_padding_row(torch.randperm(p.numel(), generator=g).tolist(), p, pads) for _, p in named]
    floor = max(1e-8, NOISE * max(1.0, abs(value)))
    wobble = _rounding_of_loss(named, grads, loss_fn, value, g)
    # the model's own code computes the loss (HF: .float()) or part of its forward in float32, and
    # keeping float64 there broke the forward: the finite differences see that precision's rounding
    low = loss.dtype != torch.float64 or precision.lowest is not None
    if low:
        eps = max(eps, LOW_PRECISION_EPS)
        lowest = getattr(torch, precision.lowest) if precision.lowest else loss.dtype
        mach = torch.finfo(lowest).eps if lowest.is_floating_point else _EPS_MACH
        rounding = max(4 * mach * max(1.0, abs(value)), WOBBLE_MARGIN * wobble) / eps
    else:
        rounding = max(ROUNDING_MARGIN * _EPS_MACH * max(1.0, abs(value)), WOBBLE_MARGIN * wobble) / eps
    out_of_time = False
    rounds_end = started + ROUNDS_SHARE * budget  # the rest for torch's opinion
    for round_no, target in enumerate([min(r, samples) for r in ROUNDS] + [samples]):
        for k, ((name, p), pc) in enumerate(zip(named, results)):
            if report:
                report((round_no + k / max(len(named), 1)) / (len(ROUNDS) + 1), f"checking {name}")
            out_of_time = not _sample(pc, p, grads[name], orders[k], target, loss_fn, eps, floor, rounding, rounds_end)
            if out_of_time:
                break
        if out_of_time:
            break
    for (name, p), pc in zip(named, results):
        if time.monotonic() < deadline and pc.smooth and not low:  # torch's tolerances assume float64
            pc.torch_gradcheck = _torch_gradcheck(model, name, p, pc.smooth[:TORCH_ELEMENTS], loss_fn, eps)
    unreached = [pc.name for pc in results if pc.tried == 0]
    outcome = Outcome(results, functions, random_loss, unreached, time.monotonic() - started, kept)
    outcome.loss_dtype = str(loss.dtype).replace("torch.", "") if loss.dtype != torch.float64 else None
    outcome.kept_double = precision.kept
    outcome.precision = precision
    return outcome


def _small_batch(dex) -> tuple:
    """The example cut to its first :data:`SMALL_BATCH` samples when the loss still runs on them
    (every tensor argument and target whose first dimension is the batch's); (example, (kept, of)),
    or the example as it was and None. A gradient check holds for any batch the forward accepts."""
    import torch

    first = next(_tensors((dex.inputs, getattr(dex, "kwargs", None))), None)
    if first is None or first.dim() == 0 or first.shape[0] <= SMALL_BATCH:
        return dex, None
    n = first.shape[0]

    def cut(v):
        if isinstance(v, torch.Tensor):
            return v[:SMALL_BATCH] if v.dim() and v.shape[0] == n else v
        if isinstance(v, (tuple, list)):
            items = [cut(x) for x in v]
            return type(v)(*items) if hasattr(v, "_fields") else type(v)(items)
        if isinstance(v, dict):
            return {k: cut(x) for k, x in v.items()}
        return v

    names = [f.name for f in dataclasses.fields(dex) if f.name in ("inputs", "kwargs", "targets")]
    small = dataclasses.replace(dex, **{k: cut(getattr(dex, k)) for k in names})
    try:
        with torch.no_grad(), torch.random.fork_rng(devices=[]):
            value = small.loss(small.output())
        if not (isinstance(value, torch.Tensor) and value.numel() == 1 and torch.isfinite(value)):
            return dex, None
    except Exception:  # the model needs its batch (a fixed view, targets of another length): keep it
        return dex, None
    return small, (SMALL_BATCH, int(n))


def _tensors(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _tensors(v)
    elif isinstance(obj, (tuple, list)):
        for v in obj:
            yield from _tensors(v)


def _rounding_of_loss(named, grads, loss_fn, value: float, g) -> float:
    """How much float64 rounding moves the loss: its change when single weights move by a step whose
    true effect is far below one ulp of the loss. A deep sum over many elements wobbles by more than
    a few ulps, and that wobble over eps is the error floor of every central difference."""
    import torch

    if not named:
        return 0.0
    ulp = _EPS_MACH * max(1.0, abs(value))
    wobble = 0.0
    with torch.no_grad():
        for _ in range(WOBBLE_PROBES):
            k = int(torch.randint(len(named), (1,), generator=g))
            name, p = named[k]
            flat = p.data.view(-1)
            i = int(torch.randint(flat.numel(), (1,), generator=g))
            w = float(flat[i])
            grad = abs(float(grads[name].view(-1)[i]))
            step = min(1e-12 * max(1.0, abs(w)), 1e-3 * ulp / max(grad, 1e-300))
            if w + step == w:
                continue
            flat[i] = w + step
            moved = float(loss_fn())
            flat[i] = w
            wobble = max(wobble, abs(moved - value) - grad * step)
    return wobble


def _padding_rows(model) -> dict:
    """``{id(weight): padding_idx}`` of the model's ``nn.Embedding(padding_idx=...)``s. Autograd gives
    that row no gradient by design (the padding vector stays fixed), yet moving it moves the loss
    wherever the batch holds the padding token: Hugging Face's ALBERT and ELECTRA (pad id 0) failed
    on their healthy word embeddings when an element of row 0 was sampled."""
    import torch.nn as nn

    return {
        id(m.weight): m.padding_idx
        for m in model.modules()
        if isinstance(m, nn.Embedding) and m.padding_idx is not None and m.weight.dim() == 2
    }


def _without_padding_row(order: list, p, pads: dict) -> list:
    """The flat indices of ``order`` outside the padding row of ``p``, when ``p`` is an embedding's."""
    row = pads.get(id(p))
    if row is None:
        return order
    width = p.shape[1]
    return [i for i in order if i // width != row]


def _new_check(name, p, source) -> ParamCheck:
    return ParamCheck(name, list(p.shape), 0, p.numel(), 0.0, [], 0.0, 0.0, None, source)


def _sample(pc, p, analytical, order, target, loss_fn, eps, floor, rounding, deadline) -> bool:
    """Check elements of ``p`` until ``target`` of them are smooth; False when time ran out."""
    import torch

    flat = p.data.view(-1)
    with torch.no_grad():
        while pc.checked < min(target, len(order)) and pc.tried < min(MAX_TRIES * target, len(order)):
            if time.monotonic() > deadline:
                return False
            i = order[pc.tried]
            pc.tried += 1
            ana = float(analytical.view(-1)[i])
            num, noise = _smooth_slope(flat, i, loss_fn, eps, floor, rounding, ana)
            if num is None:
                pc.kinks += 1
                continue
            pc.checked += 1
            pc.smooth.append(i)
            rel = max(0.0, abs(ana - num) - noise) / max(abs(ana), abs(num), floor)
            if rel >= pc.max_rel_diff:
                pc.max_rel_diff, pc.analytical, pc.numerical, pc.noise = rel, ana, num, noise
                pc.worst_index = list(_unravel(i, pc.shape))
    return True


def _central(flat, i, loss_fn, original: float, step: float) -> float:
    flat[i] = original + step
    plus = float(loss_fn())
    flat[i] = original - step
    minus = float(loss_fn())
    flat[i] = original
    return (plus - minus) / (2 * step)


def _smooth_slope(
    flat, i, loss_fn, eps: float, floor: float, rounding: float, ana: float
) -> tuple[float | None, float]:
    """The central difference at element ``i`` with step eps and its error, or None at a kink.

    When it agrees with the analytical value within rounding (OK), that is the answer: 2 forwards.
    Otherwise the difference with step eps/2 tells a kink from a bug: on a smooth loss the two
    differ by O(eps^2) only, whatever the curvature, while a ReLU switching inside the step moves
    them apart; their gap is the measured error of the first."""
    original = float(flat[i])
    first = _central(flat, i, loss_fn, original, eps)
    if abs(ana - first) <= max(rounding, OK_BELOW * max(abs(ana), abs(first), floor)):
        return first, rounding
    second = _central(flat, i, loss_fn, original, eps / 2)
    gap = abs(first - second)
    if gap > rounding and gap > KINK_TOLERANCE * max(abs(first), abs(second), floor):
        return None, gap
    return first, max(2 * gap, rounding)


def _unravel(flat_index: int, shape: list) -> tuple:
    out: list[int] = []
    for dim in reversed(shape):
        out.insert(0, flat_index % dim)
        flat_index //= dim
    return tuple(out)


def _torch_gradcheck(model, name, p, indices, loss_fn, eps) -> bool | None:
    """torch.autograd.gradcheck on the loss as a function of the sampled elements of ``name`` (the
    other elements fixed): bounded, whatever the parameter's size; None when torch cannot run it."""
    import torch

    try:
        from torch.nn.utils.stateless import _reparametrize_module
    except ImportError:
        return None
    base = p.detach().clone()
    idx = torch.tensor(indices, dtype=torch.long)

    def loss_of(v):
        w = base.reshape(-1).index_put((idx,), v).view_as(base)
        with _reparametrize_module(model, {name: w}):
            return loss_fn()

    v = base.reshape(-1)[idx].clone().requires_grad_(True)
    try:
        return bool(
            torch.autograd.gradcheck(
                loss_of, (v,), eps=eps, atol=1e-5, rtol=1e-3, fast_mode=False, raise_exception=False
            )
        )
    except Exception:  # a model torch's checker cannot drive (in-place on params, ...): no opinion
        return None


def custom_function_sources(loss, model) -> dict:
    """id(parameter) -> name of the custom autograd.Function that consumed it, read from the graph."""
    import torch

    by_id = {id(p): p for p in model.parameters()}
    found: dict = {}
    seen = set()
    stack = [loss.grad_fn]
    while stack:
        node = stack.pop()
        if node is None or node in seen:
            continue
        seen.add(node)
        custom = isinstance(node, torch.autograd.function.BackwardCFunction)
        for child, _ in node.next_functions:
            variable = getattr(child, "variable", None)
            if custom and variable is not None and id(variable) in by_id:
                found[id(variable)] = f"{_function_name(node)} (custom autograd.Function)"
            stack.append(child)
    return found


def _function_name(node) -> str:
    """``SwishFnBackward`` -> ``SwishFn``: torch names the backward node after the Function class."""
    name = type(node).__name__
    return name[: -len("Backward")] if name.endswith("Backward") else name


COLUMNS = [
    "parameter",
    "shape",
    "checked",
    "kinks skipped",
    "max rel diff",
    "status",
    "torch gradcheck",
    "analytical",
    "numerical",
    "fd error",
    "at index",
    "gradient from",
]


def run(ex, options: dict, report: Callable[[float, str], None], result: dict) -> dict:
    from . import gradcheck_words as W
    from .preconditions import has_trainable_parameters, nothing_to_train

    if not has_trainable_parameters(ex.model):
        return nothing_to_train(ex.model, result, "no gradient to check")
    outcome = check(ex, options, report)
    rows = [W.function_row(f) for f in outcome.functions] + [W.param_row(c) for c in outcome.params]
    result["table"] = {"columns": COLUMNS, "rows": rows, "errorRow": None}
    result["details"] = W.details(outcome, options)
    return W.verdict(outcome, result)
