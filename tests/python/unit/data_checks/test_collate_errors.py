"""A batch torch's default collate could not make: the sample named by its dataset index (under the
sampler the loader used), what differs and the fix, with torch's own message kept in the detail.
Real DataLoaders drawn in this process (``num_workers=0``); the forked-worker path is in test_jobs."""

from __future__ import annotations

import pytest
import torch
from PIL import Image
from torch.utils.data import DataLoader, Dataset, IterableDataset

from torchdoctor.data_checks.collate_errors import CollateError, diagnose
from torchdoctor.data_checks.paused import check as paused_check
from torchdoctor.data_checks.sampling import draw


class Photos(Dataset):
    """A folder of photos read as tensors: most were exported at 32x32, two at 28x28."""

    small = (5, 11)

    def __len__(self):
        return 16

    def __getitem__(self, i):
        side = 28 if i in self.small else 32
        g = torch.Generator().manual_seed(i)
        return torch.rand(3, side, side, generator=g), i % 4


def collate_error(loader) -> CollateError:
    with pytest.raises(CollateError) as caught:
        draw("train", loader)
    return caught.value


def test_a_shuffled_batch_names_the_dataset_index_of_the_odd_image_and_keeps_torchs_message():
    err = collate_error(DataLoader(Photos(), batch_size=8, shuffle=True))
    error = err.to_error()
    assert error["cause"] == "collate-failed" and error["differs"] == "shape" and error["stage"] == "collate_fn"
    assert error["index"] in Photos.small and set(error["indices"]) <= set(Photos.small)
    for entry, index in zip(err.diagnosis["oddEntries"], error["indices"]):
        assert error["batch"][entry] == index  # the batch's entry k is the sampler's index, not k
    text = str(err)
    assert text.startswith("train: the DataLoader could not collate batch ")
    odd = error["indices"]
    assert f"sample{'s' if len(odd) > 1 else ''} {', '.join(map(str, odd))} (entr" in text
    assert "shape [3, 28, 28] at `[0]`" in text
    assert "have shape [3, 32, 32]" in text and "transforms.Resize" in text and "`collate_fn`" in text
    assert "stack expects each tensor to be equal size" not in text  # torch's words are in the detail
    detail = err.traceback_text()
    assert "stack expects each tensor to be equal size" in detail and "<- differs" in detail
    assert 'File "' not in detail  # no frame, torch's or ours


class Scans(Dataset):
    """A reader that returns None for a file it cannot open, as many loaders written in a hurry do."""

    corrupt = 6

    def __len__(self):
        return 12

    def __getitem__(self, i):
        if i == self.corrupt:
            return None  # "could not read scan_0006.png"
        return torch.zeros(1, 8, 8), 0


def test_a_none_sample_is_named_with_the_fix_that_drops_it():
    err = collate_error(DataLoader(Scans(), batch_size=4))
    assert err.to_error()["differs"] == "none" and err.to_error()["index"] == Scans.corrupt
    assert err.to_error()["batch"] == [4, 5, 6, 7] and "batch 1 " in str(err)
    assert f"sample {Scans.corrupt} (entry 2 of the batch) holds None" in str(err)
    assert "s is not None" in str(err)


class Reviews(Dataset):
    """Labels mapped through a dict, except one the mapping missed: the class name stays text."""

    names = ["neg", "pos", "pos", "neg", "neutral", "pos", "neg", "pos"]
    to_index = {"neg": 0, "pos": 1}

    def __len__(self):
        return len(self.names)

    def __getitem__(self, i):
        name = self.names[i]
        return torch.full((5,), float(i)), self.to_index.get(name, name)


def test_text_among_numbers_says_where_and_to_map_it_to_a_class_index():
    err = collate_error(DataLoader(Reviews(), batch_size=8))
    error = err.to_error()
    assert error["differs"] == "type" and error["index"] == 4 and error["path"] == "[1]"
    assert "holds text (str) at `[1]`" in str(err) and "class_to_idx" in str(err)


class Tagged(Dataset):
    """Dict samples; the unlabelled images of the folder come without their 'label' key."""

    def __len__(self):
        return 10

    def __getitem__(self, i):
        sample = {"image": torch.zeros(3, 4, 4), "label": 1}
        if i == 9:
            del sample["label"]
        return sample


def test_a_dict_sample_without_a_key_is_named_with_the_key():
    err = collate_error(DataLoader(Tagged(), batch_size=5))
    error = err.to_error()
    assert error["differs"] == "key" and error["index"] == 9 and error["batch"] == [5, 6, 7, 8, 9]
    assert "has no key 'label'" in str(err) and "keys 'image', 'label'" in str(err)
    assert "KeyError" in err.traceback_text()


class Mixed(Dataset):
    """JPEGs read with Image.open: a grayscale scan among RGB photos keeps one channel."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        return torch.zeros(1 if i == 3 else 3, 16, 16), 0


def test_a_grayscale_image_among_rgb_ones_is_told_to_convert():
    err = collate_error(DataLoader(Mixed(), batch_size=8))
    assert err.to_error()["index"] == 3 and "convert('RGB')" in str(err)


class Tokens(Dataset):
    def __len__(self):
        return 6

    def __getitem__(self, i):
        return torch.arange(4 + i)  # sentences of different lengths, not padded


def test_sequences_of_different_lengths_are_told_to_pad():
    err = collate_error(DataLoader(Tokens(), batch_size=3))
    assert err.to_error()["differs"] == "shape" and "pad_sequence" in str(err)


class NoToTensor(Dataset):
    """PIL images straight from the file: the transform lacks ToTensor."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        return Image.new("RGB", (8, 8)), i


def test_pil_images_that_every_sample_holds_are_told_to_end_in_to_tensor():
    err = collate_error(DataLoader(NoToTensor(), batch_size=4))
    assert err.to_error()["differs"] == "type" and "ToTensor()" in str(err) and "every sample holds" in str(err)


class Lines(IterableDataset):
    """A text stream: one line is longer than the fixed length the model expects."""

    def __iter__(self):
        for n in range(12):
            yield torch.zeros(9 if n == 6 else 8)


def test_a_stream_names_the_position_of_the_odd_sample():
    err = collate_error(DataLoader(Lines(), batch_size=4))
    assert err.to_error()["batch"] == [4, 5, 6, 7] and err.to_error()["index"] == 6
    assert "positions in the stream 4, 5, 6, 7" in str(err) and "the stream's sample 6" in str(err)


def pad_to_first(batch):
    images = [x for x, _ in batch]
    return torch.stack([images[0].new_zeros(images[0].shape).copy_(x) for x in images])  # broken padding


def test_a_collate_fn_of_the_users_that_raises_names_the_batch_and_its_line():
    err = collate_error(DataLoader(Photos(), batch_size=8, collate_fn=pad_to_first))
    error = err.to_error()
    assert error["source"]["file"] == __file__ and error["batch"] == list(range(8))
    text = str(err)
    assert text.startswith("train: your collate_fn raised RuntimeError") and "batch 0 (dataset indices 0, 1" in text
    assert "pad_to_first" in err.traceback_text() and "torchdoctor" not in err.traceback_text()


def test_the_paused_check_says_the_same():
    result = paused_check(DataLoader(Photos(), batch_size=8), "loader")
    assert result["verdict"] == "ERROR" and result["error"]["cause"] == "collate-failed"
    assert result["error"]["index"] == 5 and "stack expects" in result["error"]["detail"]


def test_a_batch_whose_samples_agree_says_so_and_no_index():
    same = [(torch.zeros(2), 1)] * 3
    d = diagnose([7, 8, 9], same)
    assert d is not None and d["differs"] is None and "one structure" in d["seen"]
    assert diagnose([1, 2], [torch.zeros(2)]) is None  # not one sample per index
