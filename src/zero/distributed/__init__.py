"""Data-parallel training across processes: PyTorch's ``torch.distributed``, on MPI and NCCL.

    mpirun -n 2 python train.py

    import zero.distributed as dist
    dist.init_process_group("mpi")          # "nccl" for CUDA tensors
    rank, world = dist.get_rank(), dist.get_world_size()
    dist.all_reduce(t, op=dist.ReduceOp.AVG)

Modules:

    process_group    init_process_group, destroy_process_group, get_rank ...: the default group
    rendezvous       where ranks come from (MPI), checked against RANK / WORLD_SIZE / LOCAL_RANK
    collectives      all_reduce, broadcast, all_gather(_into_tensor), reduce_scatter(_tensor), barrier
    objects          broadcast_object_list, all_gather_object (pickled Python objects)
    mpi, nccl        the two backends: CPU tensors through mpi4py, CUDA tensors through CuPy's NCCL
    work             Work, what a collective with async_op=True returns
    run              python -m zero.distributed.run -n N script.py: mpirun with the flags it needs here
    optim            ZeroRedundancyOptimizer (ZeRO-1), imported as zero.distributed.optim

DistributedDataParallel is ``zero.nn.parallel.DistributedDataParallel``, as in PyTorch.
Importing this package starts nothing: MPI is initialised by ``init_process_group``.
"""
from __future__ import annotations

from .collectives import (all_gather, all_gather_into_tensor, all_reduce, barrier, broadcast, reduce_scatter,
                          reduce_scatter_tensor)
from .objects import all_gather_object, broadcast_object_list
from .process_group import (Backend, GroupMember, destroy_process_group, get_backend, get_rank, get_world_size,
                            group, init_process_group, is_available, is_initialized, is_mpi_available,
                            is_nccl_available)
from .reduce_op import ReduceOp
from .work import Work

__all__ = ["Backend", "GroupMember", "ReduceOp", "Work", "all_gather", "all_gather_into_tensor",
           "all_gather_object", "all_reduce", "barrier", "broadcast", "broadcast_object_list",
           "destroy_process_group", "get_backend", "get_rank", "get_world_size", "group", "init_process_group",
           "is_available", "is_initialized", "is_mpi_available", "is_nccl_available", "reduce_scatter",
           "reduce_scatter_tensor"]
