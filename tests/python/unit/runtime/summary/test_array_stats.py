"""numpy arrays' lines: what the header claims about memory must be true of every shape."""

import numpy as np
import pytest
import torch

from torchdoctor.runtime.summary.api import stats, summarize

pytestmark = pytest.mark.filterwarnings("error")


@pytest.mark.parametrize("shape", [(0, 3), (3, 0), (0, 5, 4)])
def test_an_empty_array_is_not_called_expanded(shape):
    # numpy gives every axis of an empty array stride 0; nothing is repeated for all that
    empty = np.zeros(shape)
    assert summarize(empty) == f"ndarray[{', '.join(map(str, shape))}] f64 0 B empty"
    assert "expanded" not in stats(empty)


def test_an_empty_expanded_tensor_is_just_empty():
    assert summarize(torch.empty(1, 0).expand(5, 0)) == "tensor[5, 0] f32 cpu 0 B empty"


def test_a_broadcast_array_is_still_expanded():
    assert stats(np.broadcast_to(np.arange(2.0), (10, 2)))["expanded"] == 10
