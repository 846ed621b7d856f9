"""A Dataset's rows of tensors copied into one reused chunk array (chunks.py): the statistics, the
blank and non-finite samples, the gallery and the order of the samples are those of the reducer's own
stacking, whatever the rows hold (other dtypes, other shapes, halves); a row it cannot take goes
that way, nothing of it copied."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from torchdoctor.data_checks import reduce as R
from torchdoctor.data_checks.chunks import Chunk, chunk_for


def _fed(samples: list, chunked: bool, row: int = 64, gallery: int = 8) -> R.Reducer:
    """A reducer fed ``samples`` a row at a time, as sampling._draw_each does, with or without the chunk."""
    r = R.Reducer("train", gallery)
    r.s.hashed = True
    if not chunked:
        r._into_chunk = lambda indices, xs, k: k  # type: ignore[method-assign]
    for at in range(0, len(samples), row):
        r.add_many(list(range(at, at + len(samples[at : at + row]))), samples[at : at + row])
    r._flush()
    r._main()
    return r


def _same(a: R.Reducer, b: R.Reducer) -> None:
    sa, sb = a.s, b.s
    assert (sa.shape, sa.sampled, sa.other_shapes, sa.indices) == (sb.shape, sb.sampled, sb.other_shapes, sb.indices)
    assert (sa.blank, sa.nonfinite, sa.nonfinite_values, sa.integral) == (
        sb.blank,
        sb.nonfinite,
        sb.nonfinite_values,
        sb.integral,
    )
    assert sa.digests == sb.digests  # the same bytes hashed, sample for sample
    assert (sa.vmin, sa.vmax, sa.ch_count) == (sb.vmin, sb.vmax, sb.ch_count)
    np.testing.assert_allclose(sa.ch_sum, sb.ch_sum, rtol=1e-6)
    np.testing.assert_allclose(sa.ch_sumsq, sb.ch_sumsq, rtol=1e-6)
    np.testing.assert_allclose(np.concatenate(a.means), np.concatenate(b.means), rtol=1e-6, atol=1e-7)
    if a.gallery is not None or b.gallery is not None:
        assert a.gallery is not None and b.gallery is not None
        assert a.gallery.items == b.gallery.items
        np.testing.assert_array_equal(a.gallery.planes, b.gallery.planes)


def _images(n: int, dtype=torch.float32, seed: int = 0) -> list:
    g = torch.Generator().manual_seed(seed)
    return [((torch.rand(3, 16, 16, generator=g) - 0.5) / 0.29).to(dtype) for _ in range(n)]


def test_the_chunk_takes_the_rows_and_the_statistics_are_the_reducers_own():
    xs = _images(600)
    xs[7] = torch.zeros(3, 16, 16)  # blank
    xs[300] = xs[300].clone()
    xs[300][0, 0, 0] = float("nan")
    chunked = _fed(xs, True)
    assert chunked.chunk is not None and chunked.per_chunk < len(xs)  # several chunks through one array
    _same(chunked, _fed(xs, False))
    assert chunked.s.blank == [7] and chunked.s.nonfinite == [300]


def test_the_gallery_keeps_copies_not_views_of_the_reused_array():
    xs = _images(500)
    r = _fed(xs, True, gallery=16)
    assert r.gallery is not None and r.gallery.planes is not None
    kept = r.gallery.planes[:, :16].transpose(1, 0, 2, 3)  # c x n x h x w planes, as n x c x h x w
    np.testing.assert_array_equal(kept, np.stack([x.numpy() for x in xs[:16]]))


@pytest.mark.parametrize(
    "change",
    [
        lambda x: x.double(),  # another dtype: would be cast silently by torch.stack's out=
        lambda x: x[:, :8, :8].contiguous(),  # another shape: would resize the output silently
        lambda x: (x * 100).round().long(),  # integers among floats
    ],
)
def test_rows_of_another_dtype_or_shape_go_the_reducers_way_in_drawing_order(change):
    xs = _images(400)
    for k in (3, 70, 71, 200):  # inside a row, at a row's start, in a later chunk
        xs[k] = change(xs[k])
    chunked = _fed(xs, True)
    _same(chunked, _fed(xs, False))
    assert chunked.s.indices == sorted(chunked.s.indices)


def test_half_precision_and_a_first_sample_of_its_own():
    xs = _images(300, torch.float16)
    _same(_fed(xs, True, row=1), _fed(xs, False, row=1))
    _same(_fed(xs, True, row=50), _fed(xs, False, row=50))


def test_vectors_and_token_rows_are_not_chunked():
    """The vector and token layouts keep their chunks (``Reducer.vectors``): a reused array would change them."""
    vectors = [torch.randn(12) for _ in range(300)]
    r = _fed(vectors, True)
    assert r.chunk is None and r.s.layout == "vector"
    _same(r, _fed(vectors, False))
    np.testing.assert_array_equal(np.concatenate(r.vectors), np.stack([v.numpy() for v in vectors]))


def test_a_chunk_says_no_to_what_it_cannot_take():
    first = torch.zeros(3, 4, 4)
    chunk = chunk_for(first, (3, 4, 4), 10)
    assert isinstance(chunk, Chunk) and chunk.room == 10
    assert not chunk.put([0], [np.zeros((3, 4, 4), np.float32)])  # not a tensor
    assert not chunk.put([0, 1], [first, first.double()])  # two dtypes
    assert not chunk.put([0], [torch.zeros(3, 2, 8)])  # another shape, as many values
    assert not chunk.put([0, 1], [first, torch.zeros(3, 4, 5)])  # torch.stack refuses
    assert chunk.indices == [] and chunk.room == 10
    assert chunk.put([5, 6], [first, first + 1])
    idx, x = chunk.take()
    assert idx == [5, 6] and x.shape == (2, 3, 4, 4) and x[1].min() == 1 and chunk.room == 10
    assert chunk_for(np.zeros((3, 4, 4)), (3, 4, 4), 10) is None
    assert chunk_for(first, (3, 4, 5), 10) is None
    assert chunk_for(torch.zeros(3, 4, 4, dtype=torch.complex64), (3, 4, 4), 10) is None
