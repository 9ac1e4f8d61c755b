"""Data parallelism on this machine: all-reduce bandwidth, and a GPT training step on 1 and 2
ranks with DistributedDataParallel's buckets started during backward or after it.

    python benchmarks/distributed.py [--runs 1x2 1x1 2x1] [--steps 10] [--sizes-mb 0.004 0.0625 1 16 64]

It starts itself under mpirun (``zero.distributed.run.mpirun_command``) once per run, a run
being RANKSxTHREADS (threads per rank for NumPy's BLAS and Numba). The default compares the
whole machine used by one process (1 x cores), one core's worth (1 x 1), and the cores split
between ranks (cores x 1). Tables:

1. all_reduce (float32, SUM, mpi backend): median time; algorithm bandwidth (bytes / time)
   and bus bandwidth (x 2(N-1)/N: the bytes each rank sends and receives in a ring), for
   Zero's ``all_reduce`` (MPI's Allreduce made by the group's thread, then waited for) and
   mpi4py's ``Allreduce`` called directly.
2. one training step of a small GPT (forward, backward, AdamW) per rank on its own batch
   (the global batch is ranks x batch): median ms/step and global tokens/s, for
       no DDP                   the plain model (1 rank only)
       DDP, N MB buckets        the all-reduce of each bucket started from the gradient
                                hooks, asynchronously, while backward goes on
       DDP, 1 MB sync buckets   the same buckets, each waited for in its hook (no overlap)
       one bucket               bucket_cap_mb large: the all-reduce starts after backward
       per tensor, after        backward, then a blocking all-reduce per gradient
       DDP + ZeRO-1             25 MB buckets and ZeroRedundancyOptimizer (state per rank shown)
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time


def run_ranks(ranks: int, threads: int, options) -> list[dict]:
    from zero.distributed.run import mpirun_command

    env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads), NUMBA_NUM_THREADS=str(threads))
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--steps", str(options.steps),
            "--sizes-mb", *map(str, options.sizes_mb), "--batch", str(options.batch)]
    result = subprocess.run(mpirun_command(ranks, argv), capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        sys.exit(f"{ranks} ranks failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    for row in rows:
        row["ranks"], row["threads"] = ranks, threads
    return rows


# -- the worker: runs on every rank, rank 0 prints one JSON line per measurement ---------------------
def median_seconds(fn, repeats: int, warmup: int = 2) -> float:
    import zero.distributed as dist

    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeats):
        dist.barrier()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    maximum = zero_tensor([statistics.median(times)])
    dist.all_reduce(maximum, op=dist.ReduceOp.MAX)  # the slowest rank sets the pace
    return float(maximum.item())


def zero_tensor(values):
    import zero

    return zero.tensor(values, dtype=zero.float64)


def emit(rank: int, **row) -> None:
    if rank == 0:
        print(json.dumps(row), flush=True)


def all_reduce_rows(options, rank: int, world: int) -> None:
    import numpy as np
    from mpi4py import MPI

    import zero
    import zero.distributed as dist

    for megabytes in options.sizes_mb:
        n = max(1, int(megabytes * (1 << 20)) // 4)
        t = zero.ones(n)
        array = np.ones(n, dtype=np.float32)
        repeats = max(5, min(50, int(200 / max(megabytes, 0.05))))
        ours = median_seconds(lambda t=t: dist.all_reduce(t), repeats)
        theirs = median_seconds(lambda array=array: MPI.COMM_WORLD.Allreduce(MPI.IN_PLACE, array), repeats)
        emit(rank, table="all_reduce", bytes=4 * n, zero=ours, mpi4py=theirs,
             bus=2 * (world - 1) / world if world > 1 else 1.0)


def step_rows(options, rank: int, world: int) -> None:
    import numpy as np

    import zero
    import zero.distributed as dist
    from zero.distributed.optim import ZeroRedundancyOptimizer
    from zero.models import GPT, GPTConfig
    from zero.nn.parallel import DistributedDataParallel as DDP

    config = GPTConfig(vocab_size=65, block_size=64, n_layer=4, n_head=4, n_embd=128, dropout=0.0)
    rng = np.random.default_rng(rank)
    x = zero.tensor(rng.integers(0, 65, (options.batch, 64)))
    y = zero.tensor(rng.integers(0, 65, (options.batch, 64)))

    def gpt():
        zero.manual_seed(0)
        return GPT(config)

    def step_of(model, optimizer, after_backward=None):
        def step():
            loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            if after_backward is not None:
                after_backward()
            optimizer.step()
        return step

    variants = []
    if world == 1:
        plain = gpt()
        variants.append(("no DDP", step_of(plain, zero.optim.AdamW(plain.parameters())), None))
    for cap in (25, 1, 0.25):
        model = DDP(gpt(), bucket_cap_mb=cap)
        variants.append((f"DDP, {cap:g} MB buckets ({len(model.reducer.buckets)})",
                         step_of(model, zero.optim.AdamW(model.parameters())), None))
    model = DDP(gpt(), bucket_cap_mb=1)
    reducer = model.reducer
    start_async = reducer._start

    def start_and_wait(bucket):
        start_async(bucket)
        bucket.work.wait()

    reducer._start = start_and_wait
    variants.append((f"DDP, 1 MB sync buckets ({len(reducer.buckets)})",
                     step_of(model, zero.optim.AdamW(model.parameters())), None))
    model = DDP(gpt(), bucket_cap_mb=1000)
    variants.append(("one bucket (after backward)", step_of(model, zero.optim.AdamW(model.parameters())), None))
    plain = gpt()
    grads = lambda: [dist.all_reduce(p.grad, op=dist.ReduceOp.AVG) for p in plain.parameters()]  # noqa: E731
    variants.append(("per tensor, after backward", step_of(plain, zero.optim.AdamW(plain.parameters()), grads),
                     None))
    model = DDP(gpt())
    sharded = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=zero.optim.AdamW)
    variants.append(("DDP + ZeRO-1, 25 MB buckets", step_of(model, sharded), sharded))
    parameters = sum(p.numel() for p in gpt().parameters())
    for name, step, optimizer in variants:
        seconds = median_seconds(step, options.steps)
        state = None
        if optimizer is not None:
            mine = sum(t.nbytes for s in optimizer.state.values() for k, t in s.items() if k != "step")
            state = mine / (2 * 4 * parameters)  # against AdamW's whole state (2 float32 per parameter)
        emit(rank, table="step", variant=name, seconds=seconds, tokens=world * options.batch * 64,
             parameters=parameters, state=state)


def worker(options) -> None:
    import zero.distributed as dist

    dist.init_process_group("mpi")
    rank, world = dist.get_rank(), dist.get_world_size()
    all_reduce_rows(options, rank, world)
    step_rows(options, rank, world)
    dist.destroy_process_group()


# -- the tables -----------------------------------------------------------------------------------------
def print_tables(rows: list[dict]) -> None:
    print("all_reduce, float32 SUM (mpi backend): median ms, algorithm / bus bandwidth GB/s")
    print("| ranks x threads | size | Zero ms | Zero GB/s (bus) | mpi4py Allreduce ms | mpi4py GB/s (bus) |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        if r["table"] == "all_reduce":
            size = r["bytes"]
            label = f"{size / (1 << 20):g} MiB" if size >= 1 << 20 else f"{size / 1024:g} KiB"
            z, m = size / r["zero"] / 1e9, size / r["mpi4py"] / 1e9
            print(f"| {r['ranks']} x {r['threads']} | {label} | {r['zero'] * 1e3:.3f} | {z:.2f} ({z * r['bus']:.2f}) | "
                  f"{r['mpi4py'] * 1e3:.3f} | {m:.2f} ({m * r['bus']:.2f}) |")
    print()
    first = next(r for r in rows if r["table"] == "step")
    print(f"GPT step ({first['parameters']:,} parameters; 4 layers, 4 heads, 128 wide, block 64; batch per rank "
          f"{first['tokens'] // 64 // first['ranks']}), forward + backward + AdamW: median ms, global tokens/s")
    print("| ranks x threads | variant | ms/step | tokens/s | optimizer state per rank |")
    print("|---|---|---|---|---|")
    for r in rows:
        if r["table"] == "step":
            state = "" if r["state"] is None else f"{r['state']:.0%} of AdamW's"
            print(f"| {r['ranks']} x {r['threads']} | {r['variant']} | {r['seconds'] * 1e3:.0f} | "
                  f"{r['tokens'] / r['seconds']:,.0f} | {state} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    cores = os.cpu_count() or 1
    parser.add_argument("--runs", nargs="+", default=[f"1x{cores}", "1x1", f"{cores}x1"],
                        help="RANKSxTHREADS, one run each (default: 1xCORES 1x1 CORESx1)")
    parser.add_argument("--steps", type=int, default=10, help="timed steps per variant (median)")
    parser.add_argument("--batch", type=int, default=16, help="sequences per rank")
    parser.add_argument("--sizes-mb", type=float, nargs="+", default=[0.004, 0.0625, 1, 16, 64])
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.worker:
        worker(options)
        return
    rows = []
    for run in options.runs:
        ranks, _, threads = run.partition("x")
        rows += run_ranks(int(ranks), int(threads or 1), options)
    print_tables(rows)


if __name__ == "__main__":
    main()
