"""The cross-rank checks on facts written by hand (no torch, no processes)."""

from __future__ import annotations

from torchdoctor.distributed import consistency


def params(step, sums):
    return {"fact": "params", "step": step, "sums": sums}


def batch(step, digest):
    return {"fact": "batch", "step": step, "digest": digest}


def sampler(epoch, ident=1, shuffle=True):
    return {"fact": "sampler", "sampler": ident, "epoch": epoch, "shuffle": shuffle}


def kinds(facts):
    return [f["kind"] for f in consistency.findings(facts)]


def test_replicas_in_step_to_rounding_are_silent_and_a_drift_is_named() -> None:
    same = {0: [params(1, [1.0, 2.0])], 1: [params(1, [1.0 + 1e-9, 2.0])]}
    assert kinds(same) == []
    drift = {0: [params(1, [1.0, 2.0]), params(2, [1.1, 2.2])], 1: [params(1, [1.0, 2.0]), params(2, [1.2, 2.2])]}
    (found,) = consistency.findings(drift)
    assert found["kind"] == "replicas_diverged" and found["rank"] == 1 and found["step"] == 2


def test_same_batches_need_two_identical_steps_on_every_rank() -> None:
    assert kinds({0: [batch(1, "a"), batch(2, "b")], 1: [batch(1, "a"), batch(2, "b")]}) == [
        "same_batches_on_every_rank"
    ]
    assert kinds({0: [batch(1, "a"), batch(2, "b")], 1: [batch(1, "a"), batch(2, "c")]}) == []  # shards
    assert kinds({0: [batch(1, "a")], 1: [batch(1, "a")]}) == []  # one batch proves nothing


def test_set_epoch_is_judged_per_sampler_and_only_when_it_shuffles() -> None:
    assert kinds({0: [sampler(0), sampler(0)], 1: []}) == ["sampler_without_set_epoch"]
    assert kinds({0: [sampler(0), sampler(1)], 1: []}) == []
    assert kinds({0: [sampler(0, shuffle=False), sampler(0, shuffle=False)], 1: []}) == []
    # A train sampler with set_epoch and a validation sampler iterated once each epoch at epoch 0...
    assert kinds({0: [sampler(0, 1), sampler(0, 2), sampler(1, 1)], 1: []}) == []
    # ...but iterated twice at the same epoch, the validation one is flagged too (it shuffles).
    assert kinds({0: [sampler(0, 1), sampler(0, 2), sampler(1, 1), sampler(0, 2)], 1: []}) == [
        "sampler_without_set_epoch"
    ]


def test_one_rank_has_nothing_to_compare() -> None:
    assert kinds({0: [batch(1, "a"), batch(2, "b"), sampler(0), sampler(0)]}) == []
