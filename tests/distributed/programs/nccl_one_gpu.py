"""The nccl backend on a real GPU, one rank (tests/backends/cuda/test_gpu.py::test_nccl_on_one_gpu).

With one rank every collective's result is its input, so what this checks is the
plumbing: NCCL's communicator made, each call given the right device addresses, counts
and types on Zero's stream (the values must come back where they were), the kernels
after a collective seeing its result, and DDP and ZeRO training on the GPU as the plain
model does. MPI is used when mpi4py is installed, else the one process goes alone.
"""
from __future__ import annotations

import numpy as np
from rank_common import report

import zero
import zero.distributed as dist
from zero import nn
from zero.distributed.optim import ZeroRedundancyOptimizer
from zero.nn.parallel import DistributedDataParallel as DDP

dist.init_process_group("nccl")
results: dict = {"backend": dist.get_backend(), "world": dist.get_world_size()}
values = np.arange(12, dtype=np.float32).reshape(3, 4)
for op in ("SUM", "AVG", "MAX", "PRODUCT"):
    t = zero.tensor(values, device="cuda")
    dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
    results[f"all_reduce {op}"] = (t * 2).tolist()          # a kernel after the collective reads its result
t = zero.tensor(values, device="cuda").to(zero.float16)
work = dist.all_reduce(t, async_op=True)
work.wait()
zero.cuda.synchronize()
results["async float16"] = [t.float().tolist(), work.is_completed()]
t = zero.tensor(values, device="cuda")
dist.broadcast(t, src=0)
results["broadcast"] = t.tolist()
out = zero.zeros(3, 4, device="cuda")
dist.all_gather_into_tensor(out, zero.tensor(values, device="cuda"))
results["all_gather_into_tensor"] = out.tolist()
parts = [zero.zeros(3, 4, device="cuda")]
dist.all_gather(parts, zero.tensor(values, device="cuda"))
results["all_gather"] = parts[0].tolist()
out = zero.zeros(3, 4, device="cuda")
dist.reduce_scatter_tensor(out, zero.tensor(values, device="cuda"))
results["reduce_scatter_tensor"] = out.tolist()
objects = [{"on": zero.ones(2, device="cuda")}]
dist.broadcast_object_list(objects)
results["objects"] = objects[0]["on"].tolist()
dist.barrier()

rng = np.random.default_rng(0)
data = [(zero.tensor(rng.standard_normal((8, 5)).astype(np.float32), device="cuda"),
         zero.tensor(rng.integers(0, 3, 8), device="cuda")) for _ in range(4)]


def train(model, optimizer):
    losses = []
    for x, y in data:
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def mlp():
    zero.manual_seed(0)
    return nn.Sequential(nn.Linear(5, 32), nn.ReLU(), nn.Linear(32, 3)).to("cuda")


plain = mlp()
results["plain losses"] = train(plain, zero.optim.AdamW(plain.parameters(), lr=1e-2))
ddp = DDP(mlp(), device_ids=[0], bucket_cap_mb=1e-3)
results["ddp losses"] = train(ddp, zero.optim.AdamW(ddp.parameters(), lr=1e-2))
sharded = DDP(mlp())
optimizer = ZeroRedundancyOptimizer(sharded.parameters(), optimizer_class=zero.optim.AdamW, lr=1e-2)
results["zero losses"] = train(sharded, optimizer)
optimizer.consolidate_state_dict(to=0)
results["zero state entries"] = len(optimizer.state_dict()["state"])
dist.destroy_process_group()
report(0, results)
