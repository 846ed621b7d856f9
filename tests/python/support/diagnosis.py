"""Hand-made snapshots (schema of runtime/collect/snapshot.py, version 1) for the diagnosis tests."""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Optional


def stats(
    mean=0.0,
    std=1.0,
    zeros=0.0,
    low=-3.0,
    high=3.0,
    count=1024,
    dead_units=None,
    units=None,
    nan=0,
    posinf=0,
    neginf=0,
    source="live",
) -> Dict[str, Any]:
    return {
        "count": count,
        "mean": mean,
        "std": std,
        "min": low,
        "max": high,
        "zeros": zeros,
        "zeroCount": int(zeros * count),
        "units": units,
        "deadUnitCount": None if dead_units is None else int(dead_units * (units or 1)),
        "deadUnits": dead_units,
        "nan": nan,
        "posinf": posinf,
        "neginf": neginf,
        "nonFinite": nan + posinf + neginf,
        "source": source,
    }


def tensor(shape, dtype="float32", device="cpu") -> Dict[str, Any]:
    return {"shape": list(shape), "dtype": dtype, "device": device, "requiresGrad": False}


def call(
    index,
    path,
    type_name,
    depth=1,
    parent=0,
    inputs=((8, 10),),
    outputs=((8, 10),),
    own=0,
    params=None,
    activation: Optional[dict] = None,
    leaf=True,
    status="ok",
    occurrence=1,
    line=None,
    dtype="float32",
    out_dtype=None,
    device="cpu",
    out_device=None,
) -> Dict[str, Any]:
    return {
        "index": index,
        "path": path,
        "type": type_name,
        "depth": depth,
        "parent": parent,
        "occurrence": occurrence,
        "leaf": leaf,
        "status": status,
        "inputs": [tensor(s, dtype, device) for s in inputs],
        "outputs": None if status != "ok" else [tensor(s, out_dtype or dtype, out_device or device) for s in outputs],
        "params": own if params is None else params,
        "ownParams": own,
        "activation": activation,
        "activationNote": None,
        "changedSinceForward": False,
        "location": {"file": "/ws/model.py", "line": line, "kind": "assignment"} if line else None,
    }


def param(
    name,
    module,
    module_type,
    mean_abs=1e-3,
    max_abs=1e-2,
    norm=0.1,
    numel=100,
    nan=0,
    inf=0,
    grad=True,
    requires_grad=True,
    changed=False,
    values_nan=0,
    line=None,
) -> Dict[str, Any]:
    return {
        "name": name,
        "module": module,
        "moduleType": module_type,
        "shape": [numel],
        "dtype": "float32",
        "device": "cpu",
        "numel": numel,
        "requiresGrad": requires_grad,
        "grad": {
            "count": numel,
            "meanAbs": mean_abs,
            "maxAbs": max_abs,
            "norm": norm,
            "nan": nan,
            "inf": inf,
            "source": "live",
        }
        if grad
        else None,
        "gradNote": None if grad else "no gradient",
        "changedSinceBackward": changed,
        "values": {"nan": values_nan, "inf": 0, "mean": 0.0, "std": 0.1, "min": -1.0, "max": 1.0},
        "order": 0,
        "location": {"file": "/ws/model.py", "line": line, "kind": "assignment"} if line else None,
    }


def snapshot(
    calls: List[dict],
    params: List[dict],
    source="backward",
    error=None,
    model_type="MLP",
    input_stats=None,
    complete=True,
) -> Dict[str, Any]:
    return copy.deepcopy(
        {
            "schema": "torchdoctor.snapshot",
            "version": 1,
            "status": "ok",
            "message": f"{model_type}: forward 3",
            "createdAt": 0.0,
            "pid": 1,
            "python": "3.11.7",
            "torch": "2.13.0",
            "model": {
                "type": model_type,
                "location": None,
                "params": sum(p["numel"] for p in params),
                "trainable": 0,
                "training": True,
                "passNumber": 3,
                "passComplete": complete,
                "gradEnabled": True,
                "callsDropped": 0,
                "focus": None,
            },
            "otherRoots": [],
            "input": input_stats,
            "calls": calls,
            "parameters": params,
            "gradients": {"source": source, "backwardNumber": 3, "fromPass": 3, "latestPass": True, "note": None},
            "error": error,
            "collector": {"budget": 0.03, "sampledPasses": 1, "skippedPasses": 0, "errors": []},
        }
    )


def mlp(relu1=None, relu2=None, out=None, grads=None) -> Dict[str, Any]:
    """model(fc1 -> act1 -> fc2 -> act2 -> out), each piece overridable."""
    relu = stats(mean=0.4, std=0.6, zeros=0.5, low=0.0, high=3.0, dead_units=0.0, units=32)
    calls = [
        call(
            0,
            "",
            "MLP",
            depth=0,
            parent=-1,
            inputs=((8, 10),),
            outputs=((8, 2),),
            leaf=False,
            params=1500,
            activation=stats(),
        ),
        call(1, "fc1", "Linear", inputs=((8, 10),), outputs=((8, 32),), own=352, activation=stats(), line=10),
        call(2, "act1", "ReLU", inputs=((8, 32),), outputs=((8, 32),), activation=relu1 or relu, line=11),
        call(3, "fc2", "Linear", inputs=((8, 32),), outputs=((8, 32),), own=1056, activation=stats(), line=12),
        call(4, "act2", "ReLU", inputs=((8, 32),), outputs=((8, 32),), activation=relu2 or relu, line=13),
        call(5, "out", "Linear", inputs=((8, 32),), outputs=((8, 2),), own=66, activation=out or stats(), line=14),
    ]
    grads = grads or {}
    params = []
    for module, mtype, line in (("fc1", "Linear", 10), ("fc2", "Linear", 12), ("out", "Linear", 14)):
        for kind in ("weight", "bias"):
            name = f"{module}.{kind}"
            params.append(param(name, module, mtype, line=line, **grads.get(name, {})))
    return snapshot(calls, params)
