"""False positives of the ninth corpus (2026-12-07: PyTorch-GAN, taming-transformers, peft's
examples, chenyuntc's pytorch-book, ...), each minimised and paired with the bug it must still
catch:

- TD008: ``net = build().eval()`` switches the model as it is built (pytorch-book's ``test()``).
- TD009: a Hugging Face tokenizer is no network; calling it records no graph (peft's
  text-generation benchmark).
- TD007: a per-layer style loss summed in a helper whose caller returns it through a name
  (``style = self.style_loss(...)``, ``return content + 10 * style``) is one step's loss.
- TD017: a loader handed to Opacus' ``make_private`` (Poisson sampling by default) is resampled.
- TD012: a function that returns ``int(...)`` or an f-string on some path gives numbers or text,
  and a value made by NumPy is an array: neither is the tensor this rule is about.
"""

from __future__ import annotations

from support.lint import hits


def rules(text: str, rule: str):
    return [r for r, _ in hits(text) if r == rule]


PREDICT = """
import torch
from torch import nn


def build():
    return nn.Sequential(nn.Linear(4, 4), nn.Dropout(0.5), nn.Linear(4, 2))


@torch.no_grad()
def predict(loader):
    net = build(){chain}
{after}    out = []
    for x in loader:
        out.append(net(x))
    return out
"""


def test_eval_chained_on_the_construction_sets_the_mode():
    assert rules(PREDICT.format(chain=".eval()", after=""), "TD008") == []
    assert rules(PREDICT.format(chain=".eval().to('cpu')", after=""), "TD008") == []


def test_without_eval_or_switched_back_to_train_it_is_still_reported():
    assert rules(PREDICT.format(chain="", after=""), "TD008") == ["TD008"]
    assert rules(PREDICT.format(chain=".train()", after=""), "TD008") == ["TD008"]
    assert rules(PREDICT.format(chain=".eval()", after="    net.train()\n"), "TD008") == ["TD008"]


LATENCY = """
import time

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer


def measure_inference_time(model, tokenizer, prompts):
    times = []
    for prompt in prompts:
        inputs = tokenizer(prompt, return_tensors="pt")
        start = time.perf_counter()
        {call}
        times.append(time.perf_counter() - start)
    return times


tok = AutoTokenizer.from_pretrained("gpt2")
lm = AutoModelForCausalLM.from_pretrained("gpt2")
print(measure_inference_time(lm, tok, ["hi"]))
"""


def test_a_tokenizer_is_not_the_model_of_an_evaluation_loop():
    assert rules(LATENCY.format(call="model.generate(**inputs, max_new_tokens=8)"), "TD009") == []


def test_the_model_called_with_autograd_on_is_still_reported():
    assert rules(LATENCY.format(call="model(**inputs)"), "TD009") == ["TD009"]


STYLE = """
from torch import nn
from stats import moments


class Model(nn.Module):
    def style_loss(self, feats_a, feats_b):
        loss = 0
        for a, b in zip(feats_a, feats_b):
            mean_a, std_a = moments(a)
            mean_b, std_b = moments(b)
            loss += nn.functional.mse_loss(mean_a, mean_b) + nn.functional.mse_loss(std_a, std_b)
        return loss

    def forward(self, feats_a, feats_b):
        style = self.style_loss(feats_a, feats_b)
        {end}
"""


def test_a_summed_loss_the_caller_returns_through_a_name_is_not_reported():
    assert rules(STYLE.format(end="return 10 * style"), "TD007") == []


def test_a_summed_loss_the_caller_only_logs_is_still_reported():
    assert rules(STYLE.format(end="print(float(style))"), "TD007") == ["TD007"]


INDEX = """
import torch


def answer_index(row, task):
    if task == "yesno":
        return 0 if row["answer"] else 1
    if task == "pick":
        return {pick}
"""


def test_a_function_giving_python_numbers_is_not_reported():
    assert rules(INDEX.format(pick='int(row["label"]) - 1'), "TD012") == []
    assert rules(INDEX.format(pick='f"{row}"'), "TD012") == []


def test_a_function_giving_tensors_is_still_reported():
    assert rules(INDEX.format(pick='torch.tensor(row["label"])'), "TD012") == ["TD012"]
    assert rules(INDEX.format(pick="torch.ones(3).sum() / len(row)"), "TD012") == ["TD012"]


UPLOAD = """
import numpy as np
import torch
from PIL import Image


def uploaded_image(upload):
    if upload is not None:
        image = {make}(Image.open(upload))
        return image
"""


def test_a_numpy_array_is_not_a_tensor():
    assert rules(UPLOAD.format(make="np.array"), "TD012") == []


def test_a_tensor_made_from_the_upload_is_still_reported():
    assert rules(UPLOAD.format(make="torch.as_tensor"), "TD012") == ["TD012"]


PRIVATE = """
import torch
from opacus import PrivacyEngine
from torch.utils.data import DataLoader

model = torch.nn.Linear(4, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
train_loader = DataLoader(train_set, batch_size=64)
engine = PrivacyEngine()
{guard}model, optimizer, train_loader = engine.make_private(
{guard}    module=model, optimizer=optimizer, data_loader=train_loader,
{guard}    noise_multiplier=1.0, max_grad_norm=1.0{extra}
{guard})
for epoch in range(3):
    for x, y in train_loader:
        optimizer.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        optimizer.step()
"""


def test_a_loader_opacus_resamples_by_poisson_sampling_needs_no_shuffle():
    assert rules(PRIVATE.format(guard="", extra=""), "TD017") == []
    assert rules(PRIVATE.format(guard="", extra=", poisson_sampling=True"), "TD017") == []


def test_a_loader_opacus_keeps_or_only_sometimes_replaces_is_still_reported():
    assert rules(PRIVATE.format(guard="", extra=", poisson_sampling=False"), "TD017") == ["TD017"]
    guarded = PRIVATE.format(guard="    ", extra="").replace(
        "engine = PrivacyEngine()\n", "if private:\n    engine = PrivacyEngine()\n"
    )
    assert rules(guarded, "TD017") == ["TD017"]
