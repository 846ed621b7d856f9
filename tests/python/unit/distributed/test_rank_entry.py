"""``rank_entry`` lets go of the script's objects when the script ends.

A DDP model that our hooks kept alive was destroyed in the interpreter's finalization, after
the script's ``destroy_process_group()``: gloo's threads went down too late and the rank aborted
("terminate called without an active exception") in about one job in four. The script below
checks, in an ``atexit`` handler (which runs after the script, before finalization), that
nothing keeps its DDP model alive: deterministic where the abort is a race.
"""

from __future__ import annotations

import textwrap

from support.anomaly import run_cli

SCRIPT = textwrap.dedent(
    """
    import atexit, gc, weakref
    import torch
    import torch.distributed as dist
    from torch import nn

    def main():
        dist.init_process_group("gloo")
        model = nn.parallel.DistributedDataParallel(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 1)))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for _ in range(3):
            optimizer.zero_grad()
            model(torch.randn(8, 4)).pow(2).mean().backward()
            optimizer.step()
        dist.destroy_process_group()
        return weakref.ref(model)

    held = main()

    def check():
        gc.collect()
        print("DDP model alive at exit" if held() is not None else "DDP model released")

    atexit.register(check)
    """
)


def test_the_ddp_model_is_released_before_the_interpreter_exits(tmp_path) -> None:
    script = tmp_path / "ddp_release.py"
    script.write_text(SCRIPT)
    done = run_cli("run", "--nproc-per-node", "1", str(script), timeout=240)
    assert done.returncode == 0, done.stderr
    assert "DDP model released" in done.stdout, done.stdout + done.stderr
