"""A small character-level language model: embedding + LSTM, logits into CrossEntropyLoss,
gradient clipping, perplexity on a validation split."""

import math

import torch
import torch.nn as nn

text = "hello world, this is a tiny corpus for a tiny model. " * 200
vocab = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(vocab)}
data = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
split = int(0.9 * len(data))
train_data, val_data = data[:split], data[split:]

block_size, batch_size = 32, 16
device = "cuda" if torch.cuda.is_available() else "cpu"


def get_batch(source):
    ix = torch.randint(len(source) - block_size - 1, (batch_size,))
    x = torch.stack([source[i:i + block_size] for i in ix])
    y = torch.stack([source[i + 1:i + block_size + 1] for i in ix])
    return x.to(device), y.to(device)


class CharLM(nn.Module):
    def __init__(self, vocab_size, dim=64):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.rnn = nn.LSTM(dim, dim, num_layers=2, dropout=0.2, batch_first=True)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, idx):
        h, _ = self.rnn(self.embed(idx))
        return self.head(h)


@torch.no_grad()
def estimate_loss(model, steps=20):
    model.eval()
    losses = []
    for _ in range(steps):
        xb, yb = get_batch(val_data)
        logits = model(xb)
        losses.append(criterion(logits.view(-1, logits.size(-1)), yb.view(-1)).item())
    model.train()
    return sum(losses) / len(losses)


model = CharLM(len(vocab)).to(device)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)

for it in range(300):
    xb, yb = get_batch(train_data)
    logits = model(xb)
    loss = criterion(logits.view(-1, logits.size(-1)), yb.view(-1))
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    if it % 100 == 0:
        val = estimate_loss(model)
        print(f"iter {it}: train {loss.item():.3f} val {val:.3f} ppl {math.exp(val):.1f}")
