"""checks/example/construct.py (and snippet.py): constructing the class, or the snippet that says what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from support.checks import example, write
from torchdoctor.checks import example as E
from torchdoctor.checks import result as R
from torchdoctor.checks.example.construct import construct_kind


def model_file(tmp_path: Path, body: str, name: str = "net.py") -> Path:
    return write(tmp_path, name, "import torch\nimport torch.nn as nn\n\n\n" + body)


@pytest.fixture
def one_thread():
    """As the worker runs the checks (threads=1): on a busy machine more threads only spin."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_constructor_with_arguments_asks_for_an_example_with_the_snippet(tmp_path: Path):
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self, hidden, n_classes=3):\n        super().__init__()\n        self.f = nn.Linear(4, hidden)\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    err = info.value
    assert err.kind == R.ERR_NEEDS_EXAMPLE
    assert err.message.startswith("Net.__init__ needs arguments (hidden): Torch Doctor cannot guess them.")
    assert "def torchdoctor_example():" in err.snippet and "model = Net(hidden=...)" in err.snippet
    assert 'return {"model": model, "inputs": (x,), "targets": targets}' in err.snippet


def test_model_that_needs_cuda_says_so(tmp_path: Path):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    path = model_file(
        tmp_path,
        "class Net(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.f = nn.Linear(3, 2).cuda()\n\n    def forward(self, x):\n        return self.f(x)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "Net")
    assert info.value.kind == R.ERR_NEEDS_CUDA
    assert info.value.message.startswith("Net() needs CUDA, and the torch of this interpreter sees no GPU")


@pytest.mark.parametrize(
    "words",
    [
        "Torch not compiled with CUDA enabled",  # the CPU wheel
        "Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",  # the CUDA wheel, no GPU
        "No CUDA GPUs are available",
    ],
)
def test_each_wheels_words_for_no_gpu_say_needs_cuda(words):
    """Whichever torch wheel the interpreter has: ``.cuda()`` on a machine without a GPU fails with
    other words (the CUDA wheel, pip's default on Linux, never says "cuda")."""
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    assert construct_kind(RuntimeError(words)) == R.ERR_NEEDS_CUDA
    assert construct_kind(RuntimeError("mat1 and mat2 shapes cannot be multiplied")) == R.ERR_CONSTRUCT


def test_a_hugging_face_model_built_in_the_file_gets_a_snippet_that_runs(tmp_path: Path, one_thread):
    """``model = GPT2LMHeadModel(config)`` (the CodeLens over a constructed model): token ids below the
    vocabulary, labels for the LM head, the import from ``transformers``; pasted into the file, it passes."""
    pytest.importorskip("transformers")
    from support.checks import new_result, quiet
    from torchdoctor.checks import overfit

    path = write(
        tmp_path,
        "hf_gpt.py",
        """
        from transformers import GPT2Config, GPT2LMHeadModel

        config = GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32)
        model = GPT2LMHeadModel(config)
        """,
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "GPT2LMHeadModel")
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE
    snippet = info.value.snippet
    assert "\nfrom transformers import GPT2LMHeadModel, GPT2Config\n" in snippet and "modeling_gpt2" not in snippet
    assert "input_ids = torch.randint(0, config.vocab_size, (8, 16))  # token ids below the vocabulary size" in snippet
    assert "vocab_size=50," in snippet  # the vocabulary of the model the file built
    assert "torch.randn" not in snippet and "(8,))" not in snippet
    assert '"targets": labels}  # passed as forward(labels=targets)' in snippet

    path.write_text(path.read_text() + "\n\n" + snippet)  # pasted as the result says
    torch.manual_seed(0)  # as the worker does: the weights and the snippet's token ids
    ex = example(path, "GPT2LMHeadModel")
    assert ex.source == "torchdoctor_example" and tuple(ex.targets.shape) == (8, 16)
    # lr 1e-2 keeps the test short (some 25 steps); at the default 1e-3 it passes in some 150
    options = {"timeBudgetSeconds": 900, "lr": 1e-2}
    r = overfit.run(ex, options, quiet, new_result("overfit", "GPT2LMHeadModel"))
    assert r["verdict"] == "PASS", r["headline"]


def test_a_hugging_face_sequence_classifier_gets_a_padding_token_and_a_batch_of_eight(tmp_path: Path, one_thread):
    """GPT2Config's pad_token_id is None, and GPT2ForSequenceClassification refuses a batch of more than one
    without it (it finds each row's last token by it): the snippet sets one; pasted, it builds and runs."""
    pytest.importorskip("transformers")
    path = write(
        tmp_path,
        "hf_cls.py",
        """
        from transformers import GPT2Config, GPT2ForSequenceClassification

        config = GPT2Config(n_layer=1, n_embd=16, n_head=2, vocab_size=50, n_positions=32, num_labels=3)
        model = GPT2ForSequenceClassification(config)
        """,
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, "GPT2ForSequenceClassification")
    snippet = info.value.snippet or ""
    assert "pad_token_id=0" in snippet and "labels = torch.randint(0, config.num_labels, (8,))" in snippet
    path.write_text(path.read_text() + "\n\n" + snippet)
    torch.manual_seed(0)
    ex = example(path, "GPT2ForSequenceClassification")
    assert ex.source == "torchdoctor_example" and ex.model.config.pad_token_id == 0
    loss = ex.loss(ex.output())  # the forward that raised "Cannot handle batch sizes > 1 if no padding token"
    assert loss.dim() == 0 and torch.isfinite(loss) and tuple(ex.targets.shape) == (8,)


def test_a_model_built_in_the_file_gives_the_vocabulary_its_class_source_does_not(tmp_path: Path):
    write(
        tmp_path,
        "tokenlib.py",
        """
        import torch.nn as nn

        class Table(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.emb = nn.Embedding(n, 8)

        class TokenNet(nn.Module):
            def __init__(self, n):
                super().__init__()
                self.table, self.head = Table(n), nn.Linear(8, n)

            def forward(self, idx):
                return self.head(self.table.emb(idx))
        """,
    )
    path = write(tmp_path, "use.py", "from tokenlib import TokenNet\n\nnet = TokenNet(37)\n")
    with pytest.raises(E.ExampleError) as info:
        example(path, "TokenNet")
    snippet = info.value.snippet
    assert "    idx = torch.randint(0, 37, (8, 16))  # token ids below the vocabulary size" in snippet
    assert "from tokenlib import TokenNet  #" in snippet and "torch.randn" not in snippet
    compile(snippet, "snippet.py", "exec")


# A tiny config (2 layers, hidden 32) as a user's file builds one; the snippet must run whatever it says.
HF_FILES = {
    "BertForSequenceClassification": "BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37, num_labels=3)",
    "T5ForConditionalGeneration": "T5Config(vocab_size=99, d_model=32, d_kv=16, d_ff=37, num_layers=2, num_heads=2)",
    "LlamaForCausalLM": "LlamaConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)",
    "LlamaForSequenceClassification": "LlamaConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=37)",
    "MistralForCausalLM": "MistralConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=1, intermediate_size=37)",
    "BartForConditionalGeneration": "BartConfig(vocab_size=99, d_model=32, encoder_layers=2, decoder_layers=2, encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=37, decoder_ffn_dim=37)",
}


@pytest.mark.parametrize("class_name", list(HF_FILES))
def test_the_snippet_of_a_hugging_face_class_runs_as_pasted(tmp_path: Path, class_name: str, one_thread):
    """The CodeLens over ``model = X(config)``: the needs-example snippet, pasted into the file as the
    result says, builds a small model (every layer stack and width small: BART's decoder was left at
    12 layers of 16 heads, Mistral's 8 key-value heads refused 2 heads), and the checks run on it: the
    overfit test memorises the batch and the shape trace keeps the samples apart. Llama's config has
    no padding token: the snippet sets pad_token_id=0 (its sequence classifier needs one for a batch
    of 8), and the causal LM still learns with token 0 as padding."""
    pytest.importorskip("transformers")
    from support.checks import new_result, quiet
    from torchdoctor.checks import overfit, shape_trace

    config = HF_FILES[class_name]
    path = write(
        tmp_path,
        "hf_model.py",
        f"from transformers import {config.split('(')[0]}, {class_name}\n\n"
        f"config = {config}\nmodel = {class_name}(config)\n",
    )
    with pytest.raises(E.ExampleError) as info:
        example(path, class_name)
    assert info.value.kind == R.ERR_NEEDS_EXAMPLE
    snippet = info.value.snippet or ""
    assert f"\nfrom transformers import {class_name}, {config.split('(')[0]}\n" in snippet
    assert "vocab_size=99," in snippet  # the vocabulary of the model the file built
    path.write_text(path.read_text() + "\n\n" + snippet)  # pasted as the result says
    torch.manual_seed(0)  # as the worker does
    ex = example(path, class_name)
    assert ex.source == "torchdoctor_example" and ex.loss_sees == "model"  # labels=: the model's own loss
    assert sum(p.numel() for p in ex.model.parameters()) < 100_000  # small, as the snippet says
    loss = ex.loss(ex.output())
    assert loss.dim() == 0 and torch.isfinite(loss)
    if class_name.startswith("Llama"):
        assert "pad_token_id=0" in snippet and ex.model.config.pad_token_id == 0
    r = overfit.run(ex, {"timeBudgetSeconds": 900}, quiet, new_result("overfit", class_name))
    assert r["verdict"] == "PASS", r["headline"]
    r = shape_trace.run(ex, {}, quiet, new_result("shapes", class_name))
    assert r["verdict"] == "PASS" and r["details"]["samplesMix"] is False, r["sentences"]
