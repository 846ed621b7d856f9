"""The shape-trace view model: the module calls of the latest forward, as a tree with shapes.

``build(snapshot, thresholds, flags_by_call)`` ->::

    {
      "summary": str,
      "rows": [{                       # call order; depth 0 is the model's own call
        "index": int, "path": "features.0", "type": "Conv2d", "depth": int, "occurrence": int,
        "inputs":  [{"shape": [int] | null, "dtype": str | null, "device": str | null, "type"?: str}],
        "outputs": [...same...],       # [] when the call did not return
        "params": int,                 # with submodules
        "dtypeChange": bool, "deviceChange": bool,   # first input tensor vs first output tensor
        "failed": bool,                # the call whose forward raised (only that one)
        "status": "ok" | "running" | "failed" | "propagated",
        "location": {"file", "line"} | null,
        "activation": {"mean", "std", "zeros", "deadUnits", "min", "max", "nonFinite", "source"} | null,
        "flags": [{"rule", "severity", "sentence", "suggestion"}]
      }],
      "failedModule": "fc1" | null,    # path of the failed call ("" is the model's own code)
      "error": "RuntimeError: mat1 and mat2 ...\n\n<plain words>" | null,
      "explanation": str | null,       # the plain words alone
      "running": "fc1" | null,         # innermost call not returned (paused inside it)
      "counts": {"modules", "changes", "flagged"},
      "uniform": "All tensors float32 on cpu." | ""   # see presentation.py
    }
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .blocks import block_paths, shape_folds
from .presentation import finish_shape_trace
from .snapshot_data import first_tensor, integer, location, num, obj, objs, tensor_meta, text
from .words import count, layer, shape


def build(snapshot: Dict[str, Any], flags_by_call: Optional[Dict[int, List[Dict[str, Any]]]] = None) -> Dict[str, Any]:
    flags_by_call = flags_by_call or {}
    model = obj(snapshot.get("model"))
    model_type = text(model.get("type"), "the model")
    calls = objs(snapshot.get("calls"))
    error = obj(snapshot.get("error"))
    failed_index = integer(error.get("callIndex"), -1) if error else -1
    rows: List[Dict[str, Any]] = []
    running = None
    for c in calls:
        index = integer(c.get("index"), len(rows))
        inputs = [tensor_meta(leaf) for leaf in objs(c.get("inputs"))]
        outputs = [tensor_meta(leaf) for leaf in objs(c.get("outputs"))]
        fin, fout = first_tensor(c.get("inputs")), first_tensor(c.get("outputs"))
        status = text(c.get("status"), "ok")
        if status == "running":
            running = text(c.get("path"))
        a = obj(c.get("activation"))
        rows.append(
            {
                "index": index,
                "path": text(c.get("path")),
                "type": text(c.get("type"), "?"),
                "depth": integer(c.get("depth"), 0),
                "occurrence": integer(c.get("occurrence"), 1),
                "inputs": inputs,
                "outputs": outputs,
                "params": integer(c.get("params"), 0),
                "dtypeChange": dtype_change(fin, fout),
                "deviceChange": bool(
                    fin and fout and fin["device"] and fout["device"] and fin["device"] != fout["device"]
                ),
                "failed": status == "failed" or index == failed_index,
                "status": status,
                "location": location(c.get("location")),
                "activation": _activation(a) if a else None,
                "flags": flags_by_call.get(index, []),
            }
        )
    shape_folds(rows, block_paths(calls))
    failed = next((r for r in rows if r["failed"]), None)
    explanation = text(error.get("explanation")) or None if error else None
    message = None
    if error:
        head = f"{text(error.get('type'), 'Error')}: {text(error.get('message')).strip()}"
        message = head + (f"\n\n{explanation}" if explanation else "")
    return finish_shape_trace(
        {
            "summary": _summary(snapshot, model_type, rows, failed, error, explanation, running),
            "rows": rows,
            "failedModule": (text(error.get("module")) if error else None) if error or failed else None,
            "error": message,
            "explanation": explanation,
            "running": running,
        }
    )


# Integer and bool tensors are indices, ids and masks: a module that takes them and gives floats
# (Embedding, EmbeddingBag, a language model's own call on token ids) changes the dtype by design.
_INDEX_DTYPES = frozenset(
    ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool", "long", "int")
)


def dtype_change(fin: Optional[Dict[str, Any]], fout: Optional[Dict[str, Any]]) -> bool:
    """The first input's dtype differs from the first output's, unexpectedly: indices in,
    floats out is what a lookup does and is never flagged."""
    if not (fin and fout and fin["dtype"] and fout["dtype"]) or fin["dtype"] == fout["dtype"]:
        return False
    return _bare(fin["dtype"]) not in _INDEX_DTYPES


def _bare(dtype: str) -> str:
    return dtype[len("torch.") :] if dtype.startswith("torch.") else dtype


def _activation(a: Dict[str, Any]) -> Dict[str, Any]:
    return {
        "mean": num(a.get("mean")),
        "std": num(a.get("std")),
        "zeros": num(a.get("zeros")),
        "deadUnits": num(a.get("deadUnits")),
        "min": num(a.get("min")),
        "max": num(a.get("max")),
        "nonFinite": True if a.get("hasNonFinite") and not a.get("nonFinite") else integer(a.get("nonFinite"), 0),
        "source": text(a.get("source")) or None,
    }


def _summary(snapshot, model_type, rows, failed, error, explanation, running) -> str:
    status = text(snapshot.get("status"), "ok")
    if status != "ok" or not rows:
        return text(snapshot.get("message")) or f"No forward of {model_type} recorded yet."
    model = obj(snapshot.get("model"))
    root = rows[0]
    if error:
        where = layer(text(error.get("module")), text(error.get("moduleType")))
        if explanation:
            return f"The forward of {model_type} raised in {where}. {explanation}"
        return f"The forward of {model_type} raised {text(error.get('type'), 'an error')} in {where}: {text(error.get('message')).strip()}"
    calls = len(rows) - 1
    params = count(integer(model.get("params"), root["params"]))
    if running is not None:
        return (
            f"Paused inside the forward of {model_type} (forward {integer(model.get('passNumber'), 0)}), in "
            f"{layer(running, next((r['type'] for r in rows if r['path'] == running), ''))}: {calls} module calls so far."
        )
    fin = next((i for i in root["inputs"] if i["shape"] is not None), None)
    fout = next((o for o in root["outputs"] if o["shape"] is not None), None)
    io = f"{shape(fin['shape']) if fin else '?'} -> {shape(fout['shape']) if fout else '?'}"
    dtypes = sorted({m["dtype"] for r in rows for m in r["inputs"] + r["outputs"] if m.get("dtype")})
    devices = sorted({m["device"] for r in rows for m in r["inputs"] + r["outputs"] if m.get("device")})
    changes = sum(1 for r in rows if r["dtypeChange"] or r["deviceChange"])
    tail = (
        f"; all tensors {dtypes[0]} on {devices[0]}"
        if len(dtypes) == 1 and len(devices) == 1
        else (f"; {changes} calls change dtype or device" if changes else "")
    )
    dropped = integer(model.get("callsDropped"), 0)
    more = f" (and {dropped} calls not listed)" if dropped else ""
    return f"{model_type}: {io} through {calls} module calls{more}, {params} parameters{tail}."
