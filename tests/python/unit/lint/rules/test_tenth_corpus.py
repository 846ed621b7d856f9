"""False positives of the tenth corpus (2026-12-07: 23 unseen projects, cleanrl, DeepRL,
deepspeech.pytorch, pytorch_geometric's examples, ...), each minimised and paired with the bug
it must still catch:

- TD010: an ``evaluate()`` helper that builds a model of its own from a checkpoint and puts that
  copy in eval mode leaves the trained model alone (cleanrl's DQN evaluation), whatever the
  names; a copy it gets from a project function that builds one too, but not the trained
  model a function hands back (``return model``).
- TD012: a Flask view's ``jsonify(...)`` and a NumPy value chosen by a conditional expression
  (``np.random.randint(n) if explore else np.argmax(q)``) are no tensors.
"""

from __future__ import annotations

from support.lint import hits


def rules(text: str, rule: str):
    return [r for r, _ in hits(text) if r == rule]


EVALUATE = """
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(self.drop(x))


def evaluate(path, Model, net=None):
{body}
    with torch.no_grad():
        return model(torch.randn(8, 4)).sum().item()


model = Net()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(100):
    opt.zero_grad()
    model(torch.randn(8, 4)).sum().backward()
    opt.step()
    if step % 10 == 0:
        torch.save(model.state_dict(), "m.pt")
        print(evaluate("m.pt", Model=Net, net=model))
"""

OWN_COPY = """    model = Model()
    model.load_state_dict(torch.load(path, weights_only=True))
    model.eval()"""


def test_a_helper_evaluating_its_own_copy_leaves_the_trained_model_alone():
    assert rules(EVALUATE.format(body=OWN_COPY), "TD010") == []
    renamed = OWN_COPY.replace("model", "fresh") + "\n    model = fresh"
    assert rules(EVALUATE.format(body=renamed), "TD010") == []


def test_a_helper_switching_the_trained_model_is_still_reported():
    # the global model being trained, and the model passed in
    assert rules(EVALUATE.format(body="    model.eval()"), "TD010") == ["TD010"]
    passed = "    net.eval()\n    model = net"
    assert rules(EVALUATE.format(body=passed), "TD010") == ["TD010"]


HANDED_BACK = EVALUATE.replace("def evaluate", "def {helper}():\n{returns}\n\n\ndef evaluate")


def test_a_helper_getting_the_trained_model_from_a_function_is_still_reported():
    # ``current()`` hands back the global model being trained: switching it is TD010's bug
    body = "    fresh = current()\n    fresh.eval()\n    model = fresh"
    handed = HANDED_BACK.replace("{helper}", "current").replace("{returns}", "    return model")
    assert rules(handed.format(body=body), "TD010") == ["TD010"]
    # a factory that builds and loads a model of its own is a copy, as before
    factory = "    net = Net()\n    net.load_state_dict(torch.load('m.pt', weights_only=True))\n    return net"
    built = HANDED_BACK.replace("{helper}", "current").replace("{returns}", factory)
    assert rules(built.format(body=body), "TD010") == []


VIEW = """
import torch
from flask import Flask, jsonify, request

app = Flask(__name__)
model = torch.nn.Linear(4, 1)


@app.route("/predict", methods=["POST"])
def predict():
    if request.method == "POST":
        with torch.no_grad():
            y = model(torch.tensor(request.json["x"])){item}
        return {result}
"""


def test_a_flask_view_returns_a_response_not_a_tensor():
    assert rules(VIEW.format(item=".item()", result='jsonify({"y": y})'), "TD012") == []


CHOOSE = """
import numpy as np
import torch


def choose(epsilon, q):
    if q.ndim == 1:
        return {pick}
    elif q.ndim == 2:
        return np.argmax(q, axis=-1)
"""


def test_numpy_values_picked_by_a_conditional_are_no_tensors():
    numpy_pick = "np.random.randint(len(q)) if np.random.rand() < epsilon else np.argmax(q)"
    assert rules(CHOOSE.format(pick=numpy_pick), "TD012") == []


def test_a_conditional_that_may_give_a_tensor_is_still_reported():
    torch_pick = "torch.randint(len(q), ()) if np.random.rand() < epsilon else torch.argmax(q)"
    assert rules(CHOOSE.format(pick=torch_pick), "TD012") == ["TD012"]
