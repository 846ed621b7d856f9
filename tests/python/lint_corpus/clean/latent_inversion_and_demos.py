"""Shapes from the seventh corpus that must stay quiet: a pretrained generator kept in eval mode
while a latent code and noise maps are tuned through it; a fine-tuning loop named for validation
too, whose backward runs in an update helper it hands the loss; a GAN loop whose regularisation
block clears, backpropagates and steps on its own beside the per-pass clear; a training loader
with a sampler only in distributed runs and ``shuffle`` when there is none; a dataset file's
demo that shows a few samples of its training loader."""

import matplotlib.pyplot as plt
import torch
from torch import nn, optim
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler


class Synth(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(32, 32), nn.LeakyReLU(0.2))
        self.body = nn.Sequential(nn.Linear(32, width), nn.BatchNorm1d(width), nn.Tanh())

    def forward(self, code, noise):
        return self.body(code + sum(noise))


def invert(target, steps, ckpt):
    synth = Synth()
    synth.load_state_dict(torch.load(ckpt, weights_only=True))
    synth.eval()
    with torch.no_grad():
        start = synth.mapping(torch.randn(256, 32)).mean(0)
    noise = [torch.zeros(1, 32).requires_grad_() for _ in range(2)]
    code = start.detach().clone().unsqueeze(0).requires_grad_()
    opt = optim.Adam([code] + noise, lr=0.05)
    for _ in range(steps):
        loss = nn.functional.mse_loss(synth(code, noise), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return code.detach()


def apply_update(part, opt, net, do_step):
    part.backward()
    if do_step:
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
        opt.zero_grad()


def evaluate(net, loader):
    net.eval()
    total = 0.0
    with torch.no_grad():
        for x, y in loader:
            total += nn.functional.cross_entropy(net(x), y).item()
    return total / max(len(loader), 1)


def train_and_validate(net, opt, train_loader, valid_loader, accum):
    net.train()
    for i, (x, y) in enumerate(train_loader):
        loss = nn.functional.cross_entropy(net(x), y)
        apply_update(loss / accum, opt, net, (i + 1) % accum == 0)
        if i % 200 == 0:
            print(evaluate(net, valid_loader))
            net.train()


def gan_loop(critic, maker, c_opt, m_opt, data, iters, reg_every):
    for i in range(iters):
        real = next(data)
        fake = maker(torch.randn(real.size(0), 8))
        c_loss = nn.functional.softplus(critic(fake.detach())).mean() + nn.functional.softplus(-critic(real)).mean()
        critic.zero_grad()
        c_loss.backward()
        c_opt.step()
        if i % reg_every == 0:
            real.requires_grad = True
            (grad,) = torch.autograd.grad(critic(real).sum(), real, create_graph=True)
            critic.zero_grad()
            grad.pow(2).sum().backward()
            c_opt.step()
        m_loss = nn.functional.softplus(-critic(maker(torch.randn(real.size(0), 8)))).mean()
        maker.zero_grad()
        m_loss.backward()
        m_opt.step()


class Tiles(Dataset):
    def __init__(self, paths):
        self.paths = sorted(paths)

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, i):
        return torch.load(self.paths[i], weights_only=True)


def make_train_loader(tiles, batch_size, distributed):
    train_sampler = DistributedSampler(tiles) if distributed else None
    return DataLoader(tiles, batch_size=batch_size, shuffle=(train_sampler is None), sampler=train_sampler)


if __name__ == "__main__":
    tiles = Tiles(["a.pt", "b.pt"])
    train_loader = DataLoader(tiles, batch_size=2)
    for images, masks in train_loader:
        fig, axes = plt.subplots(2, 2)
        for j in range(2):
            axes[j][0].imshow(images[j].permute(1, 2, 0).numpy())
            axes[j][1].imshow(masks[j].numpy())
        plt.show()
        break
