"""A checkpoint written by rank 0 under DistributedDataParallel (and ZeRO) and its resumption.

    checkpoint.py OUT train VARIANT CKPT     2 ranks: 5 steps, rank 0 saves, 3 more steps
    checkpoint.py OUT resume VARIANT CKPT    2 ranks (DDP and ZeRO, whichever optimizer wrote
                                             the checkpoint): the same 3 steps from it
    checkpoint.py OUT alone VARIANT CKPT     1 process, no process group: a plain model and
                                             optimizer take the same 3 steps

VARIANT is "ddp" (an MLP, AdamW on every rank) or "zero" (the GPT, ZeroRedundancyOptimizer).
Each reports the losses of the 3 steps after the checkpoint.
"""
from __future__ import annotations

from rank_common import ARGS, report
from scenarios import LR, MODELS, batches, train

import zero
import zero.distributed as dist
from zero.distributed.optim import ZeroRedundancyOptimizer
from zero.nn.parallel import DistributedDataParallel as DDP
from zero.optim import AdamW

phase, variant, path = ARGS
kind = "mlp" if variant == "ddp" else "gpt"
zero.set_default_dtype(zero.float64)
data = batches(kind, steps=8)
distributed = phase != "alone"


def optimizer_for(model):
    if phase == "resume" or (phase == "train" and variant == "zero"):
        return ZeroRedundancyOptimizer(model.parameters(), optimizer_class=AdamW, lr=LR)
    return AdamW(model.parameters(), lr=LR)


if distributed:
    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
else:
    rank, world = 0, 1
mean = (lambda t: dist.all_reduce(t, op=dist.ReduceOp.AVG)) if distributed else None

if phase == "train":
    model = DDP(MODELS[kind]())
    optimizer = optimizer_for(model)
    train(kind, model, optimizer, data[:5], rank, world, mean)
    if variant == "zero":
        optimizer.consolidate_state_dict(to=0)  # every rank takes part; rank 0 receives the shards
    if rank == 0:
        zero.save({"model": model.module.state_dict(), "optimizer": optimizer.state_dict(), "step": 5}, path)
    dist.barrier()
else:
    saved = zero.load(path)
    plain = MODELS[kind](seed=99)               # other weights: the checkpoint must replace them all
    plain.load_state_dict(saved["model"])
    model = DDP(plain) if distributed else plain
    optimizer = optimizer_for(model)
    optimizer.load_state_dict(saved["optimizer"])
report(rank, {"next losses": train(kind, model, optimizer, data[5:], rank, world, mean), "world": world})
