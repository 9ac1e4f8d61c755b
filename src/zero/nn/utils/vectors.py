"""Parameters as one flat vector and back (``parameters_to_vector``, ``vector_to_parameters``),
and clipping each gradient element (``clip_grad_value_``), PyTorch's ``torch.nn.utils`` names."""
from __future__ import annotations

from ...errors import DeviceError
from ...grad_mode import no_grad
from ...ops.joining import cat
from ...tensors.tensor import Tensor


def _check_one_device(parameters: list) -> None:
    if parameters and any(p.device != parameters[0].device for p in parameters):
        raise DeviceError("Found two parameters on different devices, this is currently not supported.")


def parameters_to_vector(parameters) -> Tensor:
    """The parameters, flattened and concatenated, in order (a new tensor, differentiable)."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    _check_one_device(parameters)
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters) -> None:
    """Point the parameters at consecutive slices of the 1-D ``vec``, in order: as PyTorch's
    (``param.data = vec[...].view_as(param).data``), each becomes a view of ``vec``, so a
    later write into ``vec`` shows in the parameters; the Parameter objects stay the same."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    _check_one_device(parameters)
    total = sum(p.numel() for p in parameters)
    if vec.numel() != total:
        raise RuntimeError(f"vector_to_parameters: the vector has {vec.numel()} elements, the parameters {total}")
    offset = 0
    with no_grad():
        for p in parameters:
            n = p.numel()
            p.data = vec[offset:offset + n].reshape(tuple(p.shape)).data   # a view where one can be
            offset += n


def clip_grad_value_(parameters, clip_value: float, foreach=None) -> None:
    """Clamp every gradient element to [−clip_value, clip_value], in place."""
    parameters = [parameters] if isinstance(parameters, Tensor) else list(parameters)
    clip_value = float(clip_value)
    with no_grad():
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)
