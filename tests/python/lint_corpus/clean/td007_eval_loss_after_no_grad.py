# Fine-tuning with an evaluation pass per epoch: its forward runs under torch.no_grad(), the loss
# is read from the outputs after the block, carries no graph, and is safe to collect as a tensor.
import torch
from torch.utils.data import DataLoader


def fine_tune(model, train_dataset, eval_dataset, epochs=3, lr=2e-5):
    train_loader = DataLoader(train_dataset, batch_size=16, shuffle=True)
    eval_loader = DataLoader(eval_dataset, batch_size=32)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    for epoch in range(epochs):
        model.train()
        for batch in train_loader:
            outputs = model(**batch)
            loss = outputs.loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()

        model.eval()
        losses = []
        for batch in eval_loader:
            with torch.no_grad():
                outputs = model(**batch)
            loss = outputs.loss
            losses.append(loss)
        print(f"epoch {epoch}: eval loss {torch.stack(losses).mean().item():.4f}")
