"""Healthy: a pointer-network tour builder trained by REINFORCE, its rollouts under no_grad (2026-12-07).

The decoder's scores of visited cities are set to ``-1e9`` (``masked_fill``), as pointer networks
and attention models for routing do, and a second head bans tokens with the dtype's lowest value
added to its logits (``torch.finfo(dtype).min``, Hugging Face's way). Every step keeps an unvisited
city, so each softmax is finite. The watch called each of those an exploding output (``max |x| =
1e9``) and stopped the run at step 0, in training and in the no_grad rollout alike.
"""

import torch
from torch import nn

torch.manual_seed(0)
CITIES, WIDTH, BATCH = 6, 16, 8


class Decoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(2, WIDTH)
        self.query = nn.GRUCell(WIDTH, WIDTH)
        self.ban = nn.Linear(WIDTH, CITIES)

    def forward(self, coords, state, visited):
        keys = self.embed(coords)
        state = self.query(keys.mean(1), state)
        scores = torch.einsum("bcw,bw->bc", keys, state) / WIDTH**0.5
        pointer = scores.masked_fill(visited, -1e9)
        banned = self.ban(state) + visited.float() * torch.finfo(scores.dtype).min
        return pointer, banned, state


def tour(decoder, coords, sample=True):
    visited = torch.zeros(BATCH, CITIES, dtype=torch.bool)
    state = torch.zeros(BATCH, WIDTH)
    logp, length, last = 0.0, torch.zeros(BATCH), coords[:, 0]
    for _ in range(CITIES):
        pointer, banned, state = decoder(coords, state, visited)
        dist = torch.distributions.Categorical(logits=pointer + 0 * banned)
        city = dist.sample() if sample else pointer.argmax(1)
        logp = logp + dist.log_prob(city)
        here = coords[torch.arange(BATCH), city]
        length = length + (here - last).norm(dim=1)
        last = here
        visited = visited.clone()
        visited[torch.arange(BATCH), city] = True
    return logp, length


decoder = Decoder()
optimizer = torch.optim.Adam(decoder.parameters(), lr=1e-3)
for _step in range(25):
    coords = torch.rand(BATCH, CITIES, 2)
    with torch.no_grad():
        _, greedy = tour(decoder, coords, sample=False)  # the baseline rollout
    logp, length = tour(decoder, coords)
    loss = ((length - greedy) * logp).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print(f"pointer tours: mean length {length.mean().item():.2f}")
