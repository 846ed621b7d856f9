"""Numbers, sizes, counts, shapes and dtypes as the one-line summary spells them."""

import pytest

from torchdoctor.spelling import clip, fmt_bytes, fmt_count, fmt_num, fmt_scalar, fmt_shape, short_dtype


@pytest.mark.parametrize(
    "value, text",
    [
        (None, "?"),
        (0.0, "0"),
        (3.0, "3"),
        (-4.1234, "-4.12"),
        (0.012345, "0.0123"),
        (1234.5, "1234"),
        (1.2e-5, "1.2e-5"),
        (-3.0e7, "-3e7"),
        (float("nan"), "NaN"),
        (float("inf"), "+Inf"),
        (float("-inf"), "-Inf"),
        (255, "255"),
        (10**7, "1e7"),
        (True, "True"),
    ],
)
def test_fmt_num(value, text):
    assert fmt_num(value) == text


@pytest.mark.parametrize(
    "nbytes, text",
    [
        (0, "0 B"),
        (1023, "1023 B"),
        (786432, "768 KiB"),
        (1258291, "1.2 MiB"),
        (3 * 2**30, "3 GiB"),
        (None, "?"),
    ],
)
def test_fmt_bytes(nbytes, text):
    assert fmt_bytes(nbytes) == text


def test_counts_shapes_scalars_and_dtypes():
    assert fmt_count(999) == "999" and fmt_count(12345) == "12.3K" and fmt_count(7_000_000) == "7M"
    assert (
        fmt_shape((64, 3, 32, 32)) == "[64, 3, 32, 32]" and fmt_shape(()) == "[]" and fmt_shape([2, None]) == "[2, *]"
    )
    assert fmt_scalar(2.302585093) == "2.30259" and fmt_scalar(7) == "7" and fmt_scalar(1 - 2j) == "1-2j"
    assert short_dtype("torch.float32") == "f32" and short_dtype("bfloat16") == "bf16"
    assert short_dtype("torch.float8_e4m3fn") == "f8e4m3fn" and short_dtype("torch.quint8") == "quint8"
    assert clip("a\nb  c") == "a b c" and len(clip("x" * 500, 50)) == 50
