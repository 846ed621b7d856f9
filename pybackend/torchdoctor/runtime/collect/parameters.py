"""The snapshot's parameters: each one's values checked and its gradient from the right backward.

Part of ``snapshot.py`` (the schema is in its docstring): :func:`parameters` gives the
``parameters`` rows in the order the forward reached their modules, and the ``gradients``
envelope that says which backward the statistics come from.
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from .trace import version_of

VALUE_CHECK_LIMIT = 50_000_000  # parameter elements: above, parameter values are not checked


def parameters(collector, the_pass, pass_root, root, first_call, locations):
    """The ``parameters`` rows (model order) and the ``gradients`` envelope of a snapshot."""
    from .stats import value_check

    named = list(root.named_parameters())
    state = collector.grads.state_for(pass_root)
    record = state.latest if state is not None else None
    latest = _entries(record)
    earlier = _entries(state.sampled) if state is not None and state.sampled is not record else {}
    if record is not None:
        source = "backward"
    elif any(p.grad is not None for _, p in named):
        source = "current"
    else:
        source = "none"
    check_values = sum(int(p.numel()) for _, p in named) <= VALUE_CHECK_LIMIT
    module_of = {}
    for mname, m in root.named_modules():
        for pname, _ in m.named_parameters(recurse=False):
            module_of.setdefault((mname + "." if mname else "") + pname, (mname, type(m).__name__))
    rows = []
    for position, (name, p) in enumerate(named):
        mpath, mtype = module_of.get(name, (name.rpartition(".")[0], "?"))
        try:
            grad, note, changed = _gradient(p, source, latest, earlier, state)
        except Exception as exc:
            grad, note, changed = None, f"statistics failed: {type(exc).__name__}: {exc}"[:300], False
        values = None
        if check_values:
            try:
                values = value_check(p)
            except Exception:
                values = None
        order = first_call.get(mpath)
        rows.append(
            (
                order if order is not None else 10**9,
                position,
                {
                    "name": name,
                    "module": mpath,
                    "moduleType": mtype,
                    "shape": [int(d) for d in p.shape],
                    "dtype": str(p.dtype).replace("torch.", ""),
                    "device": str(p.device),
                    "numel": int(p.numel()),
                    "requiresGrad": bool(p.requires_grad),
                    "grad": grad,
                    "gradNote": note,
                    "changedSinceBackward": changed,
                    "values": values,
                    "order": order,
                    "location": locations.get(mpath),
                },
            )
        )
    rows.sort(key=lambda r: (r[0], r[1]))
    gradients = {"source": source, "backwardNumber": None, "fromPass": None, "latestPass": False, "note": None}
    if record is not None:
        gradients.update(
            backwardNumber=record.backward_number,
            fromPass=record.pass_number,
            latestPass=record.pass_number == the_pass.number,
        )
        if record.pass_number != the_pass.number:
            gradients["note"] = (
                f"gradients of the backward after forward {record.pass_number}; "
                f"the forward shown is number {the_pass.number}"
            )
    elif source == "current":
        gradients["note"] = "the parameters' current .grad (no backward through the model's output was seen)"
    else:
        gradients["note"] = "no gradients yet: pause after loss.backward()"
    return [r[2] for r in rows], gradients


def _entries(record) -> Dict[int, Any]:
    out = {}
    for entry in record.entries if record is not None else ():
        p = entry.param()
        if p is not None:
            out[id(p)] = entry
    return out


def _gradient(p, source, latest, earlier, state) -> Tuple[Optional[dict], Optional[str], bool]:
    """``(stats, note, changed since the backward)`` for one parameter.

    The moment is fixed, so the same stop always shows the same numbers: the gradient as it is
    at the pause, exactly, whenever the last backward's gradient is still alive ("live"; after
    the program's clipping when it paused after ``clip_grad_norm_``, then ``changed`` says so):
    what ``optimizer.step()`` uses. Only a gradient already freed (``zero_grad()``) is described
    by the reductions taken at the end of that backward ("backward", before any clipping), or
    of the latest sampled one ("earlier").
    """
    from .reduce import grad_from_row
    from .stats import grad_stats

    if source == "current":
        if p.grad is None:
            return None, _no_grad_note(p, "any backward seen"), False
        stats = grad_stats(p.grad)
        stats["source"] = "current"
        return stats, None, False
    if source == "none":
        return None, _no_grad_note(p, "any backward"), False
    entry = latest.get(id(p))
    if entry is None:
        return None, _no_grad_note(p, "the last backward"), False
    g = entry.grad()
    if g is not None:
        stats = grad_stats(g)
        stats["source"] = "live"
        return stats, None, version_of(g) != entry.version
    if entry.partials is not None:
        stats = grad_from_row(entry.count, entry.partials.tolist())
        stats["source"] = "backward"
        return stats, "freed by zero_grad() since the backward: as the backward left it (before any clipping)", False
    old = earlier.get(id(p))
    if old is not None and old.partials is not None:
        stats = grad_from_row(old.count, old.partials.tolist())
        stats["source"] = "earlier"
        stats["fromBackward"] = state.sampled.backward_number
        return stats, "freed by zero_grad() since the backward: from an earlier backward (before any clipping)", False
    return None, "freed by zero_grad() since the backward, which was not sampled", False


def _no_grad_note(p: Any, when: str) -> str:
    if not p.requires_grad:
        return "frozen (requires_grad=False)"
    return f"no gradient from {when}: this parameter did not contribute to the loss"
