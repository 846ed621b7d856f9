"""A batch that torch's default collate could not make, said in our words (worker side, no numpy).

``default_collate`` stacks the samples of a batch into one tensor per field and fails on the first
field where they differ, in its own words ("stack expects each tensor to be equal size, but got
[3, 32, 32] at entry 0 and [3, 28, 28] at entry 5", "object of type 'NoneType' has no len()",
KeyError: 'label'), which name neither the sample nor what to do. ``diagnose`` compares the
samples of the failed batch (kept by the fetcher, ``watch.py``) field by field, as the collate
walks them, and names the dataset indices that differ from the others, what differs (shape,
type, a missing key, the number of items) and the likely fix. ``CollateError`` is the check's
ERROR; torch's message stays in its detail.
"""

from __future__ import annotations

import numbers
import sys
from collections import Counter
from collections.abc import Mapping
from typing import Any, Optional

MAX_DEPTH = 8
MAX_ITEMS = 64  # fields of one sequence compared
MAX_LISTED = 16  # entries of the batch listed in the detail
_COLLATE_FILE = "torch/utils/data/_utils/collate.py"


def library_collate(exc: BaseException) -> bool:
    """Whether ``exc`` was raised inside torch's own collate (its last frames are torch's)."""
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb.tb_frame.f_code.co_filename
        tb = tb.tb_next
    return bool(last) and _is_collate_file(str(last))


def _is_collate_file(path: str) -> bool:
    return path.replace("\\", "/").endswith(_COLLATE_FILE)


def _is_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(x, torch.Tensor)


def _is_array(x: Any) -> bool:
    np = sys.modules.get("numpy")
    return np is not None and isinstance(x, np.ndarray)


def _kind(x: Any) -> tuple:
    """What default_collate looks at in one field: its type, and a tensor's shape, a dict's keys
    or a sequence's length."""
    if x is None:
        return ("None",)
    if isinstance(x, (str, bytes)):
        return ("str",)
    if _is_tensor(x):
        return ("tensor", tuple(int(d) for d in x.shape))
    if _is_array(x):
        if x.dtype.kind in "OSUV":
            return ("object-array", str(x.dtype))
        return ("array", tuple(int(d) for d in x.shape))
    if isinstance(x, numbers.Number):
        return ("number",)
    if isinstance(x, Mapping):
        return ("dict", tuple(sorted(map(repr, x.keys()))))
    if isinstance(x, (tuple, list)):
        return ("seq", len(x))
    return ("object", f"{type(x).__module__}.{type(x).__qualname__}")


def describe(x: Any, depth: int = 0) -> str:
    """One sample in a few words: ``(tensor [3, 32, 32] float32, int)``."""
    if _is_tensor(x) or _is_array(x):
        kind = "tensor" if _is_tensor(x) else "array"
        return f"{kind} {list(int(d) for d in x.shape)} {str(x.dtype).replace('torch.', '')}"
    if x is None or isinstance(x, (numbers.Number,)):
        return type(x).__name__ if x is not None else "None"
    if isinstance(x, (str, bytes)):
        text = repr(x)
        return f"{type(x).__name__} {text[:30] + '…' if len(text) > 30 else text}"
    if depth >= 2:
        return type(x).__name__
    if isinstance(x, Mapping):
        items = list(x.items())
        inner = ", ".join(f"{k!r}: {describe(v, depth + 1)}" for k, v in items[:6])
        return "{" + inner + (", …" if len(items) > 6 else "") + "}"
    if isinstance(x, (tuple, list)):
        inner = ", ".join(describe(v, depth + 1) for v in x[:6])
        more = ", …" if len(x) > 6 else ""
        return f"({inner}{more})" if isinstance(x, tuple) else f"[{inner}{more}]"
    return type(x).__qualname__


def _path_text(path: tuple) -> str:
    return "".join(f"[{p!r}]" for p in path)


def _first_difference(entries: list, path: tuple = ()) -> Optional[tuple]:
    """(path, kinds) of the first field where the samples differ, in the order default_collate
    walks them (a dict by the first sample's keys, a sequence item by item); None when they agree."""
    kinds = [_kind(v) for v in entries]
    if len(set(kinds)) > 1:
        return path, kinds
    kind = kinds[0]
    if len(path) >= MAX_DEPTH:
        return None
    if kind[0] == "dict":
        for key in list(entries[0].keys()):
            found = _first_difference([v[key] for v in entries], path + (key,))
            if found is not None:
                return found
    elif kind[0] == "seq":
        for j in range(min(kind[1], MAX_ITEMS)):
            found = _first_difference([v[j] for v in entries], path + (j,))
            if found is not None:
                return found
    return None


def _first_uncollatable(x: Any, path: tuple = ()) -> Optional[tuple]:
    """(path, kind) of a field default_collate cannot batch even when every sample has it
    (a PIL image, a custom object, an array of objects or text, None)."""
    kind = _kind(x)
    if kind[0] in ("object", "object-array", "None"):
        return path, kind
    if len(path) >= MAX_DEPTH:
        return None
    if kind[0] == "dict":
        items = list(x.items())
    elif kind[0] == "seq":
        items = list(enumerate(x[:MAX_ITEMS]))
    else:
        return None
    for key, value in items:
        found = _first_uncollatable(value, path + (key,))
        if found is not None:
            return found
    return None


def _words(kind: tuple) -> str:
    name = kind[0]
    if name in ("tensor", "array"):
        return f"a {name} of shape {list(kind[1])}"
    if name == "dict":
        return "a dict with keys " + ", ".join(kind[1])
    if name == "seq":
        return f"a sequence of {kind[1]} item{'s' if kind[1] != 1 else ''}"
    if name == "object-array":
        return f"an array of {kind[1]}"
    if name == "object":
        return f"a {kind[1].rpartition('.')[2]}"
    return {"None": "None", "str": "text (str)", "number": "a number"}[name]


def _samples_text(indices: list, known: bool = True) -> str:
    """``samples 5, 11``: dataset indices, or positions in the stream when the indices are not known."""
    shown = ", ".join(str(i) for i in indices[:8]) + (f" … ({len(indices)} in all)" if len(indices) > 8 else "")
    word = "sample" if known else "the stream's sample"
    return f"{word}{'s' if len(indices) != 1 else ''} {shown}"


def _what_differs(common: tuple, odd: list) -> str:
    if any(k[0] == "None" for k in odd):
        return "none"
    if common[0] == "dict" and all(k[0] == "dict" for k in odd):
        return "key"
    if common[0] == "seq" and all(k[0] == "seq" for k in odd):
        return "length"
    if common[0] in ("tensor", "array") and all(k[0] == common[0] for k in odd):
        return "shape"
    return "type"


def _fix(differs: str, common: tuple, odd: list) -> tuple:
    """(likely cause, next step) for what differs."""
    if differs == "shape":
        dims = {len(common[1])} | {len(k[1]) for k in odd}
        if dims == {1}:
            return (
                "sequences of different lengths reach the default collate, which stacks them into one tensor",
                "pad them in a `collate_fn` (`torch.nn.utils.rnn.pad_sequence(batch, batch_first=True)`) or pad or "
                "truncate every sample to one length in the dataset",
            )
        if len(dims) > 1 or _channels_differ(common[1], [k[1] for k in odd]):
            return (
                "images with a different number of channels (a grayscale or RGBA file among RGB ones, or one read "
                "without its channel dimension)",
                "convert every image the same way when it is read (`Image.open(path).convert('RGB')`), or resize "
                "and crop to one shape in the dataset's transform",
            )
        return (
            "samples of different sizes (images of different resolutions) reach the default collate, which "
            "stacks them into one tensor",
            "resize or crop every sample to one size in the dataset's transform (`transforms.Resize((H, W))`, "
            "`transforms.CenterCrop(H)`, `RandomResizedCrop(H)`), or pass a `collate_fn` that pads them (or keeps "
            "them in a list, as detection models take them)",
        )
    if differs == "none":
        return (
            "`__getitem__` returned None for these samples (a file it could not read, a filter that returns nothing)",
            "skip them before the loader (filter the index list), or pass a `collate_fn` that drops them "
            "(`default_collate([s for s in batch if s is not None])`); better, raise an error that names the bad file",
        )
    if differs == "key":
        return (
            "the samples' dicts do not have the same keys",
            "return the same keys from every sample (a default value for the missing one), or pass a `collate_fn` "
            "that fills it in",
        )
    if differs == "length":
        return (
            "the samples do not have the same number of items",
            "return the same items from every sample (a placeholder for a missing label), or pass a `collate_fn` "
            "that handles both",
        )
    if "str" in {common[0]} | {k[0] for k in odd}:
        return (
            "text where the other samples have numbers or tensors (a class name instead of its index?)",
            "map it to a number in `__getitem__` (`self.class_to_idx[name]`), or pass a `collate_fn` that keeps "
            "text as a list",
        )
    return (
        "the samples hold different types in the same field",
        "return one type from every sample (`torch.as_tensor(x)` for arrays and lists), or pass a `collate_fn`",
    )


def _channels_differ(common: tuple, odd: list) -> bool:
    def channels(shape: tuple) -> Any:
        if len(shape) != 3:
            return None
        return shape[0] if shape[0] <= 4 else shape[2] if shape[2] <= 4 else None

    return channels(common) is not None and any(channels(s) not in (None, channels(common)) for s in odd)


def _key_words(common: tuple, odd_kind: tuple) -> str:
    missing = [k for k in common[1] if k not in odd_kind[1]]
    extra = [k for k in odd_kind[1] if k not in common[1]]
    parts = []
    if missing:
        parts.append(f"no key {', '.join(missing)}")
    if extra:
        parts.append(f"the extra key{'s' if len(extra) > 1 else ''} {', '.join(extra)}")
    return " and ".join(parts) or "other keys"


def diagnose(batch: list, samples: Any, stream: bool = False) -> Optional[dict]:
    """Which samples of a batch default_collate could not put together, what differs and the
    fix, as JSON; None when the samples are not a list of one sample per index. ``batch``: the
    samples' dataset indices (``stream``: their positions in an IterableDataset's stream)."""
    try:
        samples = list(samples)
    except TypeError:
        return None
    if not samples or (batch and len(batch) != len(samples)):
        return None
    indices = list(batch) if batch else list(range(len(samples)))
    entries = [[n, indices[n], describe(s)] for n, s in enumerate(samples[:MAX_LISTED])]
    out: dict = {"batch": indices[:256], "entries": entries, "stream": stream}
    found = _first_difference(samples)
    if found is None:
        return _uncollatable(out, samples, indices)
    path, kinds = found
    common = Counter(kinds).most_common(1)[0][0]  # ties: the first sample's, which collate compares to
    odd = [n for n, k in enumerate(kinds) if k != common]
    differs = _what_differs(common, [kinds[n] for n in odd])
    at = f" at `{_path_text(path)}`" if path else ""
    others = len(samples) - len(odd)
    has, have = ("have", "have") if len(odd) > 1 else ("has", "have" if others != 1 else "has")
    expected = _words(common)
    if differs == "key":
        what = f"{has} {_key_words(common, kinds[odd[0]])}"
        expected = "keys " + ", ".join(common[1])
    elif differs == "shape":
        what = f"{has} shape " + " or ".join(sorted({str(list(kinds[n][1])) for n in odd}))
        expected = f"shape {list(common[1])}"
    else:
        what = ("hold " if len(odd) > 1 else "holds ") + " or ".join(sorted({_words(kinds[n]) for n in odd}))
    seen = (
        f"{_samples_text([indices[n] for n in odd], not stream)} (entr{'ies' if len(odd) > 1 else 'y'} "
        f"{', '.join(str(n) for n in odd[:8])} of the batch) {what}{at} where the other {others} {have} {expected}"
    )
    cause, fix = _fix(differs, common, [kinds[n] for n in odd])
    out.update(
        differs=differs,
        path=_path_text(path),
        odd=[indices[n] for n in odd][:50],
        oddEntries=odd[:50],
        expected=_words(common),
        found=[[indices[n], _words(kinds[n])] for n in odd[:8]],
        seen=seen,
        cause=cause,
        fix=fix,
    )
    return out


def _uncollatable(out: dict, samples: list, indices: list) -> dict:
    """Every sample has one structure: a field default_collate cannot batch at all, else nothing."""
    found = _first_uncollatable(samples[0])
    if found is None:
        out.update(
            differs=None, seen=f"the {len(samples)} samples of the batch have one structure, {describe(samples[0])}"
        )
        return out
    path, kind = found
    at = f" at `{_path_text(path)}`" if path else ""
    pil = kind[0] == "object" and kind[1].startswith("PIL.")
    out.update(
        differs="type",
        path=_path_text(path),
        odd=indices[:50],
        oddEntries=list(range(min(len(samples), 50))),
        expected="tensors, arrays, numbers, text, dicts or sequences",
        found=[[indices[0], _words(kind)]],
        seen=f"every sample holds {_words(kind)}{at}, which the default collate cannot batch",
        cause="the dataset's transform does not end in a tensor" if pil else "a field of a type collate does not know",
        fix=(
            "end the transform with `transforms.ToTensor()` (or `transforms.PILToTensor()`)"
            if pil
            else "return tensors, arrays or numbers from `__getitem__`, or pass a `collate_fn` that batches this type"
        ),
    )
    return out


class CollateError(Exception):
    """A batch of ``split`` could not be collated; ``record`` is what the fetcher kept (``watch.py``):
    the batch's dataset indices and, for torch's default collate, ``diagnose``'s answer."""

    def __init__(
        self,
        split: str,
        number: Optional[int],
        record: dict,
        exc_type: str,
        message: str,
        worker: Optional[int] = None,
        source: Optional[dict] = None,
        trace: str = "",
    ) -> None:
        self.split, self.number, self.record, self.worker = split, number, record, worker
        self.exc_type, self.message, self.source, self.trace = exc_type, message, source, trace
        self.diagnosis: dict = record.get("diagnosis") or {}
        super().__init__(self.headline())

    def _batch(self) -> str:
        batch = list(self.record.get("batch") or [])
        which = f"batch {self.number}" if self.number is not None else "a batch"
        if not batch:
            return which
        shown = ", ".join(str(i) for i in batch[:8]) + (", …" if len(batch) > 8 else "")
        return f"{which} ({'positions in the stream' if self.record.get('stream') else 'dataset indices'} {shown})"

    def _where(self) -> str:
        return f" in DataLoader worker {self.worker}" if self.worker is not None else ""

    def headline(self) -> str:
        d = self.diagnosis
        torch_said = f"{self.exc_type}: {self.message}" if self.message else self.exc_type
        if not self.record.get("default"):  # the user's own collate_fn raised
            at = f" at {self.source['file']}:{self.source['line']}" if self.source else ""
            return (
                f"{self.split}: your collate_fn raised {torch_said} on {self._batch()}{self._where()}{at}. "
                f"The check could not draw {self.split}. Next step: fix the collate_fn (the traceback ends in it); "
                f"the batch's samples are dataset[i] for the indices above"
            )
        if not d.get("differs"):
            seen = d.get("seen") or "the samples of the batch were not kept"
            return (
                f"{self.split}: torch's default collate could not batch {self._batch()}{self._where()}: "
                f"{torch_said}; {seen}. The check could not draw {self.split}. Next step: pass a `collate_fn` "
                "that builds the batch from these samples, or make `__getitem__` return tensors of one shape"
            )
        return (
            f"{self.split}: the DataLoader could not collate {self._batch()}{self._where()}: {d['seen']}. "
            f"Likely cause: {d['cause']}. Next step: {d['fix']}. The check could not draw {self.split}"
        )

    def traceback_text(self) -> str:
        """The detail: torch's own message, the batch entry by entry, and the user's frames."""
        lines = [f"torch's default collate raised {self.exc_type}: {self.message}"]
        if not self.record.get("default"):
            lines = [self.trace or f"{self.exc_type}: {self.message}"]
        entries = self.diagnosis.get("entries") or []
        if entries:
            odd = set(self.diagnosis.get("oddEntries") or [])
            index = "position in the stream" if self.record.get("stream") else "dataset index"
            lines += ["", f"{self.split}, {self._batch()}: entry, {index}, what it holds"]
            lines += [f"  {n:>3}  {i!r:>8}  {what}{'   <- differs' if n in odd else ''}" for n, i, what in entries]
            size = len(self.record.get("batch") or [])
            if size > len(entries):
                lines.append(f"  … {size - len(entries)} more")
        return "\n".join(lines)

    def to_error(self) -> dict:
        d = self.diagnosis
        odd = d.get("odd") or []
        return {
            "cause": "collate-failed",
            "split": self.split,
            "worker": self.worker,
            "exception": self.exc_type or None,
            "exceptionMessage": self.message or None,
            "stage": "collate_fn",
            "index": odd[0] if odd else None,
            "indices": odd,
            "batch": list(self.record.get("batch") or [])[:256],
            "differs": d.get("differs"),
            "path": d.get("path"),
            "expected": d.get("expected"),
            "found": d.get("found"),
            "source": self.source,
            "exit": None,
        }
