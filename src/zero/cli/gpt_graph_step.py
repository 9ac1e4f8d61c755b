"""The GPT training step replayed as CUDA graphs (``zero gpt train --device cuda``; issue 38).

On a GPU the step's few hundred kernels cost the host about as long to issue as the GPU needs
to run them. Captured once, a step is replayed with a call or two. It is two graphs, not one:

    gradients   the static batch -> forward (under --dtype's autocast), backward, the clip:
                the loss and the gradient norm, on the device
    update      the optimizer's step (AdamW with ``capturable=True``: its step counts and
                learning rate live on the device, so the schedule changes the rate between
                replays by writing it there)

because the job's guard must see the loss and the norm before the update is applied -- the
eager step's rule (``Trainer.step``): a non-finite loss stops the run with the parameters of
the last good step. Between the replays the host reads those two numbers, the read an eager
step makes too (they are logged), and each replay's deferred index checks run with it.

The first ``WARMUP_STEPS`` steps of a process run eagerly: every Triton kernel compiled (a
compile inside a capture would break it), the optimizer's state made. Then both graphs are
captured once -- recorded, not run -- and every later step is: copy the batch into the static
inputs, replay the gradients, guard, replay the update. Dropout draws each replay's seeds
from the default generator as the eager step would, so a graphed run repeats an eager one.

Where a graph cannot serve, the step stays eager and ``reason_not_graphed`` says why: a device
other than CUDA, several ranks (the gradients' all-reduce runs in the backward's hooks, outside
what this captures), float16 (the loss scaler decides on the host whether to step).
"""
from __future__ import annotations

import math
from collections.abc import Callable

from ..cuda_graphs import CUDAGraph, graph
from ..nn.utils import clip_grad_norm_
from . import parallel

WARMUP_STEPS = 2  # eager steps before the capture: kernels compiled, optimizer state made


def reason_not_graphed(config, device) -> str | None:
    """Why ``config``'s step on ``device`` cannot be graphed, or None when it is."""
    if device.type != "cuda":
        return f"on {device.type}"
    if not config.cuda_graph:
        return "--no-cuda-graph"
    if parallel.current().distributed:
        return "several ranks"
    if config.dtype == "float16":
        return "float16's loss scaler steps on the host"
    return None


class GraphedStep:
    """The trainer's step as two graphs, captured after the warm-up (see the module docstring)."""

    def __init__(self, trainer):
        self.trainer = trainer
        self.eager_steps = 0
        self.gradients: CUDAGraph | None = None
        self.update: CUDAGraph | None = None
        self.static: tuple = ()   # (x, y, loss, grad_norm): the addresses the graphs read and write

    def __call__(self, x, y, guard: Callable):
        if self.gradients is None:
            if self.eager_steps < WARMUP_STEPS:
                self.eager_steps += 1
                return self.trainer.eager_step(x, y, guard)
            self._capture(x, y)
        assert self.gradients is not None and self.update is not None
        static_x, static_y, loss, grad_norm = self.static
        static_x.copy_(x)
        static_y.copy_(y)
        self.gradients.replay()
        checked = guard(loss, grad_norm)   # (reads both: the replay's index checks run here too)
        self.update.replay()
        self.trainer.schedule.step()
        return checked

    def _capture(self, x, y) -> None:
        trainer = self.trainer
        model, optimizer = trainer.model, trainer.optimizer
        static_x, static_y = x.clone(), y.clone()
        clip = trainer.config.grad_clip if trainer.config.grad_clip > 0 else math.inf
        optimizer.zero_grad(set_to_none=True)   # the backward's gradients: made by the graph, in its pool
        gradients, update = CUDAGraph(), CUDAGraph()
        with graph(gradients):
            with trainer.precision():
                loss = trainer.trained(static_x, static_y)
            loss.backward()
            grad_norm = clip_grad_norm_(model.parameters(), clip)
        with graph(update, pool=gradients.pool()):
            optimizer.step()
        self.gradients, self.update = gradients, update
        self.static = (static_x, static_y, loss.detach(), grad_norm)
