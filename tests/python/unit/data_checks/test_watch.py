"""The notes of where the data check is: in memory for a DataLoader drawn in this process (any
sampler), and, once installed (in a real worker-like process here, never in pytest's), in files
the backend reads after a crash, with a forked DataLoader worker's own notes and failures."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, Dataset, Subset

from support.paths import PYBACKEND
from torchdoctor.data_checks import watch
from torchdoctor.data_checks.errors import SampleError
from torchdoctor.data_checks.sampling import draw


def run_script(folder: Path, text: str, *args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    """``text`` as a script run by this Python with the backend importable, ``folder`` its first argument."""
    script = folder / "script.py"
    script.write_text(textwrap.dedent(text))
    env = dict(os.environ, PYTHONPATH=str(PYBACKEND))
    return subprocess.run(
        [sys.executable, str(script), str(folder), *args], capture_output=True, text=True, env=env, timeout=timeout
    )


class Labels(Dataset):
    """A CSV-backed dataset whose row 7 has a class the label map lacks."""

    def __len__(self):
        return 20

    def __getitem__(self, i):
        if i == 7:
            raise KeyError("unknown class 'cat?'")
        return torch.zeros(4), 0


def test_a_shuffled_loader_in_this_process_names_the_sample_that_raised():
    with pytest.raises(SampleError) as caught:
        draw("train", DataLoader(Labels(), batch_size=4, shuffle=True))
    assert caught.value.index == 7 and caught.value.split == "train"


def test_a_random_split_is_read_one_index_at_a_time_and_names_the_splits_own_index():
    split = Subset(Labels(), list(range(10, 20)) + list(range(10)))  # what random_split returns
    with pytest.raises(SampleError) as caught:
        draw("val", DataLoader(split, batch_size=4, shuffle=True))
    assert caught.value.index == 17  # val[17] is row 7 of the CSV


def test_the_last_note_is_kept_and_a_finished_split_is_idle():
    draw("val", DataLoader(torch.utils.data.TensorDataset(torch.zeros(6, 2)), batch_size=3))
    assert watch.current()["stage"] == watch.IDLE
    watch.note("val", "__getitem__", 4)
    assert watch.current() == {"split": "val", "stage": "__getitem__", "index": 4}
    watch.idle()


SCRIPT = """
import os, sys
import torch
from torch.utils.data import DataLoader, Dataset, Subset
from torchdoctor.data_checks import watch
from torchdoctor.data_checks.sampling import draw


class Files(Dataset):
    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == 5:
            raise ValueError(f"cannot decode file {i}")
        return torch.zeros(3), 0


watch.install(sys.argv[1])
try:
    draw("val", DataLoader(Files(), batch_size=2, shuffle=True, num_workers=1))
except Exception as exc:
    print(type(exc).__name__, getattr(exc, "index", None))
watch.note("val", "__getitem__", 9)
os._exit(3)
"""


@pytest.mark.skipif(os.name != "posix", reason="fork and at-fork hooks")
def test_installed_notes_survive_the_process_and_a_forked_worker_writes_its_failure(tmp_path: Path):
    proc = run_script(tmp_path, SCRIPT, timeout=120)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout.split() == ["LoaderWorkerError", "5"]  # shuffled, yet the index the worker wrote
    pids = watch.watched_pids(str(tmp_path))
    main = [p for p in pids if watch.read_note(str(tmp_path), p).get("index") == 9]
    assert len(main) == 1 and len(pids) == 2  # the process and its one DataLoader worker
    child = next(p for p in pids if p not in main)
    failure = watch.read_failure(str(tmp_path), child)
    assert failure is not None and failure["index"] == 5 and failure["exception"] == "ValueError"
    assert failure["split"] == "val" and failure["worker"] == 0 and failure["stage"] == "__getitem__"
    assert watch.read_note(str(tmp_path), child)["worker"] == 0  # the worker's own notes, in its own file


SAMPLE_NOTE = """
import json, sys
from torchdoctor.data_checks import watch

watch.install(sys.argv[1])
watch.note("val", "collate", batch=list(range(300)), number=3)  # a long note first: padded over
watch.note_sample('tr"ain', json.loads(sys.argv[2]))
print(json.dumps(watch.current()))
"""


@pytest.mark.parametrize("index", [0, 12345, -3, 2**63 - 1, 2**63, -(2**70), "a/b.png"])
def test_a_sample_note_reads_back_as_the_general_note_would(tmp_path: Path, index):
    """note_sample (once per sample, an int64 into the mapped note file) says what note() would, in
    memory and in the file, after a longer note, for ints past int64 and for an index that is no int."""
    proc = run_script(tmp_path, SAMPLE_NOTE, json.dumps(index))
    assert proc.returncode == 0, proc.stderr
    expected = {"split": 'tr"ain', "stage": "__getitem__", "index": index}
    assert json.loads(proc.stdout) == expected
    (pid,) = watch.watched_pids(str(tmp_path))
    assert watch.read_note(str(tmp_path), pid) == expected


SAMPLES_THEN_NOTES = """
import json, sys
from torchdoctor.data_checks import watch

watch.install(sys.argv[1])
folder, pid = sys.argv[1], __import__("os").getpid()
seen = []
for split, index in [("train", 4), ("train", 5), ("val", 2), ("val", 2**64), ("val", 7)]:
    watch.note_sample(split, index)
    seen.append(watch.read_note(folder, pid))
watch.note("val", "collate", batch=[7, 8])
seen.append(watch.read_note(folder, pid))
watch.note_sample("val", 9)  # the same split as before the other note: its header written again
seen.append(watch.read_note(folder, pid))
watch.note("val", "collate", batch=list(range(4000)))  # longer than the mapping: written past it
watch.note_sample("val", 11)
seen.append(watch.read_note(folder, pid))
print(json.dumps(seen))
"""


def test_each_sample_note_is_read_back_with_its_own_index_between_other_notes(tmp_path: Path):
    """The backend reads the last note at any moment: each sample's index (stored alone, its JSON
    written once per split) across splits, past int64, after another note, and after a note too long
    for the mapped part of the file."""
    proc = run_script(tmp_path, SAMPLES_THEN_NOTES)
    assert proc.returncode == 0, proc.stderr
    seen = json.loads(proc.stdout)
    sample = [{"split": s, "stage": "__getitem__", "index": i} for s, i in [("train", 4), ("train", 5), ("val", 2)]]
    sample += [{"split": "val", "stage": "__getitem__", "index": i} for i in (2**64, 7)]
    collate = {"split": "val", "stage": "collate", "index": None, "batch": [7, 8], "batchSize": 2}
    later = [{"split": "val", "stage": "__getitem__", "index": i} for i in (9, 11)]
    assert seen == [*sample, collate, *later]


NOTER_THEN_NOTES = """
import json, sys
from torchdoctor.data_checks import watch

watch.install(sys.argv[1])
folder, pid = sys.argv[1], __import__("os").getpid()
full = []
plain = watch.note_sample
watch.note_sample = lambda split, index: (full.append(index), plain(split, index))  # what the noters fall back on
noters = {split: watch.sample_noter(split) for split in ("train", "val")}
seen = []
for split, index in [("train", 4), ("train", 5), ("val", 2), ("val", 3), ("val", 2**64), ("val", 7), ("val", 8)]:
    noters[split](index)
    seen.append([watch.read_note(folder, pid), watch.current()])
watch.note("val", "collate", batch=[7, 8])
noters["val"](9)  # the header was replaced by the other note: written again
noters["val"](10)
seen.append([watch.read_note(folder, pid), watch.current()])
watch.note("val", "collate", batch=list(range(4000)))  # a longer note: padded over
noters["val"](11)
noters["val"](12)
seen.append([watch.read_note(folder, pid), watch.current()])
watch.note("v" * 20000, "build")  # longer than the mapping: written past it, over the index's slot
noters["val"](13)
noters["val"](14)
seen.append([watch.read_note(folder, pid), watch.current()])
print(json.dumps({"seen": seen, "full": full}))
"""


def test_a_split_s_noter_notes_what_note_sample_would_and_skips_it_once_the_header_is_written(tmp_path: Path):
    """``sample_noter`` (the draw loop's): each index reads back as ``note_sample``'s would, in the file
    and in memory, across splits, past int64, after another note and after one too long for the
    mapping; ``note_sample`` itself runs only where the file does not hold the split's header."""
    proc = run_script(tmp_path, NOTER_THEN_NOTES)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    order = [("train", 4), ("train", 5), ("val", 2), ("val", 3), ("val", 2**64), ("val", 7), ("val", 8)]
    order += [("val", 10), ("val", 12), ("val", 14)]
    expected = [{"split": s, "stage": "__getitem__", "index": i} for s, i in order]
    assert out["seen"] == [[e, e] for e in expected]
    # the first of each split, past int64, the first after 2**64's JSON note and after each other note;
    # after the note past the mapping every index is JSON (the slot would write into that note)
    assert out["full"] == [4, 2, 2**64, 7, 9, 11, 13, 14]
