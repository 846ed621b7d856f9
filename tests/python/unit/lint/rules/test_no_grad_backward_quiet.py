"""TD013 stays quiet where the no-grad forward pass is meant: the same model also runs with grad
into the loss (a target network that is the trained one, pseudo-labels, a stop-gradient
branch), a ``self`` attribute or a global that the training function sets itself before the
read, a helper that runs the model with or without grad by a flag, and a GAN whose
discriminator step does not step the generator. The near shapes that do lose gradients stay
errors."""

from support.lint import code, hits

T = "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"


def lint(body):
    return [line for _, line in hits(T + code(body), "TD013")]


def test_a_target_from_the_trained_network_under_no_grad():
    assert (
        lint("""
        q_net = nn.Linear(6, 3)
        adam = torch.optim.Adam(q_net.parameters())
        for s, a, r, s2 in replay:
            with torch.no_grad():
                best = q_net(s2).max(1).values
            guess = q_net(s).gather(1, a).squeeze(1)
            err = F.mse_loss(guess, r + 0.9 * best)
            adam.zero_grad()
            err.backward()
            adam.step()
    """)
        == []
    )


def test_labels_made_under_no_grad_then_trained_on():
    assert (
        lint("""
        clf = nn.Linear(6, 3)
        sgd = torch.optim.SGD(clf.parameters(), lr=0.01)
        with torch.no_grad():
            labelled = [(u, clf(u).argmax(1)) for u in pool]
        for u, t in labelled:
            cost = F.cross_entropy(clf(u), t)
            sgd.zero_grad()
            cost.backward()
            sgd.step()
    """)
        == []
    )


def test_a_stop_gradient_branch_kept_on_self():
    assert (
        lint("""
        class Siamese:
            def __init__(self):
                self.enc = nn.Linear(6, 3)
                self.sgd = torch.optim.SGD(self.enc.parameters(), lr=0.01)

            def update(self, a, b):
                with torch.no_grad():
                    self.anchor = self.enc(b)
                pred = self.enc(a)
                cost = F.mse_loss(pred, self.anchor)
                cost.backward()
                self.sgd.step()
    """)
        == []
    )


def test_an_attribute_another_method_set_under_no_grad_is_overwritten_first():
    assert (
        lint("""
        class Pair:
            def __init__(self):
                self.big = nn.Linear(6, 3)
                self.small = nn.Linear(6, 3)
                self.sgd = torch.optim.SGD([*self.big.parameters(), *self.small.parameters()], lr=0.01)

            def score(self, a):
                with torch.no_grad():
                    self.pred = self.big(a)
                return self.pred

            def fit(self, a, t):
                self.pred = self.small(a)
                cost = F.cross_entropy(self.pred, t)
                cost.backward()
                self.sgd.step()
    """)
        == []
    )


def test_a_global_another_function_set_under_no_grad_is_overwritten_first():
    assert (
        lint("""
        big = nn.Linear(6, 3)
        small = nn.Linear(6, 3)
        sgd = torch.optim.SGD([*big.parameters(), *small.parameters()], lr=0.01)
        pred = None

        def score(a):
            global pred
            with torch.no_grad():
                pred = big(a)

        def fit(a, t):
            global pred
            pred = small(a)
            cost = F.cross_entropy(pred, t)
            cost.backward()
            sgd.step()
    """)
        == []
    )


def test_a_helper_that_runs_the_model_with_or_without_grad():
    assert (
        lint("""
        clf = nn.Linear(6, 3)
        sgd = torch.optim.SGD(clf.parameters(), lr=0.01)

        def forward(u, grad):
            if grad:
                return clf(u)
            with torch.no_grad():
                return clf(u)

        for u, t in data:
            cost = F.cross_entropy(forward(u, True), t)
            cost.backward()
            sgd.step()
    """)
        == []
    )


def test_the_discriminator_step_does_not_step_the_generator():
    assert (
        lint("""
        gen = nn.Linear(4, 6)
        disc = nn.Linear(6, 1)
        g_opt = torch.optim.Adam(gen.parameters())
        d_opt = torch.optim.Adam(disc.parameters())
        for real in data:
            with torch.no_grad():
                made = gen(torch.randn(2, 4))
            d_cost = disc(made).mean() - disc(real).mean()
            d_cost.backward()
            d_opt.step()
            g_cost = -disc(gen(torch.randn(2, 4))).mean()
            g_cost.backward()
            g_opt.step()
    """)
        == []
    )


def test_a_generator_trained_on_its_no_grad_output_is_still_an_error():
    assert lint("""
        gen = nn.Linear(4, 6)
        disc = nn.Linear(6, 1)
        g_opt = torch.optim.Adam(gen.parameters())
        for z in data:
            with torch.no_grad():
                made = gen(z)
            g_cost = -disc(made).mean()
            g_cost.backward()
            g_opt.step()
    """) == [9]


def test_a_frozen_backbone_call_of_the_stepped_model_is_still_an_error():
    assert lint("""
        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = nn.Linear(6, 6)
                self.head = nn.Linear(6, 3)

        net = Net()
        sgd = torch.optim.SGD(net.parameters(), lr=0.01)
        for u, t in data:
            with torch.no_grad():
                feats = net.backbone(u)
            cost = F.cross_entropy(net.head(feats), t)
            cost.backward()
            sgd.step()
    """) == [14]


def test_a_with_grad_call_in_the_other_branch_does_not_excuse_the_no_grad_one():
    assert lint("""
        clf = nn.Linear(6, 3)
        sgd = torch.optim.SGD(clf.parameters(), lr=0.01)
        for u, t in data:
            if plain:
                with torch.no_grad():
                    scores = clf(u)
            else:
                scores = clf(u * 2)
            cost = F.cross_entropy(scores, t)
            cost.backward()
            sgd.step()
    """) == [9]
