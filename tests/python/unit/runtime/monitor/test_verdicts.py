"""Every verdict on synthetic series; healthy noisy curves must stay silent."""

from __future__ import annotations

import math
import random

from torchdoctor.runtime.monitor.verdicts import Verdicts

MiB = 2**20


def step(n, loss=None, series="opt0", data=0.001, compute=0.01, ratio=None, rss=300 * MiB, lr=1e-3, cuda=None):
    return {
        "step": n,
        "series": series,
        "loss": loss,
        "lr": [lr],
        "grad_norm": 0.5,
        "update_ratio": None if ratio is None else [ratio],
        "time": {"data": data, "forward": compute / 2, "backward": compute / 2, "optimizer": 0.0, "other": 0.0},
        "rss": rss,
        "cuda": cuda,
    }


def run(records, evals=()):
    v = Verdicts()
    found = []
    evals = dict(evals)
    for rec in records:
        found += v.step(rec)
        if rec["step"] in evals:
            found += v.evaluation(rec["step"], evals[rec["step"]])
    return v, {f["kind"]: f for f in found}


def healthy_losses(n, seed, noise=0.15):
    rng = random.Random(seed)
    return [2.0 * math.exp(-i / 150) + 0.3 + rng.gauss(0, noise) * (0.5 + math.exp(-i / 150)) for i in range(n)]


def test_healthy_noisy_curves_stay_silent():
    for seed in range(20):
        rng = random.Random(seed)
        losses = healthy_losses(600, seed)
        records = [
            step(
                i + 1,
                loss=abs(v),
                data=rng.uniform(0.0, 0.004),
                ratio=rng.uniform(2e-3, 2e-2) if i % 10 == 9 else None,
                rss=(300 + rng.uniform(-3, 3)) * MiB + min(i, 20) * MiB,
            )
            for i, v in enumerate(losses)
        ]
        # validation: falling, noisy, flattening
        evals = {i: 2.0 * math.exp(-i / 150) + 0.35 + rng.gauss(0, 0.01) for i in range(50, 601, 50)}
        _, found = run(records, evals)
        assert found == {}, (seed, {k: f["sentence"] for k, f in found.items()})


def test_plateau_with_noise_after_learning_is_silent():
    rng = random.Random(3)
    losses = [1.5 * math.exp(-i / 20) + 0.2 + rng.gauss(0, 0.05) for i in range(400)]
    _, found = run([step(i + 1, loss=abs(v)) for i, v in enumerate(losses)])
    assert "not_decreasing" not in found and "oscillating" not in found


def test_not_decreasing():
    rng = random.Random(0)
    _, found = run([step(i + 1, loss=1.38 + rng.gauss(0, 0.02), lr=1e-6) for i in range(60)])
    f = found["not_decreasing"]
    assert f["range"] == [1, 50] and f["severity"] == "warning" and "1e-06" in f["sentence"]


def test_oscillating():
    _, found = run([step(i + 1, loss=1.6 if i % 2 else 0.4, lr=2.0) for i in range(60)])
    assert "oscillating" in found and found["oscillating"]["range"][1] == 50


def test_nan_and_spike():
    losses = [1.0 - 0.001 * i for i in range(30)] + [40.0] + [0.9] * 5 + [float("nan")]
    _, found = run([step(i + 1, loss=v) for i, v in enumerate(losses)])
    assert found["loss_spike"]["step"] == 31 and found["loss_spike"]["severity"] == "warning"
    assert found["loss_nan"]["step"] == 37 and found["loss_nan"]["severity"] == "error"


def test_overfitting_names_the_best_evaluation():
    train = [2.0 * math.exp(-i / 30) + 0.01 for i in range(200)]
    evals = {20: 1.5, 40: 1.2, 60: 1.1, 80: 1.15, 100: 1.25, 120: 1.4}
    _, found = run([step(i + 1, loss=v) for i, v in enumerate(train)], evals)
    f = found["overfitting"]
    assert f["range"] == [60, 120] and "step 60" in f["sentence"] and "Early-stopping" in f["sentence"]


def test_validation_noise_without_rise_is_not_overfitting():
    rng = random.Random(1)
    train = [2.0 * math.exp(-i / 30) + 0.3 for i in range(400)]
    evals = {i: 0.5 + rng.gauss(0, 0.003) for i in range(20, 401, 20)}
    _, found = run([step(i + 1, loss=v) for i, v in enumerate(train)], evals)
    assert "overfitting" not in found


def test_validation_rising_while_training_is_flat_is_not_overfitting():
    train = [1.0] * 200
    evals = {20: 1.0, 40: 1.1, 60: 1.2, 80: 1.3}
    _, found = run([step(i + 1, loss=v) for i, v in enumerate(train)], evals)
    assert "overfitting" not in found


def test_underfitting():
    rng = random.Random(2)
    train = [1.1 + rng.gauss(0, 0.01) for _ in range(80)]
    evals = {20: 1.10, 40: 1.10, 60: 1.11, 80: 1.10}
    _, found = run([step(i + 1, loss=v) for i, v in enumerate(train)], evals)
    assert "underfitting" in found


def test_input_bound_and_not_when_compute_dominates():
    _, found = run([step(i + 1, loss=1.0 - i * 0.01, data=0.03, compute=0.01) for i in range(20)])
    assert found["input_bound"]["range"] == [1, 10] and "78%" not in found["input_bound"]["sentence"]
    assert "75%" in found["input_bound"]["sentence"]
    _, found = run([step(i + 1, loss=1.0 - i * 0.01, data=0.009, compute=0.01) for i in range(40)])
    assert "input_bound" not in found


def test_one_preempted_loader_step_is_not_input_bound():
    """A healthy 1 ms step (data 25% of it) where the OS preempted the process once inside the
    loader: that one step's 20 ms carries the window's sum past half, yet the loader is not slow."""
    records = [step(i + 1, loss=1.0 - i * 0.01, data=0.00025, compute=0.00075) for i in range(40)]
    records[12] = step(13, loss=0.88, data=0.02, compute=0.00075)
    _, found = run(records)
    assert "input_bound" not in found


def test_a_sub_millisecond_loader_is_not_input_bound_whatever_its_share():
    """A tiny MLP on a TensorDataset: the loader is 60% of a 0.4 ms step, yet a worker process
    would cost more per batch than the whole loader: no advice to add workers."""
    records = [step(i + 1, loss=1.0 - i * 0.01, data=0.00024, compute=0.00016) for i in range(40)]
    _, found = run(records)
    assert "input_bound" not in found
    slow = [step(i + 1, loss=1.0 - i * 0.01, data=0.0024, compute=0.0016) for i in range(40)]
    assert "input_bound" in run(slow)[1]  # the same shares ten times slower: the loader is the bottleneck


def test_a_loader_that_stalls_in_bursts_is_input_bound():
    """Workers that refill in bursts: every fourth step waits 60 ms for data, the others none."""
    records = [step(i + 1, loss=1.0 - i * 0.01, data=0.06 if i % 4 == 3 else 0.0, compute=0.01) for i in range(40)]
    _, found = run(records)
    assert "input_bound" in found


def test_update_ratio_high_and_low():
    _, found = run([step(i + 1, loss=1.0, ratio=0.3 if i % 10 == 9 else None, lr=3.0) for i in range(50)])
    assert found["update_ratio_high"]["range"] == [10, 50]
    _, found = run([step(i + 1, loss=1.0, ratio=1e-7 if i % 10 == 9 else None, lr=1e-7) for i in range(50)])
    assert "update_ratio_low" in found and "raise the learning rate" in found["update_ratio_low"]["sentence"]


def test_memory_growth_and_warm_up_plateau():
    _, found = run([step(i + 1, loss=1.0, rss=300 * MiB + i * MiB) for i in range(120)])
    assert "memory_growth" in found and "1 MiB per step" in found["memory_growth"]["sentence"]
    # allocator warm-up then flat: silent
    rng = random.Random(0)
    _, found = run(
        [step(i + 1, loss=1.0, rss=300 * MiB + min(i, 30) * 2 * MiB + rng.uniform(0, MiB)) for i in range(300)]
    )
    assert "memory_growth" not in found


def test_cuda_memory_high():
    v = Verdicts()
    v.cuda_total = 80 * 2**30
    found = v.step(step(1, loss=1.0, cuda={"allocated": 70 * 2**30, "reserved": 75 * 2**30, "peak": 75 * 2**30}))
    assert [f["kind"] for f in found] == ["cuda_memory_high"]


def test_several_series_never_mix_and_gan_is_not_flat():
    rng = random.Random(4)
    records = []
    for i in range(200):
        records.append(step(i + 1, loss=1.3 + rng.gauss(0, 0.05), series="opt0"))
        records.append(step(i + 1, loss=0.7 + 0.001 * i + rng.gauss(0, 0.05), series="opt1"))
    _, found = run(records)
    assert "not_decreasing" not in found


def test_thresholds_override():
    v = Verdicts({"inputBoundFraction": 0.9})
    found = []
    for i in range(20):
        found += v.step(step(i + 1, loss=1.0 - i * 0.01, data=0.03, compute=0.01))
    assert found == []
