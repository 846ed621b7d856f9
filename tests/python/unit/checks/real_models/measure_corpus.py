"""The overfit verdict on every model of the corpus, healthy and with a planted bug (issue 14).

Not a test (pytest does not collect it): a measurement to quote. Run from the repository root:

    .venv/bin/python tests/python/unit/checks/real_models/measure_corpus.py

Each row: the model, how it was built (its example, or the class alone as the CodeLens runs it),
the verdict, the steps and the seconds. A healthy model must not FAIL; a planted bug must not PASS.
The last line counts both.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [HERE, os.path.join(HERE, "..", "..", "..")]  # models.py, then tests/python (support/)

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

import models as M  # noqa: E402
from support.checks import example, new_result, quiet  # noqa: E402
from torchdoctor.checks import example as E  # noqa: E402
from torchdoctor.checks import overfit  # noqa: E402

ALONE = f"import sys\nsys.path.insert(0, {HERE!r})\nimport torch\nimport torch.nn as nn\nimport torch.nn.functional as F\nfrom models import *\n"
PLANTED_ALONE = {
    "BlindVAE": "class BlindVAE(VAE):\n    def forward(self, x):\n        mu, logvar = self.encode(x.view(-1, 784))\n"
    "        z = self.reparameterize(mu, logvar) * 0.0\n        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar\n",
    "SoftmaxLM": "class SoftmaxLM(CharLM):\n    def forward(self, idx):\n        return super().forward(idx).softmax(-1)\n",
    "BlindLM": "class BlindLM(CharLM):\n    def forward(self, idx):\n        return super().forward(torch.zeros_like(idx))\n",
}


class UnusedHead(M.GPTModel):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.aux_head = nn.Linear(cfg["emb_dim"], 2)


class BlindDecoderVAE(M.VAE):
    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        return torch.sigmoid(self.fc4(torch.relu(self.fc3(self.reparameterize(mu, logvar) * 0.0)))), mu, logvar


def _with(make, model):
    returned = make()
    returned["model"] = model
    return returned


def from_example(returned: dict):
    ex = E.from_user_function(lambda: returned, "example.py", type(returned["model"]), {})
    return E.complete(ex, {})


def alone(folder: str, name: str, body: str = ""):
    path = os.path.join(folder, f"{name.lower()}_alone.py")
    with open(path, "w") as f:
        f.write(ALONE + body)
    return example(path, name)  # type: ignore[arg-type]


def cases(folder: str):
    healthy = [
        ("nanoGPT GPT (dropout 0.2)", "example", lambda: from_example(M.example_gpt(dropout=0.2))),
        ("minGPT GPT", "example", lambda: from_example(M.example_mingpt())),
        ("LLMs-from-scratch GPTModel", "example", lambda: from_example(M.example_gptmodel())),
        ("word-LM Transformer", "example", lambda: from_example(M.example_word_transformer())),
        ("word-LM RNNModel (LSTM, hidden tuple)", "example", lambda: from_example(M.example_rnn())),
        ("mnist Net", "example", lambda: from_example(M.example_mnist())),
        ("DCGAN discriminator", "example", lambda: from_example(M.example_discriminator())),
        ("VAE (recon + KL)", "example", lambda: from_example(M.example_vae())),
        ("DropoutCNN", "class alone", lambda: alone(folder, "DropoutCNN")),
        ("VAE", "class alone", lambda: alone(folder, "VAE")),
        ("ConvAutoencoder", "class alone", lambda: alone(folder, "ConvAutoencoder")),
        ("CharLM", "class alone", lambda: alone(folder, "CharLM")),
    ]
    if M.hf_gpt2() is not None:
        healthy += [
            ("HF GPT2LMHeadModel", "example", lambda: from_example(M.example_hf_gpt2())),
            ("HF BertForSequenceClassification", "example", lambda: from_example(M.example_hf_bert())),
        ]
    planted = [
        (
            "nanoGPT, .detach() on the attention residual",
            "example",
            lambda: from_example(M.example_gpt(cut_attention_residual=True)),
        ),
        (
            "GPTModel with an unused head",
            "example",
            lambda: from_example(_with(M.example_gptmodel, UnusedHead(M.GPT_CONFIG_TINY))),
        ),
        (
            "VAE whose decoder ignores the code",
            "example",
            lambda: from_example(_with(M.example_vae, BlindDecoderVAE())),
        ),
    ] + [
        (f"{name} (planted)", "class alone", lambda n=name, b=body: alone(folder, n, b))
        for name, body in PLANTED_ALONE.items()
    ]
    return healthy, planted


def run(build) -> tuple[str, int, float]:
    torch.manual_seed(0)
    started = time.monotonic()
    r = overfit.run(build(), {"timeBudgetSeconds": 900}, quiet, new_result("overfit"))
    return r["verdict"], r["details"].get("steps", 0), time.monotonic() - started


def main() -> None:
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as folder:
        healthy, planted = cases(folder)
        print("| model | built from | overfit verdict | steps | s |\n|---|---|---|---|---|")
        ok = caught = 0
        for kind, rows in (("healthy", healthy), ("planted", planted)):
            for name, how, build in rows:
                verdict, steps, seconds = run(build)
                good = verdict != "FAIL" if kind == "healthy" else verdict in ("FAIL", "WARN")
                ok += kind == "healthy" and good
                caught += kind == "planted" and good
                print(
                    f"| {name} | {how} | {verdict}{'' if good else ' (wrong)'} | {steps} | {seconds:.0f} |", flush=True
                )
        print(
            f"healthy without a false FAIL: {ok}/{len(healthy)}; planted bugs caught (not PASS): {caught}/{len(planted)}"
        )


if __name__ == "__main__":
    main()
