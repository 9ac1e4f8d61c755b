"""Every collective once per case, and every refusal; the test checks the results against NumPy."""
from __future__ import annotations

import datetime

import numpy as np
from rank_common import error_of, pretend_cuda, report
from scenarios import rank_values

import zero
import zero.distributed as dist

dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=60))
rank, world = dist.get_rank(), dist.get_world_size()
results: dict = {"rank": rank, "world": world, "backend": dist.get_backend(), "initialized": dist.is_initialized()}


def mine(shape, dtype="float64"):
    return zero.tensor(rank_values(rank, shape, dtype))


for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
    for dtype in ("float32", "float64", "int64", "int32", "uint8"):
        if op == "AVG" and not dtype.startswith("float"):
            continue
        t = mine((3, 4), dtype)
        dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
        results[f"all_reduce {op} {dtype}"] = t.tolist()

# async: a Work that waits and says it is done; the result is in the tensor
t = mine((5,))
work = dist.all_reduce(t, async_op=True)
results["async returns"] = type(work).__name__
results["async wait"] = work.wait()
results["async completed"] = work.is_completed()
results["async result"] = t.tolist()
results["blocking returns"] = repr(dist.all_reduce(mine((5,))))

# in place, into the caller's memory: a contiguous row of a larger tensor, a 0-d tensor
big = zero.stack([mine((4,)), mine((4,)) * 10])
row = big[1]
address, version = row.data_ptr(), row._storage.version
dist.all_reduce(row)
results["in place row"] = big.tolist()
results["same memory"] = row.data_ptr() == address
results["version moved"] = row._storage.version > version
scalar = zero.tensor(float(rank + 1))
dist.all_reduce(scalar, op=dist.ReduceOp.MAX)
results["0-d"] = scalar.item()

for src in range(world):
    for dtype in ("float32", "int64", "bfloat16", "bool"):
        values = rank_values(rank, (2, 3))
        t = zero.tensor(values > 1.0) if dtype == "bool" else zero.tensor(values).to(getattr(zero, dtype))
        dist.broadcast(t, src=src)
        results[f"broadcast {src} {dtype}"] = t.to(zero.float64).tolist()

outputs = [zero.zeros(2, 3, dtype=zero.float64) for _ in range(world)]
dist.all_gather(outputs, mine((2, 3)))
results["all_gather"] = [o.tolist() for o in outputs]
flat = zero.zeros(world * 2, 3, dtype=zero.float64)
dist.all_gather_into_tensor(flat, mine((2, 3)))
results["all_gather_into_tensor"] = flat.tolist()
stacked = zero.zeros(world, 2, 3, dtype=zero.float64)
work = dist.all_gather_into_tensor(stacked, mine((2, 3)), async_op=True)
work.wait()
results["all_gather_into_tensor stacked async"] = stacked.tolist()
outputs = [zero.zeros(3, dtype=zero.int64) for _ in range(world)]
work = dist.all_gather(outputs, zero.tensor(rank_values(rank, (3,), "int64")), async_op=True)
work.wait()
results["all_gather async int64"] = [o.tolist() for o in outputs]

for op in ("SUM", "AVG", "MAX"):
    out = zero.zeros(2, 3, dtype=zero.float64)
    dist.reduce_scatter_tensor(out, mine((world * 2, 3)), op=getattr(dist.ReduceOp, op))
    results[f"reduce_scatter_tensor {op}"] = out.tolist()
    out = zero.zeros(2, 3, dtype=zero.float64)
    inputs = [zero.tensor(rank_values(rank, (world, 2, 3))[r]) for r in range(world)]
    dist.reduce_scatter(out, inputs, op=getattr(dist.ReduceOp, op))
    results[f"reduce_scatter {op}"] = out.tolist()

objects = [{"weights": zero.ones(2) * 3, "name": "rank0"}, (1, "two")] if rank == 0 else [None, None]
dist.broadcast_object_list(objects, src=0)
results["broadcast_object_list"] = [objects[0]["weights"].tolist(), objects[0]["name"], list(objects[1])]
gathered: list = [None] * world
dist.all_gather_object(gathered, {"rank": rank, "text": "x" * (3 * rank)})
results["all_gather_object"] = gathered
dist.barrier()
results["barrier async"] = dist.barrier(async_op=True).wait()

# refusals: raised before any communication, so every rank raises the same and goes on
cuda = pretend_cuda()
errors = {
    "not contiguous": lambda: dist.all_reduce(zero.ones(3, 4).T),
    "not a tensor": lambda: dist.all_reduce(np.ones(3)),
    "wrong device": lambda: dist.all_reduce(zero.ones(3, device=cuda)),
    "op not a ReduceOp": lambda: dist.all_reduce(zero.ones(3), op="sum"),
    "AVG of ints": lambda: dist.all_reduce(zero.ones(3, dtype=zero.int64), op=dist.ReduceOp.AVG),
    "bool reduce": lambda: dist.all_reduce(zero.ones(3, dtype=zero.bool)),
    "float16 reduce": lambda: dist.all_reduce(zero.ones(3, dtype=zero.float16)),
    "src out of range": lambda: dist.broadcast(zero.ones(3), src=world),
    "list length": lambda: dist.all_gather([zero.ones(3)], zero.ones(3)),
    "list shape": lambda: dist.all_gather([zero.ones(3)] * (world - 1) + [zero.ones(4)], zero.ones(3)),
    "list dtype": lambda: dist.all_gather([zero.ones(3, dtype=zero.float64)] * world, zero.ones(3)),
    "gather size": lambda: dist.all_gather_into_tensor(zero.ones(world * 3 + 1), zero.ones(3)),
    "gather dtype": lambda: dist.all_gather_into_tensor(zero.ones(world * 3, dtype=zero.float64), zero.ones(3)),
    "scatter size": lambda: dist.reduce_scatter_tensor(zero.ones(3), zero.ones(world * 3 + 1)),
    "other group": lambda: dist.all_reduce(zero.ones(3), group="world"),
    "init twice": lambda: dist.init_process_group("mpi"),
}
results["errors"] = {name: error_of(fn) for name, fn in errors.items()}

dist.destroy_process_group()
results["after destroy"] = [dist.is_initialized(), error_of(lambda: dist.all_reduce(zero.ones(1))),
                            error_of(dist.get_rank)]
report(rank, results)
