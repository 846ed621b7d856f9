"""The cross-rank checks, from the facts every rank noted (``facts.py``), after the job.

Each finding is a report like an anomaly's (``kind``, ``sentence``, ``rank``, ``step``), so it
is printed, written to ``--json`` and counted in the exit status the same way.

- ``replicas_diverged``: after an optimizer step, a rank's parameters differ from rank 0's
  beyond rounding (relative 1e-5 on the sum or sum of squares of some tensor). DDP keeps replicas
  identical; they drift when a rank updates weights outside DDP (a rank-dependent in-place edit,
  an unsynchronised buffer copied into weights, a different optimizer state).
- ``same_batches_on_every_rank``: with 2+ ranks, every rank's first training batches are
  byte-identical: each reads the whole dataset, so N ranks do the work of one with an N-times
  larger effective learning rate step. Use ``DistributedSampler``.
- ``sampler_without_set_epoch``: a shuffling ``DistributedSampler`` iterated twice at the same
  epoch: every epoch visits the data in the same order. Call ``sampler.set_epoch(epoch)`` at the
  start of each epoch.
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List

RELATIVE = 1e-5
ABSOLUTE = 1e-8


def read(folder: str) -> Dict[int, List[Dict[str, Any]]]:
    """rank -> its facts, in the order it noted them."""
    facts: Dict[int, List[Dict[str, Any]]] = {}
    for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
        stem = name.split(".")[0]
        if not stem.isdigit():
            continue
        try:
            with open(os.path.join(folder, name), encoding="utf-8") as lines:
                facts[int(stem)] = [json.loads(line) for line in lines if line.strip()]
        except (OSError, ValueError):
            continue
    return facts


def findings(facts: Dict[int, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    if len(facts) < 2:
        return []
    return _diverged(facts) + _same_batches(facts) + _set_epoch(facts)


def _report(kind: str, rank: Any, step: Any, sentence: str) -> Dict[str, Any]:
    return {"kind": kind, "rank": rank, "step": step, "sentence": sentence, "action": "log", "distributed": True}


def _by_step(facts: List[Dict[str, Any]], fact: str) -> Dict[int, Dict[str, Any]]:
    return {f["step"]: f for f in facts if f.get("fact") == fact}


def _diverged(facts: Dict[int, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    ranks = sorted(facts)
    base = _by_step(facts[ranks[0]], "params")
    for step in sorted(base):
        for rank in ranks[1:]:
            other = _by_step(facts[rank], "params").get(step)
            if other is None or len(other["sums"]) != len(base[step]["sums"]):
                continue
            worst = max(
                (abs(a - b) / max(abs(a), abs(b), ABSOLUTE) for a, b in zip(base[step]["sums"], other["sums"])),
                default=0.0,
            )
            if worst > RELATIVE:
                sentence = (
                    f"the replicas diverged: after optimizer step {step}, rank {rank}'s parameters differ from "
                    f"rank {ranks[0]}'s (relative difference {worst:.2g}); DDP keeps them identical, so something "
                    "updates weights outside it on one rank (an in-place edit under `if rank == ...`, a buffer "
                    "copied into weights, a different optimizer): make every rank do the same update"
                )
                return [_report("replicas_diverged", rank, step, sentence)]
    return []


def _same_batches(facts: Dict[int, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    digests = {
        rank: [f["digest"] for f in sorted(_by_step(fs, "batch").values(), key=lambda f: f["step"])]
        for rank, fs in facts.items()
    }
    lengths = {len(d) for d in digests.values()}
    if min(lengths) < 2 or len({tuple(d[: min(lengths)]) for d in digests.values()}) != 1:
        return []
    sentence = (
        f"every rank trains on the same batches: the first {min(lengths)} batches are identical on all "
        f"{len(facts)} ranks, so they do the work of one (and each gradient step is the same step {len(facts)} "
        "times); give the DataLoader a `DistributedSampler(dataset)` so each rank reads its own shard"
    )
    return [_report("same_batches_on_every_rank", None, 1, sentence)]


def _set_epoch(facts: Dict[int, List[Dict[str, Any]]]) -> List[Dict[str, Any]]:
    rank = min(facts)
    epochs: Dict[Any, List[int]] = {}
    for f in facts[rank]:
        if f.get("fact") == "sampler" and f.get("shuffle"):
            epochs.setdefault(f.get("sampler"), []).append(f["epoch"])
    for seen in epochs.values():
        if len(seen) >= 2 and len(set(seen)) == 1:
            sentence = (
                f"a shuffling `DistributedSampler` was iterated {len(seen)} times, always at epoch {seen[0]}: "
                "`set_epoch` is never called, so every epoch visits the samples in the same order; "
                "call `sampler.set_epoch(epoch)` at the start of each epoch"
            )
            return [_report("sampler_without_set_epoch", None, None, sentence)]
    return []
