"""TD010 and a GAN inversion: a pretrained generator is put in eval mode, then a loop tunes a
latent code and noise maps through it (``Adam([latent] + noise_maps)``, tensors built here, none
of them a model's parameters). The generator is not trained, so its eval mode is right. An
optimizer over the generator's parameters beside the same ``eval()`` is still reported."""

from __future__ import annotations

from support.lint import hits

SCRIPT = """
import torch
from torch import nn, optim


class Generator(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.mapping = nn.Sequential(nn.Linear(512, 512), nn.LeakyReLU(0.2))
        self.body = nn.Sequential(nn.Linear(512, width), nn.BatchNorm1d(width))

    def noise_shapes(self):
        return [(1, 512), (1, 512)]

    def forward(self, code, noise):
        return self.body(code + sum(noise))


def invert(target, steps, ckpt):
    generator = Generator(256)
    generator.load_state_dict(torch.load(ckpt, weights_only=True))
    generator.eval()
    with torch.no_grad():
        mean_code = generator.mapping(torch.randn(1000, 512)).mean(0)
    noise_maps = []
    for shape in generator.noise_shapes():
        noise_maps.append(torch.randn(shape).requires_grad_())
    latent = mean_code.detach().clone().unsqueeze(0)
    latent.requires_grad = True
    opt = optim.Adam({params}, lr=0.1)
    for _ in range(steps):
        image = generator(latent, noise=noise_maps)
        loss = torch.nn.functional.mse_loss(image, target)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return latent
"""


def found(params: str):
    return [rule for rule, _ in hits(SCRIPT.format(params=params)) if rule == "TD010"]


def test_tuning_a_latent_through_a_frozen_generator_is_quiet():
    assert found("[latent] + noise_maps") == []


def test_tuning_the_generator_itself_after_eval_is_reported():
    assert found("generator.parameters()") == ["TD010"]


def test_an_opaque_parameter_list_is_still_reported():
    assert found("params") == ["TD010"]
