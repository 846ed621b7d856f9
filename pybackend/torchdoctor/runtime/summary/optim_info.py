"""``stats()`` and the line of an optimizer, an LR scheduler, a ``GradScaler`` and a ``Generator``.

Only attributes are read (an optimizer's documented ``param_groups``, ``state`` and
``defaults``; a scheduler's ``get_last_lr()`` and ``last_epoch``), so user subclasses work and
nothing changes: no step, no draw from a generator, no entry added to ``optimizer.state`` (a
``defaultdict``: it is read with ``.get``). The few private fields read (a ``GradScaler``'s scale
and growth tracker, which have no public reader that does not sync a device, a
``SequentialLR``'s schedulers) are optional: without them the line says less.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Dict, List, Optional

from ...spelling import fmt_bytes, fmt_count, fmt_num

WARN = "⚠"

# Hyper-parameters shown on an optimizer's line, in this order, when its groups have them; the
# flags only when set (each changes what a step does).
_HYPER = ("lr", "betas", "momentum", "alpha", "weight_decay")
_FLAGS = ("nesterov", "amsgrad", "maximize", "centered", "decoupled_weight_decay")
# Groups listed one by one (``lr=1e-3/1e-4``) up to this many; more are a range.
PER_GROUP_UP_TO = 4
# Params whose step count is read; past it the line says over how many it looked.
STEPS_READ_UP_TO = 64


def read(get: Callable[..., Any], *args: Any, default: Any = None) -> Any:
    """``get(*args)``, or ``default`` when it raises: one refused read leaves the rest of the line."""
    try:
        return get(*args)
    except Exception:
        return default


def _numel(t: Any) -> int:
    return int(t.numel())


def _nbytes(t: Any) -> int:
    return int(t.numel()) * int(t.element_size())


def _items(entry: Dict[str, Any], key: str) -> List[Any]:
    return list(entry[key].values())


def number(value: Any) -> Any:
    """A Python number from a number or a one-element tensor (an lr may be a tensor), else None."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return value
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(value, torch.Tensor) and value.numel() == 1:
        return value.detach().reshape(()).item()
    return None


def value_text(value: Any) -> str:
    """``3e-4``, ``(0.9, 0.95)``, ``True``; ``?`` for what is neither a number nor a tuple of them."""
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(value_text(v) for v in value) + ")"
    n = read(lambda: number(value))
    if n is None:
        return "?"
    return str(n) if isinstance(n, bool) else fmt_num(n)


def per_group(texts: List[str], values: List[Any]) -> str:
    """One text if every group has it, ``a/b`` for a few groups, else the range ``[low, high]``."""
    if len(set(texts)) == 1:
        return texts[0]
    if len(texts) <= PER_GROUP_UP_TO:
        return "/".join(texts)
    numbers = [read(number, v) for v in values]
    if all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in numbers):
        return f"[{fmt_num(min(numbers))}, {fmt_num(max(numbers))}]"
    return f"{len(set(texts))} values"


# -- optimizers ------------------------------------------------------------------------------


def describe_optimizer(opt: Any) -> Dict[str, object]:
    info: Dict[str, object] = {"kind": "optimizer", "type": type(opt).__name__}
    groups = read(lambda: list(opt.param_groups))
    if not groups or not all(isinstance(g, dict) for g in groups):
        info["note"] = "no param_groups"
        return info
    info["groups"] = len(groups)
    info["hyper"] = _hyper(groups, _is_optim(opt, "AdamW"))
    info["keeps_state"] = _keeps_state(opt, groups)
    params: Dict[int, Any] = {}
    for group in groups:
        for p in read(list, group.get("params") or [], default=[]):
            params.setdefault(id(p), p)
    info["params"] = len(params)
    info["first_param_state"] = _is_optim(opt, "LBFGS")  # all its state sits on the first parameter
    sizes = [read(_numel, p) for p in params.values()]
    if all(s is not None for s in sizes):  # a lazy module's parameter has no size yet
        info["values"] = sum(sizes)
    state = read(lambda: opt.state)
    if isinstance(state, dict):
        info.update(read(_state_facts, state, list(params.values()), default={}))
    return info


def _is_optim(opt: Any, name: str) -> bool:
    cls = getattr(sys.modules.get("torch.optim"), name, None)
    return isinstance(cls, type) and isinstance(opt, cls)


def _keeps_state(opt: Any, groups: List[Dict[str, Any]]) -> Optional[bool]:
    """Whether its step leaves state per param: True for torch's optimizers (False for SGD
    without momentum), None (unknown) for the others."""
    if _is_optim(opt, "SGD"):
        return any(g.get("momentum") for g in groups)
    return True if type(opt).__module__.startswith("torch.optim") else None


def _hyper(groups: List[Dict[str, Any]], adamw: bool) -> List[List[str]]:
    out = []
    for key in _HYPER:
        if all(key in g for g in groups):
            values = [g[key] for g in groups]
            out.append([key, per_group([value_text(v) for v in values], values)])
    for key in _FLAGS:
        if adamw and key == "decoupled_weight_decay":
            continue  # what makes it AdamW
        flags = [g.get(key) is True for g in groups]
        if any(flags):
            out.append([key, "" if all(flags) else f"{sum(flags)}/{len(flags)} groups"])
    return out


def _state_facts(state: Dict[Any, Any], params: List[Any]) -> Dict[str, object]:
    """How many params have state, its bytes, and the range of their ``step`` counts. ``.get``
    (never ``[]``): ``optimizer.state`` is a defaultdict, and a lookup must not add entries."""
    torch = sys.modules["torch"]
    held = [s for s in (state.get(p) for p in params) if isinstance(s, dict) and s]
    facts: Dict[str, object] = {"with_state": len(held)}
    nbytes = 0
    for entry in held:
        for value in entry.values():
            # LBFGS keeps lists of tensors (its history of directions and steps)
            for item in value if isinstance(value, (list, tuple)) else (value,):
                if isinstance(item, torch.Tensor):
                    nbytes += read(_nbytes, item, default=0)
    facts["state_nbytes"] = nbytes
    steps = []
    for entry in held[:STEPS_READ_UP_TO]:
        step = read(number, entry.get("step"))
        if isinstance(step, (int, float)) and not isinstance(step, bool):
            steps.append(int(step))
    if steps:
        facts["steps"] = [min(steps), max(steps)]
        if len(held) > STEPS_READ_UP_TO:
            facts["steps_of"] = STEPS_READ_UP_TO
    return facts


def render_optimizer(info: Dict[str, Any]) -> str:
    """``AdamW lr=3e-4 betas=(0.9, 0.95) weight_decay=0.1 · 2 groups · 163 params (1.2M values)
    · step 120 · state 9.4 MiB``."""
    head = [str(info["type"])]
    if info.get("note"):
        return f"{head[0]} ({info['note']})"
    head += [f"{key}={text}" if text else key for key, text in info.get("hyper", [])]
    parts = [" ".join(head)]
    if info.get("groups", 1) != 1:
        parts.append(f"{info['groups']} groups")
    count = int(info.get("params") or 0)
    n_values = int(info.get("values") or 0)
    values = f" ({fmt_count(n_values)} value{'s' if n_values != 1 else ''})" if "values" in info else ""
    parts.append(f"{count} param{'s' if count != 1 else ''}{values}")
    held = info.get("with_state")
    if held == 0:  # known to keep state: "yet"; known to keep none (SGD without momentum): "no state"
        keeps = info.get("keeps_state")
        parts.append("no state" if not count or keeps is False else "no state yet" if keeps else "no state so far")
    elif held is not None:
        steps = info.get("steps")
        if steps:
            low, high = steps
            over = f" (first {info['steps_of']} params)" if info.get("steps_of") else ""
            parts.append(f"step {low}{over}" if low == high else f"steps {low}-{high}{over}")
        partial = f" for {held}/{count} params" if held < count and not info.get("first_param_state") else ""
        parts.append(f"state {fmt_bytes(info.get('state_nbytes'))}{partial}")
    return " · ".join(parts)


# -- LR schedulers ---------------------------------------------------------------------------

# Documented constructor arguments kept as attributes, per scheduler class (and its subclasses).
_SCHEDULER_FIELDS = {
    "StepLR": ("step_size", "gamma"),
    "MultiStepLR": ("milestones", "gamma"),
    "ConstantLR": ("factor", "total_iters"),
    "LinearLR": ("start_factor", "end_factor", "total_iters"),
    "ExponentialLR": ("gamma",),
    "PolynomialLR": ("total_iters", "power"),
    "CosineAnnealingLR": ("T_max", "eta_min"),
    "OneCycleLR": ("total_steps",),
    "CosineAnnealingWarmRestarts": ("T_0", "T_i", "T_cur"),
    "ReduceLROnPlateau": ("mode", "factor", "patience"),
}


def describe_scheduler(sched: Any) -> Dict[str, object]:
    info: Dict[str, object] = {"kind": "scheduler", "type": type(sched).__name__}
    opt = read(lambda: sched.optimizer)
    if opt is not None:
        info["optimizer"] = type(opt).__name__
        current = read(lambda: [group["lr"] for group in opt.param_groups])
        if current is not None:
            info["group_lr"] = [value_text(v) for v in current]
    last = read(lambda: list(sched.get_last_lr()))
    if last is not None:
        info["lr"] = [value_text(v) for v in last]
    epoch = read(lambda: sched.last_epoch)
    if isinstance(epoch, int):
        info["last_epoch"] = epoch
    info["fields"] = _scheduler_fields(sched)
    inner = read(lambda: list(vars(sched).get("_schedulers") or []), default=[])  # SequentialLR, ChainedScheduler
    if inner:
        info["schedulers"] = [type(s).__name__ for s in inner]
    if type(sched).__name__ == "ReduceLROnPlateau" or _is_plateau(sched):
        best, bad = read(lambda: sched.best), read(lambda: sched.num_bad_epochs)
        if best is not None:
            info["best"] = value_text(best)
        if isinstance(bad, int):
            info["bad_epochs"] = bad
        cooldown = read(lambda: sched.cooldown_counter)
        if isinstance(cooldown, int) and cooldown:
            info["cooldown"] = cooldown
    return info


def _is_plateau(sched: Any) -> bool:
    plateau = getattr(sys.modules.get("torch.optim.lr_scheduler"), "ReduceLROnPlateau", None)
    return isinstance(plateau, type) and isinstance(sched, plateau)


def _scheduler_fields(sched: Any) -> List[List[str]]:
    module = sys.modules.get("torch.optim.lr_scheduler")
    for name, fields in _SCHEDULER_FIELDS.items():
        cls = getattr(module, name, None)
        if isinstance(cls, type) and isinstance(sched, cls):
            out = []
            for field in fields:
                value = read(getattr, sched, field)
                if isinstance(value, str):
                    out.append([field, value])
                elif field == "milestones" and value is not None:
                    out.append([field, "[" + ", ".join(str(m) for m in sorted(value)) + "]"])
                elif value is not None:
                    out.append([field, value_text(value)])
            return out
    return []


def render_scheduler(info: Dict[str, Any]) -> str:
    """``CosineAnnealingLR on AdamW lr=2.5e-4 · last_epoch=120 · T_max=1000 eta_min=0``."""
    head = str(info["type"])
    if info.get("optimizer"):
        head += f" on {info['optimizer']}"
    lr = info.get("lr")
    if lr:
        head += f" lr={per_group(lr, lr)}"
        current = info.get("group_lr")
        if current and current != lr:
            head += f" (optimizer's lr now {per_group(current, current)})"
    parts = [head]
    if "last_epoch" in info:
        parts.append(f"last_epoch={info['last_epoch']}")
    if info.get("schedulers"):
        parts.append("of " + ", ".join(info["schedulers"]))
    fields = " ".join(f"{key}={text}" for key, text in info.get("fields", []))
    if fields:
        parts.append(fields)
    if "best" in info:
        parts.append(f"best={info['best']}")
    if "bad_epochs" in info:
        parts.append(f"{info['bad_epochs']} bad epoch{'s' if info['bad_epochs'] != 1 else ''}")
    if info.get("cooldown"):
        parts.append(f"cooldown {info['cooldown']}")
    return " · ".join(parts)


# -- GradScaler and Generator ----------------------------------------------------------------


def describe_grad_scaler(scaler: Any) -> Dict[str, object]:
    fields = read(lambda: vars(scaler), default={})
    info: Dict[str, object] = {"kind": "grad_scaler", "type": type(scaler).__name__}
    device = fields.get("_device")
    if isinstance(device, str):
        info["device"] = device
    info["enabled"] = bool(read(lambda: scaler.is_enabled(), default=fields.get("_enabled")))
    if not info["enabled"]:
        return info
    scale, tracker = fields.get("_scale"), fields.get("_growth_tracker")
    info["used"] = scale is not None
    info["scale"] = read(lambda: number(scale)) if scale is not None else read(lambda: number(fields["_init_scale"]))
    if tracker is None:  # not used yet: what it starts from (load_state_dict sets both: a resumed run)
        tracker = fields.get("_init_growth_tracker")
    if tracker is not None:
        info["growth_tracker"] = read(lambda: int(number(tracker)))
    info["growth_interval"] = read(lambda: int(scaler.get_growth_interval()))
    info["growth_factor"] = read(lambda: number(scaler.get_growth_factor()))
    info.update(_scaler_stage(fields.get("_per_optimizer_states")))
    return info


def _scaler_stage(states: Any) -> Dict[str, object]:
    """Whether an optimizer's grads were unscaled (``unscale_``) or it stepped this iteration,
    and whether an Inf/NaN was found in them (that step is skipped); ``update()`` resets this."""
    if not isinstance(states, dict):
        return {}
    stages, found = set(), False
    for state in list(states.values()):
        stage = getattr(read(state.get, "stage"), "name", None)
        if stage in ("UNSCALED", "STEPPED"):
            stages.add(stage)
            for flag in read(_items, state, "found_inf_per_device", default=[]):
                found = found or bool(read(number, flag, default=0))
    out: Dict[str, object] = {}
    if stages:
        out["stage"] = "stepped" if "STEPPED" in stages else "unscaled"
        out["found_inf"] = found
    return out


def render_grad_scaler(info: Dict[str, Any]) -> str:
    """``GradScaler cuda scale=32768 · 120/2000 clean steps to ×2``."""
    head = " ".join([str(info["type"])] + ([str(info["device"])] if info.get("device") else []))
    if not info.get("enabled"):
        return head + " disabled"
    parts = [f"{head} scale={value_text(info.get('scale'))}" + ("" if info.get("used") else " (not used yet)")]
    interval, factor = info.get("growth_interval"), value_text(info.get("growth_factor"))
    if info.get("growth_tracker") is not None and interval:
        parts.append(f"{info['growth_tracker']}/{interval} clean steps to ×{factor}")
    elif interval:
        parts.append(f"×{factor} after {interval} clean steps")
    if info.get("stage") == "unscaled":
        parts.append(
            "grads unscaled" + (f" {WARN} Inf/NaN in grads: step will be skipped" if info["found_inf"] else "")
        )
    elif info.get("stage") == "stepped":
        parts.append(
            "stepped, update() pending" + (f" {WARN} Inf/NaN in grads: step skipped" if info["found_inf"] else "")
        )
    return " · ".join(parts)


def describe_generator(gen: Any) -> Dict[str, object]:
    info: Dict[str, object] = {"kind": "generator", "type": type(gen).__name__}
    device = read(lambda: str(gen.device))
    if device:
        info["device"] = device
    seed = read(lambda: int(gen.initial_seed()))
    if seed is not None:
        info["seed"] = seed
    if device == "cpu" and seed is not None:
        info["as_seeded"] = read(lambda: _as_seeded(gen, seed))
    return info


def _as_seeded(gen: Any, seed: int) -> Optional[bool]:
    """Whether its state is still the one its seed gives (nothing drawn since): compared with a
    fresh generator's; the user's is only read (``get_state`` returns a copy)."""
    torch = sys.modules["torch"]
    fresh = torch.Generator(device="cpu")
    fresh.manual_seed(seed)
    return bool(torch.equal(gen.get_state(), fresh.get_state()))


def render_generator(info: Dict[str, Any]) -> str:
    """``Generator cpu initial_seed=42 (state as seeded)``."""
    words = [str(info["type"])] + ([str(info["device"])] if info.get("device") else [])
    if "seed" in info:
        words.append(f"initial_seed={info['seed']}")
    if info.get("as_seeded"):
        words.append("(state as seeded)")
    return " ".join(words)
