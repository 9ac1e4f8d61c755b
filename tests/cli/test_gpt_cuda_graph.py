"""``zero gpt train`` on CUDA replays its step as CUDA graphs (``cli/gpt_graph_step.py``).

Here "cuda" is played by the CPU backend (``second_device``), whose capture is a tape of kernel
calls; on a GPU machine (ZERO_TEST_DEVICE=cuda) the same tests capture the real stream. A
graphed run must repeat the op-by-op run (--no-cuda-graph) bit for bit -- losses, gradient
norms, parameters, with dropout and the warm-up + cosine schedule -- and the guard must still
stop an update before it is applied.
"""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

import zero
from zero.cli.gpt_config import GPTTrainConfig
from zero.cli.gpt_graph_step import WARMUP_STEPS
from zero.cli.gpt_trainer import Trainer

from cli_helpers import TINY_GPT, gpt

VOCAB = 11


class _Tokens:
    """Random token ids with TokenData's ``batch``."""

    def __init__(self, count: int, seed: int):
        self.ids = np.random.default_rng(seed).integers(0, VOCAB, count)

    def batch(self, batch_size: int, block_size: int, rng):
        starts = rng.integers(0, len(self.ids) - block_size - 1, batch_size)
        x = np.stack([self.ids[s:s + block_size] for s in starts])
        y = np.stack([self.ids[s + 1:s + block_size + 1] for s in starts])
        return x, y


def _config(**changes) -> GPTTrainConfig:
    base = GPTTrainConfig(device="cuda", n_layer=2, n_head=2, n_embd=16, block_size=8, batch_size=4, steps=8,
                          dropout=0.1, lr=1e-2, min_lr=1e-3, warmup=3, eval_iters=2)
    return dataclasses.replace(base, **changes)


def _trainer(config: GPTTrainConfig, device) -> Trainer:
    def draw(data, rng):
        x, y = data.batch(config.batch_size, config.block_size, rng.numpy)
        return zero.tensor(x, device=device), zero.tensor(y, device=device)

    trainer = Trainer(config, VOCAB, _Tokens(400, 1), _Tokens(100, 2), device, draw)
    trainer.start()
    return trainer


def _run(config: GPTTrainConfig, device, steps: int):
    trainer = _trainer(config, device)
    records = [trainer.step() for _ in range(steps)]
    params = [p.detach().cpu().numpy() for p in trainer.model.parameters()]
    return trainer, records, params


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
@pytest.mark.parametrize("dropout", [0.0, 0.1])
def test_a_graphed_run_repeats_the_op_by_op_run_bit_for_bit(second_device, dropout, dtype):
    """bfloat16 too: the forward's autocast region (and its cache of cast weights) lies
    wholly inside the captured gradients graph, so every replay casts afresh."""
    steps = WARMUP_STEPS + 5
    eager, eager_records, eager_params = _run(_config(cuda_graph=False, dropout=dropout, dtype=dtype), second_device,
                                              steps)
    graphed, graph_records, graph_params = _run(_config(dropout=dropout, dtype=dtype), second_device, steps)
    assert eager.graphed is None and graphed.graphed is not None and graphed.graphed.gradients is not None
    assert graph_records == eager_records
    for a, b in zip(graph_params, eager_params):
        np.testing.assert_array_equal(a, b)
    assert graphed.evaluate() == eager.evaluate()


def test_the_guard_still_stops_the_update_before_it_is_applied(second_device):
    trainer = _trainer(_config(), second_device)
    for _ in range(WARMUP_STEPS + 1):
        trainer.step()
    before = [p.detach().cpu().numpy().copy() for p in trainer.model.parameters()]

    class Stop(Exception):
        pass

    def guard(loss, grad_norm):
        raise Stop

    with pytest.raises(Stop):
        trainer.step(guard)
    for p, old in zip(trainer.model.parameters(), before):
        np.testing.assert_array_equal(p.detach().cpu().numpy(), old)


@pytest.mark.filterwarnings("ignore:GradScaler is enabled, but CUDA is not available")
@pytest.mark.parametrize("changes, reason", [(dict(cuda_graph=False), "--no-cuda-graph"),
                                             (dict(dtype="float16"), "float16")])
def test_the_step_stays_op_by_op_where_a_graph_cannot_serve(second_device, changes, reason):
    trainer = _trainer(_config(**changes), second_device)
    assert trainer.graphed is None and reason in trainer.graph_off
    cpu = _trainer(_config(device="cpu"), zero.Device("cpu"))
    assert cpu.graphed is None


def _records(metrics):
    return [(r["train_loss"], r["grad_norm"]) for r in map(json.loads, metrics.read_text().splitlines())]


def test_gpt_train_on_cuda_replays_graphs_says_so_and_resumes_exactly(second_device, prepared, tmp_path, capsys):
    """The job itself: its model line says the steps are replayed as graphs; the metrics equal an
    op-by-op run's; a graphed run stopped at step 3 and resumed (warming up and capturing anew)
    equals the uninterrupted one; its checkpoint resumes on the CPU too."""
    common = ("--data", prepared, "--eval-interval", 3, "--device", "cuda", "--dtype", "float32", *TINY_GPT)
    whole, eager, parts = tmp_path / "whole.jsonl", tmp_path / "eager.jsonl", tmp_path / "parts.jsonl"
    assert gpt("train", *common, "--out", tmp_path / "a", "--steps", 7, "--metrics", whole) == 0
    assert "on cuda:0 in float32, steps replayed as CUDA graphs;" in capsys.readouterr().out
    assert gpt("train", *common, "--out", tmp_path / "b", "--steps", 7, "--metrics", eager, "--no-cuda-graph") == 0
    assert "steps op by op (--no-cuda-graph);" in capsys.readouterr().out
    assert _records(whole) == _records(eager)
    assert gpt("train", *common, "--out", tmp_path / "c", "--steps", 3, "--metrics", parts) == 0
    assert gpt("train", *common, "--out", tmp_path / "c", "--steps", 7, "--metrics", parts, "--resume") == 0
    assert _records(parts) == _records(whole)
    on_cpu = tmp_path / "cpu.jsonl"
    assert gpt("train", "--data", prepared, "--eval-interval", 3, *TINY_GPT, "--out", tmp_path / "c", "--steps", 9,
               "--metrics", on_cpu, "--resume", "--device", "cpu") == 0
    assert "on cpu in float32;" in capsys.readouterr().out
    assert [json.loads(line)["step"] for line in on_cpu.read_text().splitlines()] == [8, 9]
