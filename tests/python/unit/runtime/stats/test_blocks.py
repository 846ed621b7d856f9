"""runtime/stats/blocks.py: block walking covers every element once; expanded (stride-0) dims fold."""

import math

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchdoctor.runtime.stats.blocks import collapse_expanded, iter_blocks

shapes = st.lists(st.integers(1, 7), min_size=0, max_size=4)


@settings(max_examples=60)
@given(shape=shapes, limit=st.integers(1, 50), transpose=st.booleans())
def test_blocks_cover_every_element_once(shape, limit, transpose):
    x = torch.arange(math.prod(shape), dtype=torch.float64).reshape(shape)
    if transpose and x.dim() >= 2:
        x = x.transpose(0, -1)
    blocks = list(iter_blocks(x, limit))
    assert all(b.numel() <= max(limit, 1) or b.dim() == 0 for b in blocks)
    seen = sorted(v for b in blocks for v in b.reshape(-1).tolist())
    assert seen == sorted(x.reshape(-1).tolist())
    assert all(b.data_ptr() >= x.data_ptr() for b in blocks)  # views, not copies
    assert all(b.untyped_storage().data_ptr() == x.untyped_storage().data_ptr() for b in blocks)


def test_blocks_work_on_numpy_too():
    a = np.arange(60.0).reshape(3, 4, 5)
    assert sorted(v for b in iter_blocks(a, 7) for v in np.ravel(b)) == list(np.arange(60.0))


def test_collapse_expanded_folds_stride_zero_dims():
    base = torch.arange(3.0)
    view, mult = collapse_expanded(base.expand(1000, 4, 3).transpose(0, 1))
    assert mult == 4000 and view.shape == (1, 1, 3)
    assert collapse_expanded(base)[1] == 1
    nview, nmult = collapse_expanded(np.broadcast_to(np.arange(3.0), (5, 3)))
    assert nmult == 5 and nview.shape == (1, 3)
