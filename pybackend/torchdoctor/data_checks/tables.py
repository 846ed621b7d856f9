"""Tables the data checks can read, as named columns: a pandas DataFrame (when pandas is importable
and the object is one), a numpy structured array, a dict of equal-length columns, or a list of row
dicts (``csv.DictReader``). A split that is not a table may hold one in an attribute (a Dataset
that keeps its DataFrame in ``self.df``): the first such attribute is read."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np

from .context import unwrap

MAX_ROWS = 200_000


@dataclass
class Table:
    where: str
    rows: int
    columns: dict = field(default_factory=dict)  # name -> list of values (at most MAX_ROWS)
    kinds: dict = field(default_factory=dict)  # name -> "number" | "text" | "bool" | "time" | "other"


def _kind_of_values(values: list) -> str:
    present = [v for v in values if v is not None and not (isinstance(v, float) and v != v)]
    if not present:
        return "other"
    if all(isinstance(v, str) for v in present):
        return "text"
    if all(isinstance(v, (bool, np.bool_)) for v in present):
        return "bool"
    if all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in present):
        return "number"
    return "other"


def _dtype_kind(dtype: Any) -> str:
    kind = getattr(dtype, "kind", "O")
    return {"i": "number", "u": "number", "f": "number", "b": "bool", "M": "time", "m": "time"}.get(
        kind, "text-or-other"
    )


def from_object(obj: Any, where: str) -> Optional[Table]:
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(obj, pd.DataFrame):
        t = Table(where, len(obj))
        for name in obj.columns:
            col = obj[name]
            t.columns[str(name)] = col.iloc[:MAX_ROWS].tolist()
            kind = _dtype_kind(col.dtype)
            t.kinds[str(name)] = kind if kind != "text-or-other" else _kind_of_values(t.columns[str(name)])
        return t
    if isinstance(obj, np.ndarray) and obj.dtype.names:
        t = Table(where, len(obj))
        for name in obj.dtype.names:
            col = obj[name][:MAX_ROWS]
            t.columns[name] = col.tolist()
            kind = _dtype_kind(col.dtype)
            t.kinds[name] = kind if kind != "text-or-other" else _kind_of_values(t.columns[name])
        return t
    if isinstance(obj, dict) and len(obj) >= 2 and all(isinstance(v, (list, tuple, np.ndarray)) for v in obj.values()):
        lengths = {len(v) for v in obj.values()}
        if len(lengths) == 1 and lengths.pop() >= 2:
            return _from_columns(
                {str(k): list(v[:MAX_ROWS]) for k, v in obj.items()}, where, len(next(iter(obj.values())))
            )
    if isinstance(obj, list) and len(obj) >= 2 and all(isinstance(r, dict) for r in obj[:100]):
        keys = list(obj[0])
        if keys and all(list(r) == keys for r in obj[:100]):
            rows = obj[:MAX_ROWS]
            return _from_columns({str(k): [r.get(k) for r in rows] for k in keys}, where, len(obj))
    return None


def _from_columns(columns: dict, where: str, rows: int) -> Table:
    t = Table(where, rows, columns)
    t.kinds = {k: _kind_of_values(v) for k, v in columns.items()}
    return t


def find_table(obj: Any, split_name: str) -> Optional[Table]:
    direct = from_object(obj, split_name)
    if direct is not None:
        return direct
    ds = unwrap(obj)
    attrs = getattr(ds, "__dict__", None)
    if not isinstance(attrs, dict):
        return None
    for name, value in attrs.items():
        if name.startswith("__"):
            continue
        table = from_object(value, f"{split_name} ({type(ds).__name__}.{name})")
        if table is not None and len(table.columns) >= 2:
            return table
    return None
