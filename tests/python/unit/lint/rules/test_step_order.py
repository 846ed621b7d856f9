"""TD002: optimizer.step() before loss.backward()."""

from support.lint import hits

BAD = """
for x, y in loader:
    optimizer.zero_grad()
    loss = crit(model(x), y)
    optimizer.step()
    loss.backward()
"""


def test_step_before_backward_is_reported():
    assert hits(BAD, "TD002") == [("TD002", 4)]


def test_normal_order_is_fine():
    good = BAD.replace("    optimizer.step()\n    loss.backward()", "    loss.backward()\n    optimizer.step()")
    assert hits(good) == []


def test_two_optimizers_in_sequence_are_fine():
    text = """
for real in loader:
    opt_d.zero_grad()
    loss_d.backward()
    opt_d.step()
    opt_g.zero_grad()
    loss_g.backward()
    opt_g.step()
"""
    assert hits(text) == []


def test_in_a_step_function_without_loop():
    text = """
def train_step(batch):
    optimizer.zero_grad()
    loss = compute(batch)
    optimizer.step()
    loss.backward()
"""
    assert hits(text, "TD002") == [("TD002", 4)]


def test_conditional_step_at_the_top_of_an_accumulation_loop_is_fine():
    text = """
for i, batch in enumerate(loader):
    if i > 0 and i % 4 == 0:
        optimizer.step()
        optimizer.zero_grad()
    loss = compute(batch) / 4
    loss.backward()
"""
    assert hits(text) == []
