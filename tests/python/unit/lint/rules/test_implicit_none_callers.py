"""TD012 reports where it matters: a warning naming the caller that uses the None as a
tensor; information when no caller is in sight; nothing for checked results, ``return f()``
of a None-returning helper, Lightning hooks, or dataset/config attributes."""

import pytest

from support.lint import code, findings, hits

HELPER = """
import torch
def style_vector(meta):
    if "text" in meta:
        return torch.tanh(encoder(meta["text"]))
    if "preset" in meta:
        return presets[meta["preset"]]
"""


def test_a_caller_using_the_result_as_a_tensor_is_named():
    text = HELPER + "vec = style_vector(prompt)\nbatch = vec.unsqueeze(0)\n"
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and finding.line == 2
    assert "`vec.unsqueeze(0)` (line 8)" in finding.message
    assert "without checking for None" in finding.message


@pytest.mark.parametrize(
    "use",
    [
        "scaled = style_vector(p) * 2",
        "first = style_vector(p)[0]",
        "out = torch.cat([style_vector(p), other])",
        "style_vector(p).norm()",
    ],
)
def test_direct_tensor_uses_of_the_call(use):
    (finding,) = findings(HELPER + use + "\n", "TD012")
    assert finding.severity == "warning"
    assert "(line 7)" in finding.message


@pytest.mark.parametrize(
    "use",
    [
        "vec = style_vector(p)\nif vec is None:\n    vec = default\nvec.unsqueeze(0)",
        "vec = style_vector(p)\nif vec is not None:\n    vec.unsqueeze(0)",
        "vec = style_vector(p)\nif not vec:\n    raise SystemExit(1)",
        "vec = style_vector(p) or default",
        "vec = style_vector(p)\nassert vec is not None\nprint(vec.shape)",
    ],
)
def test_callers_that_check_for_none_are_fine(use):
    assert hits(HELPER + use + "\n", "TD012") == []


def test_without_a_caller_in_sight_it_is_only_information():
    (finding,) = findings(HELPER, "TD012")
    assert finding.severity == "information"
    assert "No caller in this file" in finding.message


def test_the_message_does_not_call_the_return_line_the_end():
    text = code("""
        import torch
        def coco_api(dataset, steps):
            out = torch.zeros(steps)
            if isinstance(dataset, Detection):
                return out
    """)
    (finding,) = findings(text, "TD012")
    assert "its end" not in finding.message
    assert "when `if isinstance(dataset, Detection)` is false" in finding.message


def test_dataset_and_config_attributes_are_not_tensors():
    text = code("""
        import torch
        import torchvision
        def get_coco_api_from_dataset(dataset):
            for _ in range(10):
                if isinstance(dataset, torch.utils.data.Subset):
                    dataset = dataset.dataset
            if isinstance(dataset, torchvision.datasets.CocoDetection):
                return dataset.coco
        def learning_rate(args):
            if args.schedule == "cosine":
                return args.lr
    """)
    assert hits(text, "TD012") == []


def test_returning_a_helper_that_returns_none_is_fine():
    text = code("""
        import torch
        def log_stats(x):
            print(x.mean())
        def maybe_log(x, verbose):
            if verbose:
                return log_stats(x)
        maybe_log(torch.ones(3), True)
    """)
    assert hits(text, "TD012") == []


def test_lightning_hooks_may_return_none_by_design():
    text = code("""
        import torch
        import lightning as L
        class Classifier(L.LightningModule):
            def training_step(self, batch, batch_idx):
                x, y = batch
                if x.numel() == 0:
                    return
                loss = torch.nn.functional.cross_entropy(self(x), y)
                if torch.isfinite(loss):
                    return loss
            def on_validation_epoch_end(self):
                if self.trainer.is_global_zero:
                    return torch.stack(self.outputs).mean()
    """)
    assert hits(text, "TD012") == []


def test_recursive_calls_are_not_callers():
    text = code("""
        import torch
        def flatten(x, depth):
            if depth:
                return flatten(x.flatten(1), depth - 1)
            if x.dim() > 1:
                return x
    """)
    assert [(f.rule_id, f.severity) for f in findings(text, "TD012")] == [("TD012", "information")]


def test_methods_without_a_caller_in_sight_are_left_alone():
    text = code("""
        import torch
        class Dispatch:
            def handle(self, op, x):
                if op == "neg":
                    return torch.neg(x)
    """)
    assert hits(text, "TD012") == []


def test_a_method_whose_caller_uses_the_result_is_reported():
    text = code("""
        import torch
        class Encoder:
            def project(self, x):
                if x.dim() == 2:
                    return torch.tanh(x)
            def forward(self, x):
                return self.project(x).sum(-1)
    """)
    (finding,) = findings(text, "TD012")
    assert finding.severity == "warning" and "`self.project(x).sum(-1)` (line 7)" in finding.message
