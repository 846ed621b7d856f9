# expect: TD007@26
"""A language-model epoch that logs every few hundred batches: the running total is reset
after each log line, but between two resets it holds every batch's loss tensor and graph."""

import torch
import torch.nn as nn

criterion = nn.CrossEntropyLoss()


def train_one_epoch(model, batches, optimizer, vocab_size, log_every=200, clip=0.25):
    model.train()
    running = 0.0
    hidden = model.init_hidden(20)
    for step, (tokens, targets) in enumerate(batches):
        hidden = tuple(h.detach() for h in hidden)
        optimizer.zero_grad()
        logits, hidden = model(tokens, hidden)
        loss = criterion(logits.view(-1, vocab_size), targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()

        # The .item() got lost here: `running` now keeps a tensor (and its graph) alive for
        # up to `log_every` batches.
        running += loss
        if step % log_every == 0 and step > 0:
            print(f"step {step:5d} | loss {float(running) / log_every:5.2f}")
            running = 0.0
