"""Export the collection as one JSON file: what the gradient-flow and shape-trace views draw.

The extension, when the program is paused, evaluates through DAP (in the paused frame)::

    __import__("torchdoctor.runtime.collect.snapshot", fromlist=["dump"]).dump("/private/tmp/dir/snapshot.json")

and reads the file; the evaluate answer is only the short status string (payloads of hundreds of
layers never travel as debugger value strings, which are truncated). ``dump(path, model)`` asks
for one model instead of the default choice: its own latest forward, else that of the model
containing it (``"focus"`` then names it), else that of a part of it run on its own
(``model.encoder(x)``), named from ``model``. The backend
turns the file into view models (``torchDoctor/diagnoseSnapshot``). ``dump`` never raises: a
failure is its return value (``"error: ..."``) and, when possible, a file with status "error".

Which model: among the roots traced (modules called with no module call open), those not part of
another root; of these, the one with the most parameters (the most recent on a tie). So a
``CrossEntropyLoss`` module called after the model does not displace it.

Snapshot JSON, ``"version": 1`` (keys always present unless marked "?")::

    {
      "schema": "torchdoctor.snapshot", "version": 1,
      "status": "ok" | "empty" | "inactive" | "error",
      "message": str,              # one sentence: what this snapshot is, or why it is empty
      "createdAt": float,          # unix seconds
      "pid": int, "python": "3.11.7", "torch": "2.13.0+cpu" | null,
      "model": null | {
        "type": "TinyCNN", "location": Location | null,
        "params": int, "trainable": int, "training": bool,
        "passNumber": int,         # forwards of this model seen (1 = the first)
        "passComplete": bool,      # false: paused inside the forward, or the forward raised
        "gradEnabled": bool,       # grad mode during that forward
        "callsDropped": int,       # module calls past the per-pass limit (4096), not listed
        "focus": str | null        # path of the submodule dump() was asked about, if any
      },
      "otherRoots": [{"type": str, "params": int, "passNumber": int}],
      "input": Stats | null,       # the model's first input tensor (the batch), if still alive
                                   # (+ "changedSinceForward": bool)
      "calls": [Call],             # the pass, in call order (a module called twice: two calls)
      "parameters": [Param],       # model order: by the first call of the owning module,
                                   # then modules never called, in registration order
      "gradients": {
        "source": "backward" | "current" | "none",
                                   # backward: noted at the end of the last backward through the
                                   # model's output; current: the parameters' .grad read now;
                                   # none: no gradient anywhere
        "backwardNumber": int | null, "fromPass": int | null,
        "latestPass": bool,        # the backward followed the pass listed in "calls"
        "note": str | null
      },
      "error": null | {            # the forward raised (the "failed" call) and did not return
        "type": "RuntimeError", "message": str, "module": "fc1", "moduleType": "Linear",
        "callIndex": int, "explanation": str | null   # plain words (collect/shape_errors.py)
      },
      "collector": {"budget": float, "sampledPasses": int, "skippedPasses": int, "errors": [str]}
                                   # budget: fraction of wall time the hot-path reductions may take
    }

    Call = {
      "index": int, "path": "features.0" ("" for the model; "<parent>/(Type)" for a module
               that is not a submodule of the model), "type": "Conv2d",
      "depth": int (0 = the model's call), "parent": int (-1 for the model's call),
      "occurrence": int (1 for the first call of this module in the pass, 2 for the second...),
      "leaf": bool (no child modules),
      "status": "ok" | "running" | "failed" | "propagated",
               # failed: its forward raised; propagated: the exception went through it;
               # running: not returned yet (the program is paused inside it)
      "inputs": [Leaf], "outputs": [Leaf] | null,
      "params": int (with submodules), "ownParams": int,
      "activation": Stats | null,   # of the first output tensor
      "activationNote": str | null, # why there is no activation
      "changedSinceForward": bool,  # the output was modified in place after the call returned
                                    # (e.g. by an inplace ReLU): the statistics are of its
                                    # current values
      "location": Location | null
    }
    Leaf  = {"shape": [int], "dtype": "float32", "device": "cpu", "requiresGrad": bool}
          | {"type": "NoneType"}      # at most 8 per side, nesting followed 3 deep
    Stats = {"count": int, "mean", "std", "min", "max": float | null (over finite values),
             "zeros": float (fraction of exact zeros), "zeroCount": int,
             "units": int | null,          # positions of one sample (all dims but dim 0)
             "deadUnitCount": int | null, "deadUnits": float | null,
                                           # positions that are 0 for every sample of the batch
                                           # (null below 2 samples; from the hot path: ReLU-like
                                           # modules only)
             "nan", "posinf", "neginf": int | null, "nonFinite": int | null,
                                           # null: reduced on the hot path, where NaN/Inf are
                                           # detected ("hasNonFinite") but not counted
             "hasNonFinite"?: bool, "of"?: "abs",
             "source": "live" | "forward" | "earlier",
                                           # live: exact, from the output still alive at the
                                           # snapshot; forward: reduced right after the call
                                           # (std from sums, bounded by the range); earlier: of
                                           # the latest sampled forward, number "fromPass"
             "fromPass"?: int}
    Param = {
      "name": "features.0.weight", "module": "features.0", "moduleType": "Conv2d",
      "shape": [int], "dtype": str, "device": str, "numel": int, "requiresGrad": bool,
      "grad": null | {"count": int, "meanAbs", "maxAbs", "norm": float | null,
                      "nan": int | null, "inf": int | null, "nonFinite"?: int | null,
                      "hasNonFinite"?: bool,
                      "source": "live" | "backward" | "earlier" | "current", "fromBackward"?: int},
               # The moment is fixed: the gradient as it is at the pause (what the optimizer
               # steps with; after the program's clipping when paused after it), whenever
               # the last backward's gradient is alive. live: exact, that gradient now;
               # backward: freed since (zero_grad), reduced at the end of that backward, before
               # any clipping (NaN/Inf detected, not counted); earlier: of the latest sampled
               # backward; current: the .grad read now (no backward through the model seen).
               # Magnitudes over finite values.
      "gradNote": str | null,       # why there is no gradient, or why it is not of the pause
      "changedSinceBackward": bool, # live, and modified in place since the backward (clipping,
                                    # zero_grad without set_to_none, accumulation)
      "values": null | {"nan": int, "inf": int, "mean", "std", "min", "max": float | null},
      "order": int | null,          # index of the first call of the owning module
      "location": Location | null
    }
    Location = {"file": absolute path, "line": 1-based, "kind": "assignment" | "class" | "call"}
               # call: the line that called the module in this pass, used when the module is
               # assigned on several lines (one per branch) or has no definition found

Floats are finite or null (JSON has no NaN); counts say when values were not finite.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any, Dict, List, Optional, Tuple

from .counts import elements, param_count, param_counts, unique
from .parameters import parameters
from .trace import version_of

SCHEMA = "torchdoctor.snapshot"
VERSION = 1


def dump(path: str, model: Any = None) -> str:
    """Write the latest collection to ``path`` as JSON; a short status line."""
    try:
        snapshot = build(model)
    except Exception as exc:
        snapshot = _base("error", f"the snapshot failed: {type(exc).__name__}: {exc}")
    try:
        _write(path, snapshot)
    except Exception as exc:
        return f"error: cannot write {path}: {type(exc).__name__}: {exc}"
    return status_line(snapshot)


def status_line(snapshot: Dict[str, Any]) -> str:
    if snapshot["status"] != "ok":
        return f"{snapshot['status']}: {snapshot['message']}"
    modules = len({c["path"] for c in snapshot["calls"]})
    line = f"ok {modules} modules {len(snapshot['parameters'])} params"
    if snapshot["error"]:
        line += f" failed in {snapshot['error']['module'] or '(model)'}"
    return line


def build(model: Any = None) -> Dict[str, Any]:
    """The snapshot as a dict (see the module docstring)."""
    from . import install

    collector = install.current()
    if collector is None:
        return _base(
            "inactive",
            "the collection is not running in this program: start it with a Torch Doctor "
            "debug configuration (or call torchdoctor.runtime.collect.install.install())",
        )
    torch = sys.modules["torch"]
    chosen = _choose(collector.tracer.live_roots(), model)
    if isinstance(chosen, str):
        return _collector_info(_base("empty", chosen), collector)
    state, root, naming, focus, others = chosen
    with torch.no_grad():
        return _collector_info(_describe(torch, collector, state, root, naming, focus, others), collector)


# -- which pass ------------------------------------------------------------------------------


def _choose(states: list, model: Any):
    roots = [(s, s.latest.root()) for s in states]
    roots = [(s, r) for s, r in roots if r is not None]
    if not roots:
        return (
            "no model seen yet: no nn.Module has run a forward since torch was imported (pause after the first forward)"
        )
    contained = {id(r) for _, r in roots for _, other in roots if other is not r and _contains(other, r)}
    outer = [(s, r) for s, r in roots if id(r) not in contained]
    focus = None
    naming = None  # the module paths are named from (the root itself, unless said otherwise)
    if model is not None:
        hit = [(s, r) for s, r in roots if r is model]
        if not hit:
            hit = [(s, r) for s, r in outer if _contains(r, model)]
            if hit:
                focus = _path_of(hit[0][1], model)
        if not hit:  # parts of the model ran on their own (``model.encoder(x)``): the latest of them
            hit = [(s, r) for s, r in roots if _contains(model, r)][-1:]
            naming = model if hit else None
        if not hit:
            return f"no forward of {type(model).__name__} yet since the collection started"
        chosen = hit[0]
    else:
        ranked = [(param_count(r), position, (s, r)) for position, (s, r) in enumerate(outer)]
        chosen = max(ranked, key=lambda x: (x[0], x[1]))[2]  # most parameters, then most recent
    others = [
        {"type": type(r).__name__, "params": param_count(r), "passNumber": s.latest.number}
        for s, r in roots
        if r is not chosen[1]
    ]
    return chosen[0], chosen[1], naming if naming is not None else chosen[1], focus, others


def _contains(parent: Any, child: Any) -> bool:
    try:
        return any(m is child for m in parent.modules())
    except Exception:
        return False


def _path_of(root: Any, module: Any) -> Optional[str]:
    for name, m in root.named_modules():
        if m is module:
            return name
    return None


# -- describing it ---------------------------------------------------------------------------


def _describe(torch, collector, state, pass_root, root, focus, others) -> Dict[str, Any]:
    """``pass_root`` ran the pass; ``root`` names the modules (an ancestor of it, or itself)."""
    from .locations import locate_all, prefer_call_sites

    the_pass = state.latest
    named = dict(root.named_modules())
    path_of = {id(m): name for name, m in named.items()}
    own, total = param_counts(named)
    sites: Dict[str, Optional[tuple]] = {}
    for c in the_pass.calls:
        m = c.module()
        if m is not None and id(m) in path_of:
            sites.setdefault(path_of[id(m)], c.site)
    locations = prefer_call_sites(locate_all(root, named), sites)
    calls, first_call = _calls(the_pass, state.sampled, path_of, own, total, locations)
    error = _error(the_pass, calls)
    params, gradients = parameters(collector, the_pass, pass_root, root, first_call, locations)
    root_call = the_pass.calls[0] if the_pass.calls else None
    snapshot = _base("ok", "")
    snapshot["model"] = {
        "type": type(root).__name__,
        "location": locations.get(""),
        "params": total.get("", 0),
        "trainable": elements([(n, p) for n, p in unique(root) if p.requires_grad]),
        "training": bool(root.training),
        "passNumber": the_pass.number,
        "passComplete": the_pass.complete,
        "gradEnabled": the_pass.grad_enabled,
        "callsDropped": the_pass.dropped,
        "focus": focus,
    }
    snapshot["otherRoots"] = others
    snapshot["input"] = _input_stats(root_call)
    snapshot["calls"] = calls
    snapshot["parameters"] = params
    snapshot["gradients"] = gradients
    snapshot["error"] = error
    snapshot["message"] = _message(snapshot)
    return snapshot


def _input_stats(root_call) -> Optional[dict]:
    t = root_call.in_ref() if root_call is not None and root_call.in_ref is not None else None
    if t is None:
        return None
    stats, _ = _live_stats(t)
    if stats is not None:
        stats["changedSinceForward"] = version_of(t) != root_call.in_version
    return stats


def _calls(
    the_pass: Any, sampled: bool, path_of: Dict[int, str], own: Dict[str, int], total: Dict[str, int], locations: Any
) -> Tuple[List[Dict[str, Any]], Dict[str, int]]:
    from .tensors import leaf_json

    rows: List[Dict[str, Any]] = []
    seen: Dict[str, int] = {}
    first_call: Dict[str, int] = {}
    for call in list(the_pass.calls):
        module = call.module()
        type_name = type(module).__name__ if module is not None else "?"
        found = path_of.get(id(module)) if module is not None else None
        known = found is not None
        parent_row = rows[call.parent] if 0 <= call.parent < len(rows) else None
        path = found if found is not None else f"{parent_row['path'] if parent_row else ''}/({type_name})"
        seen[path] = seen.get(path, 0) + 1
        first_call.setdefault(path, call.index)
        stats, note, changed = _activation(call, the_pass, sampled)
        leaf = module is not None and next(iter(module.children()), None) is None
        rows.append(
            {
                "index": call.index,
                "path": path,
                "type": type_name,
                "depth": call.depth,
                "parent": call.parent,
                "occurrence": seen[path],
                "leaf": bool(leaf),
                "status": call.status,
                "inputs": [leaf_json(item) for item in call.inputs],
                "outputs": [leaf_json(item) for item in call.outputs] if call.outputs is not None else None,
                "params": total.get(path, param_count(module) if module is not None else 0),
                "ownParams": own.get(path, 0),
                "activation": stats,
                "activationNote": note,
                "changedSinceForward": changed,
                "location": locations.get(path) if known else (parent_row["location"] if parent_row else None),
            }
        )
    return rows, first_call


def _activation(call, the_pass, sampled) -> Tuple[Optional[dict], Optional[str], bool]:
    """``(stats, note, changed since the forward)`` for one call's first output tensor.

    Exact when the output is still alive and unchanged ("live"); else the reductions of this
    pass ("forward") or of the latest sampled pass ("earlier", with ``fromPass``).
    """
    from .reduce import activation_from_row

    if call.status != "ok":
        return (
            None,
            {
                "running": "not returned yet",
                "failed": "its forward raised",
                "propagated": "an exception went through it",
            }.get(call.status),
            False,
        )
    if call.out_ref is None:
        return None, "no tensor in its output", False
    t = call.out_ref()
    changed = t is not None and version_of(t) != call.out_version
    if t is not None and not changed:
        stats, note = _live_stats(t)
        if stats is not None:
            stats["source"] = "live"
            return stats, None, False
    if call.partials is not None:
        stats = activation_from_row(call.out_count, call.partials.tolist(), call.out_batch)
        stats["source"] = "forward"
        return stats, None, changed
    if t is not None:
        stats, note = _live_stats(t)
        if stats is not None:
            stats["source"] = "live"
        return stats, note, changed
    old = _same_call(sampled, call) if sampled is not None and sampled is not the_pass else None
    if old is not None and old.partials is not None:
        stats = activation_from_row(old.out_count, old.partials.tolist(), old.out_batch)
        stats["source"] = "earlier"
        stats["fromPass"] = sampled.number
        return stats, None, False
    return None, "not sampled: the output was freed before the pause and this forward was not reduced", False


def _same_call(sampled, call):
    calls = sampled.calls
    if call.index < len(calls):
        old = calls[call.index]
        if old.module() is call.module() and old.depth == call.depth:
            return old
    return None


def _live_stats(t: Any) -> Tuple[Optional[dict], Optional[str]]:
    from .stats import activation_stats

    try:
        return dict(activation_stats(t)), None
    except Exception as exc:
        return None, f"statistics failed: {type(exc).__name__}: {exc}"[:300]


def _error(the_pass, calls) -> Optional[dict]:
    """The failure of a forward that did not return (one caught inside the forward is no failure
    of the pass, though its call stays "failed")."""
    if the_pass.complete:
        return None
    failed = [(c, row) for c, row in zip(the_pass.calls, calls) if c.status == "failed"]
    if not failed:
        return None
    call, row = failed[0]
    return {
        "type": call.error_type,
        "message": call.error_message,
        "module": row["path"],
        "moduleType": row["type"],
        "callIndex": row["index"],
        "explanation": _explain(call, row, calls),
    }


def _explain(call, row, calls) -> Optional[str]:
    """Plain words for the failure, by the shape trace check's own explainer."""
    try:
        from .shape_errors import Failure, explain

        exc_type = _exception_type(call.error_type)
        try:
            exc = exc_type(call.error_message)
        except Exception:
            exc = RuntimeError(call.error_message)
        done = [r for r in calls[: row["index"]] if r["status"] == "ok" and r["depth"] > 0]
        last = done[-1] if done else None
        last_output = None
        if last and last["outputs"] and "shape" in last["outputs"][0]:
            last_output = last["outputs"][0]["shape"]
        failure = Failure(
            exc=exc,
            module_name=row["path"],
            module=call.module(),
            input_shapes=[leaf["shape"] if "shape" in leaf else leaf.get("type") for leaf in row["inputs"]],
            last_name=last["path"] if last else None,
            last_output=last_output,
        )
        return explain(failure)
    except Exception:
        return None


def _exception_type(name: Optional[str]) -> type:
    import builtins

    found = getattr(builtins, name or "", None)
    return found if isinstance(found, type) and issubclass(found, BaseException) else RuntimeError


# -- envelope ------------------------------------------------------------------------------


def _base(status: str, message: str) -> Dict[str, Any]:
    torch = sys.modules.get("torch")
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "status": status,
        "message": message,
        "createdAt": time.time(),
        "pid": os.getpid(),
        "python": ".".join(str(v) for v in sys.version_info[:3]),
        "torch": getattr(torch, "__version__", None) if torch is not None else None,
        "model": None,
        "otherRoots": [],
        "input": None,
        "calls": [],
        "parameters": [],
        "gradients": {"source": "none", "backwardNumber": None, "fromPass": None, "latestPass": False, "note": None},
        "error": None,
        "collector": {"budget": None, "sampledPasses": 0, "skippedPasses": 0, "errors": []},
    }


def _collector_info(snapshot: Dict[str, Any], collector) -> Dict[str, Any]:
    budget = collector.budget
    snapshot["collector"] = {
        "budget": budget.fraction,
        "sampledPasses": budget.granted,
        "skippedPasses": budget.refused,
        "errors": list(collector.errors),
    }
    return snapshot


def _message(snapshot: Dict[str, Any]) -> str:
    model = snapshot["model"]
    calls = snapshot["calls"]
    text = f"{model['type']}: forward {model['passNumber']}, {len(calls)} module calls"
    if snapshot["error"]:
        text += f", raised {snapshot['error']['type']} in `{snapshot['error']['module'] or model['type']}`"
    elif not model["passComplete"]:
        text += ", paused inside the forward"
    return text


def _write(path: str, snapshot: Dict[str, Any]) -> None:
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(snapshot, f, allow_nan=False, separators=(",", ":"))
    os.replace(tmp, path)
