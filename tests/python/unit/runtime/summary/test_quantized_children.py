"""An expanded quantized tensor lists its values dequantized to float32, at float32's digits."""

import warnings

import pytest
import torch

from torchdoctor.runtime.summary.children import tensor_children


def _quantized():
    with warnings.catch_warnings():  # torch deprecates quantized creation functions
        warnings.simplefilter("ignore")
        per_tensor = torch.quantize_per_tensor(torch.tensor([0.2, 0.7, 1.1]), 0.1, 3, torch.quint8)
        per_channel = torch.quantize_per_channel(
            torch.tensor([[0.2, 0.5], [1.2, -0.6]]), torch.tensor([0.1, 0.3]), torch.tensor([0, 1]), 0, torch.qint8
        )
    return per_tensor, per_channel


@pytest.mark.filterwarnings("error")
def test_quantized_values_show_float32_digits_not_float64_noise():
    for q in _quantized():
        values = [c[1] for c in tensor_children(q) if c[0].startswith("values")][0]
        flat = [v for row in values for v in (row if isinstance(row, list) else [row])]
        expected = q.dequantize().reshape(-1).tolist()
        assert all(abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(flat, expected))
        assert all(len(repr(v)) <= 12 for v in flat)  # 0.2, not 0.20000000298023224
