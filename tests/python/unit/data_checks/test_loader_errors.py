"""A DataLoader worker that raised or died, said in our words: torch's "Caught X in DataLoader
worker process N" text parsed back (made by torch's own ExceptionWrapper, no process needed), and
real loaders with workers drawn by the sampler."""

from __future__ import annotations

import json
import os
import signal
import time

import pytest
import torch
from torch._utils import ExceptionWrapper
from torch.utils.data import BatchSampler, DataLoader, Dataset, RandomSampler

from torchdoctor.data_checks.collate_errors import CollateError
from torchdoctor.data_checks.errors import SampleError
from torchdoctor.data_checks.loader_errors import (
    LoaderWorkerError,
    died_pids,
    exit_cause,
    is_user_file,
    parse_worker_traceback,
)
from torchdoctor.data_checks.paused import check as paused_check
from torchdoctor.data_checks.sampling import draw


def reraised(fn, worker: int = 3) -> BaseException:
    """What the main process sees when ``fn`` raises in DataLoader worker ``worker``."""
    try:
        fn()
    except Exception:  # noqa: BLE001 - wrapped as torch's worker loop does
        wrapper = ExceptionWrapper(where=f"in DataLoader worker process {worker}")
    try:
        wrapper.reraise()
    except BaseException as exc:  # noqa: BLE001 - whatever type torch chose to raise
        return exc
    raise AssertionError("reraise did not raise")


def _decode(i):
    raise ValueError(f"cannot decode file {i}")


def test_the_original_type_message_worker_and_user_line_are_read_back():
    exc = reraised(lambda: _decode(7), worker=3)
    trace = parse_worker_traceback(str(exc))
    assert trace is not None and trace.exc_type == "ValueError" and trace.worker == 3
    assert trace.message == "cannot decode file 7"
    frame = trace.user_frame
    assert frame is not None and frame.file == __file__ and frame.func == "_decode"
    assert "raise ValueError" in frame.code  # the innermost line of the user's code


def test_a_key_error_and_an_exception_without_message_are_read_back():
    trace = parse_worker_traceback(str(reraised(lambda: {}["image_0042.png"])))
    assert trace is not None and trace.exc_type == "KeyError" and "image_0042.png" in trace.message

    def bare():
        raise StopIteration

    trace = parse_worker_traceback(str(reraised(bare)))
    assert trace is not None and trace.exc_type == "StopIteration" and trace.message == ""


class NeedsTwo(Exception):
    def __init__(self, path, code):
        super().__init__(f"{path}: code {code}")


def test_an_exception_torch_cannot_rebuild_keeps_its_own_name():
    def fail():
        raise NeedsTwo("a.png", 3)

    exc = reraised(fail)
    assert type(exc) is not NeedsTwo  # torch raised another type with the text
    trace = parse_worker_traceback(str(exc))
    assert trace is not None and trace.exc_type == "NeedsTwo" and trace.message == "a.png: code 3"


def test_a_chained_exception_is_read_as_the_one_raised_last():
    def fail():
        try:
            {}["missing"]
        except KeyError as inner:
            raise OSError("could not open the shard") from inner

    trace = parse_worker_traceback(str(reraised(fail)))
    assert trace is not None and trace.exc_type == "OSError" and trace.message == "could not open the shard"
    assert trace.user_frame is not None and trace.user_frame.func == "fail"


def test_the_user_line_is_the_innermost_outside_libraries():
    trace = parse_worker_traceback(str(reraised(lambda: json.loads("{"))))
    assert trace is not None and trace.exc_type == "JSONDecodeError"
    assert trace.frames[-1].file != __file__  # the error itself is raised in the standard library
    assert trace.user_frame is not None and trace.user_frame.file == __file__
    assert not is_user_file(json.__file__) and not is_user_file(torch.__file__) and is_user_file(__file__)


def test_text_that_is_not_from_a_worker_is_left_alone():
    assert parse_worker_traceback("cannot decode file 7") is None
    assert died_pids("cannot decode file 7") == []


def test_a_dead_worker_is_read_from_both_of_torchs_sentences():
    assert died_pids("DataLoader worker (pid(s) 101, 102) exited unexpectedly") == [101, 102]
    assert died_pids("DataLoader worker (pid 101) is killed by signal: Killed. ") == [101]


def test_the_exit_cause_names_the_signal_or_the_status():
    assert "SIGSEGV" in exit_cause(-signal.SIGSEGV) and "segmentation fault" in exit_cause(-signal.SIGSEGV)
    assert "SIGKILL" in exit_cause(-signal.SIGKILL) and "out-of-memory" in exit_cause(-signal.SIGKILL)
    assert "status 3" in exit_cause(3)
    assert "SIGSEGV" in exit_cause(None, "DataLoader worker (pid 9) is killed by signal: Segmentation fault. ")
    assert "not known" in exit_cause(None, "")


class Files(Dataset):
    def __init__(self, bad=5, how="raise"):
        self.bad, self.how = bad, how

    def __len__(self):
        return 16

    def __getitem__(self, i):
        if i == self.bad:
            if self.how == "exit":
                os._exit(3)
            if self.how == "kill":
                os.kill(os.getpid(), signal.SIGKILL)
            raise ValueError(f"cannot decode file {i}")
        return torch.zeros(3), 0


def test_a_worker_that_raised_names_split_worker_sample_and_line():
    loader = DataLoader(Files(), batch_size=4, num_workers=1)
    with pytest.raises(LoaderWorkerError) as caught:
        draw("val", loader)
    err = caught.value
    assert not err.died and err.split == "val" and err.worker == 0 and err.stage == "__getitem__"
    assert err.exc_type == "ValueError" and err.index == Files().bad  # a sequential loader: the index is found
    assert err.frame is not None and err.frame.file == __file__
    text = str(err)
    assert text.startswith("val: DataLoader worker 0 raised ValueError") and "num_workers=0" in text
    assert "torchdoctor" not in err.traceback_text() and __file__ in err.traceback_text()


def test_a_shuffled_loader_says_the_sample_is_not_known():
    loader = DataLoader(Files(), batch_size=4, num_workers=1, shuffle=True)
    with pytest.raises(LoaderWorkerError) as caught:
        draw("train", loader)
    assert caught.value.index is None and "not known" in str(caught.value)


def test_a_collate_fn_error_is_not_blamed_on_a_sample():
    def collate(batch):
        raise RuntimeError("cannot stack")

    with pytest.raises(LoaderWorkerError) as caught:
        draw("train", DataLoader(Files(bad=-1), batch_size=4, num_workers=1, collate_fn=collate))
    err = caught.value
    assert err.stage == "collate_fn" and err.index is None and err.frame is not None and err.frame.func == "collate"


def test_a_worker_that_exited_says_so_with_its_status():
    with pytest.raises(LoaderWorkerError) as caught:
        draw("train", DataLoader(Files(how="exit"), batch_size=4, num_workers=1))
    err = caught.value
    assert err.died and err.worker == 0 and "status 3" in err.cause
    assert "could not draw train" in str(err)


def test_a_worker_killed_between_two_batches_is_still_said_in_our_words(monkeypatch):
    # torch's SIGCHLD handler raises the death wherever the main thread is; here it is made to
    # land between two batches (in the per-batch tick), outside next(iterator)
    from torchdoctor.data_checks import sampling

    ticks = []

    def slow_tick(sample=True):
        if not sample:  # a batch's tick (sample draws of item 0 tick too, before the workers start)
            ticks.append(sample)
        if len(ticks) == 1 and not sample:  # before batch 0 is asked for: the worker dies on sample 5
            time.sleep(3)

    monkeypatch.setattr(sampling, "_tick", slow_tick)
    with pytest.raises(LoaderWorkerError) as caught:
        draw("val", DataLoader(Files(how="kill"), batch_size=4, num_workers=1))
    err = caught.value
    assert err.died and err.worker == 0 and "SIGKILL" in err.cause and "could not draw val" in str(err)


def test_without_workers_a_loader_names_the_sample_as_a_dataset_does():
    with pytest.raises(SampleError) as caught:
        draw("train", DataLoader(Files(), batch_size=4))
    assert caught.value.split == "train" and caught.value.index == Files().bad


def test_the_paused_check_says_the_same_as_the_cli():
    result = paused_check(DataLoader(Files(), batch_size=4, num_workers=1), "loader")
    assert result["verdict"] == "ERROR" and result["error"]["cause"] == "worker-raised"
    assert result["error"]["index"] == Files().bad and result["error"]["source"]["file"] == __file__


def _seed_numpy(worker_id):
    import numpy as np

    np.random.seed(2**40 + worker_id)  # a 64-bit seed: numpy's Cython code raises ValueError


def test_a_compiled_packages_frame_is_not_taken_for_the_users_line():
    assert not is_user_file("numpy/random/_mt19937.pyx")  # how Cython names its frames: relative, no file
    with pytest.raises(LoaderWorkerError) as caught:
        draw("train", DataLoader(Files(bad=-1), batch_size=4, num_workers=1, worker_init_fn=_seed_numpy))
    err = caught.value
    assert err.stage == "worker_init_fn" and err.exc_type == "ValueError"
    assert err.frame is not None and err.frame.file == __file__ and err.frame.func == "_seed_numpy"
    assert f"at {__file__}:" in str(err) and ".pyx" not in str(err)


class Uneven(Dataset):
    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.zeros(4 if i == 0 else 3), 0  # the first sample of the batch is the longer one


def test_an_error_in_torchs_default_collate_names_the_sample_and_keeps_torchs_words_in_the_detail():
    # a sequential loader: the failed batch is drawn again here and compared sample by sample
    with pytest.raises(CollateError) as caught:
        draw("train", DataLoader(Uneven(), batch_size=4, num_workers=1))
    err = caught.value
    assert err.worker == 0 and err.to_error()["index"] == 0 and err.to_error()["batch"] == [0, 1, 2, 3]
    assert "sample 0 (entry 0 of the batch) has shape [4]" in str(err) and "other 3 have shape [3]" in str(err)
    assert "resize storage" in err.message  # torch's words in a worker, kept for the detail
    detail = err.traceback_text()
    assert "site-packages" not in detail and 'File "' not in detail  # no frame of torch's own
    assert "resize storage" in detail and "differs" in detail


class MostlyBad(Dataset):
    def __len__(self):
        return 40

    def __getitem__(self, i):
        if i != 0:  # sample 0 draws (the check draws it here first); any batch of 4 has a bad one
            raise KeyError(90)  # a category the label map lacks, in many samples
        return torch.zeros(3), 0


def test_a_random_batch_sampler_passed_as_batch_sampler_says_the_sample_is_not_known():
    # DETR's training loader: loader.sampler is torch's default SequentialSampler, but the batch
    # sampler draws at random; drawing its batch again here would name some other failing sample
    ds = MostlyBad()
    loader = DataLoader(ds, batch_sampler=BatchSampler(RandomSampler(ds), 4, drop_last=True), num_workers=1)
    assert type(loader.sampler).__name__ == "SequentialSampler"
    with pytest.raises(LoaderWorkerError) as caught:
        draw("train", loader)
    assert caught.value.stage == "__getitem__" and caught.value.index is None and "not known" in str(caught.value)
