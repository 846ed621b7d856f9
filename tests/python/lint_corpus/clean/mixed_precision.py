"""Mixed precision with autocast and GradScaler, unscaled gradient clipping, OneCycleLR."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
use_amp = device.type == "cuda"

model = nn.Sequential(
    nn.Linear(32, 128), nn.GELU(), nn.LayerNorm(128), nn.Dropout(0.1), nn.Linear(128, 4)
).to(device)
optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
loss_fn = nn.CrossEntropyLoss()

dataset = TensorDataset(torch.randn(1024, 32), torch.randint(0, 4, (1024,)))
loader = DataLoader(dataset, batch_size=64, shuffle=True, drop_last=True)
scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=10 * len(loader))

for epoch in range(10):
    model.train()
    epoch_loss = 0.0
    for inputs, targets in loader:
        inputs = inputs.to(device, non_blocking=True)
        targets = targets.to(device, non_blocking=True)
        with torch.autocast(device_type=device.type, dtype=torch.float16, enabled=use_amp):
            outputs = model(inputs)
            loss = loss_fn(outputs, targets)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        scheduler.step()
        epoch_loss += loss.detach()
    print(f"epoch {epoch}: mean loss {(epoch_loss / len(loader)).item():.4f}")

torch.save({"model": model.state_dict(), "scaler": scaler.state_dict()}, "amp_checkpoint.pt")
