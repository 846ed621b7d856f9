"""What Torch Doctor must say about each broken sample: shared by the CLI and DAP tests.

``line`` is the sample's line marked ``# stopped here`` (where the debugger stops and the report
points). ``sentence`` is a regular expression the sentence must start with: words and counts that
are the same on every CPU are spelled out; measured floats are captured as named groups, and
``relations`` say what must hold between them (``ratio > 10 * threshold``), never their digits,
which differ with the CPU's kernel set (AVX-512, AVX2, plain). ``names`` are what the report must
name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Dict, Mapping, Tuple

BROKEN = Path(__file__).resolve().parents[3] / "sample_workspace" / "broken"
MARKER = "# stopped here"
NUM = r"[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?"  # how the runtime's fmt_num spells a number

Relation = Callable[[Mapping[str, float]], bool]


def num(name: str) -> str:
    """A named group capturing one number of the sentence."""
    return f"(?P<{name}>{NUM})"


def literal(text: str) -> str:
    return re.escape(text)


@dataclass(frozen=True)
class Case:
    kind: str
    step: int
    sentence: str
    names: Tuple[str, ...] = ()
    relations: Tuple[Tuple[str, Relation], ...] = ()

    def path(self, name: str) -> Path:
        return BROKEN / name

    def check(self, sentence: str) -> Dict[str, float]:
        """Assert the sentence has the expected shape and its numbers their relations; return them."""
        match = re.match(self.sentence, sentence)
        assert match, f"{sentence!r} does not start with /{self.sentence}/"
        numbers = {key: float(value) for key, value in match.groupdict().items()}
        for label, holds in self.relations:
            assert holds(numbers), f"{label} does not hold for {numbers} in {sentence!r}"
        for label in self.names:
            assert label in sentence, f"{label!r} not named in {sentence!r}"
        return numbers

    @staticmethod
    def line(name: str) -> int:
        for number, text in enumerate((BROKEN / name).read_text(encoding="utf-8").splitlines(), 1):
            if MARKER in text:
                return number
        raise AssertionError(f"{name} has no '{MARKER}' line")


CASES: Dict[str, Case] = {
    "lr_too_high.py": Case(
        "loss_spike",
        5,
        literal("Loss spike at step 5: ")
        + num("loss")
        + " is "
        + num("ratio")
        + "x the median "
        + num("median")
        + literal(" of the last 5 losses (threshold ")
        + num("threshold")
        + literal("x)"),
        relations=(
            ("ratio = loss / median", lambda n: abs(n["ratio"] - n["loss"] / n["median"]) <= 0.02 * n["ratio"]),
            ("far past the threshold", lambda n: n["ratio"] > 10 * n["threshold"]),
        ),
    ),
    "dead_relu.py": Case(
        "dead_output",
        2,
        literal("Dead output: all 2048 values of `model.act2` (ReLU) were 0 for 3 steps in a row (steps 0-2)"),
        ("model.act2",),
    ),
    "missing_zero_grad.py": Case(
        "stale_grad",
        1,
        literal("Gradients not zeroed: `optimizer.step()` at step 1 applies gradients"),
        ("model.fc1.weight",),
    ),
    "log_zero_loss.py": Case(
        "loss_nan",
        1,
        literal(
            "NaN loss at step 1; every module output was finite, so the loss computation made it: `log` of 2 zeros"
        ),
    ),
    "zero_std_norm.py": Case(
        "nonfinite_output",
        0,
        literal("NaN in the output of `model.norm` (Standardize) at step 0: 64 of 768 values; its inputs were finite"),
        ("model.norm",),
    ),
    "exploding_grad.py": Case(
        "exploding_grad",
        0,
        literal("Exploding gradient of `model.project.bias` (Linear `model.project`) at step 0: max |g| = ")
        + num("max_abs")
        + literal(", above the threshold ")
        + num("threshold")
        + literal("; the first of 2 parameters past it, counting back from the loss; the gradients nearest the loss (")
        + num("near")
        + literal(") and nearest the input (")
        + num("first")
        + literal(") are below it"),
        ("model.project.bias",),
        relations=(
            ("far past the threshold", lambda n: n["max_abs"] > 10 * n["threshold"]),
            ("the neighbours far below it", lambda n: max(n["near"], n["first"]) < n["threshold"] / 100),
        ),
    ),
    "nan_in_input.py": Case(
        "nonfinite_output",
        2,
        literal(
            "NaN in the output of `model.fc1` (Linear) at step 2: 32 of 2048 values; "
            "its inputs already had NaN (1 of 640 values)"
        ),
        ("model.fc1",),
    ),
}
