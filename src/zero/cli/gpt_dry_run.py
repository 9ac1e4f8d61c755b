"""``zero gpt train --dry-run``: what a run would hold and how long it would take, writing nothing.

The memory estimate, in float32 (4 bytes a number), for P parameters and a step of
N = batch x block tokens, width C, H heads, L layers, vocabulary V:

    weights             4 P
    gradients           4 P
    optimizer state     8 P        AdamW's two moments (exp_avg, exp_avg_sq)
    activations         4 N (L (12 C + H + 4) + 2 C + V + 1)

The activations are what the graph keeps from forward until backward, read off the ops
``zero.models.gpt`` uses (each op's ``save_for_backward``), per token:

    per layer   C    the residual stream entering the block (LayerNorm 1's input)
                C    LayerNorm 1's output (the qkv Linear's input)
                3 C  the packed q, k, v (the fused self-attention's input)
                C    the attention's output (kept by it, and the projection's input)
                H    the attention's row log-sum-exps (one per head)
                C    the residual stream after attention (LayerNorm 2's input)
                C    LayerNorm 2's output (the fused FFN's input)
                4 C  the FFN's hidden x @ W1ᵀ (kept while N x 4C floats fit in
                     ``ffn.KEEP_HIDDEN_BYTES``; recomputed in backward above: 0)
                4    the two LayerNorms' mean and 1/std
    after       2 C  the final LayerNorm's input and output, and its 2 statistics
                V    the logits, while N rows fit in one chunk of the fused
                     linear-cross-entropy (else recomputed in backward: 0), and
                1    their log-sum-exp
    (Dropout keeps no mask: it re-draws it from a seed; residual additions keep nothing.)

On top of these, backward holds its working tensors for a moment: ``TRANSIENT`` is what the
largest call (the last block's FFN: its hidden and the hidden's gradient, 2 x 4C, and the
gradients flowing in and out, 2 C) adds at the peak: 4 N x 10 C.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from ..backends.device import Device
from ..ops.fused.ffn import KEEP_HIDDEN_BYTES
from ..ops.fused.linear_cross_entropy import default_chunk_size
from .console import duration
from .gpt_config import GPTTrainConfig

FLOAT = 4  # bytes
TIMED_STEPS = 3


@dataclass(frozen=True)
class MemoryEstimate:
    weights: int
    gradients: int
    optimizer: int
    activations: int
    transient: int

    @property
    def total(self) -> int:
        return self.weights + self.gradients + self.optimizer + self.activations + self.transient


def memory_estimate(config: GPTTrainConfig, vocab_size: int, parameters: int, device: Device | None = None
                    ) -> MemoryEstimate:
    """The bytes a training step of ``config`` holds at its peak (the module's formula)."""
    N, C, H, L, V = config.batch_size * config.block_size, config.n_embd, config.n_head, config.n_layer, vocab_size
    hidden = 4 * C if N * 4 * C * FLOAT <= KEEP_HIDDEN_BYTES else 0
    logits = V if N <= default_chunk_size(V, FLOAT, device) else 0
    per_token = L * (8 * C + hidden + H + 4) + 2 * C + 2 + logits + 1
    return MemoryEstimate(weights=FLOAT * parameters, gradients=FLOAT * parameters, optimizer=2 * FLOAT * parameters,
                          activations=FLOAT * N * per_token, transient=FLOAT * N * 10 * C)


def _mib(n: float) -> str:
    return f"{n / 2**20:,.1f} MiB"


def dry_run(job, say=print) -> dict:
    """Time ``TIMED_STEPS`` real steps of ``job`` (a ``gpt_train.Job``) after a warm-up step and
    report the estimate and the measured peak (bytes the allocator held during the timed
    steps). Returns the figures."""
    config, trainer, device = job.config, job.trainer, job.device
    parameters = trainer.model.num_parameters()
    estimate = memory_estimate(config, len(job.tokenizer), parameters, device)
    say(f"dry run: nothing is written ({config.out} is left as it is)")
    say(job.describe())
    say(f"memory estimate on {device}: {_mib(estimate.total)} = weights {_mib(estimate.weights)} + gradients "
        f"{_mib(estimate.gradients)} + AdamW state {_mib(estimate.optimizer)} + activations "
        f"{_mib(estimate.activations)} (batch {config.batch_size} x block {config.block_size}) + backward's "
        f"working tensors {_mib(estimate.transient)}")
    trainer.start(0)
    started = time.perf_counter()
    trainer.step()  # the warm-up: a first run compiles kernels here
    warm_up = time.perf_counter() - started
    allocator = device.backend.allocator
    allocator.reset_peak()
    started = time.perf_counter()
    for _ in range(TIMED_STEPS):
        trainer.step()
    per_step = (time.perf_counter() - started) / TIMED_STEPS
    peak = allocator.memory_stats()["peak_bytes"]
    say(f"measured peak during {TIMED_STEPS} steps: {_mib(peak)} ({peak / estimate.total:.0%} of the estimate)")
    say(f"time: {1000 * per_step:,.0f} ms/step over {TIMED_STEPS} steps (after a warm-up step of {warm_up:.1f} s); "
        f"{config.steps:,} steps: about {duration(per_step * config.steps)}, plus the evaluations (every "
        f"{config.eval_interval} steps and at the end)")
    return {"parameters": parameters, "estimate": estimate, "peak": peak, "seconds_per_step": per_step,
            "warm_up_seconds": warm_up}
