"""Do the samples of a batch stay apart? Change one sample's input: no other sample's prediction may move.

A model that mixes samples across the batch dimension trains without an error and learns wrong: a
reduction over dim 0 where dim 1 was meant (``h + h.mean(0)`` broadcasts silently), a view across the
batch (``scores.view(-1).softmax(0)``: one softmax over every token of the batch), a view where a
transpose was meant, attention across the batch (``nn.MultiheadAttention`` without ``batch_first=True``
fed ``(B, T, E)``). The loss still falls and no shape tells. The test is the dependency check of
Karpathy's "A Recipe for Training Neural Networks": sample i's output depends on input i only.

The probe: three forwards under ``torch.no_grad()``, in eval mode (dropout and batch norm's batch
statistics would vary or mix by design), with the RNG seeded alike for each (a VAE's sampling draws
the same noise): the batch as given; the same batch again (a model that answers the same batch
differently tells nothing: no verdict); the batch with the last sample's inputs replaced by another
sample's (every tensor argument whose first dimension is the batch, labels included). The other
samples' prediction rows must not move beyond rounding (``TOLERANCE`` of their size: kernels chosen by
shape, a mixture of experts' per-expert matmul, may round differently). Changing the *last* sample
keeps a sequence-first causal model clear (an RNN LM on (T, B): no step depends on a later one).

Where it starts: hooks record, per module call, a fingerprint of each row of its input tensors and
of its first output tensor (random projections and the norm: bounded memory whatever the model). The
first call, in the order calls end, whose output moved for other samples while none of its inputs did
is where mixing starts; when there is none, the first call (in the order calls start) whose input
already moved says it is in the forward's own code before that call. A module that reads dim 0 as the sequence (``batch_first=False``) mixes the rows
of dim 0 by design, a bug only when those rows are the samples: the sentence says both, and an
example Torch Doctor inferred (it chose that layout from the module) gets no warning from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .example.core import map_tensors, tensors_in

TOLERANCE = 1e-4  # of a row's norm: rounding moves a row by ~1e-7, one mixed-in sample by ~1e-1
PROJECTIONS = 4  # random directions per fingerprint: a moved row escapes all four with probability ~1e-8
SEED = 0  # the RNG seed of every probe forward
MAX_COLUMNS = 4096  # elements of a row projected (a U-Net's 64x256x256 rows would need 128 MB of directions)
MAX_INPUTS = 8  # input tensors fingerprinted per module call (a decoder layer's hidden states, mask, memory)


@dataclass
class Call:
    """One module call: :func:`fingerprint` of its input tensors and of its first output tensor (None
    when that is not batch-first); ``start``: its turn among call starts."""

    name: str
    kind: str
    module: Any
    start: int
    parent: str  # the module whose forward made the call ("" for the model itself)
    inputs: list = field(default_factory=list)
    output: Any = None
    input_shape: list | None = None


@dataclass
class Mixing:
    """What the probe found; ``checked`` False with ``why_not`` when it could not tell."""

    checked: bool
    why_not: str = ""
    mixes: bool = False
    changed: int = 0  # the sample whose inputs were replaced (0-based)
    source: int = 0  # the sample they were copied from
    moved: list = field(default_factory=list)  # other samples whose prediction moved (0-based)
    origin: Call | None = None  # the module call where mixing starts
    before: Call | None = None  # else: the first call whose input already mixed
    seq_first: bool = False  # the origin reads dim 0 as the sequence (batch_first=False)


def probe(ex, batch: int | None) -> Mixing:
    """The probe of the module docstring on example ``ex`` whose batch (dim 0) is ``batch``."""
    import torch

    from .example.spatial import probing

    if not batch:
        return Mixing(False, "the batch size is unknown (keyword inputs whose first dimensions disagree, or no tensor)")
    if batch < 2:
        return Mixing(False, "a batch of one sample has no other sample to mix with")
    args, kwargs = ex.inputs, ex.call_kwargs()
    source = _source_row(args, kwargs, batch)
    if source is None:
        return Mixing(False, "the samples' inputs are all the same")
    changed = batch - 1
    swapped = _swapped((args, kwargs), batch, source, changed)
    with probing(ex.model), torch.no_grad():
        base, base_calls = _forward(ex, args, kwargs, batch)
        again, _ = _forward(ex, args, kwargs, batch, hooked=False)
        other, other_calls = _forward(ex, swapped[0], swapped[1], batch)
    raised = next((p for p in (base, again, other) if isinstance(p, BaseException)), None)
    if raised is not None:
        return Mixing(False, f"a probe forward raised {type(raised).__name__}: {str(raised)[:200]}")
    if not _same_shape(base, again, other, batch):
        return Mixing(False, "the prediction does not have one row per sample")
    if _moved_rows(base, again, exclude=None):
        return Mixing(
            False, "the same batch gave another prediction the second time (randomness outside torch's RNG, or state)"
        )
    found = Mixing(True, changed=changed, source=source, moved=_moved_rows(base, other, exclude=changed))
    if found.moved:
        found.mixes = True
        _locate(found, base_calls, other_calls, changed)
    return found


def _source_row(args, kwargs, batch: int) -> int | None:
    """The first sample whose inputs differ from the last one's (copying an equal row changes nothing)."""
    import torch

    rows = [t for t in tensors_in((args, kwargs)) if t.dim() and t.shape[0] == batch]
    for j in range(batch - 1):
        if any(not torch.equal(t[j], t[batch - 1]) for t in rows):
            return j
    return None


def _swapped(nest, batch: int, source: int, changed: int):
    """The nest with row ``changed`` of every batch-first tensor replaced by row ``source``."""

    def copy_row(t):
        if not t.dim() or t.shape[0] != batch:
            return t
        t = t.clone()
        t[changed] = t[source]
        return t

    return map_tensors(nest, copy_row)


def _forward(ex, args, kwargs, batch: int, hooked: bool = True):
    """(prediction, module calls) of one forward with the RNG seeded alike; (the exception, []) when it
    raises (in eval mode, or on the swapped batch: the shape trace reports the forward's own errors)."""
    import torch

    calls: list[Call] = []
    handles = _hooks(ex.model, batch, calls) if hooked else []
    devices = sorted({p.device.index or 0 for p in ex.model.parameters() if p.device.type == "cuda"})
    try:
        with torch.random.fork_rng(devices=devices):
            torch.manual_seed(SEED)
            return ex.prediction(ex.model(*args, **kwargs)), calls
    except Exception as exc:
        return exc, []
    finally:
        for h in handles:
            h.remove()


def _hooks(model, batch: int, calls: list) -> list:
    """Hooks that append a :class:`Call` per module call, in the order calls end."""
    names = {id(m): n for n, m in model.named_modules()}
    running: list[Call] = []
    cache: dict = {}
    started = [0]

    def pre(module, args, kwargs):
        found = list(tensors_in((args, kwargs)))
        parent = running[-1].name if running else ""
        call = Call(names.get(id(module), "?"), type(module).__name__, module, started[0], parent)
        started[0] += 1
        call.inputs = [fingerprint(t, batch, cache) for t in found[:MAX_INPUTS]]
        call.input_shape = list(found[0].shape) if found else None
        running.append(call)

    def post(module, args, output):
        call = running.pop()
        out = fingerprint(next(iter(tensors_in(output)), None), batch, cache)
        call.output = out if out is not None and out[1] else None  # only a batch-first output tells
        calls.append(call)

    handles = []
    for m in model.modules():
        handles.append(m.register_forward_pre_hook(pre, with_kwargs=True))
        handles.append(m.register_forward_hook(post))
    return handles


def fingerprint(t, batch: int, cache: dict):
    """(fingerprint, per_row) of a tensor: PROJECTIONS random projections of each row of a batch-first
    tensor and the row's norm, (B, P + 1), else the same of the whole tensor, (1, P + 1); on the CPU.
    None for what is no dense tensor. A row longer than MAX_COLUMNS is projected on MAX_COLUMNS evenly
    spaced elements (memory stays bounded; the norm still sees them all). The directions come from a
    private generator (no global RNG draw)."""
    import torch

    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.is_quantized or t.is_meta:
        return None
    per_row = t.dim() > 0 and t.shape[0] == batch
    rows = t.detach()
    rows = torch.view_as_real(rows) if rows.is_complex() else rows
    rows = rows.reshape(batch if per_row else 1, -1)
    rows = rows if rows.is_floating_point() else rows.double()  # token ids, masks
    norm = torch.linalg.vector_norm(rows, dim=1, keepdim=True, dtype=torch.float64)
    n = rows.shape[1]
    if n > MAX_COLUMNS:
        rows = rows[:, torch.linspace(0, n - 1, MAX_COLUMNS, device=rows.device).long()]
    key = (rows.shape[1], str(rows.device))
    if key not in cache:
        g = torch.Generator().manual_seed(rows.shape[1])
        cache[key] = torch.randn(rows.shape[1], PROJECTIONS, generator=g, dtype=torch.float64).to(rows.device)
    return torch.cat([rows.double() @ cache[key], norm], 1).cpu(), per_row


def _same_shape(base, again, other, batch: int) -> bool:
    import torch

    return (
        all(isinstance(p, torch.Tensor) for p in (base, again, other))
        and base.dim() > 0
        and base.shape[0] == batch
        and base.shape == again.shape == other.shape
    )


def _moved_rows(a, b, exclude: int | None) -> list[int]:
    """Rows of two predictions (tensors) that differ by more than TOLERANCE of their norm."""
    import torch

    x = a.detach().reshape(a.shape[0], -1)
    y = b.detach().reshape(b.shape[0], -1)
    if not (x.is_floating_point() or x.is_complex()):
        diff = (x != y).any(dim=1)
    else:
        x, y = x.double() if not x.is_complex() else x, y.double() if not y.is_complex() else y
        scale = torch.maximum(torch.linalg.vector_norm(x, dim=1), torch.linalg.vector_norm(y, dim=1))
        diff = torch.linalg.vector_norm(x - y, dim=1) > TOLERANCE * scale
    return [i for i in range(x.shape[0]) if bool(diff[i]) and i != exclude]


def _fp_moved(a, b, changed: int) -> bool:
    """A fingerprint moved: a batch-first tensor's row of a sample other than ``changed``, or anything
    of a tensor that is not batch-first (a context pooled over the batch). Unlike shapes count as moved."""
    import torch

    if a is None or b is None:
        return a is not b
    (x, per_row), (y, other_per_row) = a, b
    if x.shape != y.shape or per_row != other_per_row:
        return True
    if per_row:
        keep = [i for i in range(x.shape[0]) if i != changed]
        x, y = x[keep], y[keep]
    scale = torch.maximum(x[:, -1], y[:, -1])
    change = torch.maximum((x[:, :-1] - y[:, :-1]).abs().amax(dim=1), (x[:, -1] - y[:, -1]).abs())
    return bool((change > TOLERANCE * scale).any())


def _locate(found: Mixing, base: list, other: list, changed: int) -> None:
    """Fill ``origin`` (or ``before``) from the two forwards' module calls, matched by name and turn."""
    pairs = [(b, o) for b, o in zip(base, _matched(base, other)) if o is not None]
    for b, o in pairs:  # in the order calls end: the innermost first
        batch_first_in = any(f is not None and f[1] for f in b.inputs)
        if batch_first_in and not _any_moved(b.inputs, o.inputs, changed) and _fp_moved(b.output, o.output, changed):
            found.origin = b
            found.seq_first = _reads_dim0_as_sequence(b.module)
            return
    starts = sorted(pairs, key=lambda pair: pair[0].start)
    found.before = next((b for b, o in starts if _any_moved(b.inputs, o.inputs, changed, rows_only=True)), None)


def _any_moved(a: list, b: list, changed: int, rows_only: bool = False) -> bool:
    """An input moved; ``rows_only``: a row of another sample of a batch-first input (a mixture of
    experts' token subset or a flattened (B*T, E) input holds the changed sample's rows too)."""
    if len(a) != len(b):
        return not rows_only
    return any(_fp_moved(x, y, changed) for x, y in zip(a, b) if not rows_only or (x and x[1] and y and y[1]))


def _matched(base: list, other: list) -> list:
    """For each call of ``base``, the call of ``other`` with the same module name and turn (or None):
    data-dependent control flow (a mixture of experts skips idle experts) changes the call list."""

    def keyed(calls: list) -> list:
        turns: dict = {}
        keys = []
        for c in calls:
            turns[c.name] = turns.get(c.name, 0) + 1
            keys.append((c.name, turns[c.name]))
        return keys

    index = dict(zip(keyed(other), other))
    return [index.get(k) for k in keyed(base)]


def _reads_dim0_as_sequence(module) -> bool:
    """A recurrent or attention layer of torch that takes (seq, batch, ...) unless batch_first=True."""
    import torch.nn as nn

    kinds = (nn.RNNBase, nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerDecoderLayer)
    return isinstance(module, kinds) and not getattr(module, "batch_first", False)


ADVICE = (
    "look for a reduction or softmax over dim 0 (statistics of the batch such as x.mean(0) or x.std(0); "
    "h + h.mean(0) where h.mean(1, keepdim=True) was meant broadcasts silently), or a view or reshape across the "
    "batch (scores.view(-1), or x.view(T, B, E) where x.transpose(0, 1) was meant)."
)


def warnings(found: Mixing, ex) -> list[str]:
    """The sentences of a WARN, or [] (no mixing, or only where the layout was Torch Doctor's own guess)."""
    if not found.mixes or (found.seq_first and ex.source == "inferred"):
        return []
    first = (
        f"The samples of the batch mix: replacing only sample {found.changed + 1}'s inputs (with sample "
        f"{found.source + 1}'s) changed the prediction for {_samples(found.moved)} too. Each sample's prediction should "
        "depend on its own input alone, unless the model compares samples on purpose (contrastive logits, in-batch "
        "negatives, experts with a capacity shared by the batch): trained so, it leans on the other samples of its batch and predicts differently without them."
    )
    return [first, _where(found, type(ex.model).__name__)]


def _samples(rows: list) -> str:
    shown = [r + 1 for r in rows]
    if len(shown) == 1:
        return f"sample {shown[0]}"
    if shown == list(range(shown[0], shown[-1] + 1)):
        return f"samples {shown[0]}-{shown[-1]}"
    return "samples " + ", ".join(map(str, shown))


def _where(found: Mixing, model_name: str) -> str:
    """Where the mixing starts, in words."""
    import torch.nn as nn

    call = found.origin
    if call is not None and found.seq_first:
        shape = "(" + ", ".join(map(str, call.input_shape or [])) + ")"
        return (
            f"It starts in `{call.name}` ({call.kind}, batch_first=False), which reads dim 0 of its {shape} input as the "
            f"sequence and so mixes the rows of dim 0. Pass batch_first=True if your batches are (batch, sequence, "
            "features), as a DataLoader and Hugging Face give them; if dim 0 is the sequence by design, its rows are "
            "time steps, not samples, and this is expected."
        )
    if call is not None and isinstance(call.module, nn.modules.batchnorm._BatchNorm):
        return (
            f"It starts in `{call.name}` ({call.kind}): with track_running_stats=False it normalises with the statistics "
            "of the batch, in eval mode too."
        )
    if call is not None:
        return (
            f"It starts in `{call.name}` ({call.kind}): its output moved for the other samples while its inputs did "
            f"not. In its forward, {ADVICE}"
        )
    before = found.before
    if before is not None:
        owner = f"`{before.parent}`" if before.parent else model_name
        return (
            f"It happens in the forward of {owner} itself, before it calls `{before.name}` ({before.kind}), whose input "
            f"already mixes the samples: {ADVICE}"
        )
    return f"It happens in the forward's own code, after the last module call that kept the samples apart: {ADVICE}"
