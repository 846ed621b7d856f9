# expect: TD017@24
"""Loader options gathered in a dict; `shuffle` is only added when a GPU is present, so a
CPU run trains on the digits in stored order."""

import torch
import torch.nn as nn
from torchvision import datasets, transforms


def build_loaders(batch_size: int, data_dir: str):
    on_gpu = torch.cuda.is_available()
    fit_options = {"batch_size": batch_size}
    check_options = {"batch_size": 4 * batch_size}
    if on_gpu:
        gpu_options = {"num_workers": 2, "pin_memory": True, "shuffle": True}
        fit_options.update(gpu_options)
        check_options.update(gpu_options)

    to_tensor = transforms.ToTensor()
    fit_set = datasets.MNIST(data_dir, train=True, download=True, transform=to_tensor)
    check_set = datasets.MNIST(data_dir, train=False, transform=to_tensor)
    # The training loader, named after what it is for; the held-out one is never shuffled
    # (it does not need to be).
    train_loader = torch.utils.data.DataLoader(fit_set, **fit_options)
    held_out_loader = torch.utils.data.DataLoader(check_set, **check_options)
    return train_loader, held_out_loader


def fit(model: nn.Module, loader, epochs: int = 2) -> None:
    opt = torch.optim.Adadelta(model.parameters(), lr=1.0)
    for _ in range(epochs):
        for images, digits in loader:
            opt.zero_grad()
            loss = nn.functional.nll_loss(model(images).log_softmax(-1), digits)
            loss.backward()
            opt.step()
