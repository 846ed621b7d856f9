"""An ImageNet-style script: running averages of metrics, a nested validation helper run
under no_grad, train/validate helpers called per epoch, DataParallel, resume from checkpoint."""

import os
import time

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset


class AverageMeter:
    def __init__(self, name):
        self.name = name
        self.reset()

    def reset(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


def accuracy(output, target, topk=(1,)):
    with torch.no_grad():
        maxk = max(topk)
        _, pred = output.topk(maxk, 1, True, True)
        correct = pred.t().eq(target.view(1, -1).expand_as(pred.t()))
        return [correct[:k].reshape(-1).float().sum(0) * (100.0 / target.size(0)) for k in topk]


def train(train_loader, model, criterion, optimizer, epoch, device):
    losses, top1 = AverageMeter("Loss"), AverageMeter("Acc@1")
    model.train()
    end = time.time()
    for i, (images, target) in enumerate(train_loader):
        images = images.to(device, non_blocking=True)
        target = target.to(device, non_blocking=True)
        output = model(images)
        loss = criterion(output, target)
        acc1, = accuracy(output, target)
        losses.update(loss.item(), images.size(0))
        top1.update(acc1.item(), images.size(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    print(f"epoch {epoch} loss {losses.avg:.3f} acc {top1.avg:.1f} in {time.time() - end:.1f}s")


def validate(val_loader, model, criterion, device):
    top1 = AverageMeter("Acc@1")

    def run_validate(loader):
        with torch.no_grad():
            for images, target in loader:
                images, target = images.to(device), target.to(device)
                output = model(images)
                criterion(output, target)
                acc1, = accuracy(output, target)
                top1.update(acc1.item(), images.size(0))

    model.eval()
    run_validate(val_loader)
    return top1.avg


def main():
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1),
                          nn.Flatten(), nn.Dropout(0.2), nn.Linear(8, 10))
    model = nn.DataParallel(model).to(device)
    criterion = nn.CrossEntropyLoss().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=30, gamma=0.1)
    start_epoch, best_acc1 = 0, 0.0
    if os.path.isfile("checkpoint.pth.tar"):
        checkpoint = torch.load("checkpoint.pth.tar", map_location=device, weights_only=True)
        start_epoch = checkpoint["epoch"]
        model.load_state_dict(checkpoint["state_dict"])
    data = TensorDataset(torch.randn(64, 3, 16, 16), torch.randint(0, 10, (64,)))
    train_loader = DataLoader(data, batch_size=16, shuffle=True, num_workers=0, pin_memory=True)
    val_loader = DataLoader(data, batch_size=32, shuffle=False)
    for epoch in range(start_epoch, 3):
        train(train_loader, model, criterion, optimizer, epoch, device)
        acc1 = validate(val_loader, model, criterion, device)
        scheduler.step()
        best_acc1 = max(acc1, best_acc1)
        torch.save({"epoch": epoch + 1, "state_dict": model.state_dict(), "best_acc1": best_acc1},
                   "checkpoint.pth.tar")


if __name__ == "__main__":
    main()
