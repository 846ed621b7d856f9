"""The healthy corpus (``healthy/``): correct, common training programs the watch must never report.

Each script is written in our own words in the shape of a real recipe (AMP with a GradScaler
that backs off, bfloat16 autocast, a DCGAN-like loop, LoRA and adaLN-Zero with gradient
accumulation, a VAE with a summed BCE, clipping of huge raw norms, ``torch.compile``, noisy
mini-batch losses; from the 2026-12-06 corpus: a DiT-like diffusion model with an EMA copy, a
VQ-VAE whose codebook is a new parameter every forward, a GCN validated in eval mode after each
step, a CLIP-like contrastive model evaluated under no_grad, an AWD-style LSTM at SGD lr 30; from
the 2026-12-07 round: a top-k router scattering into ``-inf``, a pointer decoder returning masked
log-probabilities, attention scores with BERT's additive mask, triplet losses at their floor, a
raw-price regression, a flow's per-sample log-likelihood in nats). Each runs under ``torchdoctor run --json`` in break mode: no report at all
(neither anomaly nor advice), exit status 0, the script's own output printed. One driver process
runs them all (importing torch costs more than most scripts), one torch thread.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from support.anomaly import PYBACKEND

HEALTHY = Path(__file__).resolve().parent / "healthy"
SCRIPTS = sorted(p.name for p in HEALTHY.glob("*.py"))
# compiled_model.py gets an inductor cache of its own: torch 2.13's inductor cache does not tell
# kernel sets apart, so a run with ATEN_CPU_CAPABILITY=default (one of `make test-portable`'s)
# after an avx2 run reused the vectorised C++ of that run and failed to build it ("at::vec has not
# been declared"), with the watch or without it (reproduced both ways). One cache per kernel set.

DRIVER = textwrap.dedent("""
    import contextlib, io, json, sys, time
    from torchdoctor.cli import main
    results = {}
    for name, argv in json.loads(sys.argv[1]).items():
        out, err = io.StringIO(), io.StringIO()
        started = time.monotonic()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(argv)
        results[name] = [status, out.getvalue(), err.getvalue(), time.monotonic() - started]
    print(json.dumps(results))
""")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("healthy")
    jobs = {name: ["run", "--json", str(tmp / f"{name}.json"), str(HEALTHY / name)] for name in SCRIPTS}
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND), OMP_NUM_THREADS="1")
    kernels = os.environ.get("ATEN_CPU_CAPABILITY") or "native"
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(tempfile.gettempdir(), f"torchdoctor-inductor-{kernels}")
    env.pop("TORCHDOCTOR_ANOMALY", None)
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(jobs)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,  # 19 programs, one compiled from scratch, on a shared 2-core machine
        cwd=str(HEALTHY),
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout.strip().splitlines()[-1])
    return {
        name: (status, out, err, json.loads((tmp / f"{name}.json").read_text())["anomalies"])
        for name, (status, out, err, _) in results.items()
    }


def test_the_corpus_covers_the_recipes_of_issue_12():
    assert {
        "amp_fp16_scaler.py",
        "amp_fp16_unscale_clip.py",
        "bf16_autocast.py",
        "dcgan_like.py",
        "lora_accumulation.py",
        "vae_sum_bce.py",
        "clip_huge_norms.py",
        "compiled_model.py",
        "noisy_regression.py",
        "noisy_classifier.py",
        "dataloader_workers.py",
        "spawn_hogwild.py",
    } <= set(SCRIPTS)


@pytest.mark.timeout(900)  # the fixture runs every program once, the first test waits for it
@pytest.mark.parametrize("name", SCRIPTS)
def test_a_healthy_program_is_never_reported(runs, name):
    status, out, err, reports = runs[name]
    assert reports == [], [r["sentence"] for r in reports]
    assert status == 0 and "[torchdoctor]" not in err, err[-2000:]
    assert out.strip(), "the script ran to its end and printed its summary"
