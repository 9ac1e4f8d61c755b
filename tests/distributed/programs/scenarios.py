"""Data, models and training loops shared by the rank programs and the tests that check them.

A rank program trains on its part of each batch; the test trains the same model on whole
batches in one process and compares. Everything here is float64, so the two runs agree to
rounding (about 1e-14), far inside the 1e-6 the tests ask.
"""
from __future__ import annotations

import numpy as np

import zero
import zero.nn.functional as F
from zero import nn
from zero.models import GPT, GPTConfig

STEPS = 10
BATCH = 8          # rows of one whole batch (each of 2 ranks takes 4)
LR = 1e-2


def rank_values(rank: int, shape: tuple, dtype: str = "float64") -> np.ndarray:
    """Rank ``rank``'s input to a collective: values every process can compute."""
    rng = np.random.default_rng(100 + rank)
    if dtype.startswith("int") or dtype == "uint8":
        return rng.integers(1, 6, shape).astype(dtype)
    return rng.uniform(0.5, 1.5, shape).astype(dtype)


def mlp(seed: int = 0) -> nn.Module:
    zero.manual_seed(seed)
    return nn.Sequential(nn.Linear(6, 16), nn.GELU(), nn.Linear(16, 16), nn.Tanh(), nn.Linear(16, 4))


GPT_CONFIG = dict(vocab_size=13, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.0)


def tiny_gpt(seed: int = 0) -> nn.Module:
    zero.manual_seed(seed)
    return GPT(GPTConfig(**GPT_CONFIG))


MODELS = {"mlp": mlp, "gpt": tiny_gpt}


def batches(kind: str, steps: int = STEPS, rows: int = BATCH, seed: int = 7) -> list:
    """``steps`` whole batches (NumPy inputs and targets) for model ``kind``."""
    rng = np.random.default_rng(seed)
    if kind == "mlp":
        return [(rng.standard_normal((rows, 6)), rng.integers(0, 4, rows)) for _ in range(steps)]
    size, block = GPT_CONFIG["vocab_size"], GPT_CONFIG["block_size"]
    return [(rng.integers(0, size, (rows, block)), rng.integers(0, size, (rows, block))) for _ in range(steps)]


def loss_of(kind: str, model, x: np.ndarray, y: np.ndarray):
    inputs = zero.tensor(x) if kind == "mlp" else zero.tensor(x, dtype=zero.int64)
    targets = zero.tensor(y, dtype=zero.int64)
    if kind == "mlp":
        return F.cross_entropy(model(inputs), targets)
    return model(inputs, targets)  # the mean loss over the B·T positions


def part(array: np.ndarray, rank: int, world: int) -> np.ndarray:
    """Rank ``rank``'s equal share of the rows of ``array``."""
    n = array.shape[0] // world
    return array[rank * n:(rank + 1) * n]


def train(kind: str, model, optimizer, data: list, rank: int = 0, world: int = 1, mean_over_ranks=None) -> list:
    """One optimizer step per batch on this rank's part of it; the whole batch's losses
    (``mean_over_ranks`` averages a rank's loss with the others')."""
    losses = []
    for x, y in data:
        loss = loss_of(kind, model, part(x, rank, world), part(y, rank, world))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        value = loss.detach().clone()
        if mean_over_ranks is not None:
            mean_over_ranks(value)
        losses.append(value.item())
    return losses


def weights(model) -> list:
    return [p.detach().numpy().tolist() for p in model.parameters()]


def state_numel(optimizer) -> int:
    """Elements of the optimizer's per-parameter state tensors (the step counters left out)."""
    return sum(t.numel() for state in optimizer.state.values() for key, t in state.items() if key != "step")
