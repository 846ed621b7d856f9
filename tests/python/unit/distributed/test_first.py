"""The first rank to go wrong, from every rank's reports (no torch, no processes)."""

from __future__ import annotations

from torchdoctor.distributed import first, launch, ranks


def report(rank, time, step=3, sentence="NaN in the output of `fc` (Linear) at step 3", advice=False):
    return {"rank": rank, "time": time, "step": step, "sentence": sentence, "advice": advice}


def test_the_earliest_report_wins_whatever_the_order_of_the_files() -> None:
    reports = [report(0, 10.5, step=4), report(1, 10.1), report(1, 10.2, step=4)]
    assert first.first_report(reports)["rank"] == 1
    line = first.summary(reports, 2)
    assert line.startswith("torchdoctor run: rank 1 of 2 went wrong first: NaN in the output of `fc`")
    assert line.endswith("(then rank 0)")


def test_advice_is_not_a_cause() -> None:
    assert first.first_report([report(0, 1.0, advice=True)]) is None
    assert first.summary([report(0, 1.0, advice=True), report(1, 2.0)], 2).startswith("torchdoctor run: rank 1")


def test_ranks_from_torchruns_environment() -> None:
    assert ranks.rank({"RANK": "3", "WORLD_SIZE": "4"}) == 3
    assert ranks.prefix({"RANK": "3", "WORLD_SIZE": "4"}) == "[rank3]: "
    assert ranks.prefix({"RANK": "0", "WORLD_SIZE": "1"}) == ""  # one process: no prefix
    assert ranks.rank({}) is None and ranks.world_size({"WORLD_SIZE": "x"}) == 1


def test_torchrun_gets_a_private_rendezvous_unless_one_is_given() -> None:
    argv = launch.torchrun_argv(2, [], "train.py", ["--lr", "1"])
    assert argv[:3] == ["--nproc-per-node", "2", "--standalone"]
    assert argv[-5:-3] == ["-m", "torchdoctor.distributed.rank_entry"] and argv[-2:] == ["--lr", "1"]
    given = launch.torchrun_argv(2, ["--rdzv-endpoint=localhost:29511"], "train.py", [])
    assert "--standalone" not in given
