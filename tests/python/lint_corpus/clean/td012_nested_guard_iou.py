# Box regression with an IoU-family loss: the overlap helper picks a variant under `if a or b:`, whose inner if/elif covers both ways in.
import torch
from torch import nn


def box_iou(pred, target, generalized=False, distance=False, complete=False, eps=1e-7):
    """IoU of (cx, cy, w, h) boxes, or one of its penalised variants."""
    p1, p2 = pred[..., :2] - pred[..., 2:] / 2, pred[..., :2] + pred[..., 2:] / 2
    t1, t2 = target[..., :2] - target[..., 2:] / 2, target[..., :2] + target[..., 2:] / 2
    inter = (torch.min(p2, t2) - torch.max(p1, t1)).clamp(min=0).prod(-1)
    union = pred[..., 2:].prod(-1) + target[..., 2:].prod(-1) - inter + eps
    iou = inter / union
    if generalized or distance or complete:
        hull = torch.max(p2, t2) - torch.min(p1, t1)
        if complete or distance:
            diagonal = hull.pow(2).sum(-1) + eps
            centres = (pred[..., :2] - target[..., :2]).pow(2).sum(-1)
            if distance:
                return iou - centres / diagonal
            elif complete:
                ratio = torch.atan(target[..., 2] / target[..., 3]) - torch.atan(pred[..., 2] / pred[..., 3])
                v = (4 / torch.pi**2) * ratio.pow(2)
                with torch.no_grad():
                    alpha = v / (v - iou + (1 + eps))
                return iou - (centres / diagonal + v * alpha)
        else:
            area = hull.prod(-1) + eps
            return iou - (area - union) / area
    else:
        return iou


class BoxHead(nn.Module):
    def __init__(self, width=32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, width), nn.ReLU(), nn.Linear(width, 4))

    def forward(self, x):
        centre, size = self.net(x).split(2, dim=-1)
        return torch.cat([centre, size.exp()], dim=-1)


def main():
    torch.manual_seed(0)
    head = BoxHead()
    optimizer = torch.optim.AdamW(head.parameters(), lr=1e-3)
    features = torch.randn(256, 32)
    boxes = torch.cat([torch.rand(256, 2), torch.rand(256, 2) + 0.1], dim=-1)
    head.train()
    for step in range(100):
        optimizer.zero_grad()
        loss = (1.0 - box_iou(head(features), boxes, complete=True)).mean()
        loss.backward()
        optimizer.step()
        if step % 20 == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
