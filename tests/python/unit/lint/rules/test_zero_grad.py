"""TD001: missing zero_grad."""

from support.lint import code, findings, fixed, hits

LOOP = """
import torch
model = torch.nn.Linear(3, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for x, y in batches:
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    optimizer.step()
"""


def test_loop_without_zero_grad_is_reported_on_the_step():
    assert hits(LOOP) == [("TD001", 7)]


def test_message_names_the_optimizer():
    from support.lint import findings

    (finding,) = findings(LOOP)
    assert "`optimizer.zero_grad()`" in finding.message


def test_fix_inserts_zero_grad_after_the_step_with_the_real_name():
    text = LOOP.replace("optimizer", "opt_main")
    after = fixed(text, "TD001")
    assert after.splitlines()[6:8] == ["    opt_main.step()", "    opt_main.zero_grad()"]
    assert hits(after) == []


def test_zero_grad_anywhere_in_the_iteration_is_fine():
    for clear in ("optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=True)", "model.zero_grad()"):
        text = LOOP.replace("    loss.backward()", f"    {clear}\n    loss.backward()")
        assert hits(text) == [], clear


def test_clearing_parameter_grads_by_hand_is_fine():
    text = LOOP + "    for p in model.parameters():\n        p.grad = None\n"
    assert hits(text) == []


def test_zero_grad_once_per_epoch_is_not_enough():
    text = code("""
        import torch
        net = torch.nn.Linear(2, 1)
        opt = torch.optim.Adam(net.parameters())
        for epoch in range(3):
            opt.zero_grad()
            for xb, yb in loader:
                net(xb).sum().backward()
                opt.step()
    """)
    assert hits(text) == [("TD001", 8)]


def test_gradient_accumulation_with_zero_grad_after_the_step_is_fine():
    text = code("""
        import torch
        opt = torch.optim.SGD(params, lr=0.1)
        for i, (x, y) in enumerate(loader):
            loss = crit(model(x), y) / 4
            loss.backward()
            if (i + 1) % 4 == 0:
                opt.step()
                opt.zero_grad()
    """)
    assert hits(text) == []


def test_each_optimizer_of_a_gan_is_checked_separately():
    text = code("""
        import torch
        opt_d = torch.optim.Adam(D.parameters())
        opt_g = torch.optim.Adam(G.parameters())
        for real in loader:
            opt_d.zero_grad()
            d_loss(real).backward()
            opt_d.step()
            g_loss(real).backward()
            opt_g.step()
    """)
    assert hits(text) == [("TD001", 9)]


def test_grad_scaler_step_names_the_optimizer():
    text = code("""
        import torch
        scaler = torch.amp.GradScaler("cuda")
        optimizer = torch.optim.AdamW(model.parameters())
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = crit(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
    """)
    assert hits(text) == [("TD001", 8)]
    assert "optimizer.zero_grad()" in fixed(text, "TD001")


def test_scheduler_step_and_env_step_are_not_optimizer_steps():
    text = code("""
        import torch
        scheduler = torch.optim.lr_scheduler.StepLR(opt, 1)
        for obs in env_loop:
            loss = policy_loss(obs)
            loss.backward()
            scheduler.step()
            env.step(action)
    """)
    assert hits(text) == []


def test_step_helper_called_from_a_loop_without_zero_grad():
    text = code("""
        def train_step(model, optimizer, x, y):
            loss = crit(model(x), y)
            loss.backward()
            optimizer.step()

        for x, y in loader:
            train_step(model, optimizer, x, y)
    """)
    assert hits(text) == [("TD001", 4)]


def test_step_helper_whose_caller_clears_is_fine():
    text = code("""
        def train_step(model, optimizer, x, y):
            loss = crit(model(x), y)
            loss.backward()
            optimizer.step()

        for x, y in loader:
            optimizer.zero_grad()
            train_step(model, optimizer, x, y)
    """)
    assert hits(text) == []


def test_single_step_outside_any_loop_is_fine():
    assert hits("loss.backward()\noptimizer.step()\n") == []


def test_lbfgs_closure_clears_inside_the_closure():
    text = code("""
        for _ in range(5):
            def closure():
                optimizer.zero_grad()
                loss = f(w)
                loss.backward()
                return loss
            optimizer.step(closure)
    """)
    assert hits(text) == []


def test_manual_optimization_training_step_without_zero_grad():
    text = code("""
        class Lit(LightningModule):
            def training_step(self, batch, idx):
                opt = self.optimizers()
                loss = self.compute(batch)
                self.manual_backward(loss)
                opt.step()
    """)
    assert hits(text) == [("TD001", 6)]


def test_no_fix_when_the_step_shares_its_line():
    from support.lint import findings

    text = LOOP.replace("    optimizer.step()", "    optimizer.step(); print('stepped')")
    (finding,) = findings(text)
    assert finding.rule_id == "TD001" and finding.fix is None


# A sequence model trained with LBFGS, which re-evaluates a closure several times per step.
LBFGS_LOOP = """
import torch
from torch import nn, optim
rnn = nn.LSTM(1, 16)
mse = nn.MSELoss()
opt = optim.LBFGS(rnn.parameters(), lr=0.5)
for it in range(20):
    def reevaluate():
        opt.zero_grad()
        pred, _ = rnn(series)
        loss = mse(pred, shifted)
        loss.backward()
        return loss
    opt.step(reevaluate)
"""


def test_an_lbfgs_closure_that_clears_is_fine():
    assert hits(LBFGS_LOOP) == []


def test_an_lbfgs_closure_without_zero_grad_is_reported_at_the_step_without_a_fix():
    [finding] = findings(LBFGS_LOOP.replace("        opt.zero_grad()\n", ""), "TD001")
    assert finding.line == 12
    assert "`reevaluate()`" in finding.message and "first thing in" in finding.message
    assert finding.fix is None  # zero_grad after the step would not clear between evaluations


def test_a_closure_cleared_by_the_loop_only_is_still_reported():
    """``opt.zero_grad()`` before ``opt.step(closure)`` clears once per step; LBFGS calls the
    closure up to ``max_iter`` times inside that step, accumulating."""
    text = LBFGS_LOOP.replace("        opt.zero_grad()\n", "").replace(
        "    opt.step(reevaluate)", "    opt.zero_grad()\n    opt.step(reevaluate)"
    )
    assert hits(text, "TD001") == [("TD001", 13)]


def test_optimizer_built_each_pass_over_a_fresh_tensor_needs_no_zero_grad():
    # One guidance step per denoising step: a new leaf, a new optimizer, one step. Nothing
    # from the previous pass holds a gradient.
    text = code("""
        import torch
        for t in timesteps:
            leaf = latents.detach().clone()
            leaf.requires_grad = True
            opt = torch.optim.SGD([leaf], lr=0.1)
            unet(leaf, t).sum().backward()
            opt.step()
            latents = leaf.detach()
    """)
    assert hits(text) == []


def test_optimizer_built_each_pass_over_model_parameters_still_needs_zero_grad():
    text = code("""
        import torch
        net = torch.nn.Linear(2, 1)
        for x in loader:
            opt = torch.optim.SGD([net.weight], lr=0.1)
            net(x).sum().backward()
            opt.step()
    """)
    assert hits(text) == [("TD001", 6)]


AGENT = code("""
    import torch
    import torch.nn as nn
    class Agent:
        def __init__(self):
            self.net = nn.Linear(4, 2)
            self.optimizer = torch.optim.Adam(self.net.parameters())
        def learn(self, x, y):
            {clear}
            (self.net(x) - y).pow(2).mean().backward()
            self.optimizer.step()
    agent = Agent()
    for episode in range(100):
        if episode > 10:
            agent.learn(*memory.sample())
""")


def test_a_method_an_instance_calls_in_a_loop_repeats():
    # MorvanZhou's DQN: ``dqn.learn()`` once per environment step
    assert hits(AGENT.format(clear="pass")) == [("TD001", 10)]
    assert hits(AGENT.format(clear="self.optimizer.zero_grad()")) == []


def test_a_lightning_callback_training_a_probe_each_batch_repeats():
    # Lightning's Barlow Twins tutorial: an online linear probe trained in on_train_batch_end
    text = code("""
        import torch
        import torch.nn.functional as F
        class Probe(Callback):
            def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
                x, y = batch
                loss = F.cross_entropy(pl_module.probe(x), y)
                loss.backward()
                self.optimizer.step()
    """)
    assert hits(text) == [("TD001", 8)]


MAML_INNER = """
import torch
from copy import deepcopy
def adapt(model, prototypes, x, y, steps):
    local = deepcopy(model)
    local_optim = torch.optim.SGD(local.parameters(), lr=0.1)
    output_weight = (2 * prototypes).detach().requires_grad_()
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(local(x) @ output_weight.T, y)
        loss.backward()
        local_optim.step()
        output_weight.data -= 0.1 * output_weight.grad
        local_optim.zero_grad()
        output_weight.grad.fill_(0)
"""


def test_clearing_one_named_tensor_does_not_clear_the_models_optimizer():
    # MAML's inner loop (UvA course): the extra tensor's ``.grad.fill_(0)`` clears that tensor only
    assert hits(MAML_INNER) == []
    missing = MAML_INNER.replace("        local_optim.zero_grad()\n", "")
    assert hits(missing) == [("TD001", 10)]
    for clear in ("output_weight.grad.zero_()", "output_weight.grad.data.zero_()", "output_weight.grad = None"):
        assert hits(missing.replace("output_weight.grad.fill_(0)", clear)) == [("TD001", 10)], clear


def test_clearing_the_only_tensor_an_optimizer_holds_is_fine():
    # a from-scratch loop over named tensors (energy models, PyTorchZeroToAll): still quiet
    text = """
import torch
w = torch.randn(3, requires_grad=True)
opt = torch.optim.SGD([w], lr=0.1)
for x in batches:
    loss = (x @ w).pow(2).mean()
    loss.backward()
    opt.step()
    w.grad.zero_()
"""
    assert hits(text) == []
    per_param = LOOP + "    for p in model.parameters():\n        p.grad.zero_()\n"
    assert hits(per_param) == []
