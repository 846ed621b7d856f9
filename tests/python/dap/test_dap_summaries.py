"""Through a real debugpy: every place the debugger shows a tensor shows our summary.

The debuggee is ``sample_workspace/inspect_tensors.py`` stopped at its marked line, with the
runtime injected exactly as the extension does it (``pybackend`` prepended to PYTHONPATH).
The request time budget is lifted here (these tests check what each line says, and a loaded
machine may defer any value past a 300 ms budget); ``test_dap_budget.py`` checks the budget.
"""

from __future__ import annotations

import re

import pytest

from support.dap_client import DAPClient
from support.dap_env import SAMPLES, injected_env, marked_line, plain_adapter_env

pytestmark = pytest.mark.timeout(600)  # a ceiling for a loaded machine, not an expectation

PROGRAM = SAMPLES / "inspect_tensors.py"
LINE = marked_line(PROGRAM, "# Set a breakpoint here")


@pytest.fixture(scope="module")
def paused():
    with DAPClient() as dap:
        env = dict(injected_env(), TORCHDOCTOR_BUDGET_VARIABLES_MS="0", TORCHDOCTOR_BUDGET_EVALUATE_MS="0")
        stop = dap.launch_and_stop(str(PROGRAM), [LINE], env=env)
        yield dap, stop


def test_variables_view_shows_summaries(paused):
    dap, stop = paused
    values = {name: var["value"] for name, var in dap.frame_locals(stop.frame_id).items()}
    assert values["images"].startswith("tensor[64, 3, 32, 32] f32 cpu 768 KiB μ=")
    assert values["broken"].startswith("tensor[64, 10] f32 cpu 2.5 KiB ⚠ NaN×1 +Inf×1 μ=")
    assert values["labels"].startswith("tensor[64] i64 cpu 512 B μ=") and values["labels"].endswith("[0, 9]")
    assert values["mask"].startswith("tensor[64] bool cpu 64 B True×")
    assert re.fullmatch(r"tensor\[\] f32 cpu \d\.\d+ grad_fn=NllLossBackward0", values["loss"]), values["loss"]
    assert re.fullmatch(
        r"Parameter\[64, 32\] f32 cpu 8 KiB μ=\S+ σ=\S+ \[\S+, \S+\] \| grad μ=\S+ σ=\S+ \[\S+, \S+\]", values["weight"]
    )
    assert values["half"].startswith("tensor[64, 3, 32, 32] f16 cpu 384 KiB")
    assert (
        values["expanded"].startswith("tensor[1000, 10] f32 cpu 39.1 KiB expanded×1000")
        and "μ=4.5" in values["expanded"]
    )
    assert values["sparse"].startswith("tensor[8, 8] f32 cpu sparse_coo")
    assert values["scores"].startswith("ndarray[50] f64 400 B μ=0.5 σ=0.297 [0, 1]")
    assert values["model"] == "MLP 3 modules, 6.92K params cpu train"
    assert values["batch"].startswith("dict[3 tensors] f32/i64 cpu") and values["batch"].endswith(
        "⚠ NaN in 'logits' ⚠ Inf in 'logits'"
    )
    assert values["outputs"].startswith("list[3 tensors] each [64, 10] f32 cpu 7.5 KiB ⚠ NaN in [1]")


@pytest.mark.parametrize("context", ["hover", "watch", "repl"])
def test_evaluate_contexts_show_the_summary(paused, context):
    dap, stop = paused
    result = dap.evaluate("broken", stop.frame_id, context)
    assert result["result"].startswith("tensor[64, 10] f32 cpu 2.5 KiB ⚠ NaN×1 +Inf×1 μ=")
    assert result["variablesReference"] > 0
    assert dap.evaluate("weight.grad", stop.frame_id, context)["result"].startswith("tensor[64, 32] f32 cpu 8 KiB μ=")
    assert dap.evaluate("model", stop.frame_id, context)["result"] == "MLP 3 modules, 6.92K params cpu train"


def test_training_objects_get_their_line_in_the_debugger(paused):
    dap, stop = paused
    optimizer = dap.evaluate("torch.optim.SGD(model.parameters(), lr=0.1)", stop.frame_id, "hover")["result"]
    assert optimizer.startswith("SGD lr=0.1 momentum=0 weight_decay=0 · 6 params (6.92K values) · no state"), optimizer
    loader = dap.evaluate("torch.utils.data.DataLoader(list(range(10)), batch_size=4)", stop.frame_id, "hover")
    assert loader["result"].startswith("DataLoader 3 batches of 4 · 10 samples"), loader["result"]


def test_a_model_config_gets_its_sizes_and_expands_to_its_fields(paused):
    pytest.importorskip("transformers")  # the debuggee runs this interpreter
    dap, stop = paused
    built = "__import__('transformers').BertConfig(hidden_size=32, num_hidden_layers=2, num_attention_heads=2)"
    result = dap.evaluate(built, stop.frame_id, "hover")
    assert result["result"].startswith("BertConfig bert hidden_size=32 num_hidden_layers=2 num_attention_heads=2 ")
    assert result["variablesReference"] > 0
    fields = dap.children(result)
    assert "hidden_size" in fields and fields["hidden_size"]["value"] == "32", sorted(fields)[:20]


def test_clipboard_gets_summary_then_values(paused):
    dap, stop = paused
    text = dap.evaluate("broken", stop.frame_id, "clipboard")["result"]
    first, rest = text.split("\n", 1)
    assert first.startswith("tensor[64, 10] f32 cpu 2.5 KiB ⚠ NaN×1")
    assert rest.startswith("tensor([[") and "nan" in rest and "inf" in rest


def test_expanding_a_tensor_lists_its_children(paused):
    dap, stop = paused
    weight = dap.frame_locals(stop.frame_id)["weight"]
    children = dap.children(weight)
    assert list(children)[:8] == ["shape", "dtype", "device", "layout", "memory", "stats", "requires_grad", "is_leaf"]
    assert children["shape"]["value"] == "torch.Size([64, 32])" and children["shape"]["evaluateName"] == "weight.shape"
    assert children["dtype"]["value"] == "torch.float32" and children["memory"]["value"] == "'8 KiB'"
    assert (
        children["grad"]["value"].startswith("tensor[64, 32] f32 cpu 8 KiB μ=")
        and children["grad"]["evaluateName"] == "weight.grad"
    )
    assert "'nan': 0" in children["stats"]["value"] and children["stats"]["variablesReference"] > 0
    values = children["values[:10, :10]"]
    assert values["evaluateName"] == "weight[:10, :10]" and values["value"].startswith("[[")
    rows = dap.children(values)
    assert len([name for name in rows if name.isdigit()]) == 10
    assert not {"T", "mT", "H", "mH", "data"} & set(children)
    grad_children = dap.children(children["grad"])
    assert grad_children["shape"]["evaluateName"] == "weight.grad.shape"


def test_expanding_an_image_batch_shows_a_bounded_slice(paused):
    dap, stop = paused
    children = dap.children(dap.frame_locals(stop.frame_id)["images"])
    values = children["values[0, 0, :10, :10]"]
    assert values["evaluateName"] == "images[0, 0, :10, :10]"
    assert dap.evaluate("images[0, 0, :10, :10].shape", stop.frame_id, "watch")["result"] == "torch.Size([10, 10])"
    nan_stats = dap.children(dap.children(dap.frame_locals(stop.frame_id)["broken"])["stats"])
    assert nan_stats["'nan'"]["value"] == "1" and nan_stats["'posinf'"]["value"] == "1"


def test_plain_values_keep_debugpys_presentation(paused):
    dap, stop = paused
    assert dap.evaluate("[1, 2, 3]", stop.frame_id, "repl")["result"] == "[1, 2, 3]"
    assert dap.evaluate("batch.keys()", stop.frame_id, "watch")["result"] == "dict_keys(['images', 'labels', 'logits'])"


def test_without_the_injection_debugpy_shows_torch_repr():
    """The control: the same stop with plain debugpy shows the wall of numbers we replace."""
    with DAPClient(adapter_env=plain_adapter_env()) as dap:
        stop = dap.launch_and_stop(str(PROGRAM), [LINE], env={}, just_my_code=False)
        assert dap.frame_locals(stop.frame_id)["broken"]["value"].startswith("tensor([[")
        plugin = "'pydevd_plugins.extensions.pydevd_plugin_torchdoctor'"
        assert dap.evaluate(f"{plugin} in __import__('sys').modules", stop.frame_id, "repl")["result"] == "False"
