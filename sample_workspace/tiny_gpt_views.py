"""The views on a real model: a 12-block GPT-shaped model trained for a few steps, with clipping.

Set a breakpoint on the marked line (it is after `clip_grad_norm_`), start "Debug current
file", and when it stops:

- Variables: `model` reads "TinyGPT 12 blocks, ... modules, ... params cpu train": the head's
  weight is the token embedding's and counts once; expand it for its parameters, buffers,
  submodules, mode, device and dtype (the raw attributes are folded under one entry).
- "Torch Doctor: Show Gradient Flow": one row per parameter, the twelve blocks folded
  (transformer.h.0 ... transformer.h.11), values at the pause: after the clipping.
- "Torch Doctor: Show Shape Trace": the calls with their shapes, blocks folded; the embeddings
  take integer tokens and give floats, which is what they do (not flagged).
"""

import torch
from torch.nn import functional as F

from models.tiny_gpt import TinyGPT


def main(steps: int = 3) -> float:
    torch.manual_seed(0)
    model = TinyGPT()
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
    tokens = torch.randint(0, 64, (4, 17))
    inputs, targets = tokens[:, :-1], tokens[:, 1:]
    loss_value = 0.0
    for step in range(steps):
        optimizer.zero_grad(set_to_none=True)
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1))
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        loss_value = loss.item()  # Set a breakpoint here (after backward and clipping)
        optimizer.step()
        print(f"step {step}: loss {loss_value:.4f}, gradient norm before clipping {float(norm):.3f}")
    return loss_value


if __name__ == "__main__":
    main()
