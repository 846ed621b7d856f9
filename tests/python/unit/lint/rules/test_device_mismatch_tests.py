"""TD014 in test classes: unittest and pytest build the fixture afresh for every test, so a
model moved to the GPU inside one test does not reach the others (a VAE zoo's test files move
the model in a sampling test and run the CPU forward tests on their own copy); a model moved in
``setUp`` is every test's model, and its CPU input is still reported. Only a model the test
gets afresh (built in it, or in ``setUp``) is let go: one built once for many tests (module
level, ``setUpClass``) stays moved for the tests after, and a helper class named ``Tester`` is
no test class."""

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


def test_a_test_function_moving_a_module_level_model_moves_it_for_the_later_tests():
    # pytest does not rebuild module globals between tests: ``test_on_cpu`` gets the GPU model
    # (cf7dba6 had this test assert silence; the move does persist)
    text = HEADER + PLAIN.format(name="test_on_gpu")
    assert [f.line for f in findings(text, "TD014", path="tests/test_gpu.py")] == [14]


OWN_MODELS = """
def test_on_gpu():
    net = nn.Linear(8, 2)
    net.cuda()
    print(net(torch.rand(2, 8, device="cuda")))


def test_on_cpu():
    net = nn.Linear(8, 2)
    print(net(torch.rand(2, 8)))
"""


def test_a_test_function_moving_a_model_it_builds_itself_reaches_nothing_else():
    assert findings(HEADER + OWN_MODELS, "TD014", path="tests/test_gpu.py") == []


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


def test_a_model_built_once_per_class_and_moved_in_one_test_reaches_the_next_test():
    # ``setUpClass`` builds one model for every test of the class: the move in ``test_a_gpu``
    # is still in force when ``test_b_cpu`` runs
    assert td014("""
class SharedModelChecks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.net = nn.Linear(8, 2)

    def test_a_gpu(self):
        self.net.cuda()
        print(self.net(torch.rand(2, 8, device="cuda")))

    def test_b_cpu(self):
        print(self.net(torch.rand(2, 8)))
""") == [("TD014", 16)]


HELPER_CLASS = """
class {name}:
    def setUp(self):
        self.net = nn.Linear(8, 2)

    def test(self):
        self.net.cuda()
        return self.net(torch.rand(2, 8, device="cuda"))

    def predict(self):
        return self.net(torch.rand(2, 8))
"""


def test_a_helper_class_whose_name_starts_with_test_is_no_test_class():
    # ``Tester`` is an object of the program: its ``test()`` moves the model for ``predict()``
    # (its ``setUp()`` is an ordinary method here, not a fixture run before each test)
    text = HEADER + HELPER_CLASS.format(name="Tester")
    assert [f.line for f in findings(text, "TD014", path="tests/test_runner.py")] == [15]


def test_a_test_named_class_outside_a_test_file_is_no_test_class():
    text = HEADER + HELPER_CLASS.format(name="TestHarness")
    assert [f.line for f in findings(text, "TD014", path="evaluate.py")] == [15]


PYTEST_CLASS = """
class TestSampling:
    def setup_method(self):
        self.net = nn.Linear(8, 2)

    def test_on_gpu(self):
        self.net.cuda()
        print(self.net(torch.rand(2, 8, device="cuda")))

    def test_on_cpu(self):
        print(self.net(torch.rand(2, 8)))
"""


def test_a_pytest_class_of_a_test_file_with_a_per_test_fixture_is_a_test_class():
    assert findings(HEADER + PYTEST_CLASS, "TD014", path="tests/test_sampling.py") == []
