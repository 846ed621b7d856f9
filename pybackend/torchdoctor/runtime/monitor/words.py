"""The monitor's sentences: what was seen, the likely cause, the next step. Stdlib only."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ...spelling import fmt_bytes
from .transfers import FAST_COPY


def _g(x: Optional[float]) -> str:
    return "?" if x is None else f"{x:.4g}"


def _lr(lrs: Optional[List[float]]) -> str:
    if not lrs:
        return "unknown"
    return ", ".join(f"{v:.3g}" for v in sorted(set(lrs)))


def _name(series: str) -> str:
    return "" if series in ("opt0", "backward") else f" ({series})"


def loss_nan(series: str, step: int, value: float) -> str:
    return (
        f"The training loss{_name(series)} is {value} at step {step}. Likely cause: a numerical "
        "instability (a log or a division of zero, a learning rate too high). Next: run with "
        "`torchdoctor run --anomaly break` to find the layer that made it, and lower the learning rate."
    )


def spike(series: str, step: int, hit: Dict[str, Any]) -> str:
    return (
        f"The training loss{_name(series)} jumped to {_g(hit['value'])} at step {step}, "
        f"{hit['ratio']:.1f}x the median of the {hit['window']} steps before. Likely cause: a bad batch or "
        "a learning rate too high. Next: look at that batch; clip the gradients or lower the learning rate."
    )


def not_decreasing(series: str, first: int, step: int, hit: Dict[str, Any], lrs: Optional[List[float]]) -> str:
    return (
        f"The training loss{_name(series)} is not decreasing over steps {first}-{step}: the median of the "
        f"last {hit['window']} steps is {_g(hit['last_mean'])}, the first {hit['window']} {_g(hit['first_mean'])}. "
        f"Likely cause: a learning rate too low (now {_lr(lrs)}) or a bug in the model or loss. Next: try 3 "
        "learning rates 10x apart (1e-2, 1e-3, 1e-4), then the overfit-one-batch check."
    )


def oscillating(series: str, start: int, step: int, hit: Dict[str, Any], lrs: Optional[List[float]]) -> str:
    return (
        f"The training loss{_name(series)} oscillates over steps {start}-{step}: it swings by "
        f"{_g(hit['swing'])} a step around {_g(hit['level'])} with no net progress. Likely cause: a learning "
        f"rate too high (now {_lr(lrs)}). Next: lower it 3-10x, or add warm-up or gradient clipping."
    )


def input_bound(a: int, b: int, fraction: float, data_s: float, step_s: float, loader: str) -> str:
    """``loader``: the advice for the script's DataLoader (``output._hint``), which knows whether
    a GPU is in use (``loader_advice``)."""
    where = loader or "Set `num_workers` > 0 on the DataLoader"
    return (
        f"Data loading takes {fraction:.0%} of each training step (steps {a}-{b}: {data_s * 1e3:.1f} ms of "
        f"{step_s * 1e3:.1f} ms): the model waits for its batches. {where}."
    )


def loader_advice(loader: Dict[str, Any], at: str, gpu: bool) -> str:
    """What to change on an input-bound DataLoader. ``pin_memory`` only speeds copies to a GPU,
    and only with a GPU does "a faster one will not help" mean anything: on a CPU-only run
    (pytorch/examples' VAE on a laptop) neither is said."""
    workers = loader["num_workers"]
    text = f"Set `num_workers` > 0 (now {workers})" if not workers else f"Raise `num_workers` (now {workers})"
    if gpu and not loader.get("pin_memory"):
        text += f" and `pin_memory=True` (now {loader['pin_memory']})"
    text += f" on the DataLoader{at}"
    return text + ("; a faster GPU will not help" if gpu else "")


def ratio_high(series: str, group: int, ratio: float, span: List[int], lr: Optional[float]) -> str:
    return (
        f"The update-to-weight ratio of param group {group}{_name(series)} is {ratio:.2g} (median of steps "
        f"{span[0]}-{span[1]}), far above ~1e-3: each step changes the weights by {ratio:.1%}. Likely cause: "
        f"a learning rate too high (now {_g(lr)}). Next: lower it about {min(max(ratio / 1e-3, 3), 100):.0f}x."
    )


def ratio_low(series: str, group: int, ratio: float, span: List[int], lr: Optional[float], grad_norm: Any) -> str:
    return (
        f"The update-to-weight ratio of param group {group}{_name(series)} is {ratio:.2g} (median of steps "
        f"{span[0]}-{span[1]}), far below ~1e-3: the weights barely move. Next: raise the learning rate (now "
        f"{_g(lr)}), or look for vanishing gradients (gradient norm {_g(grad_norm)})."
    )


def memory_growth(what: str, span: List[int], per_step: float, total: float, holder: str) -> str:
    name = "CUDA allocated memory" if what == "cuda" else "Process memory (RSS)"
    held = holder or "a list that keeps loss tensors with their graphs (`losses.append(loss)`, TD007)"
    return (
        f"{name} grew by {_bytes(per_step)} per step over steps {span[0]}-{span[1]} "
        f"({_bytes(total)} in all): something keeps every step alive. Likely cause: {held}. "
        "Next: keep `loss.item()` (or `loss.detach()`) instead of the tensor."
    )


def cuda_high(step: int, reserved: float, total: float) -> str:
    return (
        f"CUDA memory reserved is {reserved / total:.0%} of the device ({_bytes(reserved)} of "
        f"{_bytes(total)}) at step {step}: close to an out-of-memory error. Next: a smaller batch, "
        "mixed precision (AMP), gradient checkpointing."
    )


def overfitting(k: int, best: Tuple[int, float, Any], last: Tuple[int, float, Any], start: float, end: float) -> str:
    return (
        f"The validation loss rose for {k} evaluations, from {_g(best[1])} at step {best[0]} to {_g(last[1])} "
        f"at step {last[0]}, while the training loss fell from {_g(start)} to {_g(end)}: overfitting. "
        f"Early-stopping point: the evaluation at step {best[0]}. Next: keep the checkpoint from step "
        f"{best[0]}; add regularisation (weight decay, dropout, data augmentation) or more data."
    )


def underfitting(span: List[int], t0: float, t1: float, v0: float, v1: float, lrs: Optional[List[float]]) -> str:
    return (
        f"Training and validation losses are both high and flat over steps {span[0]}-{span[1]} (training "
        f"{_g(t0)} -> {_g(t1)}, validation {_g(v0)} -> {_g(v1)}): the model is not learning (underfitting). "
        f"Next: a higher learning rate (now {_lr(lrs)}), a bigger model, longer training; check the data "
        "and the loss function."
    )


def _bytes(n: float) -> str:
    return fmt_bytes(int(n))


def model_on_cpu(facts: Dict[str, Any], step: int) -> str:
    acc = facts["accelerator"]
    pick = (
        'torch.device("cuda" if torch.cuda.is_available() else "cpu")'
        if acc == "cuda"
        else "torch.accelerator.current_accelerator()"
    )
    return (
        f"All {facts['params']} parameter tensors of the model ({facts['values']:,} values) are on the CPU at "
        f"step {step}, while an accelerator ({acc}) is available and nothing has been allocated on it: the "
        "model was never moved, so training runs on the CPU, which for most models is much slower than "
        f"on the {acc} (not measured here). Likely cause: a missing `model.to(device)`. "
        f"Next: `device = {pick}`, `model.to(device)` "
        "before creating the optimizer, and `.to(device)` on each batch. If training on the CPU is what you "
        "want, ignore this."
    )


def cpu_batches(e: Dict[str, Any], loader: str) -> str:
    a, b = e["range"]
    floor = e["bytes"] / FAST_COPY
    seen = (
        f"In {e['shown']} of the {e['steps']} steps {a}-{b} the batch the DataLoader yielded was on the CPU in pageable (not "
        f"pinned) memory and reached the model on the {e['device']} device: the time from the DataLoader's "
        f"batch to the model's forward, where it is copied, was {e['share']:.0%} of the step ("
        f"{e['gap_s'] * 1e3:.1f} ms of {e['step_s'] * 1e3:.1f} ms); the batch is {_bytes(e['bytes'])}, at "
        f"least {floor * 1e3:.1f} ms to copy."
    )
    if e["busy"] == 0:
        sure = (
            " The device had no queued work when those batches arrived, so this time is the copy (and any "
            "CPU work your loop does on the batch before the model)."
        )
    else:
        some = f"in {e['busy']} of those steps " if e["busy"] else ""
        sure = (
            f" The device may still have had queued work {some}when the batch arrived; a blocking copy waits "
            f"for it, so part of this time may be that wait: the copy itself is at least {floor * 1e3:.1f} ms."
        )
    where = f" on the DataLoader{loader}" if loader else " on the DataLoader"
    return (
        f"{seen}{sure} Likely cause: each batch is built on the CPU and copied with a blocking `.to(device)`. "
        f"Next: `pin_memory=True`{where} and `.to(device, non_blocking=True)`, or build the batch on the "
        "device (a dataset kept on the GPU, GPU-side transforms)."
    )
