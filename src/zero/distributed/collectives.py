"""The collectives, with PyTorch's names, arguments and in-place behaviour.

    all_reduce(tensor, op)                       every rank's tensor := op over the ranks' tensors
    broadcast(tensor, src)                       every rank's tensor := rank src's
    all_gather(tensor_list, tensor)              tensor_list[r] := rank r's tensor
    all_gather_into_tensor(output, input)        output := the ranks' inputs, one after another
    reduce_scatter(output, input_list, op)       output := op over the ranks' input_list[this rank]
    reduce_scatter_tensor(output, input, op)     output := this rank's slice of op over the inputs
    barrier()                                    return when every rank has called it

Each checks its arguments here, once for both backends -- tensors, contiguous, on the
backend's device (CPU for mpi, CUDA for nccl), dtypes and sizes that fit -- and hands the
tensors to the backend, which reads and writes their memory directly. With
``async_op=True`` a collective returns its ``Work``; otherwise it waits and returns None.
The tensors written count as modified in place at the call (their version moves on, so
autograd notices a saved tensor that a collective overwrote).
"""
from __future__ import annotations

from ..errors import DeviceError, DTypeError, ShapeError, describe
from ..tensors.creation import empty
from ..tensors.tensor import Tensor
from .process_group import default_group
from .reduce_op import ReduceOp, check_reduce_op
from .work import Work


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM, group=None, async_op: bool = False) -> Work | None:
    backend = _backend("all_reduce", group)
    _check_tensor("all_reduce", tensor, backend)
    _check_reduction("all_reduce", op, tensor, backend)
    tensor._bump_version()
    return _finish(backend.all_reduce(tensor, op), async_op)


def broadcast(tensor: Tensor, src: int, group=None, async_op: bool = False) -> Work | None:
    backend = _backend("broadcast", group)
    _check_tensor("broadcast", tensor, backend)
    if not isinstance(src, int) or isinstance(src, bool) or not 0 <= src < backend.size:
        raise ValueError(f"broadcast: src={src!r} is not a rank of this group (0 to {backend.size - 1})")
    tensor._bump_version()
    return _finish(backend.broadcast(tensor, src), async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False) -> Work | None:
    backend = _backend("all_gather_into_tensor", group)
    _check_scaled_pair("all_gather_into_tensor", output_tensor, input_tensor, backend, larger="output")
    output_tensor._bump_version()
    return _finish(backend.all_gather_into(output_tensor, input_tensor), async_op)


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False) -> Work | None:
    """Gathers into a buffer of the world's size, then copies rank r's part into tensor_list[r]."""
    backend = _backend("all_gather", group)
    _check_tensor("all_gather", tensor, backend)
    _check_list("all_gather", "tensor_list", tensor_list, tensor, backend)
    gathered = empty((backend.size * tensor.numel(),), dtype=tensor.dtype, device=tensor.device)
    work = backend.all_gather_into(gathered, tensor)
    work.then(lambda: _split_into(gathered, tensor_list))
    for t in tensor_list:
        t._bump_version()
    return _finish(work, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: ReduceOp = ReduceOp.SUM, group=None,  # noqa: A002
                          async_op: bool = False) -> Work | None:
    backend = _backend("reduce_scatter_tensor", group)
    _check_scaled_pair("reduce_scatter_tensor", output, input, backend, larger="input")
    _check_reduction("reduce_scatter_tensor", op, input, backend)
    output._bump_version()
    return _finish(backend.reduce_scatter_into(output, input, op), async_op)


def reduce_scatter(output: Tensor, input_list: list, op: ReduceOp = ReduceOp.SUM, group=None,
                   async_op: bool = False) -> Work | None:
    """Copies input_list into one buffer (rank r's part r-th), then reduce-scatters it."""
    backend = _backend("reduce_scatter", group)
    _check_tensor("reduce_scatter", output, backend, "output")
    _check_list("reduce_scatter", "input_list", input_list, output, backend)
    _check_reduction("reduce_scatter", op, output, backend)
    joined = empty((backend.size * output.numel(),), dtype=output.dtype, device=output.device)
    n = output.numel()
    copy = output.device.kernels.copy
    for r, part in enumerate(input_list):
        copy(part._array.reshape(-1), joined._array[r * n:(r + 1) * n])
    output._bump_version()
    return _finish(backend.reduce_scatter_into(output, joined, op), async_op)


def barrier(group=None, async_op: bool = False, device_ids=None) -> Work | None:
    return _finish(_backend("barrier", group).barrier(), async_op)


# -- the checks, one place for every collective ------------------------------------------------------
def _backend(function: str, group):
    return default_group(function, group).backend


def _finish(work: Work, async_op: bool) -> Work | None:
    if async_op:
        return work
    work.wait()
    return None


def _check_tensor(function: str, tensor, backend, name: str = "tensor") -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{function}: {name} must be a zero.Tensor, got {type(tensor).__name__}")
    if tensor._meta.device.type != backend.device_type:
        other = "nccl" if backend.device_type == "cpu" else "mpi"
        raise DeviceError(f"{function}: the {backend.name} backend works on {backend.device_type.upper()} tensors, "
                          f"got {name} {describe(tensor)}; use backend '{other}' for those, or move the tensor")
    if not tensor.is_contiguous():
        raise ShapeError(f"{function}: {name} {describe(tensor)} must be contiguous (the collective writes into "
                         f"its memory); make it so first, e.g. t = t.contiguous()")


def _check_reduction(function: str, op, tensor, backend) -> None:
    check_reduce_op(function, op, tensor)
    backend.check_reducible(function, tensor)


def _check_like(function: str, name: str, t, reference) -> None:
    if t._meta.dtype is not reference._meta.dtype:
        raise DTypeError(f"{function}: {name} is {describe(t)}, the tensor {describe(reference)}: dtypes must match")


def _check_list(function: str, name: str, tensors, reference, backend) -> None:
    if not isinstance(tensors, (list, tuple)) or len(tensors) != backend.size:
        got = f"{len(tensors)} tensors" if isinstance(tensors, (list, tuple)) else type(tensors).__name__
        raise ValueError(f"{function}: {name} must be a list of {backend.size} tensors (one per rank), got {got}")
    for r, t in enumerate(tensors):
        _check_tensor(function, t, backend, f"{name}[{r}]")
        _check_like(function, f"{name}[{r}]", t, reference)
        if t.shape != reference.shape:
            raise ShapeError(f"{function}: {name}[{r}] is {describe(t)}, the tensor {describe(reference)}: "
                             "shapes must match")


def _check_scaled_pair(function: str, output, input, backend, larger: str) -> None:  # noqa: A002
    """``output`` and ``input`` where the ``larger`` one holds world-size times the other's elements."""
    _check_tensor(function, output, backend, "output")
    _check_tensor(function, input, backend, "input")
    _check_like(function, "output", output, input)
    big, small = (output, input) if larger == "output" else (input, output)
    if big.numel() != backend.size * small.numel():
        raise ShapeError(f"{function}: {larger} {describe(big)} must have world size ({backend.size}) times the "
                         f"elements of the {'input' if larger == 'output' else 'output'} {describe(small)}")


def _split_into(gathered: Tensor, tensor_list) -> None:
    copy = gathered.device.kernels.copy
    n = tensor_list[0].numel()
    for r, t in enumerate(tensor_list):
        copy(gathered._array[r * n:(r + 1) * n], t._array.reshape(-1))
