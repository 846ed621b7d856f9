"""Loading real project layouts (issue 14): a minGPT-style package with a sibling example, and
DCGAN/VAE-style scripts that parse arguments at module level; real workers through the CLI."""

from __future__ import annotations

from pathlib import Path

from support.checks import write
from torchdoctor.cli import main

GPT_MODULE = """
import torch
import torch.nn as nn
from torch.nn import functional as F

from mingpt.utils import CfgNode as CN


class GPT(nn.Module):
    @staticmethod
    def get_default_config():
        C = CN()
        C.vocab_size, C.block_size, C.n_embd = None, None, 16
        return C

    def __init__(self, config):
        super().__init__()
        self.wte = nn.Embedding(config.vocab_size, config.n_embd)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)

    def forward(self, idx, targets=None):
        logits = self.lm_head(self.wte(idx))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss
"""

UTILS = """
class CfgNode:
    def __init__(self, **kwargs):
        self.__dict__.update(kwargs)
"""

SIBLING = """
import torch
from mingpt.model import GPT


def torchdoctor_example():
    c = GPT.get_default_config()
    c.vocab_size, c.block_size = 65, 16
    idx = torch.randint(0, 65, (4, 8), generator=torch.Generator().manual_seed(0))
    return GPT(c), (idx, idx)
"""


def test_a_mingpt_style_package_runs_from_its_root_with_the_sibling_example(tmp_path: Path, capsys, monkeypatch):
    pkg = tmp_path / "mingpt"
    pkg.mkdir()
    write(pkg, "__init__.py", "")
    write(pkg, "utils.py", UTILS)
    write(pkg, "model.py", GPT_MODULE)
    write(pkg, "torchdoctor_example.py", SIBLING)
    monkeypatch.chdir(tmp_path)
    assert main(["check", "shapes", "mingpt/model.py::GPT", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"source": "torchdoctor_example"' in out  # the sibling's GPT is the class we looked for
    assert "No module named 'mingpt'" not in out


SCRIPT = """
import argparse
import torch
import torch.nn as nn

parser = argparse.ArgumentParser()
parser.add_argument('--batchSize', type=int, default=64)
parser.add_argument('--nz', type=int, default=16)
{required}
opt = parser.parse_args()
print(opt)
torch.manual_seed(opt.nz)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(nn.Conv2d(3, 8, 4, 2, 1), nn.LeakyReLU(0.2), nn.Conv2d(8, 1, 4, 1, 0), nn.Sigmoid())

    def forward(self, input):
        return self.main(input).view(-1, 1).squeeze(1)
"""


def test_a_script_with_a_module_level_argparse_runs_with_its_defaults(tmp_path: Path, capsys):
    path = write(tmp_path, "main.py", SCRIPT.format(required=""))
    assert main(["check", "shapes", str(path), "--options", '{"spatialSize": 8}']) == 0
    assert "PASS  Shape trace on Discriminator" in capsys.readouterr().out


def test_a_required_option_at_module_level_is_explained(tmp_path: Path, capsys):
    path = write(tmp_path, "main.py", SCRIPT.format(required="parser.add_argument('--dataset', required=True)"))
    assert main(["check", "shapes", str(path)]) == 2
    out = capsys.readouterr().out
    assert "importing main.py exited (SystemExit 2)" in out
    assert "the following arguments are required: --dataset" in out
    assert "unrecognized arguments" not in out and "--check" not in out.split("exited")[1][:200]
