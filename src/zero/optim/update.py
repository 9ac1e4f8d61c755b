"""What optimizer kernels receive: flat, contiguous views of parameter-sized tensors."""
from __future__ import annotations

from ..errors import DeviceError, DTypeError, ShapeError


def flat_arrays(param, grad, *state):
    """1-D arrays over ``param``, its ``grad`` (copied to contiguous memory if it is not:
    it is only read) and each state tensor (None stays None). Writes to the param and
    state arrays go straight into the tensors."""
    if not param.is_contiguous():
        raise ShapeError(f"optimizer: parameter of shape {list(param.shape)} must be contiguous")
    arrays = [param._array.reshape(-1)]
    for t, written in [(grad, False)] + [(s, True) for s in state]:
        if t is None:
            arrays.append(None)
            continue
        if t.shape != param.shape:
            raise ShapeError(f"optimizer: a gradient or state of shape {list(t.shape)} does not match its "
                             f"parameter {list(param.shape)}")
        if t.dtype is not param.dtype:
            raise DTypeError(f"optimizer: {t.dtype} gradient or state for a {param.dtype} parameter")
        if t.device is not param.device:
            raise DeviceError(f"optimizer: gradient or state on {t.device} for a parameter on {param.device}")
        if written and not t.is_contiguous():
            raise ShapeError(f"optimizer: state of shape {list(t.shape)} must be contiguous")
        arrays.append(t.contiguous()._array.reshape(-1))
    return arrays
