"""Optimizer updates on the GPU: one Triton kernel per parameter and step.

The contract is the CPU one (``zero.backends.cpu.kernels.optim``):

    adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside,
               weight_decay, step_size)
    adamw_step_many(params, grads, exp_avgs, exp_avg_sqs, lr, ...)   the same over lists
    sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step)

with 1-D contiguous arrays of one length, updated in place.

``adamw_step_many`` is one launch for every parameter of a group (PyTorch's "foreach"),
where one launch each costs the host more than the GPU's work on a small parameter: the
first GPU runs found a GPT step bound by the host, its 76 AdamW launches 5.4 ms against
PyTorch's 1.3. The kernel finds its parameter's arrays in a table of addresses on the
device; a table is made once for each set of addresses and kept (the caching allocator
hands a step's gradients the same blocks as the last step's, so the set repeats).
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np

from ..triton_kernels.optim import adamw_kernel, adamw_many_kernel, sgd_kernel
from ._arrays import array_module, output
from ._launch import ELEMENTWISE_BLOCK, elementwise_grid, launch

__all__ = ["adamw_step", "adamw_step_many", "sgd_step"]


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, beta1, beta2, eps_inside, eps_outside, weight_decay,
               step_size) -> None:
    """AdamW with bias correction folded into ``step_size`` (see the CPU kernel)."""
    n = param.size
    launch(adamw_kernel, elementwise_grid(n), output(param), grad, output(exp_avg), output(exp_avg_sq), n,
           float(lr), float(beta1), float(beta2), float(eps_inside), float(eps_outside), float(weight_decay),
           float(step_size), BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


def adamw_step_many(params, grads, exp_avgs, exp_avg_sqs, lr, beta1, beta2, eps_inside, eps_outside,
                    weight_decay, step_size) -> None:
    """``adamw_step`` on each (param, grad, exp_avg, exp_avg_sq) of the four lists, with the
    same hyper-parameters: one launch for float32 and float64 parameters, one each otherwise."""
    if not params:
        return
    scalars = (float(lr), float(beta1), float(beta2), float(eps_inside), float(eps_outside), float(weight_decay),
               float(step_size))
    dtype = params[0].dtype
    if dtype not in (np.float32, np.float64) or any(p.dtype != dtype for p in params):
        for arrays in zip(params, grads, exp_avgs, exp_avg_sqs):
            adamw_step(*arrays, *scalars)
        return
    table, chunks = _parameter_table((params, grads, exp_avgs, exp_avg_sqs), ELEMENTWISE_BLOCK)
    if chunks:
        launch(adamw_many_kernel, (chunks,), table, len(params), *scalars, FLOAT64=bool(dtype == np.float64),
               BLOCK=ELEMENTWISE_BLOCK, num_warps=4)


_tables: OrderedDict = OrderedDict()   # (addresses and lengths) -> (table on the device, programs)
_KEPT_TABLES = 8


def _parameter_table(columns, block: int):
    """The table ``adamw_many_kernel`` reads (see it), on the arrays' device, and the number
    of programs: one per ``block`` elements of each parameter. Made once per set of
    addresses, then found again (the most recent few are kept)."""
    xp = array_module(columns[0][0])
    rows = [(*(_address(a) for a in arrays), arrays[0].size) for arrays in zip(*columns)]
    key = (xp.__name__, tuple(rows))
    found = _tables.get(key)
    if found is not None:
        _tables.move_to_end(key)
        return found
    entries = np.array(rows, dtype=np.uint64).reshape(-1)
    starts = [(index, start) for index, row in enumerate(rows) for start in range(0, row[4], block)]
    table = np.concatenate([entries, np.array(starts, dtype=np.uint64).reshape(-1)])
    found = _tables[key] = (xp.asarray(table), len(starts))
    if len(_tables) > _KEPT_TABLES:
        _tables.popitem(last=False)
    return found


def _address(array) -> int:
    """A contiguous array's first element's address (a NumPy array's under the interpreter)."""
    return array.ctypes.data if isinstance(array, np.ndarray) else array.data.ptr


def sgd_step(param, grad, momentum_buffer, lr, momentum, dampening, weight_decay, nesterov, first_step) -> None:
    n = param.size
    has_momentum = momentum != 0.0
    launch(sgd_kernel, elementwise_grid(n), output(param), grad,
           output(momentum_buffer) if has_momentum else param, n, float(lr), float(momentum), float(dampening),
           float(weight_decay), HAS_MOMENTUM=has_momentum, FIRST_STEP=bool(first_step), NESTEROV=bool(nesterov),
           BLOCK=ELEMENTWISE_BLOCK, num_warps=4)
