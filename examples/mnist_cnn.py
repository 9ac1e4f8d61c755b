"""A LeNet-style convolutional network on MNIST digits, in PyTorch's idiom.

    python examples/mnist_cnn.py [--epochs 14] [--batch-size 64] [--data DIR] [--save-model PATH]

The program is written as one writes it for PyTorch (the network of PyTorch's own MNIST
example: two 3x3 convolutions, max pooling, dropout, two linear layers; Adadelta with a
StepLR schedule). Only the imports below say Zero: with ``import torch`` and its
submodules in their place it runs on PyTorch unchanged (``benchmarks/mnist_cnn.py`` does
exactly that to time both). The files are read by ``zero.data`` (torchvision's job in
PyTorch's example) from ``--data DIR``, ``$ZERO_DATA/mnist``, ``~/.cache/zero/mnist`` or
Debian's Fashion-MNIST (``apt-get install dataset-fashion-mnist``).

It reaches 99 % test accuracy on MNIST digits and 90 % on Fashion-MNIST within its first
epochs (figures in benchmarks/RESULTS.md).

Run time: its default is PyTorch's example's 14 epochs, and an epoch of 60,000 images
takes 3 1/2 to 9 minutes on the project's 2-core CPU (measured 202 to 555 s, the machine
more or less loaded; benchmarks/RESULTS.md, "CNN training"), so the default run takes
one to two hours there; each epoch's line says how long the rest will take. ``--epochs 1``
gives a first result (88 % on Fashion-MNIST) in minutes; on a GPU an epoch takes seconds.
"""
import argparse
import time

import zero as torch
import zero.nn as nn
import zero.nn.functional as F
import zero.optim as optim
from zero.data import MNIST, find_mnist  # reads the IDX files (stays Zero's under PyTorch too)
from zero.optim.lr_scheduler import StepLR
from zero.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, dropout1=0.25, dropout2=0.5):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)      # (N, 1, 28, 28) -> (N, 32, 26, 26)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)     # -> (N, 64, 24, 24), pooled to (N, 64, 12, 12)
        self.dropout1 = nn.Dropout(dropout1)
        self.dropout2 = nn.Dropout(dropout2)
        self.fc1 = nn.Linear(64 * 12 * 12, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)                  # (N, 9216)
        x = F.relu(self.fc1(x))
        x = self.dropout2(x)
        return F.log_softmax(self.fc2(x), dim=1)


def load(root, train, statistics=None):
    """A split as a TensorDataset of (N, 1, 28, 28) images, standardised with the training
    set's mean and standard deviation (``statistics``; computed when None)."""
    split = MNIST(root, train=train)
    images = torch.from_numpy(split.images.numpy().reshape(-1, 1, 28, 28))
    labels = torch.from_numpy(split.labels.numpy())
    mean, std = statistics if statistics is not None else (float(images.mean()), float(images.std()))
    return TensorDataset((images - mean) / std, labels), (mean, std)


def train(args, model, device, loader, optimizer, epoch):
    model.train()
    for batch, (data, target) in enumerate(loader):
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        if batch % args.log_interval == 0:
            print(f"Train epoch {epoch} [{batch * len(data)}/{len(loader.dataset)}]  loss {loss.item():.6f}",
                  flush=True)


def test(model, device, loader):
    model.eval()
    total_loss, correct = 0.0, 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            output = model(data)
            total_loss += F.nll_loss(output, target, reduction="sum").item()
            correct += (output.argmax(dim=1) == target).sum().item()
    count = len(loader.dataset)
    print(f"Test set: average loss {total_loss / count:.4f}, accuracy {correct}/{count} "
          f"({100.0 * correct / count:.2f}%)", flush=True)
    return correct / count


def _minutes(seconds):
    return f"{seconds / 60:.0f} min" if seconds >= 60 else f"{seconds:.0f} s"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--test-batch-size", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=14,
                        help="passes over the 60,000 training images (default: 14, PyTorch's example's; "
                             "each 3 1/2 to 9 minutes on a 2-core CPU, so 1 to 2 hours in all)")
    parser.add_argument("--lr", type=float, default=1.0, help="Adadelta's learning rate")
    parser.add_argument("--gamma", type=float, default=0.7, help="StepLR's factor per epoch")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=100, help="batches between progress lines")
    parser.add_argument("--data", default=None, help="a directory with the four MNIST-format files")
    parser.add_argument("--no-cuda", action="store_true", help="stay on the CPU when a GPU is there")
    parser.add_argument("--save-model", default=None, metavar="PATH", help="save the trained state dict here")
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if not args.no_cuda and torch.cuda.is_available() else "cpu")
    root, kind = find_mnist(args.data)
    train_set, statistics = load(root, train=True)
    test_set, _ = load(root, train=False, statistics=statistics)
    print(f"data: {kind} from {root} ({len(train_set)} training, {len(test_set)} test images); device {device}")
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.test_batch_size)

    model = Net().to(device)
    optimizer = optim.Adadelta(model.parameters(), lr=args.lr)
    scheduler = StepLR(optimizer, step_size=1, gamma=args.gamma)
    accuracy = 0.0
    began = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        start = time.perf_counter()
        train(args, model, device, train_loader, optimizer, epoch)
        seconds = time.perf_counter() - start
        accuracy = test(model, device, test_loader)
        left = (time.perf_counter() - began) / epoch * (args.epochs - epoch)
        print(f"epoch {epoch}: {seconds:.1f} s training ({len(train_set) / seconds:.0f} images/s), "
              f"test accuracy {100 * accuracy:.2f}%" + (f"; about {_minutes(left)} left" if left else ""),
              flush=True)
        scheduler.step()
    if args.save_model:
        torch.save(model.state_dict(), args.save_model)
    return accuracy


if __name__ == "__main__":
    main()
