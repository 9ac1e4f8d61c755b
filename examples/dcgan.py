"""A DCGAN-style generator and discriminator, in PyTorch's idiom, on made-up images.

The "images" are 16x16 grey discs at random places (no download). It runs on Zero as
shipped; with its one framework line, ``import zero as torch``, changed to ``import torch``
it is a PyTorch program, and ``tests/test_layer_programs.py`` runs both from the same
initial weights and the same noise and compares both losses step by step.

    python examples/dcgan.py                  # a few seconds on 2 CPU cores

What it uses: ``nn.ConvTranspose2d`` up from a noise vector, ``nn.BatchNorm2d``,
``nn.ReLU(True)``, ``nn.Tanh``; ``nn.Conv2d``, ``nn.LeakyReLU(0.2, inplace=True)``,
``nn.Sigmoid`` and ``nn.BCELoss``; ``model.apply(weights_init)`` with the DCGAN paper's
N(0, 0.02) initialisation; two Adam optimizers with betas (0.5, 0.999); ``detach()`` of
the fake images in the discriminator's step. The noise comes from NumPy so that two
libraries see the same numbers; the last line printed is JSON of the losses.
"""
import argparse
import json

import numpy as np

import zero as torch

nn = torch.nn


def make_images(count, size, seed):
    """(count, 1, size, size) discs of radius 2-4 at random centres, in [-1, 1]."""
    rng = np.random.default_rng(seed)
    rows, cols = np.mgrid[:size, :size]
    centres = rng.uniform(4, size - 4, size=(count, 2))
    radii = rng.uniform(2, 4, size=count)
    inside = (rows[None] - centres[:, 0, None, None]) ** 2 + (cols[None] - centres[:, 1, None, None]) ** 2
    images = np.where(inside <= radii[:, None, None] ** 2, 1.0, -1.0).astype(np.float32)
    return torch.from_numpy(images[:, None])


class Generator(nn.Module):
    def __init__(self, nz, ngf):
        super().__init__()
        self.main = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 2, 4, 1, 0, bias=False),      # (N, nz, 1, 1) -> (N, 2ngf, 4, 4)
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),     # -> (N, ngf, 8, 8)
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, 1, 4, 2, 1, bias=False),           # -> (N, 1, 16, 16)
            nn.Tanh(),
        )

    def forward(self, z):
        return self.main(z)


class Discriminator(nn.Module):
    def __init__(self, ndf):
        super().__init__()
        self.main = nn.Sequential(
            nn.Conv2d(1, ndf, 4, 2, 1, bias=False),                    # (N, 1, 16, 16) -> (N, ndf, 8, 8)
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),              # -> (N, 2ndf, 4, 4)
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, 1, 4, 1, 0, bias=False),                # -> (N, 1, 1, 1)
            nn.Sigmoid(),
        )

    def forward(self, x):
        return self.main(x).view(-1)


def weights_init(m):
    classname = m.__class__.__name__
    if classname.find("Conv") != -1:
        nn.init.normal_(m.weight.data, 0.0, 0.02)
    elif classname.find("BatchNorm") != -1:
        nn.init.normal_(m.weight.data, 1.0, 0.02)
        nn.init.constant_(m.bias.data, 0)


def save_weights(models, path):
    np.savez(path, **{f"{key}.{name}": value.detach().cpu().numpy()
                      for key, model in models.items() for name, value in model.state_dict().items()})


def load_weights(models, path):
    with np.load(path) as arrays:
        for key, model in models.items():
            model.load_state_dict({name.split(".", 1)[1]: torch.from_numpy(arrays[name])
                                   for name in arrays.files if name.startswith(key + ".")})


def main():
    parser = argparse.ArgumentParser(description="Train a small DCGAN on made-up disc images.")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--nz", type=int, default=32)
    parser.add_argument("--ngf", type=int, default=32)
    parser.add_argument("--ndf", type=int, default=32)
    parser.add_argument("--lr", type=float, default=2e-4)
    parser.add_argument("--save-init")
    parser.add_argument("--load-init")
    args = parser.parse_args()

    torch.manual_seed(0)
    images = make_images(args.batch_size * 8, 16, seed=1)
    noise = np.random.default_rng(2)
    netG, netD = Generator(args.nz, args.ngf), Discriminator(args.ndf)
    netG.apply(weights_init)
    netD.apply(weights_init)
    models = {"G": netG, "D": netD}
    if args.save_init:
        save_weights(models, args.save_init)
    if args.load_init:
        load_weights(models, args.load_init)
    criterion = nn.BCELoss()
    optimizerD = torch.optim.Adam(netD.parameters(), lr=args.lr, betas=(0.5, 0.999))
    optimizerG = torch.optim.Adam(netG.parameters(), lr=args.lr, betas=(0.5, 0.999))

    losses_D, losses_G, batches = [], [], len(images) // args.batch_size
    for step in range(args.steps):
        i = step % batches * args.batch_size
        real = images[i:i + args.batch_size]
        b = real.size(0)
        z = torch.from_numpy(noise.standard_normal((b, args.nz, 1, 1)).astype(np.float32))
        # discriminator: real images towards 1, generated ones towards 0
        netD.zero_grad()
        label = torch.full((b,), 1.0)
        errD_real = criterion(netD(real), label)
        errD_real.backward()
        fake = netG(z)
        label.fill_(0.0)
        errD_fake = criterion(netD(fake.detach()), label)
        errD_fake.backward()
        optimizerD.step()
        # generator: make the discriminator say 1
        netG.zero_grad()
        label.fill_(1.0)
        errG = criterion(netD(fake), label)
        errG.backward()
        optimizerG.step()
        losses_D.append((errD_real + errD_fake).item())
        losses_G.append(errG.item())
        if step % 50 == 0 or step == args.steps - 1:
            print(f"step {step:4d}  loss_D {losses_D[-1]:.4f}  loss_G {losses_G[-1]:.4f}")
    print(json.dumps({"losses": losses_D, "losses_G": losses_G}))


if __name__ == "__main__":
    main()
