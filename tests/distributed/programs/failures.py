"""Rank 1 goes wrong while rank 0 waits in an all-reduce; the job must end, never hang.

    failures.py OUT raise      rank 1 raises (uncaught): the excepthook MPI_Aborts the job
    failures.py OUT kill       rank 1 is killed (SIGKILL): mpirun ends the job
    failures.py OUT hang       rank 1 is stuck: rank 0's all-reduce times out (3 s) and aborts
    failures.py OUT leave      rank 1 exits normally, skipping the collective: the same timeout
    failures.py OUT backward   rank 1 raises in the middle of DDP's backward
"""
from __future__ import annotations

import datetime
import os
import signal
import sys
import time

from rank_common import ARGS

import zero
import zero.distributed as dist
from zero.nn.parallel import DistributedDataParallel as DDP

mode = ARGS[0]
dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=3))
rank = dist.get_rank()
print(f"rank {rank} ready", flush=True)
if mode == "backward":
    model = DDP(zero.nn.Sequential(zero.nn.Linear(4, 4), zero.nn.Linear(4, 1)), bucket_cap_mb=1e-5)
    if rank == 1:
        model.module[1].weight.register_hook(lambda g: 1 / 0)  # raises while DDP's buckets are in flight
    model(zero.ones(2, 4)).sum().backward()
elif rank == 1:
    time.sleep(0.5)
    if mode == "raise":
        raise RuntimeError("rank 1 fails on purpose")
    if mode == "kill":
        os.kill(os.getpid(), signal.SIGKILL)
    if mode == "hang":
        time.sleep(600)
    if mode == "leave":
        sys.exit(0)
else:
    dist.all_reduce(zero.ones(3))
print(f"rank {rank} finished", flush=True)
