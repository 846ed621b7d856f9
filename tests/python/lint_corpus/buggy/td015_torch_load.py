# expect: TD015@9 TD015@11
"""Checkpoints loaded with full unpickling."""

import torch
import torch.nn as nn

model = nn.Linear(3, 3)
torch.save(model.state_dict(), "ckpt.pt")
state = torch.load("ckpt.pt", weights_only=False)
model.load_state_dict(state)
legacy = torch.load("ckpt.pt", map_location="cpu")
