"""TD017: which loaders are training loaders (not test fixtures, yes a ``loader`` a training
loop iterates), and what ``**train_kwargs`` passes."""

import pytest

from support.lint import findings, fixed, hits

FIXTURE = """
from torch.utils.data import DataLoader, Subset
class RegressionTask:
    def __init__(self, data, batch_size=8):
        self.train_loader = DataLoader(data, batch_size=batch_size)
"""


@pytest.mark.parametrize(
    "path",
    [
        "tests/task.py",
        "pkg/mylib/tests/helpers.py",
        "test_training.py",
        "src/training_test.py",
        "conftest.py",
        "C:\\repo\\tests\\task.py",
    ],
)
def test_test_files_hold_fixtures_not_training_loaders(path):
    assert findings(FIXTURE, "TD017", path=path) == []


@pytest.mark.parametrize("path", ["train.py", "contest/train.py", "latest/train.py", None])
def test_other_files_are_checked(path):
    assert [f.line for f in findings(FIXTURE, "TD017", path=path)] == [4]


def test_a_test_function_in_a_pytest_module_is_a_fixture():
    text = """
        import pytest
        from torch.utils.data import DataLoader
        def test_one_epoch_lowers_the_loss(train_ds):
            train_loader = DataLoader(train_ds, batch_size=4)
            assert run_epoch(train_loader) < 1.0
    """
    assert hits(text, "TD017") == []


def test_a_one_batch_subset_has_no_order_to_shuffle():
    text = """
        from torch.utils.data import DataLoader, Subset
        train_subset = Subset(train_loader.dataset, range(1))
        one_batch_train_loader = DataLoader(train_subset, batch_size=1)
        few = DataLoader(Subset(train_ds, [0, 1, 2, 3]), batch_size=4)
    """
    assert hits(text, "TD017") == []


def test_a_larger_subset_still_needs_shuffling():
    text = """
        from torch.utils.data import DataLoader, Subset
        train_loader = DataLoader(Subset(dataset, range(900)), batch_size=8)
    """
    assert hits(text, "TD017") == [("TD017", 2)]


LOOP = """
import torch
from torch.utils.data import DataLoader
dataloader = DataLoader(corpus, batch_size=16)
for epoch in range(3):
    for tokens, targets in dataloader:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(tokens), targets)
        loss.backward()
        optimizer.step()
"""


def test_a_loader_a_training_loop_iterates_is_a_training_loader():
    assert hits(LOOP, "TD017") == [("TD017", 3)]
    assert fixed(LOOP, "TD017").splitlines()[2] == "dataloader = DataLoader(corpus, batch_size=16, shuffle=True)"


def test_a_loader_handed_to_a_train_function_is_a_training_loader():
    text = """
        import torch
        from torch.utils.data import DataLoader
        def fit(model, batches, opt):
            for x, y in batches:
                opt.zero_grad()
                torch.nn.functional.mse_loss(model(x), y).backward()
                opt.step()
        loader = DataLoader(points, batch_size=32)
        fit(net, loader, sgd)
    """
    assert hits(text, "TD017") == [("TD017", 8)]


def test_a_loader_only_evaluated_is_not_a_training_loader():
    text = """
        import torch
        from torch.utils.data import DataLoader
        loader = DataLoader(corpus, batch_size=16)
        with torch.no_grad():
            for tokens, targets in loader:
                print(model(tokens).argmax(-1).eq(targets).sum())
    """
    assert hits(text, "TD017") == []


def test_self_loader_iterated_by_a_training_method():
    text = """
        import torch
        from torch.utils.data import DataLoader
        class Trainer:
            def __init__(self, data):
                self.loader = DataLoader(data, batch_size=8)
            def run(self):
                for x, y in self.loader:
                    self.opt.zero_grad()
                    torch.nn.functional.mse_loss(self.model(x), y).backward()
                    self.opt.step()
    """
    assert hits(text, "TD017") == [("TD017", 5)]


ACCEL = """
import torch
def main(args, dataset1, dataset2):
    use_accel = torch.accelerator.is_available()
    train_kwargs = {'batch_size': args.batch_size}
    test_kwargs = {'batch_size': args.test_batch_size}
    if use_accel:
        accel_kwargs = {'num_workers': 1, 'pin_memory': True, 'shuffle': True}
        train_kwargs.update(accel_kwargs)
        test_kwargs.update(accel_kwargs)
    train_loader = torch.utils.data.DataLoader(dataset1, **train_kwargs)
    test_loader = torch.utils.data.DataLoader(dataset2, **test_kwargs)
"""


def test_shuffle_added_only_on_the_accelerator_branch_is_reported():
    (finding,) = findings(ACCEL, "TD017")
    assert finding.line == 10
    assert "shuffling depends on the accelerator branch" in finding.message
    assert "`if use_accel:` (line 6)" in finding.message and "on the CPU" in finding.message


def test_the_fix_goes_into_the_dict_so_the_call_cannot_get_shuffle_twice():
    after = fixed(ACCEL, "TD017")
    assert after.splitlines()[3] == "    train_kwargs = {'batch_size': args.batch_size, 'shuffle': True}"
    assert "DataLoader(dataset1, **train_kwargs)" in after


@pytest.mark.parametrize(
    "setup",
    [
        "train_kwargs = {'batch_size': 64, 'shuffle': True}",
        "train_kwargs = {'batch_size': 64}\n    train_kwargs.update({'shuffle': True})",
        "train_kwargs = {'batch_size': 64}\n    train_kwargs.update(shuffle=True)",
        "train_kwargs = {'batch_size': 64}\n    train_kwargs['sampler'] = sampler",
        "train_kwargs = dict(batch_size=64, shuffle=True)",
        "base = {'shuffle': True}\n    train_kwargs = {**base, 'batch_size': 64}",
        "train_kwargs = {'batch_size': 64}\n    train_kwargs.update(options)",
        "train_kwargs = load_options()",
    ],
)
def test_kwargs_that_shuffle_or_cannot_be_read_are_fine(setup):
    text = (
        f"import torch\ndef main(train_ds, options):\n    {setup}\n"
        "    train_loader = torch.utils.data.DataLoader(train_ds, **train_kwargs)\n"
    )
    assert hits(text, "TD017") == []


def test_kwargs_parameter_is_not_read():
    text = """
        import torch
        def train(dataset, **loader_kwargs):
            train_loader = torch.utils.data.DataLoader(dataset, **loader_kwargs)
    """
    assert hits(text, "TD017") == []


def test_kwargs_that_never_shuffle_are_reported_with_the_plain_message():
    text = """
        import torch
        train_kwargs = {"batch_size": 64, "num_workers": 2}
        train_loader = torch.utils.data.DataLoader(train_ds, **train_kwargs)
    """
    (finding,) = findings(text, "TD017")
    assert "does not shuffle" in finding.message
    assert (
        fixed(text, "TD017").splitlines()[1] == 'train_kwargs = {"batch_size": 64, "num_workers": 2, "shuffle": True}'
    )


def test_only_the_nearest_folders_make_a_test_file():
    assert findings(FIXTURE, "TD017", path="tests/unit/data/loaders.py") == []
    assert [f.line for f in findings(FIXTURE, "TD017", path="/home/me/tests/projects/cifar/src/train.py")] == [4]


def test_kwargs_chosen_by_a_conditional_expression_are_read():
    text = """
        import torch
        kwargs = {'num_workers': 1, 'pin_memory': True} if use_cuda else {}
        train_loader = torch.utils.data.DataLoader(train_set, batch_size=64, **kwargs)
        other = {'shuffle': True} if use_cuda else {'shuffle': True, 'num_workers': 0}
        train_loader2 = torch.utils.data.DataLoader(train_set, batch_size=64, **other)
    """
    (finding,) = findings(text, "TD017")
    assert finding.line == 3 and finding.fix is None  # shuffle=True next to **kwargs could clash
