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

Said less, not warned (docs/checks.md): a pairwise prediction's column of the changed sample (a @ b.T)
is left out; a batch norm without running statistics is a fact; mixing that shows only with arguments
whose dim 0 may equal the batch by chance (a shared mask) gets no verdict; a sequence-first example
whose dim 1 stays apart passes; a prediction that ignores the input gets no verdict. Bounded: the
probe runs only if its forwards fit in what is left of the time budget (:class:`Clock`).
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from . import sample_mixing_words as words
from .example.core import map_tensors, tensors_in

TOLERANCE = 1e-4  # of a row's norm: rounding moves a row by ~1e-7, one mixed-in sample by ~1e-1
PROJECTIONS = 4  # random directions per fingerprint: a moved row escapes all four with probability ~1e-8
SEED = 0  # the RNG seed of every probe forward
MAX_COLUMNS = 4096  # elements of a row projected (a U-Net's 64x256x256 rows would need 128 MB of directions)
MAX_INPUTS = 8  # input tensors fingerprinted per module call (a decoder layer's hidden states, mask, memory)
NORM_CHUNK = 1 << 20  # elements converted to float64 at a time for a fingerprint's row norms (8 MB)
MARGIN = 1.5  # a probe forward (hooked: fingerprints) against the trace's forward
PRIMARY = ("input_ids", "pixel_values", "x", "input")  # keywords that hold the samples when no positional input
PER_SAMPLE = frozenset(  # keyword inputs (Hugging Face's names) that hold one row per sample
    PRIMARY
    + ("attention_mask", "token_type_ids", "labels", "pixel_mask", "decoder_input_ids", "decoder_attention_mask")
    + ("inputs_embeds", "input_values", "input_features", "images", "image", "text")
)


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
    by_design: str = ""  # mixing that is the model's design (batch statistics): a fact, no warning
    note: str = ""  # what the verdict rests on beyond the plain comparison (a pairwise column left out)


@dataclass
class Clock:
    """The time left for the probe: ``deadline`` (time.monotonic()) and the trace's forward, in seconds."""

    deadline: float
    forward: float

    def over(self, forwards: int) -> str:
        """Why ``forwards`` more probe forwards do not fit before the deadline, or ""."""
        need, left = forwards * MARGIN * self.forward, self.deadline - time.monotonic()
        if need <= left:
            return ""
        return (
            f"the probe's {forwards} extra forwards would take ~{need:.1f}s (the traced forward took {self.forward:.1f}s), "
            f"over the time budget ({max(left, 0.0):.1f}s left of timeBudgetSeconds)"
        )


def probe(ex, batch: int | None, clock: Clock | None = None) -> Mixing:
    """The probe of the module docstring on example ``ex`` whose batch (dim 0) is ``batch``; with ``clock``,
    nothing is run that would not fit in the time left (no verdict instead)."""
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
    late = clock.over(3) if clock else ""
    if late:
        return Mixing(False, late)
    with probing(ex.model), torch.no_grad():
        return _probe(ex, (args, kwargs), batch, source, clock)


def _probe(ex, nest, batch: int, source: int, clock: Clock | None) -> Mixing:
    changed = batch - 1
    base, base_calls = _forward(ex, nest, batch)
    again, _ = _forward(ex, nest, batch, hooked=False)
    other, other_calls = _forward(ex, _swapped(nest, batch, source, changed), batch)
    why = _unusable(base, again, other, batch)
    if why:
        return Mixing(False, why)
    if _moved_rows(base, again, exclude=None):
        return Mixing(
            False, "the same batch gave another prediction the second time (randomness outside torch's RNG, or state)"
        )
    found = Mixing(True, changed=changed, source=source)
    column = changed if base.dim() > 1 and base.shape[1] == batch else None
    found.moved = _moved_rows(base, other, exclude=changed, column=column)
    if column is not None and found.moved != _moved_rows(base, other, exclude=changed):
        found.note = words.PAIRWISE
    if not found.moved:
        if changed not in _moved_rows(base, other, exclude=None):
            return Mixing(False, _unmoved(changed))
        return found
    unsure = _unsure(nest, batch)
    if unsure:
        return _sure_only(ex, nest, batch, found, base, base_calls, unsure, clock)
    found.mixes = True
    _locate(found, base_calls, other_calls, changed)
    return _seq_first(ex, nest, found, base, clock)


def _unmoved(changed: int) -> str:
    return (
        f"the changed sample's own prediction did not move either (sample {changed + 1}): the prediction does not "
        "depend on the input here (a head initialised to zero, an output that ignores the input), so no mixing can show"
    )


def _unusable(base, again, other, batch: int) -> str:
    raised = next((p for p in (base, again, other) if isinstance(p, BaseException)), None)
    if raised is not None:
        return f"a probe forward raised {type(raised).__name__}: {str(raised)[:200]}"
    if not _same_shape(base, again, other, batch):
        return "the prediction does not have one row per sample"
    return ""


def _sure_only(ex, nest, batch, found: Mixing, base, base_calls, unsure: list, clock) -> Mixing:
    """Mixing found with arguments whose first dimension may equal the batch by chance: probe again with
    the last sample replaced in the primary input (and the keyword inputs known to hold samples) only."""
    late = clock.over(1) if clock else ""
    if late:
        return Mixing(False, late)
    names = [name for name, t in _named_tensors(nest) if _is_sure(name, nest)]
    other, other_calls = _forward(ex, _swapped(nest, batch, found.source, found.changed, only=names), batch)
    why = _unusable(base, base, other, batch)
    if why:
        return Mixing(False, why)
    column = found.changed if base.dim() > 1 and base.shape[1] == batch else None
    found.moved = _moved_rows(base, other, exclude=found.changed, column=column)
    if not found.moved:
        return Mixing(False, words.ambiguous(batch, [_said(n) for n in names], [_said(n) for n in unsure]))
    found.mixes = True
    _locate(found, base_calls, other_calls, found.changed)
    return _seq_first(ex, nest, found, base, clock)


def _seq_first(ex, nest, found: Mixing, base, clock) -> Mixing:
    """A sequence-first layer where mixing starts, on a layout the user gave positionally: probe along dim
    1 (the batch, in that layer's reading); samples kept apart there are no mixing."""
    import torch

    first = next(iter(tensors_in(nest[0])), None)
    if not found.seq_first or ex.source == "inferred" or first is None or first.dim() < 2 or first.shape[1] < 2:
        return found
    width = first.shape[1]
    source = next((j for j in range(width - 1) if not torch.equal(first[:, j], first[:, width - 1])), None)
    if source is None or base.dim() < 2 or base.shape[1] != width or (clock and clock.over(1)):
        return found

    def swap(t):
        if t is not first:
            return t
        t = t.clone()
        t[:, width - 1] = t[:, source]
        return t

    other, _ = _forward(ex, map_tensors(nest, swap), 0, hooked=False)
    if not isinstance(other, torch.Tensor) or other.shape != base.shape:
        return found
    a, b = base.movedim(1, 0), other.movedim(1, 0)
    if _moved_rows(a, b, exclude=width - 1) or width - 1 not in _moved_rows(a, b, exclude=None):
        return found
    apart = Mixing(True, changed=found.changed, source=found.source, origin=found.origin, seq_first=True)
    apart.note = words.seq_first_apart(found.origin, type(ex.model).__name__)
    return apart


def _named_tensors(nest) -> list:
    """(name, tensor) of the call's tensor arguments: ("0", ...) by position, keywords by name."""
    args, kwargs = nest
    named = [(str(i), t) for i, t in enumerate(tensors_in(args))]
    return named + [(k, t) for k, v in kwargs.items() for t in tensors_in(v)]


def _is_sure(name: str, nest) -> bool:
    """Holds one row per sample for sure: the primary input (the first positional tensor, or with keyword
    inputs only the first of ``PRIMARY``) or a keyword input of ``PER_SAMPLE``."""
    positional = any(True for _ in tensors_in(nest[0]))
    if positional:
        return name == "0" or name in PER_SAMPLE
    return name in PER_SAMPLE


def _unsure(nest, batch: int) -> list:
    """Arguments replaced whose first dimension may equal the batch by chance: positional arguments after
    the first and keywords outside ``PER_SAMPLE`` (with keyword inputs only, none unless one of them is
    known: batch_size() found the batch as the first dimension they all share)."""
    named = [(n, t) for n, t in _named_tensors(nest) if t.dim() and t.shape[0] == batch]
    if not any(_is_sure(n, nest) for n, _ in named):
        return []
    return [n for n, _ in named if not _is_sure(n, nest)]


def _said(name: str) -> str:
    return f"argument {int(name) + 1}" if name.isdigit() else f"`{name}`"


def _source_row(args, kwargs, batch: int) -> int | None:
    """The first sample whose inputs differ from the last one's (copying an equal row changes nothing)."""
    import torch

    rows = [t for t in tensors_in((args, kwargs)) if t.dim() and t.shape[0] == batch]
    for j in range(batch - 1):
        if any(not torch.equal(t[j], t[batch - 1]) for t in rows):
            return j
    return None


def _swapped(nest, batch: int, source: int, changed: int, only: list | None = None):
    """The nest with row ``changed`` of every batch-first tensor (of those named ``only``) replaced by row
    ``source``."""
    chosen = None if only is None else {id(t) for n, t in _named_tensors(nest) if n in only}

    def copy_row(t):
        if not t.dim() or t.shape[0] != batch or (chosen is not None and id(t) not in chosen):
            return t
        t = t.clone()
        t[changed] = t[source]
        return t

    return map_tensors(nest, copy_row)


def _forward(ex, nest, batch: int, hooked: bool = True):
    """(prediction, module calls) of one forward with the RNG seeded alike; (the exception, []) when it
    raises (in eval mode, or on the swapped batch: the shape trace reports the forward's own errors)."""
    calls: list[Call] = []
    handles = _hooks(ex.model, batch, calls) if hooked else []
    try:
        with seeded():
            return ex.prediction(ex.model(*nest[0], **nest[1])), calls
    except Exception as exc:
        return exc, []
    finally:
        for h in handles:
            h.remove()


@contextmanager
def seeded():
    """The global RNGs seeded with SEED inside, as they were after: the CPU's, every CUDA device's when
    CUDA is initialised (a model on any of them draws there), and MPS's when it is available."""
    import torch

    cuda = list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []
    mps = torch.mps.get_rng_state() if torch.backends.mps.is_available() else None
    try:
        with torch.random.fork_rng(devices=cuda):
            torch.default_generator.manual_seed(SEED)
            if cuda:
                torch.cuda.manual_seed_all(SEED)
            if mps is not None:
                torch.mps.manual_seed(SEED)
            yield
    finally:
        if mps is not None:
            torch.mps.set_rng_state(mps)


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
    spaced elements, taken before any conversion; the norm sees every element, converted NORM_CHUNK at a
    time (memory stays bounded). The directions come from a private generator (no global RNG draw)."""
    import torch

    if not isinstance(t, torch.Tensor) or t.layout != torch.strided or t.is_quantized or t.is_meta:
        return None
    per_row = t.dim() > 0 and t.shape[0] == batch
    rows = t.detach()
    rows = torch.view_as_real(rows) if rows.is_complex() else rows
    rows = rows.reshape(batch if per_row else 1, -1)
    norm = _row_norms(rows)
    n = rows.shape[1]
    if n > MAX_COLUMNS:
        rows = rows[:, torch.linspace(0, n - 1, MAX_COLUMNS, device=rows.device).long()]
    key = (rows.shape[1], str(rows.device))
    if key not in cache:
        g = torch.Generator().manual_seed(rows.shape[1])
        cache[key] = torch.randn(rows.shape[1], PROJECTIONS, generator=g, dtype=torch.float64).to(rows.device)
    return torch.cat([rows.double() @ cache[key], norm], 1).cpu(), per_row


def _row_norms(rows):
    """The float64 norm of each row, (R, 1), converting at most NORM_CHUNK elements at a time."""
    import torch

    total = torch.zeros(rows.shape[0], 1, dtype=torch.float64, device=rows.device)
    step = max(1, NORM_CHUNK // max(rows.shape[0], 1))
    for start in range(0, rows.shape[1], step):
        part = rows[:, start : start + step].double()
        total += (part * part).sum(1, keepdim=True)
    return total.sqrt()


def _same_shape(base, again, other, batch: int) -> bool:
    import torch

    return (
        all(isinstance(p, torch.Tensor) for p in (base, again, other))
        and base.dim() > 0
        and base.shape[0] == batch
        and base.shape == again.shape == other.shape
    )


def _moved_rows(a, b, exclude: int | None, column: int | None = None) -> list[int]:
    """Rows of two predictions (tensors) that differ by more than TOLERANCE of their norm; ``column``: an
    index of dim 1 left out of the comparison (a pairwise matrix's column of the changed sample)."""
    import torch

    if column is not None:
        keep = torch.tensor([j for j in range(a.shape[1]) if j != column], dtype=torch.long, device=a.device)
        a, b = a.index_select(1, keep), b.index_select(1, keep)
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
            if _batch_statistics(b.module):
                found.by_design = words.batch_statistics(b)
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


def _batch_statistics(module) -> bool:
    """A batch norm that normalises with the batch's statistics in eval mode too (no running statistics)."""
    import torch.nn as nn

    return isinstance(module, nn.modules.batchnorm._BatchNorm) and not module.track_running_stats
