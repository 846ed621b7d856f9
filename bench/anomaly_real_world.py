"""Does the anomaly watch stay silent on real, healthy training programs nobody here wrote, and
does it catch a bug planted in them?

The programs are never committed: each project's tree is extracted from its git mirror
(``<mirrors>/<owner+name>/repo``, what the search tool's ``fetch`` brings) into a scratch folder
and run there, unmodified, under ``torchdoctor run --anomaly log``. There is no network here, so a
small start-up shim (written by this script, put on ``PYTHONPATH`` as ``sitecustomize``) turns
torchvision's downloadable datasets (MNIST, CIFAR10, ...) into random datasets of the same shapes
and attributes; scripts whose data ships with the project use it. Every run is short (one epoch
of a few thousand samples, or the script's own iteration flags).

Per program, two questions:

1. Healthy: is any anomaly reported (a false alarm: it would stop a debug session and make
   ``torchdoctor run`` exit 1)? Does the run end as the plain ``python script.py`` run ends
   (same exit status: the watch must not break anything)? Advice lines (loss trends) are
   counted apart: they never stop a run.
2. With ``--inject KIND`` the shim plants one bug when the script builds its first optimizer
   (or, for ``inf-input``, in the data): ``nan-weight`` (one weight of the first parameter
   becomes NaN), ``huge-lr`` (every learning rate x1e6 at every step, whatever the script's
   schedule sets: the weights blow up), ``inf-input`` (one value of every 7th sample becomes
   Inf). Caught = at least one anomaly reported. A NaN weight the model never uses (its
   ``.grad`` still None at exit) is counted as "no effect", not as a miss.

    /tmp/rwenv/bin/python bench/anomaly_real_world.py [--python PY] [--inject KIND|all]
        [--only SUBSTRING] [--mirrors /work/.mirror] [--work /tmp/anomaly_real_world]

``--python`` needs torch, torchvision and this project's backend (``pip install -e pybackend``).
Prints one line per program and the totals; exits 0 (it measures, it does not judge).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Dict, List, Optional, Tuple

GAN_ARGS = ["--n_epochs", "1", "--sample_interval", "1000000", "--n_cpu", "0"]


@dataclass
class Case:
    project: str  # owner+name of the mirror
    script: str  # path inside the project
    args: List[str] = field(default_factory=list)
    samples: int = 3200  # size of each random stand-in dataset
    timeout: int = 240
    files: Dict[str, str] = field(default_factory=dict)  # extra files to write: path -> kind
    package: bool = False  # the project's root on PYTHONPATH (a package it would pip install -e)

    @property
    def name(self) -> str:
        return f"{self.project.split('+')[1]}/{self.script}"


def _gan(name: str, script: Optional[str] = None, extra: Optional[List[str]] = None) -> Case:
    path = f"implementations/{name}/{script or name}.py"
    return Case("eriklindernoren+PyTorch-GAN", path, GAN_ARGS + (extra or []))


CASES: List[Case] = [
    # eriklindernoren/PyTorch-GAN: the MNIST GANs (2-4 optimizers, several losses each)
    *[
        _gan(n)
        for n in (
            "aae",
            "acgan",
            "began",
            "bgan",
            "cgan",
            "cogan",
            "dcgan",
            "dragan",
            "ebgan",
            "gan",
            "infogan",
            "lsgan",
            "relativistic_gan",
            "sgan",
            "softmax_gan",
            "wgan",
            "wgan_div",
            "wgan_gp",
        )
    ],
    Case("eriklindernoren+PyTorch-GAN", "implementations/cluster_gan/clustergan.py", ["-n", "1"]),
    # pytorch/examples
    Case("pytorch+examples", "mnist/main.py", ["--epochs", "1"]),
    Case("pytorch+examples", "vae/main.py", ["--epochs", "1"]),
    Case("pytorch+examples", "dcgan/main.py", ["--dataset", "fake", "--niter", "1", "--workers", "0"], 640),
    Case("pytorch+examples", "mnist_rnn/main.py", ["--epochs", "1"]),
    Case("pytorch+examples", "mnist_hogwild/main.py", ["--epochs", "1", "--num-processes", "2"], 1280),
    Case("pytorch+examples", "mnist_forward_forward/main.py", ["--epochs", "60"], 1000),
    Case("pytorch+examples", "regression/main.py"),
    Case("pytorch+examples", "siamese_network/main.py", ["--epochs", "1"], 1280),
    Case(
        "pytorch+examples",
        "word_language_model/main.py",
        ["--epochs", "1", "--emsize", "64", "--nhid", "64", "--bptt", "20"],
        files={"word_language_model/data/wikitext-2": "small-text"},
    ),
    Case(
        "pytorch+examples",
        "word_language_model/main.py",
        ["--epochs", "1", "--model", "Transformer", "--emsize", "64", "--nhid", "64", "--nhead", "2", "--bptt", "20"],
        files={"word_language_model/data/wikitext-2": "small-text"},
    ),
    # yunjey/pytorch-tutorial
    *[
        Case("yunjey+pytorch-tutorial", f"tutorials/{p}/main.py", samples=1200)  # batches of 100
        for p in (
            "01-basics/logistic_regression",
            "01-basics/feedforward_neural_network",
            "02-intermediate/convolutional_neural_network",
            "02-intermediate/recurrent_neural_network",
            "02-intermediate/bidirectional_recurrent_neural_network",
            "03-advanced/generative_adversarial_network",
            "03-advanced/variational_autoencoder",
        )
    ],
    Case("yunjey+pytorch-tutorial", "tutorials/01-basics/linear_regression/main.py", samples=1200),
    # MorvanZhou/PyTorch-Tutorial
    *[
        Case("MorvanZhou+PyTorch-Tutorial", f"tutorial-contents/{s}.py", samples=1280)
        for s in (
            "301_regression",
            "302_classification",
            "401_CNN",
            "402_RNN_classifier",
            "403_RNN_regressor",
            "404_autoencoder",
            "406_GAN",
            "406_conditional_GAN",
            "504_batch_normalization",
            "503_dropout",
            "304_save_reload",
            "305_batch_train",
        )
    ],
    # hunkim/PyTorchZeroToAll (data files ship with the project)
    *[
        Case("hunkim+PyTorchZeroToAll", s, samples=1280)
        for s in (
            "05_linear_regression.py",
            "06_logistic_regression.py",
            "07_diabets_logistic.py",
            "08_2_dataset_loade_logistic.py",
            "09_2_softmax_mnist.py",
            "10_1_cnn_mnist.py",
            "11_1_toy_inception_mnist.py",
            "12_2_hello_rnn.py",
            "12_4_hello_rnn_emb.py",
        )
    ],
    # karpathy/minGPT: the adder project, a few hundred iterations
    Case(
        "karpathy+minGPT",
        "projects/adder/adder.py",
        ["--trainer.max_iters=200", "--trainer.num_workers=0", "--trainer.device=cpu"],
        package=True,
    ),
    # karpathy/nanoGPT: the character-level config, shrunk to a CPU run (float16 -> its GradScaler
    # is built and disabled on the CPU, as on any machine without CUDA)
    Case(
        "karpathy+nanoGPT",
        "train.py",
        [
            "config/train_shakespeare_char.py",
            "--device=cpu",
            "--compile=False",
            "--eval_iters=5",
            "--eval_interval=50",
            "--log_interval=10",
            "--block_size=64",
            "--batch_size=8",
            "--n_layer=2",
            "--n_head=2",
            "--n_embd=64",
            "--max_iters=150",
            "--lr_decay_iters=150",
            "--dropout=0.0",
        ],
        files={"data/shakespeare_char": "char-bins"},
    ),
]

SHIM = textwrap.dedent(
    '''
    """Written by bench/anomaly_real_world.py: random stand-ins for torchvision's downloadable
    datasets and the planted bug. Patched lazily when the script imports torchvision.datasets or
    builds an optimizer, so torch is never imported before the watch installs itself."""
    import atexit, importlib.abc, importlib.util, os, sys

    N = int(os.environ.get("RW_N", "3200"))
    INJECT = os.environ.get("RW_INJECT", "")
    PLANTED = []
    SHAPES = {"MNIST": (28, 28, 1, 10), "FashionMNIST": (28, 28, 1, 10), "KMNIST": (28, 28, 1, 10),
              "EMNIST": (28, 28, 1, 26), "CIFAR10": (32, 32, 3, 10), "CIFAR100": (32, 32, 3, 100)}

    def _dataset(name, h, w, c, k):
        import numpy as np
        import torch
        from PIL import Image

        class Stand(torch.utils.data.Dataset):
            def __init__(self, root=None, train=True, transform=None, target_transform=None,
                         download=False, **kw):
                # learnable: each class a fixed random picture, each sample that picture plus
                # noise (a healthy run's loss falls, as on the real data)
                shape = (h, w) if c == 1 else (h, w, c)
                templates = np.random.default_rng(7).integers(0, 256, size=(k,) + shape)
                rng = np.random.default_rng(0 if train else 1)
                labels = rng.integers(0, k, size=N)
                noise = rng.integers(0, 256, size=(N,) + shape)
                arr = (0.7 * templates[labels] + 0.3 * noise).astype(np.uint8)
                self.targets = torch.as_tensor(labels)
                self.data = torch.as_tensor(arr) if c == 1 else arr
                self.train_data = self.test_data = self.data
                self.train_labels = self.test_labels = self.targets
                self.transform, self.target_transform = transform, target_transform
                self.classes = [str(i) for i in range(k)]
                self.root, self.train = root, train

            def __len__(self):
                return N

            def __getitem__(self, i):
                a = self.data[i]
                a = a.numpy() if hasattr(a, "numpy") else a
                img = Image.fromarray(a, mode="L" if c == 1 else "RGB")
                t = int(self.targets[i])
                if self.transform is not None:
                    img = self.transform(img)
                    if INJECT == "inf-input" and i % 7 == 3 and isinstance(img, torch.Tensor):
                        img = img.clone()
                        img.view(-1)[0] = float("inf")
                        if not PLANTED:
                            PLANTED.append(1)
                            print("[rw] planted inf-input", file=sys.stderr, flush=True)
                if self.target_transform is not None:
                    t = self.target_transform(t)
                return img, t

        # picklable by reference (spawned workers, hogwild): ``sitecustomize.MNIST``
        Stand.__name__ = Stand.__qualname__ = name
        Stand.__module__ = __name__
        globals()[name] = Stand
        return Stand

    def __getattr__(name):  # a spawned child unpickling a dataset builds its class here
        if name in SHAPES:
            return _dataset(name, *SHAPES[name])
        raise AttributeError(name)

    def _patch_datasets(mod):
        for name, (h, w, c, k) in SHAPES.items():
            setattr(mod, name, _dataset(name, h, w, c, k))

    def _unused(p):
        """A NaN planted in a parameter the model never uses (PyTorch-GAN's sgan builds a label
        embedding its generator's forward never calls) has no effect: said, so it is not a miss."""
        if p.grad is None:
            print("[rw] no effect: the NaN weight was never used (its .grad is None)", file=sys.stderr, flush=True)

    def _huge_lr(opt):
        """Every step runs with each group's lr x1e6, whatever the script sets it to: nanoGPT writes
        its scheduled lr into every group before each step, and a x1e6 made once at construction
        was gone by the first step (the run trained normally and counted as a miss)."""

        def scale(optimizer, args, kwargs):
            for g in optimizer.param_groups:
                if isinstance(g.get("lr"), float):
                    g["_rw_lr"] = g["lr"]
                    g["lr"] = g["lr"] * 1e6

        def restore(optimizer, args, kwargs):  # the script and its scheduler see their own lr
            for g in optimizer.param_groups:
                if "_rw_lr" in g:
                    g["lr"] = g.pop("_rw_lr")

        opt.register_step_pre_hook(scale)
        opt.register_step_post_hook(restore)

    def _patch_optim(mod):
        import torch
        first = mod.Optimizer.__init__
        done = []

        def init(self, params, defaults, *a, **kw):
            first(self, params, defaults, *a, **kw)
            if done or not INJECT or INJECT == "inf-input":
                return
            done.append(1)
            with torch.no_grad():
                if INJECT == "nan-weight":
                    planted = self.param_groups[0]["params"][0]
                    planted.view(-1)[0] = float("nan")
                    atexit.register(_unused, planted)
                elif INJECT == "huge-lr":
                    _huge_lr(self)
            print("[rw] planted " + INJECT, file=sys.stderr, flush=True)

        mod.Optimizer.__init__ = init

    AFTER = {"torchvision.datasets": _patch_datasets, "torch.optim.optimizer": _patch_optim}

    class After(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path, target=None):
            patch = AFTER.get(fullname)
            if patch is None:
                return None
            sys.meta_path.remove(self)
            try:
                spec = importlib.util.find_spec(fullname)
            finally:
                sys.meta_path.insert(0, self)
            if spec is None:
                return None
            real = spec.loader

            class Loader(importlib.abc.Loader):
                def create_module(self, s):
                    return real.create_module(s)

                def exec_module(self, module):
                    real.exec_module(module)
                    patch(module)

            spec.loader = Loader()
            return spec

    sys.meta_path.insert(0, After())
    '''
)


def extract(mirrors: Path, work: Path, project: str) -> Path:
    """The project's HEAD tree under ``work/<project>`` (once). Blobs the mirror does not hold
    (its largest files may be absent) are skipped."""
    into = work / project
    if into.is_dir():
        return into
    part = work / (project + ".part")
    shutil.rmtree(part, ignore_errors=True)
    git = ["git", "--git-dir", str(mirrors / project / "repo")]
    listing = subprocess.run(git + ["ls-tree", "-r", "HEAD"], capture_output=True, text=True, check=True).stdout
    blobs = [line.split(None, 3)[2:] for line in listing.splitlines() if " blob " in line]
    batch = subprocess.run(
        git + ["cat-file", "--batch"], input="".join(f"{sha}\n" for sha, _ in blobs).encode(), capture_output=True
    ).stdout
    at = 0
    for _sha, name in blobs:
        end = batch.index(b"\n", at)
        head = batch[at:end].split()
        at = end + 1
        if head[-1] == b"missing":
            continue
        size = int(head[2])
        out = part / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(batch[at : at + size])
        at += size + 1
    part.rename(into)
    return into


def _small_text(folder: Path) -> None:
    """A word-level corpus small enough for a CPU epoch, from the project's own text when it
    has one (wikitext-2 ships with pytorch/examples), else generated."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, keep in (("train.txt", 400), ("valid.txt", 60), ("test.txt", 60)):
        lines = (folder / name).read_text(encoding="utf-8").splitlines() if (folder / name).exists() else []
        if not lines:
            lines = [" ".join(f"w{(i * 7 + j) % 97}" for j in range(12)) for i in range(keep)]
        (folder / name).write_text("\n".join(lines[:keep]) + "\n", encoding="utf-8")


def _char_bins(folder: Path) -> None:
    """nanoGPT's prepared character data (its prepare.py downloads the text): token ids of a
    65-character vocabulary, in the files and dtype train.py reads."""
    import pickle
    import random

    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(0)
    # a text-like stream: runs of repeated short words, so there is something to learn
    words = [[rng.randrange(65) for _ in range(rng.randrange(2, 7))] for _ in range(40)]
    for name, count in (("train.bin", 60000), ("val.bin", 6000)):
        ids: List[int] = []
        while len(ids) < count:
            ids.extend(words[rng.randrange(40)] + [1])
        (folder / name).write_bytes(b"".join(i.to_bytes(2, "little") for i in ids[:count]))
    (folder / "meta.pkl").write_bytes(pickle.dumps({"vocab_size": 65}))


def prepare(case: Case, root: Path) -> None:
    for rel, kind in case.files.items():
        if kind == "small-text":
            _small_text(root / rel)
        elif kind == "char-bins":
            _char_bins(root / rel)


def run(
    python: str, case: Case, root: Path, shim: Path, inject: str, watched: bool, monitor: bool = False
) -> Tuple[int, float, dict, str]:
    script = root / case.script
    out = root / ".rw_{}_{}.json".format(case.script.replace("/", "_"), inject or "healthy")
    out.unlink(missing_ok=True)
    path = os.pathsep.join([str(shim)] + ([str(root)] if case.package else []))
    env = dict(os.environ, PYTHONPATH=path, MPLBACKEND="Agg", RW_N=str(case.samples), RW_INJECT=inject)
    env.pop("TORCHDOCTOR_ANOMALY", None)
    if watched and monitor:
        cmd = [python, "-m", "torchdoctor", "run", "--anomaly", "log", "--json", str(out)]
        cmd += ["--monitor", "--report", str(out.with_suffix(".report.json")), str(script)]
    elif watched:
        cmd = [python, "-m", "torchdoctor", "run", "--anomaly", "log", "--json", str(out), str(script)]
    else:
        cmd = [python, str(script)]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            cmd + case.args, cwd=script.parent, env=env, capture_output=True, text=True, timeout=case.timeout
        )
        rc, err = done.returncode, done.stderr
    except subprocess.TimeoutExpired as exc:
        rc, err = (
            -9,
            (exc.stderr or b"").decode("utf-8", "replace") if isinstance(exc.stderr, bytes) else (exc.stderr or ""),
        )
    took = time.perf_counter() - start
    try:  # a run killed at its time limit leaves the file empty or cut short
        report = json.loads(out.read_text()) if out.exists() else {}
    except ValueError:
        report = {}
    monitored = out.with_suffix(".report.json")
    if monitor and monitored.exists():
        report["monitor"] = json.loads(monitored.read_text())
    return rc, took, report, err


def _kinds(report: dict) -> str:
    found = report.get("anomalies", [])
    kinds = sorted({a.get("kind", "?") for a in found if not a.get("advice")})
    advice = sum(1 for a in found if a.get("advice"))
    return ",".join(kinds) + (f" (+{advice} advice)" if advice else "")


def _print_monitor(recorded: dict, totals: Dict[str, int]) -> None:
    """The monitor's steps and findings (kind, severity, step, sentence) for one run."""
    findings = recorded.get("findings") or []
    print(f"    monitor: {recorded.get('steps', 0)} steps, {len(findings)} findings")
    for finding in findings:
        severity = finding.get("severity", "?")
        totals[f"monitor_{severity}"] = totals.get(f"monitor_{severity}", 0) + 1
        where = finding.get("where") or ""
        print(
            f"      {finding.get('kind')} ({severity}, step {finding.get('step')}): {finding.get('sentence', '')[:260]} {where}"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    parser.add_argument("--work", type=Path, default=Path("/tmp/anomaly_real_world"))
    parser.add_argument("--inject", default="", choices=["", "nan-weight", "huge-lr", "inf-input", "all"])
    parser.add_argument(
        "--only", default="", help="run the programs whose name contains one of these (comma-separated)"
    )
    parser.add_argument("--verbose", action="store_true", help="print the first report of each run")
    parser.add_argument(
        "--monitor", action="store_true", help="also record with the training monitor and print its findings"
    )
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    # one folder per shim text: a run started while another goes on does not change its data
    shim = args.work / f"shim-{hashlib.sha1(SHIM.encode()).hexdigest()[:8]}"
    shim.mkdir(exist_ok=True)
    (shim / "sitecustomize.py").write_text(SHIM, encoding="utf-8")
    injects = ["nan-weight", "huge-lr", "inf-input"] if args.inject == "all" else [args.inject]
    wanted = [w for w in args.only.split(",") if w] or [""]
    cases = [c for c in CASES if any(w in c.name for w in wanted)]
    missing = sorted({c.project for c in cases if not (args.mirrors / c.project / "repo").is_dir()})
    if missing:
        print(f"no mirror for {', '.join(missing)} under {args.mirrors}: fetch them first", file=sys.stderr)
        cases = [c for c in cases if c.project not in missing]
    totals = {"runs": 0, "silent": 0, "alarmed": 0, "script_failed": 0, "watch_broke": 0}
    for case in cases:
        root = extract(args.mirrors, args.work, case.project)
        prepare(case, root)
        for inject in injects:
            rc, took, report, err = run(args.python, case, root, shim, inject, watched=True, monitor=args.monitor)
            reported = report.get("anomalies_reported", 0)
            verdict = "ANOMALY" if reported else "silent"
            extra = ""
            if inject and "[rw] planted" not in err:
                # no optimizer built (manual SGD), or the data does not go through a stand-in
                verdict, extra = "not planted", " (this program has no place for this bug)"
                totals["not_planted"] = totals.get("not_planted", 0) + 1
            if verdict == "silent" and "[rw] no effect" in err:
                verdict, extra = "no effect", " (the planted bug never reached the computation)"
                totals["no_effect"] = totals.get("no_effect", 0) + 1
            if verdict not in ("not planted", "no effect") and (rc not in (0, 1) or (rc == 1 and not reported)):
                plain_rc = run(args.python, case, root, shim, inject, watched=False)[0]
                if plain_rc == rc:
                    verdict, extra = "script fails alone", f" (plain python exits {plain_rc} too)"
                    totals["script_failed"] += 1
                else:
                    verdict, extra = "WATCH BROKE IT", f" (plain python exits {plain_rc})"
                    totals["watch_broke"] += 1
            totals["runs"] += 1
            if verdict == "ANOMALY" and inject:
                totals["caught"] = totals.get("caught", 0) + 1
            elif verdict == "ANOMALY":
                totals["alarmed"] += 1
            elif verdict == "silent":  # a planted bug not reported is a miss
                key = "missed" if inject else "silent"
                totals[key] = totals.get(key, 0) + 1
            label = inject or "healthy"
            print(
                f"{case.name:70s} {label:10s} rc={rc:<3d} {took:6.1f}s {verdict}: {reported} {_kinds(report)}{extra}",
                flush=True,
            )
            if args.verbose:
                for advice in [a for a in report.get("anomalies", []) if a.get("advice")]:
                    print("    advice: " + advice.get("sentence", "")[:300])
            if "monitor" in report:
                _print_monitor(report["monitor"], totals)
            if args.verbose and (reported or verdict.startswith("WATCH") or verdict.startswith("script")):
                first = report.get("anomalies", [{}])
                print("    " + (first[0].get("sentence", "") if first else "").replace("\n", " ")[:400])
                print("    " + "\n    ".join(err.strip().splitlines()[-6:]))
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main())
