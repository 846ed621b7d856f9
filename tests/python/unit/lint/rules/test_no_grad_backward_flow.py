"""TD013's model-under-no_grad search from each loss is skipped when no name built from a
no-grad model call can reach the loss (a long script evaluates under no_grad in every block):
the paths it follows must still be found, however many names they pass through."""

from support.lint import code, hits

T = "import torch\nimport torch.nn as nn\n"
SETUP = """
    model = nn.Linear(8, 2)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    criterion = nn.CrossEntropyLoss()
"""


def lint_loop(body):
    return hits(T + code(SETUP) + code(body), "TD013")


def test_the_output_passes_through_several_names_to_the_loss():
    assert lint_loop("""
        for x, y in loader:
            with torch.no_grad():
                logits = model(x)
            scaled, extra = logits / 2, 0
            loss = criterion(scaled, y)
            loss.backward()
            optimizer.step()
    """) == [("TD013", 8)]


def test_the_output_is_bound_by_a_walrus_in_an_if_test():
    assert lint_loop("""
        for x, y in loader:
            with torch.no_grad():
                logits = model(x)
            if (out := logits.float()) is not None:
                pass
            loss = criterion(out, y)
            loss.backward()
            optimizer.step()
    """) == [("TD013", 8)]


def test_only_the_block_whose_no_grad_output_reaches_the_loss_is_reported():
    block = """
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                probe = model(x)
    """
    bad = """
        for x, y in loader:
            with torch.no_grad():
                frozen = model(x)
            loss = criterion(frozen, y)
            loss.backward()
            optimizer.step()
    """
    text = T + code(SETUP) + code(block) * 3 + code(bad) + code(block) * 2
    assert hits(text, "TD013") == [("TD013", 26)]


TRAINER = code("""
    import torch
    class Trainer:
        def __init__(self, diffusion_model, accelerator, dl):
            self.model = diffusion_model
            self.accelerator = accelerator
            self.opt = torch.optim.Adam(diffusion_model.parameters(), lr=1e-4)
            self.dl = dl
        def train(self, steps):
            for step in range(steps):
                data = next(self.dl)
                {forward}
                self.accelerator.backward(loss)
                self.opt.step()
                self.opt.zero_grad()
""")


def test_a_trainers_model_stepped_by_its_constructor_parameters_name():
    # the denoising-diffusion-pytorch trainer's shape: the optimizer takes
    # ``diffusion_model.parameters()``, the loop calls ``self.model``
    bad = TRAINER.format(forward="with torch.no_grad():\n                loss = self.model(data)")
    assert hits(bad) == [("TD013", 12)]
    assert hits(TRAINER.format(forward="loss = self.model(data)")) == []
