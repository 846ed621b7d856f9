"""Numerical gradient check: healthy models pass; a wrong custom backward is named."""

from __future__ import annotations

from pathlib import Path

import torch

from support.checks import MODELS, example, new_result, quiet, write
from torchdoctor.checks import gradcheck as G


def run(ex, **options) -> dict:
    # what is checked, not how fast: a loaded machine must not cut the sampling short
    options.setdefault("timeBudgetSeconds", 900)
    return G.run(ex, options, quiet, new_result("gradcheck"))


def test_healthy_models_pass_below_1e_5():
    for file, cls in [("mlp.py", "TinyMLP"), ("cnn.py", "TinyCNN")]:
        r = run(example(MODELS / file, cls))
        assert r["verdict"] == "PASS", r["headline"]
        assert r["details"]["worstRelDiff"] < 1e-5
        assert {row[6] for row in r["table"]["rows"]} == {"pass"}  # torch.autograd.gradcheck agrees


def test_wrong_custom_backward_names_the_function_its_file_line_and_input():
    r = run(example(MODELS / "custom_autograd.py", "SwishNet"))
    assert r["verdict"] == "FAIL"
    assert r["details"]["failingParameters"] == ["act.beta"]
    assert r["details"]["failingFunctions"] == ["SwishFn"]
    line = next(
        i for i, t in enumerate((MODELS / "custom_autograd.py").read_text().splitlines(), 1) if "def backward" in t
    )
    assert r["headline"].startswith(
        f"The backward of the custom autograd.Function `SwishFn` (custom_autograd.py:{line - 1}) is wrong for its input 1 `beta`"
    )
    row = r["table"]["rows"][r["table"]["errorRow"]]
    assert row[0] == "SwishFn.backward, input 1 `beta`" and row[5] == "FAIL" and row[6] == "FAIL"
    x_row = next(row for row in r["table"]["rows"] if row[0] == "SwishFn.backward, input 0 `x`")
    assert x_row[5] == "OK" and x_row[6] == "pass"  # its backward for x is right
    assert any("inherit its error: act.beta" in s for s in r["sentences"])


def test_a_function_without_parameters_is_named_instead_of_the_layers_before_it(tmp_path: Path):
    # the Function forgets a factor for its input: fc1's gradients are wrong because of it
    path = write(
        tmp_path,
        "cube.py",
        """
        import torch
        import torch.nn as nn

        class Cube(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                (x,) = ctx.saved_tensors
                return g * x * x  # BUG: forgets the factor 3

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Linear(5, 8)
                self.fc2 = nn.Linear(8, 2)

            def forward(self, x):
                return self.fc2(Cube.apply(self.fc1(x)))
        """,
    )
    r = run(example(path, "Net"))
    assert r["verdict"] == "FAIL"
    assert r["details"]["failingFunctions"] == ["Cube"]
    assert r["headline"].startswith(
        "The backward of the custom autograd.Function `Cube` (cube.py:10) is wrong for its input 0 `x`"
    )
    assert {"fc1.weight", "fc1.bias"} <= set(r["details"]["failingParameters"])  # they inherit it
    assert "fc2.weight" not in r["details"]["failingParameters"]
    assert any("called at cube.py:22" in s for s in r["sentences"])


def test_elements_are_sampled_at_random_not_the_first_five():
    ex = example(MODELS / "custom_autograd.py", "SwishNet")
    checks = {c.name: c for c in G.check(ex, {"samples": 20, "timeBudgetSeconds": 900}).params}
    assert checks["fc1.weight"].checked == 20 and checks["fc1.weight"].numel == 640
    assert checks["fc2.bias"].checked == 3  # small parameters: every element
    # the worst element of a healthy weight lies anywhere, not only in the first five
    picks = torch.randperm(640, generator=torch.Generator().manual_seed(0))[:20].tolist()
    assert max(picks) > 5


def test_the_users_model_is_left_as_it_was():
    ex = example(MODELS / "mlp.py", "TinyMLP")
    before = {k: v.clone() for k, v in ex.model.state_dict().items()}
    run(ex)
    assert all(v.dtype == torch.float32 for v in ex.model.state_dict().values())
    assert all(torch.equal(v, before[k]) for k, v in ex.model.state_dict().items())
    assert all(p.grad is None for p in ex.model.parameters())


def test_a_wrong_weight_gradient_in_a_custom_linear(tmp_path: Path):
    path = write(
        tmp_path,
        "badlinear.py",
        """
        import torch
        import torch.nn as nn

        class LinearFn(torch.autograd.Function):
            @staticmethod
            def forward(ctx, x, w):
                ctx.save_for_backward(x, w)
                return x @ w.t()

            @staticmethod
            def backward(ctx, g):
                x, w = ctx.saved_tensors
                return g @ w, (g.t() @ x) * 1.01   # 1% off: subtle

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.w = nn.Parameter(torch.randn(3, 5) * 0.3)
                self.head = nn.Linear(3, 2)

            def forward(self, x):
                return self.head(torch.tanh(LinearFn.apply(x, self.w)))

        def torchdoctor_example():
            return Net(), (torch.randn(6, 5), torch.randint(0, 2, (6,)))
        """,
    )
    r = run(example(path, "Net"))
    assert r["verdict"] == "FAIL"
    assert r["details"]["failingParameters"] == ["w"]
    assert r["details"]["failingFunctions"] == ["LinearFn"]
    assert "for its input 1 `w`" in r["headline"]
    fn = {f["inputName"]: f["status"] for f in r["details"]["customFunctions"]}
    assert fn == {"w": "FAIL"}  # x is data: no gradient needed, none checked


def test_dropout_does_not_make_a_healthy_model_fail(tmp_path: Path):
    path = write(
        tmp_path,
        "drop.py",
        """
        import torch.nn as nn

        class Drop(nn.Module):
            def __init__(self):
                super().__init__()
                self.net = nn.Sequential(nn.Linear(6, 10), nn.Dropout(0.5), nn.Tanh(), nn.Linear(10, 3))

            def forward(self, x):
                return self.net(x)
        """,
    )
    assert run(example(path, "Drop"))["verdict"] == "PASS"


def test_a_model_without_parameters_has_nothing_to_check():
    r = run(example(MODELS / "unregistered_layers.py", "ListMLP"))
    assert r["verdict"] == "WARN"
    assert r["headline"] == "ListMLP has no trainable parameters: no gradient to check."


def test_the_padding_row_of_an_embedding_is_not_called_wrong(tmp_path: Path):
    """nn.Embedding(padding_idx=0) gives row 0 no gradient on purpose, yet moving that row moves the
    loss where the batch holds token 0: Hugging Face's ALBERT and ELECTRA (pad id 0) were a FAIL
    whenever an element of it was sampled. Here every element is sampled, token 0 in every row."""
    path = write(
        tmp_path,
        "padded.py",
        """
        import torch
        import torch.nn as nn

        class Padded(nn.Module):
            def __init__(self):
                super().__init__()
                self.emb = nn.Embedding(3, 2, padding_idx=0)
                self.head = nn.Linear(2, 3)

            def forward(self, ids):
                return self.head(self.emb(ids).mean(1))

        def torchdoctor_example():
            ids = torch.tensor([[0, 1, 2], [0, 2, 1]])
            return {"model": Padded(), "inputs": (ids,), "targets": torch.tensor([1, 2])}
        """,
    )
    r = run(example(path, "Padded"))
    assert r["verdict"] == "PASS", r["headline"]
