"""Static discovery of nn.Module classes: every spelling of the import, subclasses of subclasses."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from support.checks import MODELS, code
from torchdoctor.checks.discovery import Position, SourceSyntaxError, discover


def names(source: str) -> list[str]:
    return [m.qualname for m in discover(code(source)).models]


@pytest.mark.parametrize(
    "imports, base",
    [
        ("import torch", "torch.nn.Module"),
        ("import torch as T", "T.nn.Module"),
        ("import torch.nn", "torch.nn.Module"),
        ("import torch.nn as nn", "nn.Module"),
        ("from torch import nn", "nn.Module"),
        ("from torch import nn as N", "N.Module"),
        ("from torch.nn import Module", "Module"),
        ("from torch.nn import Module as M", "M"),
        ("from torch.nn.modules.module import Module as Base", "Base"),
        ("import torch.nn as nn", "nn.Sequential"),
        ("from torch.nn import Linear", "Linear"),
        ("import lightning.pytorch as pl", "pl.LightningModule"),
    ],
)
def test_every_spelling_of_the_base(imports: str, base: str):
    assert names(f"{imports}\nclass Net({base}):\n    pass\n") == ["Net"]


@pytest.mark.parametrize(
    "source",
    [
        "import torch.nn as nn\nclass P(nn.Parameter):\n    pass\n",
        "import torch\nclass F(torch.autograd.Function):\n    pass\n",
        "class Module:\n    pass\nclass Net(Module):\n    pass\n",  # a local Module, not torch's
        "import numpy as nn\nclass Net(nn.Module):\n    pass\n",
        "class Net(object):\n    pass\n",
    ],
)
def test_classes_that_are_not_modules(source: str):
    assert names(source) == []


def test_subclasses_of_subclasses_and_nested_classes():
    found = names(
        """
        import torch.nn as nn

        class Grand(Child):          # defined before its base: order does not matter
            pass

        class Base(nn.Module):
            pass

        class Child(Base):
            class Head(nn.Module):
                pass

        class UsesNested(Child.Head):
            pass

        class Mixin:
            pass

        class Both(Mixin, Base):
            pass
        """
    )
    assert found == ["Grand", "Base", "Child", "Child.Head", "UsesNested", "Both"]


def test_ranges_and_constructor_facts():
    d = discover(
        code(
            """
            import torch.nn as nn


            @some_decorator
            class Net(nn.Module):
                def __init__(self, hidden, *, classes, p=0.1):
                    super().__init__()

                def forward(self, x, mask=None):
                    return x
            """
        )
    )
    (m,) = d.models
    assert (m.range.start.line, m.range.start.character) == (4, 0)
    assert (m.range.end.line, m.range.end.character) == (9, 16)
    assert (m.nameRange.start.line, m.nameRange.start.character, m.nameRange.end.character) == (4, 6, 9)
    assert m.initRequired == ["hidden", "classes"]
    assert m.forwardInputs == ["x", "mask"]
    assert d.containing(Position(8, 4)).name == "Net"
    assert d.containing(Position(1, 0)) is None
    assert d.hasExample is False


def test_positions_are_utf16():
    d = discover('import torch.nn as nn\nclass Ñet(nn.Module):\n    tag = "😀😀"\n')
    (m,) = d.models
    assert (m.nameRange.start.character, m.nameRange.end.character) == (6, 9)
    # the statement ends after the closing quote: 11 ASCII + 2 emoji of 2 UTF-16 units each
    assert m.range.end.character == 16


def test_innermost_class_contains_the_position():
    d = discover(
        code("import torch.nn as nn\nclass A(nn.Module):\n    class B(nn.Module):\n        x = 1\n    y = 2\n")
    )
    assert d.containing(Position(3, 8)).qualname == "A.B"
    assert d.containing(Position(4, 4)).qualname == "A"


def test_example_function_is_noticed():
    assert discover((MODELS / "ctor_args.py").read_text()).hasExample is True


def test_syntax_error_has_an_lsp_position():
    with pytest.raises(SourceSyntaxError) as info:
        discover("import torch.nn as nn\nclass A(nn.Module:\n    pass\n")
    assert info.value.line == 1


def test_sample_models_are_all_found():
    found = {p.name: [m.name for m in discover(p.read_text()).models] for p in MODELS.glob("*.py")}
    assert found["custom_autograd.py"] == ["LearnableSwish", "SwishNet"]
    assert found["mlp.py"] == ["TinyMLP"]
    assert found["shape_mismatch.py"] == ["LeNetish"]


@settings(max_examples=150)
@given(st.text(alphabet="classNet(nn.Module):\n pass=import torch as T", max_size=120))
def test_any_text_either_parses_or_raises_the_syntax_error(text: str):
    try:
        d = discover(text)
    except SourceSyntaxError as exc:
        assert exc.line >= 0 and exc.character >= 0
    else:
        assert all(m.range.start.line <= m.range.end.line for m in d.models)


def test_backend_modules_never_import_torch():
    probe = (
        "import sys\n"
        "import torchdoctor.checks.discovery, torchdoctor.checks.jobs, torchdoctor.checks.cli, torchdoctor.checks.text_report\n"
        "import torchdoctor.server.checks_feature, torchdoctor.cli\n"
        "assert 'torch' not in sys.modules, 'torch was imported'\n"
    )
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def constructed(source: str) -> list[tuple[str, str]]:
    return [(m.qualname, m.origin) for m in discover(code(source)).constructed]


def test_an_imported_model_built_at_module_level_is_offered():
    # a Hugging Face script: no class of its own
    src = """
        import torch
        from transformers import GPT2Config, GPT2LMHeadModel, AutoTokenizer
        import transformers as tf
        from torch.utils.data import DataLoader

        config = GPT2Config(n_layer=2, n_embd=64, n_head=2)
        model = GPT2LMHeadModel(config).to("cpu").eval()
        other = tf.BertForSequenceClassification(tf.BertConfig())
        tokenizer = AutoTokenizer.from_pretrained("gpt2")
        loader = DataLoader([1, 2, 3])
        g = torch.Generator()
        head = torch.nn.Sequential(torch.nn.Linear(2, 2))
        """
    assert constructed(src) == [
        ("GPT2LMHeadModel", "constructed"),
        ("tf.BertForSequenceClassification", "constructed"),
        ("torch.nn.Sequential", "constructed"),
    ]
    found = discover(code(src))
    assert found.models == []  # the file's own classes stay the file's own
    lens = found.constructed[0]
    assert (lens.nameRange.start.line, lens.nameRange.start.character) == (6, 8)  # on `GPT2LMHeadModel`


def test_a_name_that_reads_as_a_model_counts_for_an_imported_class():
    src = """
        from mylib import Thing, Stuff
        net = Thing(3)
        stuff = Stuff(3)
        """
    assert constructed(src) == [("Thing", "constructed")]


def test_torchdoctor_example_gets_the_class_it_builds():
    local = """
        import torch
        import torch.nn as nn
        from model import GPT, GPTConfig

        class Head(nn.Module):
            pass

        def torchdoctor_example():
            model = GPT(GPTConfig(n_layer=2))
            return model, (torch.randint(0, 65, (4, 16)), None)
        """
    assert constructed(local) == [("GPT", "example")]
    found = discover(code(local))
    entry = found.constructed[0]
    assert entry.nameRange.start.line == 7 and entry.nameRange.start.character == 4  # on the def's name
    own = """
        import torch.nn as nn

        class Net(nn.Module):
            pass

        def torchdoctor_example():
            return {"model": Net(), "inputs": ()}
        """
    assert constructed(own) == [("Net", "example")]
    assert constructed("def torchdoctor_example():\n    return make()\n") == []
