"""A DCGAN-style training loop: two networks, two optimizers, module-level zero_grad,
a sigmoid discriminator with BCELoss."""

import torch
import torch.nn as nn

nz, ngf, ndf = 16, 32, 32
device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(nz, ngf * 4), nn.BatchNorm1d(ngf * 4), nn.ReLU(True),
            nn.Linear(ngf * 4, 64), nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.main = nn.Sequential(
            nn.Linear(64, ndf * 4), nn.LeakyReLU(0.2, inplace=True),
            nn.Linear(ndf * 4, 1), nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1)


netG = Generator().to(device)
netD = Discriminator().to(device)
criterion = nn.BCELoss()
optimizerD = torch.optim.Adam(netD.parameters(), lr=2e-4, betas=(0.5, 0.999))
optimizerG = torch.optim.Adam(netG.parameters(), lr=2e-4, betas=(0.5, 0.999))
real_data = torch.randn(1024, 64)
fixed_noise = torch.randn(8, nz, device=device)

for epoch in range(5):
    for i in range(0, len(real_data), 64):
        real = real_data[i:i + 64].to(device)
        b = real.size(0)
        label = torch.full((b,), 1.0, device=device)

        netD.zero_grad()
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        noise = torch.randn(b, nz, device=device)
        fake = netG(noise)
        label.fill_(0.0)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()

        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()

    with torch.no_grad():
        sample = netG(fixed_noise).cpu()
    print(f"epoch {epoch}: D {(errD_real + errD_fake).item():.3f} G {errG.item():.3f} sample {sample.mean():.3f}")
