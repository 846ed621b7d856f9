"""Lightning-style modules: automatic optimization (the trainer owns the loop) and manual
optimization (the module zeroes, backpropagates and steps itself)."""

import torch
import torch.nn.functional as F
from torch import nn

try:
    import lightning as L
except ImportError:  # keep the example importable without Lightning
    L = None

LightningModule = L.LightningModule if L is not None else nn.Module


class LitClassifier(LightningModule):
    def __init__(self, in_dim=28 * 28, num_classes=10, lr=1e-3):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(in_dim, 128), nn.ReLU(), nn.Dropout(0.2),
                                 nn.Linear(128, num_classes))
        self.loss_fn = nn.CrossEntropyLoss()

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = self.loss_fn(logits, y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        self.log("val_loss", self.loss_fn(logits, y))
        self.log("val_acc", (logits.argmax(dim=1) == y).float().mean())

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_acc", (self(x).argmax(dim=1) == y).float().mean())

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=10)
        return [optimizer], [scheduler]


class LitGAN(LightningModule):
    def __init__(self, latent_dim=32):
        super().__init__()
        self.automatic_optimization = False
        self.latent_dim = latent_dim
        self.generator = nn.Sequential(nn.Linear(latent_dim, 64), nn.ReLU(), nn.Linear(64, 64))
        self.discriminator = nn.Sequential(nn.Linear(64, 32), nn.LeakyReLU(0.2), nn.Linear(32, 1))

    def training_step(self, batch, batch_idx):
        real = batch
        opt_g, opt_d = self.optimizers()
        z = torch.randn(real.size(0), self.latent_dim, device=real.device)

        fake = self.generator(z)
        g_loss = F.binary_cross_entropy_with_logits(self.discriminator(fake), torch.ones(real.size(0), 1,
                                                                                         device=real.device))
        opt_g.zero_grad()
        self.manual_backward(g_loss)
        opt_g.step()

        real_logits = self.discriminator(real)
        fake_logits = self.discriminator(fake.detach())
        d_loss = (F.binary_cross_entropy_with_logits(real_logits, torch.ones_like(real_logits))
                  + F.binary_cross_entropy_with_logits(fake_logits, torch.zeros_like(fake_logits))) / 2
        opt_d.zero_grad()
        self.manual_backward(d_loss)
        opt_d.step()
        self.log_dict({"g_loss": g_loss, "d_loss": d_loss})

    def configure_optimizers(self):
        opt_g = torch.optim.Adam(self.generator.parameters(), lr=2e-4)
        opt_d = torch.optim.Adam(self.discriminator.parameters(), lr=2e-4)
        return [opt_g, opt_d]
