"""Tabular data: numbers stored as text, missing values per column, constant columns, id overlap."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any, Optional

from . import findings as F
from . import thresholds as T
from .context import Context, Split


def _missing(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, float) and v != v:
        return True
    return isinstance(v, str) and v.strip().lower() in T.MISSING_MARKERS


def _number(text: str) -> Optional[str]:
    """How ``text`` parses as a number: "plain", "separators" (1,234 / $5 / 12%), or None."""
    t = text.strip()
    try:
        float(t)
        return "plain"
    except ValueError:
        pass
    cleaned = t.replace(",", "").replace("_", "").strip("$€£%")
    try:
        float(cleaned)
        return "separators"
    except ValueError:
        return None


def check(ctx: Context) -> list:
    out = []
    for split in ctx.splits:
        if split.table is None:
            continue
        out += _text_numbers(split)
        out += _missing_values(split)
        out += _constant(split)
    out += _id_overlap(ctx)
    return out


def _text_numbers(split: Split) -> list:
    t, out = split.table, []
    for name, values in t.columns.items():
        if t.kinds[name] not in ("text", "other"):
            continue
        present = [v for v in values if not _missing(v)]
        if len(present) < 2 or not all(isinstance(v, str) for v in present):
            continue
        how = Counter(_number(v) for v in present)
        parsed = how["plain"] + how["separators"]
        if parsed / len(present) < T.NUMERIC_SHARE:
            continue
        odd = Counter(v for v in values if isinstance(v, str) and (_missing(v) or _number(v) is None))
        examples = ", ".join(f"{v!r} x{c}" for v, c in odd.most_common(3))
        cause = (
            "thousands separators or units in the text (1,234 / $5)"
            if how["separators"]
            else f"a missing-value marker ({examples}) that made the whole column text"
            if odd
            else "the column was read or built as strings"
        )
        out.append(
            F.finding(
                F.TEXT_NUMBERS,
                F.WARNING,
                split.name,
                f"column {name!r} of {t.where} holds numbers stored as text ({parsed} of {len(present)} "
                f"non-missing values parse as numbers). Likely cause: {cause}. A model never sees it as a number "
                "(it is dropped, or one-hot encoded as categories). Next step: pd.to_numeric(df[col], "
                "errors='coerce') (or read_csv(thousands=',', na_values=[...])) and handle the missing values.",
                source=split.source,
                column=name,
                separators=how["separators"],
            )
        )
    return out


def _missing_values(split: Split) -> list:
    t = split.table
    counts = {name: sum(1 for v in values if _missing(v)) for name, values in t.columns.items()}
    counts = {k: v for k, v in counts.items() if v}
    if not counts:
        return []
    listed = ", ".join(
        f"{k!r} {v} ({v / max(1, len(t.columns[k])):.1%})" for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:6]
    )
    return [
        F.finding(
            F.MISSING,
            F.WARNING,
            split.name,
            f"{t.where} has missing values in {len(counts)} column{'s' if len(counts) != 1 else ''}: {listed}. "
            "A missing value becomes NaN in a tensor and NaN spreads through the loss. Next step: impute "
            "with statistics fitted on the training split only, add a missing-indicator column, or drop the rows.",
            source=split.source,
            columns=counts,
        )
    ]


def _constant(split: Split) -> list:
    t = split.table
    if t.rows < 2:
        return []
    constant = []
    for name, values in t.columns.items():
        present = {repr(v) for v in values if not _missing(v)}
        if len(present) <= 1:
            constant.append(name)
    if not constant:
        return []
    return [
        F.finding(
            F.CONSTANT_COLUMN,
            F.WARNING,
            split.name,
            f"{t.where}: column{'s' if len(constant) != 1 else ''} {', '.join(map(repr, constant[:8]))} "
            f"{'have' if len(constant) != 1 else 'has'} a single value in all {t.rows} rows. It carries no "
            "information (and a std of 0 divides standardisation by zero). Next step: drop it, or check the "
            "join or filter that emptied it.",
            source=split.source,
            columns=constant,
        )
    ]


# the last word before "_id" that names a class, not an entity: COCO's ``category_id``, ``class_id``,
# ``label_id``; every class of val is in train by design, and splitting by it would put each class in one split
CLASS_STEMS = frozenset(("category", "cat", "class", "cls", "label", "target", "type"))


def _id_column(name: str) -> bool:
    low = name.lower()
    if low in ("id", "uuid", "key"):
        return True
    if low.endswith("_id"):
        stem = name[:-3]
    elif name.endswith("Id") and len(name) > 2:
        stem = name[:-2]
    else:
        return False
    words = re.split(r"_|(?<=[a-z0-9])(?=[A-Z])", stem)  # category_id, objectClassId
    return words[-1].lower() not in CLASS_STEMS


def _plain(value: object) -> object:
    """A numpy scalar as the Python value it holds: numpy 2 shows ``np.int64(1883)`` where 1883 is meant."""
    item = getattr(value, "item", None)
    return item() if callable(item) and getattr(value, "shape", None) == () else value


def _id_overlap(ctx: Context) -> list:
    out = []
    for train, split in ctx.table_pairs():
        for name in train.table.columns:
            if not _id_column(name) or name not in split.table.columns:
                continue
            seen = {v for v in train.table.columns[name] if not _missing(v)}
            shared = [i for i, v in enumerate(split.table.columns[name]) if not _missing(v) and v in seen]
            if not shared:
                continue
            out.append(
                F.finding(
                    F.ID_OVERLAP,
                    F.ERRORS,
                    split.name,
                    f"{len(shared)} rows of {split.table.where} share their {name!r} with {train.name} "
                    f"(e.g. {_plain(split.table.columns[name][shared[0]])!r}): the same entity is on both sides, so the "
                    f"{split.name} score rewards memorising it. Next step: split by {name!r} (GroupShuffleSplit, "
                    "GroupKFold) so each id lives in one split.",
                    shared,
                    source=split.source,
                    column=name,
                )
            )
    return out
