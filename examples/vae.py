"""A variational autoencoder, in PyTorch's idiom, on made-up 8x8 binary images.

The images are bars: each row and each column of an 8x8 grid is on with probability
1/8 (no download). It runs on Zero as shipped; with its one framework line, ``import zero
as torch``, changed to ``import torch`` it is a PyTorch program, and
``tests/test_layer_programs.py`` runs both from the same initial weights and the same
noise and compares the losses.

    python examples/vae.py                    # a few seconds on 2 CPU cores

What it uses: a ``TensorDataset`` under a ``DataLoader``, ``nn.Linear`` encoder and
decoder, the reparameterisation trick, ``F.binary_cross_entropy(reduction="sum")`` plus
the Gaussian KL term, Adam. The reparameterisation's noise comes from NumPy so two
libraries see the same numbers; the last line printed is JSON of the losses.
"""
import argparse
import json

import numpy as np

import zero as torch

nn = torch.nn
F = torch.nn.functional
DataLoader, TensorDataset = torch.utils.data.DataLoader, torch.utils.data.TensorDataset


def make_bars(count, seed):
    rng = np.random.default_rng(seed)
    rows = rng.random((count, 8, 1)) < 1 / 8
    cols = rng.random((count, 1, 8)) < 1 / 8
    return torch.from_numpy((rows | cols).reshape(count, 64).astype(np.float32))


class VAE(nn.Module):
    def __init__(self, hidden, latent):
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.fc21 = nn.Linear(hidden, latent)
        self.fc22 = nn.Linear(hidden, latent)
        self.fc3 = nn.Linear(latent, hidden)
        self.fc4 = nn.Linear(hidden, 64)

    def encode(self, x):
        h = F.relu(self.fc1(x))
        return self.fc21(h), self.fc22(h)

    def decode(self, z):
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

    def forward(self, x, eps):
        mu, logvar = self.encode(x)
        z = mu + eps * torch.exp(0.5 * logvar)       # the reparameterisation trick
        return self.decode(z), mu, logvar


def loss_function(recon, x, mu, logvar):
    bce = F.binary_cross_entropy(recon, x, reduction="sum")
    kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return bce + kld


def save_weights(model, path):
    np.savez(path, **{name: value.detach().cpu().numpy() for name, value in model.state_dict().items()})


def load_weights(model, path):
    with np.load(path) as arrays:
        model.load_state_dict({name: torch.from_numpy(arrays[name]) for name in arrays.files})


def main():
    parser = argparse.ArgumentParser(description="Train a VAE on made-up 8x8 bar images.")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--latent", type=int, default=8)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--samples", type=int, default=2048)
    parser.add_argument("--save-init")
    parser.add_argument("--load-init")
    args = parser.parse_args()

    torch.manual_seed(0)
    loader = DataLoader(TensorDataset(make_bars(args.samples, seed=1)), batch_size=args.batch_size, shuffle=False)
    noise = np.random.default_rng(2)
    model = VAE(args.hidden, args.latent)
    if args.save_init:
        save_weights(model, args.save_init)
    if args.load_init:
        load_weights(model, args.load_init)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    losses = []
    model.train()
    for epoch in range(args.epochs):
        total = 0.0
        for (x,) in loader:
            eps = torch.from_numpy(noise.standard_normal((x.size(0), args.latent)).astype(np.float32))
            recon, mu, logvar = model(x, eps)
            loss = loss_function(recon, x, mu, logvar)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item() / x.size(0))
            total += loss.item()
        print(f"epoch {epoch}  loss per image {total / len(loader.dataset):.4f}")
    print(json.dumps({"losses": losses}))


if __name__ == "__main__":
    main()
