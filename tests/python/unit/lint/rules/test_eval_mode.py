"""TD008 (eval loop without model.eval()), TD009 (without no_grad), TD010 (eval never undone)."""

from support.lint import code, findings, hits

MODEL = (
    "import torch\nimport torch.nn as nn\nmodel = nn.Sequential(nn.Linear(4, 8), nn.Dropout(0.5), nn.Linear(8, 2))\n"
)


def test_evaluate_function_without_eval_and_no_grad():
    text = MODEL + code("""
        def evaluate(model, loader):
            for x, y in loader:
                out = model(x)
    """)
    assert hits(text) == [("TD008", 6), ("TD009", 6)]


def test_evaluate_function_done_right():
    text = MODEL + code("""
        def evaluate(model, loader):
            model.eval()
            with torch.no_grad():
                for x, y in loader:
                    out = model(x)
    """)
    assert hits(text) == []


def test_decorated_evaluator_and_inference_mode_count_as_no_grad():
    for deco in ("@torch.no_grad()", "@torch.inference_mode()"):
        text = (
            MODEL + f"{deco}\ndef validate(model, loader):\n    model.eval()\n    for x in loader:\n        model(x)\n"
        )
        assert hits(text) == [], deco


def test_caller_that_sets_modes_makes_the_helper_fine():
    text = MODEL + code("""
        def evaluate(model, loader):
            return [model(x) for x in loader] + [model(x) for x in loader for _ in range(1)]

        def predict(model, loader):
            outs = []
            for x in loader:
                outs.append(model(x))
            return outs

        model.eval()
        with torch.no_grad():
            predict(model, test_loader)
    """)
    assert hits(text) == []


def test_validation_loop_over_val_loader_without_no_grad():
    text = MODEL + code("""
        model.eval()
        for xb, yb in val_loader:
            pred = model(xb)
    """)
    assert hits(text) == [("TD009", 6)]


def test_val_loop_inside_the_epoch_loop():
    text = MODEL + code("""
        for epoch in range(3):
            model.train()
            for xb, yb in train_loader:
                opt.zero_grad()
                crit(model(xb), yb).backward()
                opt.step()
            for xb, yb in valid_loader:
                pred = model(xb)
    """)
    assert hits(text) == [("TD008", 11), ("TD009", 11)]


def test_model_without_mode_dependent_layers_needs_no_eval():
    text = code("""
        import torch
        import torch.nn as nn
        model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
        with torch.no_grad():
            for x in test_loader:
                model(x)
    """)
    assert hits(text) == []


def test_lightning_validation_step_and_pytest_tests_are_not_eval_loops():
    text = MODEL + code("""
        class Lit(LightningModule):
            def validation_step(self, batch, idx):
                for x in batch:
                    self.model(x)

        def test_model_runs():
            for x in [torch.zeros(1, 4)]:
                model(x)
    """)
    assert hits(text) == []


def test_from_pretrained_models_start_in_eval_mode():
    text = code("""
        import torch
        from transformers import AutoModel
        model = AutoModel.from_pretrained("bert-base-uncased")
        with torch.no_grad():
            for batch in test_loader:
                model(**batch)
    """)
    assert hits(text) == []


TRAINING = MODEL + code("""
    opt = torch.optim.Adam(model.parameters())

    def train_epoch(model, loader):
        for x, y in loader:
            opt.zero_grad()
            crit(model(x), y).backward()
            opt.step()

    @torch.no_grad()
    def evaluate(model, loader):
        model.eval()
        return [model(x) for x in loader]

    for epoch in range(10):
        train_epoch(model, train_loader)
        evaluate(model, val_loader)
""")


def test_eval_in_the_epoch_loop_never_undone():
    assert hits(TRAINING) == [("TD010", 19)]


def test_fix_inserts_train_at_the_top_of_the_loop():
    from support.lint import fixed

    after = fixed(TRAINING, "TD010")
    assert after.splitlines()[16:18] == ["for epoch in range(10):", "    model.train()"]
    assert hits(after) == []


def test_train_inside_the_training_helper_is_fine():
    text = TRAINING.replace(
        "    for x, y in loader:\n        opt.zero_grad()",
        "    model.train()\n    for x, y in loader:\n        opt.zero_grad()",
    )
    assert hits(text) == []


def test_direct_eval_in_a_step_loop():
    text = MODEL + code("""
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for step, (x, y) in enumerate(train_loader):
            opt.zero_grad()
            crit(model(x), y).backward()
            opt.step()
            if step % 100 == 0:
                model.eval()
                with torch.no_grad():
                    print(model(x).mean())
    """)
    assert hits(text) == [("TD010", 10)]


def test_frozen_teacher_in_eval_mode_is_fine():
    text = MODEL + code("""
        teacher = nn.Sequential(nn.Linear(4, 2), nn.Dropout(0.1))
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in train_loader:
            teacher.eval()
            opt.zero_grad()
            crit(model(x), teacher(x)).backward()
            opt.step()
    """)
    assert hits(text) == []


def test_the_criterion_is_not_mistaken_for_the_model():
    text = MODEL + code("""
        loss_fn = nn.MSELoss()
        def evaluate(model, batches):
            return sum(loss_fn(model(xb), yb).item() for xb, yb in batches)
        def validate(model, batches):
            total = 0.0
            for xb, yb in batches:
                total += loss_fn(model(xb), yb).item()
            return total
    """)
    found = findings(text, "TD008")
    assert [(f.line, f.message.split(" runs ")[1][:9]) for f in found] == [(10, "`model` o")]


def test_functions_named_like_models_are_not_models():
    text = MODEL + code("""
        def compare_model_outputs(args):
            return args

        for name, param in iterate_valid_model_state(model):
            print(name)
        for test_input in additional_test_inputs:
            compare_model_outputs(test_input)
    """)
    assert hits(text) == []


def test_a_method_of_the_class_named_like_a_model_is_not_a_model():
    # A pipeline's configuration helper whose name contains "resnets", called over the
    # blocks of a validation-named loop: it builds no graph and has no mode to set.
    text = code("""
        class Pipeline:
            def _patch_resnets_(self, resnets, size):
                for r in resnets:
                    r.split = size

            def evaluate(self, blocks):
                for block in blocks:
                    self._patch_resnets_(block.resnets, 2)
    """)
    assert hits(text) == []


def test_an_attribute_model_in_the_same_loop_is_still_reported():
    text = code("""
        class Trainer:
            def _patch_resnets_(self, resnets, size):
                pass

            def evaluate(self, loader):
                for x in loader:
                    self._patch_resnets_(x, 2)
                    self.model(x)
    """)
    assert hits(text) == [("TD008", 8), ("TD009", 8)]


DEMO = code("""
    import torch
    import torch.nn as nn
    class Decoder(nn.Module):
        def __init__(self, n):
            super().__init__()
            self.rnn = nn.GRU(n, n, 2, dropout=0.1)
        def forward(self, x, h):
            return self.rnn(x, h)
    def test():
        decoder = Decoder(10)
        {line}
        h = torch.zeros(2, 1, 10)
        for c in range(3):
            out, h = decoder(torch.randn(1, 1, 10), h)
            print(out.size())
""")


def test_a_shape_demo_on_a_model_built_in_the_function_is_not_an_evaluation():
    # PyTorchZeroToAll's seq2seq ``test()``: an untrained model, sizes printed
    assert hits(DEMO.format(line="decoder.cpu()")) == []


def test_a_model_built_with_pretrained_weights_in_the_function_is_evaluated():
    text = DEMO.format(line="pass").replace("Decoder(10)", "Decoder(10, pretrained=True)")
    assert hits(text) == [("TD008", 14), ("TD009", 14)]


def test_a_model_given_weights_in_the_function_is_evaluated():
    for line in ("decoder.load_state_dict(torch.load('d.pt', weights_only=True))", "load_checkpoint(decoder, 'd.pt')"):
        assert hits(DEMO.format(line=line)) == [("TD008", 14), ("TD009", 14)], line


def test_volatile_variable_is_named_as_a_no_op():
    # PyTorchZeroToAll, pytorch-beginner: ``Variable(x, volatile=True)`` believed to disable autograd
    text = MODEL + code("""
        from torch.autograd import Variable
        def test(model, loader):
            model.eval()
            for x, y in loader:
                x = Variable(x, volatile=True)
                out = model(x)
    """)
    (finding,) = [f for f in findings(text) if f.rule_id == "TD009"]
    assert "`volatile=True` (line 8) has had no effect since PyTorch 0.4" in finding.message
    plain = text.replace("Variable(x, volatile=True)", "Variable(x)")
    (finding,) = [f for f in findings(plain) if f.rule_id == "TD009"]
    assert "volatile" not in finding.message


# evaluate() has neither switch of its own; every path to it runs after model.eval() and under
# no_grad: directly, or through evaluate_all(), itself only called there (a text-recognition
# benchmark's validation() called from benchmark_all_eval() under no_grad has this shape).
TWO_LEVELS = """
import torch
import torch.nn as nn


def evaluate(model, loader):
    correct = 0
    for x, y in loader:
        correct += (model(x).argmax(1) == y).sum().item()
    return correct


def evaluate_all(model, loaders):
    return [evaluate(model, loader) for loader in loaders]


def main(loaders, single):
    model = nn.Sequential(nn.Linear(10, 20), nn.Dropout(0.3), nn.Linear(20, 3))
    model.eval()
    with torch.no_grad():
        if single:
            print(evaluate(model, loaders[0]))
        else:
            print(evaluate_all(model, loaders))
"""


def test_switches_two_calls_up_on_every_path_count():
    assert hits(TWO_LEVELS) == []


def test_a_path_two_calls_up_without_no_grad_is_reported():
    outside = (
        TWO_LEVELS + "\n\ndef report(model, loaders):\n    model.eval()\n    return evaluate_all(model, loaders)\n"
    )
    assert [rule for rule, _ in hits(outside)] == ["TD009"]


def test_a_path_two_calls_up_without_eval_is_reported():
    outside = (
        TWO_LEVELS
        + "\n\ndef report(model, loaders):\n    with torch.no_grad():\n        return evaluate_all(model, loaders)\n"
    )
    assert [rule for rule, _ in hits(outside)] == ["TD008"]
