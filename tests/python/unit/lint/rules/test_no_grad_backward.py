"""TD013 by certainty: a loss computed under no_grad and backpropagated is an error; only the
backward and step inside the block (loss computed before) is harmless, information at most;
the trained model's forward under no_grad with backward after the block is an error."""

import pytest

from support.lint import code, findings, hits

T = "import torch\nimport torch.nn as nn\n"


def test_step_inside_the_block_for_a_loss_computed_before_is_only_information():
    text = T + code("""
        model = nn.Linear(4, 1)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        for x, y in loader:
            opt.zero_grad()
            loss = nn.functional.mse_loss(model(x), y)
            with torch.no_grad():
                loss.backward()
                opt.step()
    """)
    (finding,) = findings(text, "TD013")
    assert finding.severity == "information"
    assert "the gradients are the same" in finding.message


def test_loss_computed_inside_the_block_is_an_error():
    text = T + "with torch.no_grad():\n    loss = crit(model(x), y)\n    loss.backward()\n"
    (finding,) = findings(text, "TD013")
    assert finding.severity == "error"


def test_loss_of_unknown_origin_is_a_warning():
    text = T + "def step(loss):\n    with torch.no_grad():\n        loss.backward()\n"
    (finding,) = findings(text, "TD013")
    assert finding.severity == "warning"


FORWARD = T + code("""
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    for x, y in loader:
        optimizer.zero_grad()
        with torch.no_grad():
            logits = model(x)
        loss = criterion(logits, y)
        loss.backward()
        optimizer.step()
""")


def test_the_trained_models_forward_under_no_grad_is_an_error():
    (finding,) = findings(FORWARD, "TD013")
    assert (finding.line, finding.severity) == (9, "error")
    assert "`model(x)` runs under `with torch.no_grad():` (line 8)" in finding.message
    assert "`loss.backward()` (line 11)" in finding.message


def test_a_frozen_feature_extractor_under_no_grad_is_fine():
    text = T + code("""
        head = nn.Linear(512, 10)
        optimizer = torch.optim.SGD(head.parameters(), lr=0.01)
        for images, labels in loader:
            optimizer.zero_grad()
            with torch.no_grad():
                feats = backbone(images)
            loss = nn.functional.cross_entropy(head(feats), labels)
            loss.backward()
            optimizer.step()
    """)
    assert hits(text, "TD013") == []


def test_a_target_network_under_no_grad_is_fine():
    text = T + code("""
        optimizer = torch.optim.AdamW(policy_net.parameters(), lr=1e-4)
        for state, action, reward, next_state in batches:
            q = policy_net(state).gather(1, action)
            with torch.no_grad():
                target = reward + 0.99 * target_net(next_state).max(1).values
            loss = nn.functional.smooth_l1_loss(q, target.unsqueeze(1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """)
    assert hits(text, "TD013") == []


def test_an_optimizer_we_cannot_see_is_not_guessed():
    text = T + code("""
        def train(model, optimizer, loader):
            for x, y in loader:
                with torch.no_grad():
                    out = model(x)
                nn.functional.mse_loss(out, y).backward()
                optimizer.step()
    """)
    assert hits(text, "TD013") == []


@pytest.mark.parametrize("inner", ["with torch.enable_grad():\n        logits = model(x)", "logits = model(x)"])
def test_grad_re_enabled_or_forward_outside(inner):
    text = FORWARD.replace(
        "    with torch.no_grad():\n        logits = model(x)",
        "    with torch.no_grad():\n        pass\n    " + inner.replace("\n", "\n    ")
        if "enable" in inner
        else "    " + inner,
    )
    assert hits(text, "TD013") == []


def test_an_optimizer_the_model_configures_steps_the_models_parameters():
    text = FORWARD.replace("torch.optim.Adam(model.parameters(), lr=1e-3)", "model.configure_optimizers(0.1, 6e-4)")
    assert [f.severity for f in findings(text, "TD013")] == ["error"]
