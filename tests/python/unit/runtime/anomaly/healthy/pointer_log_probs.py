"""Healthy: a pointer network whose decoder returns log-probabilities over unvisited cities (2026-12-07).

Each decoding step sets the scores of visited cities to ``-inf`` and returns
``log_softmax(scores)``: the visited cities' log-probabilities are ``-inf``, every other one is
finite, and a tour is sampled from them and trained by REINFORCE with a moving baseline. The watch
called the decoder's output an Inf output ("Inf in the output of `decoder` (Decoder) at step 0")
and stopped the run.
"""

import torch
from torch import nn

torch.manual_seed(0)
CITIES, WIDTH, BATCH = 6, 16, 8


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(2, WIDTH)
        self.cell = nn.GRUCell(WIDTH, WIDTH)

    def forward(self, coords, state, visited):
        keys = self.embed(coords)
        state = self.cell(keys.mean(1), state)
        scores = torch.einsum("bcw,bw->bc", keys, state) / WIDTH**0.5
        return torch.log_softmax(scores.masked_fill(visited, float("-inf")), -1), state


decoder = Decoder()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
baseline = None
for _ in range(30):
    coords = torch.rand(BATCH, CITIES, 2)
    state = torch.zeros(BATCH, WIDTH)
    visited = torch.zeros(BATCH, CITIES, dtype=torch.bool)
    tour, log_prob = [], torch.zeros(BATCH)
    for _ in range(CITIES):
        log_p, state = decoder(coords, state, visited)
        city = torch.distributions.Categorical(logits=log_p).sample()
        log_prob = log_prob + log_p.gather(1, city[:, None]).squeeze(1)
        visited = visited.clone()
        visited[torch.arange(BATCH), city] = True
        tour.append(coords[torch.arange(BATCH), city])
    path = torch.stack(tour, 1)
    length = (path - path.roll(1, 1)).norm(dim=-1).sum(1)
    baseline = length.mean() if baseline is None else 0.9 * baseline + 0.1 * length.mean()
    loss = ((length - baseline) * log_prob).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"mean tour length {length.mean().item():.3f}")
