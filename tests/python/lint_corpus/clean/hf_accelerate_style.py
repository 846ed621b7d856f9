"""Hugging Face + Accelerate style fine-tuning: the loss comes from the model output,
``accelerator.backward`` replaces ``loss.backward``, the epoch loss is detached, and the
model loaded by ``from_pretrained`` starts in eval mode for the baseline evaluation."""

import math

import torch
from accelerate import Accelerator
from torch.optim import AdamW
from torch.utils.data import DataLoader
from transformers import AutoModelForSequenceClassification, get_linear_schedule_with_warmup


def run(train_dataset, eval_dataset, num_epochs=3, lr=2e-5):
    accelerator = Accelerator(gradient_accumulation_steps=2)
    model = AutoModelForSequenceClassification.from_pretrained("bert-base-uncased", num_labels=2)
    train_dataloader = DataLoader(train_dataset, shuffle=True, batch_size=16)
    eval_dataloader = DataLoader(eval_dataset, batch_size=32)

    with torch.no_grad():
        baseline = [model(**batch).logits.argmax(-1) for batch in eval_dataloader]

    optimizer = AdamW(model.parameters(), lr=lr)
    steps = num_epochs * math.ceil(len(train_dataloader) / 2)
    lr_scheduler = get_linear_schedule_with_warmup(optimizer, num_warmup_steps=steps // 10, num_training_steps=steps)
    model, optimizer, train_dataloader, eval_dataloader, lr_scheduler = accelerator.prepare(
        model, optimizer, train_dataloader, eval_dataloader, lr_scheduler
    )

    for epoch in range(num_epochs):
        model.train()
        total_loss = 0
        for batch in train_dataloader:
            with accelerator.accumulate(model):
                outputs = model(**batch)
                loss = outputs.loss
                total_loss += loss.detach().float()
                accelerator.backward(loss)
                optimizer.step()
                lr_scheduler.step()
                optimizer.zero_grad()

        model.eval()
        predictions = []
        for batch in eval_dataloader:
            with torch.no_grad():
                outputs = model(**batch)
            predictions.append(accelerator.gather_for_metrics(outputs.logits.argmax(dim=-1)))
        accelerator.print(f"epoch {epoch}: loss {total_loss.item() / len(train_dataloader):.4f}")
    return baseline, predictions
