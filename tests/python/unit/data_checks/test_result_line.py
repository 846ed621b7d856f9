"""data_checks/result_line.py: the worker's result line with the gallery's pixels spliced in is
byte for byte what ``checks/worker.encode`` writes, and the result is left as it was."""

from __future__ import annotations

import copy
import json

from support.data_checks import Images, check
from torchdoctor.checks.worker import encode as encode_json
from torchdoctor.data_checks import result_line


def message(result: dict) -> dict:
    return {"event": "result", "nonce": "n0", "result": result}


def test_a_gallery_line_is_the_plain_encoding_byte_for_byte():
    result = check(Images(n=40))
    images = result["splits"][0]["gallery"]["images"]
    assert images and all(isinstance(im["pixels"], str) for im in images)
    before = copy.deepcopy(result)
    line = result_line.encode(message(result))
    assert line == encode_json(message(before))
    assert result == before  # the placeholders are taken back out
    assert json.loads(line)["result"]["splits"][0]["gallery"]["images"][3]["pixels"] == images[3]["pixels"]


def test_text_that_json_escapes_is_encoded_as_usual():
    # never a gallery's (base64), but a line must stay right whatever a result holds
    odd = ['a"b', "back\\slash", "tab\there", "caf\u00e9", "del\x7f", "x" * 10]
    result = {"splits": [{"gallery": {"images": [{"pixels": p, "label": "l"} for p in odd]}}, {"gallery": None}, 3]}
    line = result_line.encode(message(result))
    assert line == encode_json(message(result))
    assert [im["pixels"] for im in json.loads(line)["result"]["splits"][0]["gallery"]["images"]] == odd


def test_lines_without_a_gallery_and_with_nan_are_as_before():
    for msg in (
        {"event": "progress", "fraction": 0.5, "message": "drawing"},
        message({"splits": [{"gallery": {"images": [{"pixels": "QUJD"}]}, "mean": float("nan")}]}),
        message({"error": "no splits"}),
    ):
        assert result_line.encode(msg) == encode_json(msg)
        assert "NaN" not in result_line.encode(msg)


def test_one_odd_text_among_base64_ones_is_the_only_one_encoded_as_usual():
    # the pixels are vetted all at once; one that JSON escapes sends every one to the per-text test
    for odd in ("nul\x00", "del\x7f", 'q"', "\u00ff"):
        texts = ["QUJD", odd, "REVG"]
        result = {"splits": [{"gallery": {"images": [{"pixels": t} for t in texts]}}]}
        line = result_line.encode(message(result))
        assert line == encode_json(message(result))
        assert [im["pixels"] for im in json.loads(line)["result"]["splits"][0]["gallery"]["images"]] == texts
