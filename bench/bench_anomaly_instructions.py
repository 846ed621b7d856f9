"""The anomaly watch's cost in CPU instructions, counted by valgrind: a figure the load does not move.

``bench_anomaly.py`` times steps on the wall clock, which a shared two-core machine at load 15
turns into noise. This runs the same loops (its ``LOOPS``) under ``valgrind --tool=callgrind``
with instrumentation off except around the timed steps (``callgrind_control -i on/off``, one dump
per mode), and prints instructions per step and the ratio to the watch off. Instructions are not
time (a memory-bound pass costs more time per instruction than Python does), but the watch's
overhead on small models is Python and dispatch: the counts rank changes reliably, run to run
within 0.5%. Modes: ``off``; ``none`` (the watch installed with no checks: its wrappers only);
``forward``, ``backward``, ``loss`` (one check alone); ``all`` (the default watch).

    .venv/bin/python bench/bench_anomaly_instructions.py [--steps N] [--modes "off none all"] [LOOP...]

It re-runs itself under valgrind (``valgrind`` and ``callgrind_control`` on ``PATH``); slow: a
minute of CPU for the import of torch, then about 50x the steps' native time.
"""

from __future__ import annotations

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def child(steps: int, loops, modes) -> None:
    sys.path.insert(0, str(HERE))
    import bench_anomaly as B
    import torch

    from torchdoctor.runtime.anomaly import watch
    from torchdoctor.runtime.anomaly.config import from_mapping

    torch.set_num_threads(1)
    pid = str(os.getpid())

    def control(*args: str) -> None:
        subprocess.run(["callgrind_control", *args, pid], stdout=subprocess.DEVNULL, check=False)

    for name in loops:
        model, make_optimizer, batches, criterion = B.LOOPS[name]()
        optimizer = make_optimizer(model)
        count = max(steps // 25, 1) if name.startswith("gpt") else steps
        for mode in modes:
            if mode != "off":
                checks = [c for c in mode.split(",") if c != "none"]
                watch.install(from_mapping({} if mode == "all" else {"checks": checks}))
            for i in range(2):  # warm-up, not counted
                B._step(model, optimizer, *batches[i % len(batches)], criterion)
            control("-z")
            control("-i", "on")
            for i in range(count):
                B._step(model, optimizer, *batches[i % len(batches)], criterion)
            control("-i", "off")
            control("-d", f"{name}:{mode}:{count}")
            watch.uninstall()


def summarise(prefix: str) -> None:
    rows = []
    for path in sorted(glob.glob(prefix + ".*"), key=lambda p: int(p.rsplit(".", 1)[1])):
        text = Path(path).read_text(errors="replace")
        label = re.search(r"^desc: Trigger: dump (\S+)$", text, re.M)
        total = re.search(r"^totals: (\d+)", text, re.M)
        if label and total:
            name, mode, count = label.group(1).split(":")
            rows.append((name, mode, int(total.group(1)) / int(count)))
    base = {name: per for name, mode, per in rows if mode == "off"}
    print(f"{'loop':<10} {'mode':<22} {'instructions/step':>18}  ratio to off")
    for name, mode, per in rows:
        print(f"{name:<10} {mode:<22} {per / 1e6:>16.3f}M  {per / base.get(name, per):.3f}x")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=50, help="counted steps per mode (GPT loops: /25, at least 1)")
    parser.add_argument("--modes", default="off none all")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("loops", nargs="*", default=["train.py", "gpt-4x128"])
    args = parser.parse_args(argv)
    if args.child:
        child(args.steps, args.loops, args.modes.split())
        return 0
    with tempfile.TemporaryDirectory(prefix="td-callgrind-") as folder:
        out = os.path.join(folder, "cg")
        command = ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}"]
        command += [sys.executable, __file__, "--child", "--steps", str(args.steps), "--modes", args.modes]
        env = dict(
            os.environ, PYTHONPATH=os.pathsep.join([str(HERE.parent / "pybackend"), os.environ.get("PYTHONPATH", "")])
        )
        done = subprocess.run(
            command + args.loops, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        if done.returncode != 0:
            print(done.stderr[-2000:], file=sys.stderr)
            return done.returncode
        summarise(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
