"""DistributedDataParallel and ZeroRedundancyOptimizer on 2 ranks: what the test compares with
one process (test_distributed_data_parallel.py, test_zero_redundancy_optimizer.py)."""
from __future__ import annotations

import datetime

import numpy as np
from rank_common import error_of, report
from scenarios import LR, MODELS, batches, loss_of, mlp, part, state_numel, train, weights

import zero
import zero.distributed as dist
from zero import nn
from zero.distributed.optim import ZeroRedundancyOptimizer
from zero.nn.parallel import DistributedDataParallel as DDP
from zero.optim import AdamW

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=120))
rank, world = dist.get_rank(), dist.get_world_size()
zero.set_default_dtype(zero.float64)
results: dict = {}


def mean_over_ranks(t):
    dist.all_reduce(t, op=dist.ReduceOp.AVG)


# -- the same 10 AdamW steps as one process on the whole batches -------------------------------------
for kind in MODELS:
    for variant, bucket_cap_mb in (("ddp", 25), ("ddp small buckets", 0.001)):
        model = DDP(MODELS[kind](), bucket_cap_mb=bucket_cap_mb)
        optimizer = AdamW(model.parameters(), lr=LR)
        results[f"{kind} {variant} losses"] = train(kind, model, optimizer, batches(kind), rank, world, mean_over_ranks)
        results[f"{kind} {variant} weights"] = weights(model)
        results[f"{kind} {variant} buckets"] = len(model.reducer.buckets)
    model = DDP(MODELS[kind]())
    optimizer = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=AdamW, lr=LR)
    results[f"{kind} zero losses"] = train(kind, model, optimizer, batches(kind), rank, world, mean_over_ranks)
    results[f"{kind} zero weights"] = weights(model)
    results[f"{kind} zero state"] = state_numel(optimizer)
    results[f"{kind} zero owned"] = sum(p.numel() for p in optimizer.owned_parameters())
    results[f"{kind} zero largest"] = max(p.numel() for p in model.parameters())
    results[f"{kind} parameters"] = sum(p.numel() for p in model.parameters())

# -- tied weights: the GPT's embedding is its output layer, one parameter in one bucket ---------------
gpt = DDP(MODELS["gpt"]())
bucketed = [p for b in gpt.reducer.buckets for p in b.params]
results["tied"] = [gpt.module.token_embedding.weight is bucketed[-1], len(bucketed), len(list(gpt.parameters())),
                   len({id(p) for p in bucketed})]
results["state_dict keys"] = list(gpt.state_dict())[:3]

# -- rank 0's weights everywhere after wrapping, whatever each rank initialised ------------------------
results["wrapped weights"] = weights(DDP(mlp(seed=rank)))

# -- no_sync: 2 micro-batches per rank, the first without an all-reduce = one batch of 16 -------------
model = DDP(mlp())
optimizer = AdamW(model.parameters(), lr=LR)
local_grads = []
for x, y in batches("mlp", steps=3, rows=16):
    mine_x, mine_y = part(x, rank, world), part(y, rank, world)                     # 8 rows
    optimizer.zero_grad()
    with model.no_sync():
        (loss_of("mlp", model, mine_x[:4], mine_y[:4]) / 2).backward()               # accumulate only
    local_grads.append(next(model.parameters()).grad.numpy().tolist())
    (loss_of("mlp", model, mine_x[4:], mine_y[4:]) / 2).backward()                   # all-reduce the sums
    optimizer.step()
results["no_sync weights"] = weights(model)
results["no_sync local grads"] = local_grads


# -- find_unused_parameters: head b used on rank 1 only, head c nowhere --------------------------------
class Heads(nn.Module):
    def __init__(self):
        super().__init__()
        zero.manual_seed(3)
        self.body, self.a, self.b, self.c = nn.Linear(3, 4), nn.Linear(4, 2), nn.Linear(4, 2), nn.Linear(4, 2)

    def forward(self, x, use_b):
        h = self.body(x).tanh()
        out = self.a(h).sum()
        return out + self.b(h).pow(2).sum() if use_b else out


x = zero.tensor(np.random.default_rng(rank).standard_normal((5, 3)))
plain = Heads()
plain(x, rank == 1).backward()
results["unused local b grad"] = None if plain.b.weight.grad is None else plain.b.weight.grad.tolist()
model = DDP(Heads(), find_unused_parameters=True)
model(x, rank == 1).backward()
results["unused ddp grads"] = [None if p.grad is None else p.grad.tolist() for p in (model.module.b.weight,
                                                                                   model.module.c.weight)]
results["unused body grad"] = [model.module.body.weight.grad.tolist(), plain.body.weight.grad.tolist()]

# -- buffers: rank 0's after wrapping and before every forward -----------------------------------------
norm = nn.Sequential(nn.Linear(3, 3), nn.BatchNorm1d(3))
norm[1].running_mean.fill_(float(rank + 1))
model = DDP(norm)
after_wrap = norm[1].running_mean.tolist()
if rank == 1:
    norm[1].running_mean.fill_(-5.0)
model.eval()
model(zero.ones(2, 3))
results["buffers"] = [after_wrap, norm[1].running_mean.tolist()]

# -- refusals ---------------------------------------------------------------------------------------------
results["errors"] = {
    "different models": error_of(lambda: DDP(nn.Linear(3, 3 + rank))),
    "device_ids on cpu": error_of(lambda: DDP(nn.Linear(2, 2), device_ids=[0])),
    "bucket_cap_mb": error_of(lambda: DDP(nn.Linear(2, 2), bucket_cap_mb=0)),
    "not a module": error_of(lambda: DDP(lambda x: x)),
}
model = DDP(Heads())
results["errors"]["unused without find_unused_parameters"] = error_of(lambda: model(x, False).backward())
twice = DDP(nn.Linear(2, 1))


def backward_twice():
    loss = twice(zero.ones(1, 2)).sum()
    loss.backward(retain_graph=True)
    loss.backward()


results["errors"]["two backwards after one forward"] = error_of(backward_twice)
report(rank, results)
