"""TD014 in test classes: unittest and pytest build the fixture afresh for every test, so a
model moved to the GPU inside one test does not reach the others (a VAE zoo's test files move
the model in a sampling test and run the CPU forward tests on their own copy); a model moved in
``setUp`` is every test's model, and its CPU input is still reported."""

from __future__ import annotations

from support.lint import findings, hits

HEADER = """
import unittest

import torch
from torch import nn
"""


def td014(body: str):
    return hits(HEADER + body, "TD014")


def test_a_move_inside_one_test_does_not_reach_the_other_tests():
    assert (
        td014("""
class AutoencoderChecks(unittest.TestCase):
    def setUp(self):
        self.net = nn.Sequential(nn.Linear(8, 2), nn.Linear(2, 8))

    def test_reconstruct(self):
        batch = torch.rand(4, 8)
        out = self.net(batch)
        self.assertEqual(out.shape, batch.shape)

    def test_draw_on_gpu(self):
        self.net.cuda()
        codes = torch.rand(3, 2, device="cuda")
        print(self.net[1](codes).shape)
""")
        == []
    )


PLAIN = """
net = nn.Linear(8, 2)


def {name}():
    net.cuda()


def test_on_cpu():
    print(net(torch.rand(2, 8)))
"""


def test_a_test_function_of_a_test_file_moving_the_model_reaches_nothing_else():
    text = HEADER + PLAIN.format(name="test_on_gpu")
    assert findings(text, "TD014", path="tests/test_gpu.py") == []


def test_a_script_s_own_test_function_moves_the_model_for_good():
    # ``def test()`` of a training script is an evaluation: the model stays on the GPU after it
    assert [f.line for f in findings(HEADER + PLAIN.format(name="test_on_gpu"), "TD014", path="train.py")] == [14]


def test_a_model_moved_in_setup_still_meets_its_cpu_input():
    assert td014("""
class AutoencoderChecks(unittest.TestCase):
    def setUp(self):
        self.net = nn.Sequential(nn.Linear(8, 2), nn.Linear(2, 8)).cuda()

    def test_reconstruct(self):
        batch = torch.rand(4, 8)
        out = self.net(batch)
        self.assertEqual(out.shape, batch.shape)
""") == [("TD014", 12)]


def test_a_cpu_input_inside_the_test_that_moved_the_model_is_still_reported():
    assert td014("""
class AutoencoderChecks(unittest.TestCase):
    def setUp(self):
        self.net = nn.Linear(8, 2)

    def test_on_gpu(self):
        self.net.cuda()
        print(self.net(torch.rand(4, 8)))
""") == [("TD014", 12)]
