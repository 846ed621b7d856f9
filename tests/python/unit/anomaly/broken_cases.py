"""What Torch Doctor must say about each broken sample: shared by the CLI and DAP tests.

``line`` is the sample's line marked ``# stopped here`` (where the debugger stops and the report
points); ``sentence`` is how the sentence starts; ``names`` are what the report must name.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Dict, Tuple

BROKEN = Path(__file__).resolve().parents[4] / "sample_workspace" / "broken"
MARKER = "# stopped here"


@dataclass(frozen=True)
class Case:
    kind: str
    step: int
    sentence: str
    names: Tuple[str, ...] = ()

    def path(self, name: str) -> Path:
        return BROKEN / name

    @staticmethod
    def line(name: str) -> int:
        for number, text in enumerate((BROKEN / name).read_text(encoding="utf-8").splitlines(), 1):
            if MARKER in text:
                return number
        raise AssertionError(f"{name} has no '{MARKER}' line")


CASES: Dict[str, Case] = {
    "lr_too_high.py": Case("loss_spike", 5, "Loss spike at step 5: 6639 is 684x the median 9.71 of the last 5 losses"),
    "dead_relu.py": Case("dead_output", 2, "Dead output: all 2048 values of `model.act2` (ReLU) were 0 for 3 steps in a row (steps 0-2)",
                         ("model.act2",)),
    "missing_zero_grad.py": Case("stale_grad", 1, "Gradients not zeroed: `optimizer.step()` at step 1 applies gradients",
                                 ("model.fc1.weight",)),
    "log_zero_loss.py": Case("loss_nan", 1, "NaN loss at step 1; every module output was finite, so the loss computation made it: `log` of 2 zeros"),
    "zero_std_norm.py": Case("nonfinite_output", 0, "NaN in the output of `model.norm` (Standardize) at step 0: 64 of 768 values; its inputs were finite",
                             ("model.norm",)),
    "exploding_deep.py": Case("exploding_grad", 0, "Exploding gradient of `model.layers.20.bias` (Linear `model.layers.20`) at step 0",
                              ("model.layers.20.bias", "model.layers.0.weight")),
    "nan_in_input.py": Case("nonfinite_output", 2, "NaN in the output of `model.fc1` (Linear) at step 2: 32 of 2048 values; its inputs already had NaN (1 of 640 values)",
                            ("model.fc1",)),
}
