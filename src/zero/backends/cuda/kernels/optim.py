"""Optimizer updates and gradient clipping on the GPU, in Triton.

The contract is the CPU one (``zero.backends.cpu.kernels.optim``):

    adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
               weight_decay, step_size)
    adamw_step_many(params, grads, exp_avgs, exp_avg_sqs, lr, ...)   the same over lists
    adamw_step_many_capturable(params, grads, exp_avgs, exp_avg_sqs, steps, lr, beta1, beta2, eps,
                               eps_inside_sqrt, weight_decay)     counts and lr read on the device
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)
    squared_norms(arrays, out), scale_in_place(arrays, factor)       clip_grad_norm_'s two passes

with 1-D contiguous arrays of one length, updated in place.

``adamw_step_many`` is one launch for every parameter of a group (PyTorch's "foreach"),
where one launch each costs the host more than the GPU's work on a small parameter (the
GPU runs found a GPT step bound by the host, and its AdamW launches and clip_grad_norm_'s
per-gradient CuPy calls a large part of it); the clip's two passes are likewise one launch
each (and one to add the norms' parts in a fixed order, so a run repeats to the bit). Each
program finds its tensor's arrays in a table on the device, a row of addresses per tensor,
kept for each set of addresses (a step's gradients do not always get the last step's
blocks); a program finds its row itself, from the rows' first programs, rather than from a
per-program list that would cost the host time to build. Figures in benchmarks/journal/ (the GPU runs).
"""
from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from types import ModuleType
from typing import Any

import numpy as np

from ...array_kernels import reduction as shared
from ...kernel_contract import Array, given
from ....errors import DTypeError
from ..graphs import capturing, keep_for_graph, to_device
from ..triton_kernels.optim import (adamw_capturable_kernel, adamw_capturable_many_kernel, adamw_kernel,
                                   adamw_many_kernel, scale_many_kernel, sgd_kernel, squared_norm_parts_kernel,
                                   squared_norms_kernel, step_count_kernel)
from ._arrays import array_module, output
from ._launch import ELEMENTWISE_BLOCK, cdiv, elementwise_grid, launch, next_power_of_2

__all__ = ["adamw_step", "adamw_step_many", "adamw_step_many_capturable", "scale_in_place", "sgd_step",
           "squared_norms"]


def adamw_step(param: Array, grad: Array, exp_avg: Array, exp_avg_sq: Array, lr: float, beta1: float,
               beta2: float, eps_inside: float, eps_outside: float, weight_decay: float, step_size: float) -> None:
    """AdamW with bias correction folded into ``step_size`` (see the CPU kernel)."""
    n = param.size
    launch(adamw_kernel, elementwise_grid(n), output(param), grad, output(exp_avg), output(exp_avg_sq), n,
           float(lr), float(beta1), float(beta2), float(eps_inside), float(eps_outside), float(weight_decay),
           float(step_size), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def adamw_step_many(params: Sequence[Array], grads: Sequence[Array], exp_avgs: Sequence[Array],
                    exp_avg_sqs: Sequence[Array], lr: float, beta1: float, beta2: float, eps_inside: float,
                    eps_outside: float, weight_decay: float, step_size: float) -> None:
    """``adamw_step`` on each (param, grad, exp_avg, exp_avg_sq) of the four lists, with the
    same hyper-parameters: one launch for float32 and float64 parameters, one each otherwise."""
    if not params:
        return
    scalars = (float(lr), float(beta1), float(beta2), float(eps_inside), float(eps_outside), float(weight_decay),
               float(step_size))
    if not _takes(params):   # (the optimizer hands over 1-D contiguous arrays of the parameters' dtype)
        for arrays in zip(params, grads, exp_avgs, exp_avg_sqs):
            adamw_step(*arrays, *scalars)
        return
    float64 = bool(params[0].dtype == np.float64)
    for group in _groups(len(params)):
        table, programs, tensors = _parameter_table((params[group], grads[group], exp_avgs[group],
                                                     exp_avg_sqs[group]), ELEMENTWISE_BLOCK)
        if programs:
            launch(adamw_many_kernel, (programs,), table, tensors, *scalars, FLOAT64=float64,
                   TENSORS=next_power_of_2(tensors), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


# Tensors in one table at most: each program reads the table's column of first programs
# (a power of two of them) to find its tensor; a longer list takes several tables.
TABLE_TENSORS = 1024

_tables: OrderedDict[tuple, tuple[Array, int, int]] = OrderedDict()   # rows -> (table on the device, programs, tensors)
_KEPT_TABLES = 8


def _groups(count: int) -> list[slice]:
    """``count`` list entries in slices of at most TABLE_TENSORS, one table each."""
    return [slice(start, start + TABLE_TENSORS) for start in range(0, count, TABLE_TENSORS)]


def _parameter_table(columns: Sequence[Sequence[Array]], block: int) -> tuple[Array, int, int]:
    """The table the many-tensor kernels read, on the arrays' device: a row per tensor of an
    address from each column, its length and its first program (one program per ``block``
    elements); with the number of programs and of tensors. The rows are the key: a table is
    made once for a set of addresses and found again after (the most recent few are kept),
    and a new one is one small copy to the device."""
    xp = array_module(columns[0][0])
    rows: list[tuple] = []
    programs = 0
    for arrays in zip(*columns):
        size = arrays[0].size
        rows.append((*(_address(a) for a in arrays), size, programs))
        programs += cdiv(size, block)
    key = (xp.__name__, tuple(rows))
    found = _tables.get(key)
    if found is not None:
        _tables.move_to_end(key)
        keep_for_graph(found)   # a graph reads it on every replay, after the cache has let it go
        return found
    rows_array = np.array(rows, dtype=np.uint64).reshape(-1)
    found = (rows_array if xp is np else to_device(rows_array), programs, len(rows))
    if capturing():   # a captured copy fills the table only when the graph runs: not for eager steps
        return found
    _tables[key] = found
    if len(_tables) > _KEPT_TABLES:
        _tables.popitem(last=False)
    return found


def _address(array: Any) -> int:
    """A contiguous array's first element's address (a NumPy array's under the interpreter)."""
    return array.ctypes.data if isinstance(array, np.ndarray) else array.data.ptr


def squared_norms(arrays: Sequence[Array], out: Array) -> None:
    """out[i] = the sum of the squares of arrays[i] (any shape), summed in float64 in a fixed
    order: two launches for all of them (the CPU's is a BLAS dot each)."""
    if not _takes(arrays):
        return shared.squared_norms(_module_of(arrays), arrays, out)
    flats = [a.reshape(-1) for a in arrays]
    float64 = bool(flats[0].dtype == np.float64)
    for group in _groups(len(flats)):
        table, programs, tensors = _parameter_table((flats[group],), ELEMENTWISE_BLOCK)
        parts = array_module(out).empty(max(programs, 1), np.float64)
        if programs:
            launch(squared_norm_parts_kernel, (programs,), table, tensors, parts, FLOAT64=float64,
                   TENSORS=next_power_of_2(tensors), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
        launch(squared_norms_kernel, (tensors,), table, parts, output(out[group]), ELEMENTWISE_BLOCK, PARTS=64,
               num_warps=2)


def scale_in_place(arrays: Sequence[Array], factor: Array) -> None:
    """arrays[i] *= factor (a 0-d array: the scale stays on the device), one launch for all."""
    if not _takes(arrays):
        return shared.scale_in_place(_module_of(arrays), arrays, factor)
    flats = [a.reshape(-1) for a in arrays]   # views: the arrays are contiguous
    float64 = bool(flats[0].dtype == np.float64)
    for group in _groups(len(flats)):
        table, programs, tensors = _parameter_table((flats[group],), ELEMENTWISE_BLOCK)
        if programs:
            launch(scale_many_kernel, (programs,), table, tensors, factor, FLOAT64=float64,
                   TENSORS=next_power_of_2(tensors), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def _takes(arrays: Sequence[Array]) -> bool:
    """Whether the many-tensor kernels take these arrays: some, contiguous, all float32 or
    all float64."""
    if not arrays:
        return False
    dtype = arrays[0].dtype
    return dtype in (np.float32, np.float64) and all(a.dtype == dtype and a.flags.c_contiguous for a in arrays)


def _module_of(arrays: Sequence[Array]) -> ModuleType:
    """The arrays' module, for the shared CuPy (or, under the interpreter, NumPy) kernel that
    takes what the many-tensor kernels do not."""
    return array_module(arrays[0]) if arrays else np


def sgd_step(param: Array, grad: Array, momentum_buffer: Array | None, lr: float, momentum: float, dampening: float,
             weight_decay: float, nesterov: bool, first_step: bool) -> None:
    n = param.size
    has_momentum = momentum != 0.0
    launch(sgd_kernel, elementwise_grid(n), output(param), grad,
           output(given(momentum_buffer)) if has_momentum else param, n, float(lr), float(momentum), float(dampening),
           float(weight_decay), HAS_MOMENTUM=has_momentum, FIRST_STEP=bool(first_step), NESTEROV=bool(nesterov),
           BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


# -- AdamW's capturable step (issue 38: CUDA graphs) -------------------------------------------


def adamw_step_many_capturable(params: Sequence[Array], grads: Sequence[Array], exp_avgs: Sequence[Array],
                               exp_avg_sqs: Sequence[Array], steps: Sequence[Array], lr: float | Array,
                               beta1: float, beta2: float, eps: float, eps_inside_sqrt: bool,
                               weight_decay: float) -> None:
    """``adamw_step_many`` with no number a captured graph would replay unchanged: one launch
    advances every count (steps[i], 0-d), one updates every float32 or float64 parameter,
    reading its count and lr (a 0-d array, or a number) on the device. A 16-bit parameter
    takes a launch of its own, reading the same."""
    if not params:
        return
    step_dtype = steps[0].dtype
    if step_dtype not in (np.float32, np.float64) or any(s.dtype != step_dtype for s in steps):
        raise DTypeError(f"adamw_step_many_capturable: the step counts must all be float32 or all float64, "
                         f"got {sorted({str(s.dtype) for s in steps})}")
    step_float64 = bool(step_dtype == np.float64)
    for group in _groups(len(steps)):
        counters, _, count = _parameter_table((steps[group],), 1)
        launch(step_count_kernel, (count,), counters, STEP_FLOAT64=step_float64, num_warps=1)
    on_device = not isinstance(lr, (int, float, np.generic))
    lr_value = 0.0 if on_device else float(lr)
    flags = dict(LR_ON_DEVICE=on_device, EPS_INSIDE=bool(eps_inside_sqrt))
    scalars = (lr_value, float(beta1), float(beta2), float(eps), float(weight_decay))
    if not _takes(params):
        for param, grad, m, v, step in zip(params, grads, exp_avgs, exp_avg_sqs, steps):
            n = param.size
            launch(adamw_capturable_kernel, elementwise_grid(n), output(param), grad, output(m), output(v), step, n,
                   lr if on_device else step, *scalars, **flags, BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
        return
    float64 = bool(params[0].dtype == np.float64)
    for group in _groups(len(params)):
        table, programs, tensors = _parameter_table((params[group], grads[group], exp_avgs[group],
                                                     exp_avg_sqs[group], steps[group]), ELEMENTWISE_BLOCK)
        if programs:
            launch(adamw_capturable_many_kernel, (programs,), table, tensors, lr if on_device else table, *scalars,
                   **flags, STEP_FLOAT64=step_float64, FLOAT64=float64, TENSORS=next_power_of_2(tensors),
                   BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
