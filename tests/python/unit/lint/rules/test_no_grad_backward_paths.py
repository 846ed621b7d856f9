"""TD013, the forward pass under no_grad and backward() after the block, when the loss reaches
the model's output by a path other than plain assignments: an accumulating ``+=``, an attribute
of ``self``, a ``global`` set in a helper, a helper function or a lambda that runs the model, a
``for`` loop over the outputs, a ``with ... as`` target. Each loses the model's gradients as
surely as the plain shape; the harmless shape (forward outside, backward and step inside) stays
information at most."""

from support.lint import code, findings, hits

T = "import torch\nimport torch.nn as nn\n"
SETUP = """
    net = nn.Linear(8, 2)
    opt = torch.optim.SGD(net.parameters(), lr=0.1)
    crit = nn.CrossEntropyLoss()
"""


def lint(body):
    return [line for _, line in hits(T + code(SETUP) + code(body), "TD013")]


def test_a_loss_summed_with_plus_equals_from_a_no_grad_output():
    assert lint("""
        for x, y in loader:
            total = 0.0
            with torch.no_grad():
                scores = net(x)
            total += crit(scores, y)
            total.backward()
            opt.step()
    """) == [9]


def test_a_loss_summed_inside_the_block_with_plus_equals():
    assert lint("""
        for x, y in loader:
            total = 0.0
            with torch.no_grad():
                total += crit(net(x), y)
            total.backward()
            opt.step()
    """) == [9]


def test_the_output_kept_on_self():
    text = T + code("""
        class Fitter:
            def __init__(self):
                self.net = nn.Linear(8, 2)
                self.opt = torch.optim.Adam(self.net.parameters())

            def fit_batch(self, x, y):
                with torch.no_grad():
                    self.scores = self.net(x)
                cost = nn.functional.cross_entropy(self.scores, y)
                cost.backward()
                self.opt.step()
    """)
    assert [(f.line, f.severity) for f in findings(text, "TD013")] == [(10, "error")]


def test_the_output_set_as_a_global_by_a_helper():
    assert lint("""
        def score(x):
            global scores
            with torch.no_grad():
                scores = net(x)

        for x, y in loader:
            score(x)
            cost = crit(scores, y)
            cost.backward()
            opt.step()
    """) == [9]


def test_the_forward_in_a_helper_that_runs_the_model_under_no_grad():
    assert lint("""
        def predict(batch):
            with torch.no_grad():
                return net(batch)

        for x, y in loader:
            cost = crit(predict(x), y)
            cost.backward()
            opt.step()
    """) == [8]


def test_the_forward_in_a_helper_given_the_model():
    assert lint("""
        def predict(model, batch):
            with torch.no_grad():
                out = model(batch)
            return out

        for x, y in loader:
            cost = crit(predict(net, x), y)
            cost.backward()
            opt.step()
    """) == [8]


def test_a_helper_called_inside_the_block():
    assert lint("""
        def run(batch):
            return net(batch)

        for x, y in loader:
            with torch.no_grad():
                scores = run(x)
            cost = crit(scores, y)
            cost.backward()
            opt.step()
    """) == [11]


def test_a_lambda_called_inside_the_block():
    assert lint("""
        run = lambda batch: net(batch)
        for x, y in loader:
            with torch.no_grad():
                scores = run(x)
            cost = crit(scores, y)
            cost.backward()
            opt.step()
    """) == [9]


def test_outputs_collected_under_no_grad_and_looped_over():
    assert lint("""
        with torch.no_grad():
            outputs = [net(x) for x, _ in loader]
        for scores, (_, y) in zip(outputs, loader):
            cost = crit(scores, y)
            cost.backward()
            opt.step()
    """) == [7]


def test_the_output_reached_through_a_with_as_target():
    assert lint("""
        for x, y in loader:
            with torch.no_grad(), torch.autocast("cpu") as _:
                scores = net(x)
            with record(scores) as held:
                cost = crit(held, y)
            cost.backward()
            opt.step()
    """) == [8]


def test_forward_outside_and_step_inside_stays_information():
    text = (
        T
        + code(SETUP)
        + code("""
        def predict(batch):
            return net(batch)

        for x, y in loader:
            total = 0.0
            total += crit(predict(x), y)
            with torch.no_grad():
                total.backward()
                opt.step()
    """)
    )
    assert [f.severity for f in findings(text, "TD013")] == ["information"]


def test_a_frozen_helper_model_stays_quiet():
    assert (
        lint("""
        backbone = nn.Linear(8, 8)

        def features(batch):
            with torch.no_grad():
                return backbone(batch)

        for x, y in loader:
            total = 0.0
            total += crit(net(features(x)), y)
            total.backward()
            opt.step()
    """)
        == []
    )


def test_the_helpers_parameter_is_named_as_the_callers_model():
    text = (
        T
        + code(SETUP)
        + code("""
        def predict(model, batch):
            with torch.no_grad():
                return model(batch)

        for x, y in loader:
            cost = crit(predict(net, x), y)
            cost.backward()
            opt.step()
    """)
    )
    (finding,) = findings(text, "TD013")
    assert finding.severity == "error" and "steps `net`'s parameters" in finding.message
