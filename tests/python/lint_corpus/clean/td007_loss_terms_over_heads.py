# A detection loss summed over output scales: each head adds one batch's box, objectness and
# class terms to totals the function returns; the caller backpropagates them (`.item()` would
# stop them training).
import torch
import torch.nn as nn
from torch.utils.data import DataLoader


class MultiScaleLoss(nn.Module):
    def __init__(self, box_weight=0.05, cls_weight=0.5):
        super().__init__()
        self.bce = nn.BCEWithLogitsLoss()
        self.mse = nn.MSELoss()
        self.box_weight = box_weight
        self.cls_weight = cls_weight


def detection_loss(criteria, predictions, targets):
    """One batch: one term per output scale, weighted and combined, returned with a detached
    copy of its parts for logging."""
    box_sum = torch.zeros(1)
    obj_sum = torch.zeros(1)
    cls_sum = torch.zeros(1)
    for scale, (pred, tgt) in enumerate(zip(predictions, targets)):
        box_sum += criteria.mse(pred[..., :4], tgt[..., :4])
        obj_sum += criteria.bce(pred[..., 4], tgt[..., 4])
        cls_sum += criteria.bce(pred[..., 5:], tgt[..., 5:]) / (scale + 1)
    box_sum *= criteria.box_weight
    cls_sum *= criteria.cls_weight
    loss = box_sum + obj_sum + cls_sum
    return loss, torch.cat((box_sum, obj_sum, cls_sum)).detach()


def train(model, dataset, epochs=10, lr=1e-3):
    loader = DataLoader(dataset, batch_size=16, shuffle=True)
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    criteria = MultiScaleLoss()
    for epoch in range(epochs):
        model.train()
        running = torch.zeros(3)
        for images, targets in loader:
            optimizer.zero_grad()
            loss, parts = detection_loss(criteria, model(images), targets)
            loss.backward()
            optimizer.step()
            running += parts
        print(f"epoch {epoch}: box/obj/cls {(running / len(loader)).tolist()}")
