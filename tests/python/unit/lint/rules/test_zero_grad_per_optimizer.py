"""TD001/TD002 check each optimizer on its own: clearing one model's gradients or
backpropagating one loss says nothing about another optimizer; distributed autograd needs no
``zero_grad``; the quick fix never calls a method the optimizer lacks."""

import pytest

from support.lint import code, findings, fixed, hits

GAN = """
import torch
import torch.nn as nn
netD = Discriminator()
netG = Generator()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4)
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4)
criterion = nn.BCELoss()
for epoch in range(5):
    for real, _ in loader:
        netD.zero_grad()
        errD_real = criterion(netD(real), ones)
        errD_real.backward()
        fake = netG(noise())
        errD_fake = criterion(netD(fake.detach()), zeros)
        errD_fake.backward()
        optimizerD.step()
        netG.zero_grad()
        errG = criterion(netD(fake), ones)
        errG.backward()
        optimizerG.step()
"""


def test_the_gan_clearing_each_model_is_fine():
    assert hits(GAN) == []


def test_clearing_the_discriminator_does_not_clear_the_generators_optimizer():
    text = GAN.replace("        netG.zero_grad()\n", "")
    (finding,) = findings(text)
    assert (finding.rule_id, finding.line) == ("TD001", 19)
    assert "`optimizerG`" in finding.message
    assert fixed(text, "TD001").splitlines()[19] == "        optimizerG.zero_grad()"


def test_a_model_zero_grad_clears_an_optimizer_built_from_its_parameters():
    text = code("""
        import torch
        class Trainer:
            def __init__(self, model):
                self.model = model
                self.opt = torch.optim.SGD(self.model.parameters(), lr=0.1)
            def fit(self, loader):
                for x, y in loader:
                    self.model.zero_grad()
                    self.model(x).sub(y).pow(2).mean().backward()
                    self.opt.step()
    """)
    assert hits(text) == []


def test_a_model_zero_grad_with_an_optimizer_we_cannot_see_is_trusted():
    text = code("""
        def fit(model, optimizer, loader):
            for x, y in loader:
                model.zero_grad()
                model(x).sub(y).pow(2).mean().backward()
                optimizer.step()
    """)
    assert hits(text) == []


SEQ2SEQ = code("""
    import torch
    params = list(encoder.parameters()) + list(decoder.parameters())
    opt = torch.optim.Adam(params)
    for x in loader:
        encoder.zero_grad()
        decoder.zero_grad()
        decoder(encoder(x)).mean().backward()
        opt.step()
""")


def test_parameters_collected_in_a_list_or_groups_are_followed():
    assert hits(SEQ2SEQ) == []


def test_clearing_one_of_the_models_an_optimizer_steps_is_reported():
    # PyTorchZeroToAll's seq2seq with ``encoder.zero_grad()`` left out: the encoder's gradients add up
    (finding,) = findings(SEQ2SEQ.replace("    encoder.zero_grad()\n", ""))
    assert (finding.rule_id, finding.line) == ("TD001", 7)
    assert "parameters of `encoder`" in finding.message and "only calls `decoder.zero_grad()`" in finding.message
    assert fixed(SEQ2SEQ.replace("    encoder.zero_grad()\n", ""), "TD001").count("opt.zero_grad()") == 1


def test_generator_step_before_its_backward_is_not_hidden_by_the_discriminators():
    text = GAN.replace(
        "        errG.backward()\n        optimizerG.step()\n", "        optimizerG.step()\n        errG.backward()\n"
    )
    (finding,) = findings(text)
    assert (finding.rule_id, finding.line) == ("TD002", 19)
    assert "`errG.backward()` (line 20)" in finding.message


def test_one_backward_feeding_two_optimizers_is_fine():
    text = code("""
        import torch
        opt_enc = torch.optim.Adam(enc.parameters())
        opt_dec = torch.optim.Adam(dec.parameters())
        for x in loader:
            opt_enc.zero_grad()
            opt_dec.zero_grad()
            dec(enc(x)).pow(2).mean().backward()
            opt_enc.step()
            opt_dec.step()
    """)
    assert hits(text) == []


DIST = """
import torch.distributed.autograd as dist_autograd
import torch.optim as optim
from torch.distributed.optim import DistributedOptimizer
def run_trainer(model, batches, criterion):
    opt = DistributedOptimizer(optim.SGD, model.parameter_rrefs(), lr=0.05)
    for epoch in range(10):
        for data, target in batches:
            with dist_autograd.context() as context_id:
                loss = criterion(model(data), target)
                dist_autograd.backward(context_id, [loss])
                opt.step(context_id)
"""


def test_distributed_autograd_needs_no_zero_grad():
    assert hits(DIST) == []


def test_no_zero_grad_fix_for_a_distributed_optimizer_outside_a_context():
    text = DIST.replace("            with dist_autograd.context() as context_id:\n", "            if True:\n")
    assert hits(text, "TD001") == []


def test_a_plain_optimizer_in_a_dist_context_is_still_not_reported():
    text = DIST.replace("DistributedOptimizer(optim.SGD, model.parameter_rrefs(), lr=0.05)", "make_optimizer()")
    assert hits(text, "TD001") == []


def test_no_fix_for_a_local_optimizer_class_without_zero_grad():
    text = code("""
        class Averager:
            def __init__(self, params):
                self.params = list(params)
            def step(self):
                pass
        optimizer = Averager(model.parameters())
        for x, y in loader:
            model(x).sub(y).pow(2).mean().backward()
            optimizer.step()
    """)
    (finding,) = findings(text, "TD001")
    assert finding.fix is None


def test_the_fix_is_offered_for_torch_and_unknown_optimizers():
    for build in ("torch.optim.SGD(model.parameters(), lr=0.1)", "build_optimizer(model)"):
        text = (
            f"import torch\noptimizer = {build}\nfor x, y in loader:\n"
            "    model(x).sub(y).pow(2).mean().backward()\n    optimizer.step()\n"
        )
        (finding,) = findings(text, "TD001")
        assert finding.fix is not None, build


FLAGGED_UPDATE = """
import torch
model = Net()
use_optimizer = parse_args().use_optimizer
if use_optimizer:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
for data, targets in batches():
    {clear}
    loss = criterion(model(data), targets)
    loss.backward()
    if use_optimizer:
        optimizer.step()
    else:
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-0.1)
"""


def test_a_model_cleared_only_on_the_manual_update_path_does_not_clear_the_optimizer():
    # word_language_model's shape with the optimizer's zero_grad removed: `model.zero_grad()`
    # runs only when `use_optimizer` is false, and `optimizer.step()` only when it is true.
    clear = "if use_optimizer:\n        pass\n    else:\n        model.zero_grad()"
    assert hits(FLAGGED_UPDATE.format(clear=clear), "TD001") == [("TD001", 14)]


@pytest.mark.parametrize(
    "clear",
    [
        "if use_optimizer:\n        optimizer.zero_grad()\n    else:\n        model.zero_grad()",
        "model.zero_grad()",
        "if not use_optimizer:\n        model.zero_grad()\n    else:\n        optimizer.zero_grad()",
        "if step_ok:\n        model.zero_grad()",
    ],
)
def test_a_clear_that_can_run_with_the_step_is_enough(clear):
    assert hits(FLAGGED_UPDATE.format(clear=clear), "TD001") == []


# Two critics stepped back to back after one summed loss, then the generators' phase every
# n_critic iterations with its own backward and step (the shape of a DualGAN/CycleGAN loop).
CRITICS = code("""
    import torch
    opt_G = torch.optim.Adam(gen.parameters())
    opt_DA = torch.optim.Adam(critic_a.parameters())
    opt_DB = torch.optim.Adam(critic_b.parameters())
    for i, (a, b) in enumerate(loader):
        opt_DA.zero_grad()
        opt_DB.zero_grad()
        d_loss = critic_a(gen(b).detach()).mean() + critic_b(gen(a).detach()).mean()
        d_loss.backward()
        opt_DA.step()
        opt_DB.step()
        if i % 5 == 0:
            opt_G.zero_grad()
            g_loss = -critic_a(gen(b)).mean() - critic_b(gen(a)).mean()
            g_loss.backward()
            opt_G.step()
""")


def test_optimizers_stepped_back_to_back_after_one_backward_share_it():
    assert hits(CRITICS) == []


def test_a_step_moved_before_its_backward_is_still_reported_beside_a_run_of_steps():
    # every iteration (a step under an ``if`` is taken for deliberate accumulation, never reported)
    every = CRITICS.replace("    if i % 5 == 0:\n", "").replace("\n        ", "\n    ")
    assert hits(every) == []
    text = every.replace("g_loss.backward()\n    opt_G.step()", "opt_G.step()\n    g_loss.backward()")
    assert hits(text) == [("TD002", 14)]


def test_a_helper_clearing_one_of_the_models_is_reported_when_its_loop_clears_nothing():
    text = code("""
        import torch
        def train(x):
            decoder.zero_grad()
            decoder(encoder(x)).mean().backward()
            optimizer.step()
        optimizer = torch.optim.Adam(list(encoder.parameters()) + list(decoder.parameters()))
        for x in loader:
            train(x)
    """)
    assert hits(text) == [("TD001", 5)]
    assert hits(text.replace("    decoder.zero_grad()", "    optimizer.zero_grad()")) == []
    assert hits(text.replace("    train(x)", "    optimizer.zero_grad()\n    train(x)")) == []
