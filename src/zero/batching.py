"""``zero.vmap``: a function of one example applied to a batch, as PyTorch's ``torch.vmap``.
(This module is not named vmap: the function would hide it.)

Zero runs it as the loop it stands for: each input is split along its ``in_dims`` dimension
(``None``: passed whole to every call), the function runs once per example, and the results
are stacked along ``out_dims``. The values and gradients are the loop's; it is not faster
than the loop (PyTorch's batches the function's ops instead).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .ops.joining import stack
from .tensors.tensor import Tensor


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0, randomness: str = "error", *,
         chunk_size: int | None = None) -> Callable[..., Any]:
    """``func`` mapped over dimension ``in_dims`` of its inputs (an int for all, or one entry per
    positional argument, ``None`` for an argument not mapped); results stacked along ``out_dims``."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"vmap: randomness must be 'error', 'different' or 'same', got {randomness!r}")

    def mapped(*args: Any, **kwargs: Any) -> Any:
        dims = in_dims if isinstance(in_dims, (tuple, list)) else (in_dims,) * len(args)
        if len(dims) != len(args):
            raise ValueError(f"vmap: in_dims {in_dims!r} is not compatible with {len(args)} positional arguments")
        sizes = {arg.shape[dim] for arg, dim in zip(args, dims) if dim is not None and isinstance(arg, Tensor)}
        if not sizes:
            raise ValueError("vmap: at least one input must be a tensor mapped over a dimension (in_dims not None)")
        if len(sizes) > 1:
            raise ValueError(f"vmap: the mapped dimensions have different sizes {sorted(sizes)}")
        batch = sizes.pop()
        outputs = [func(*(arg.select(dim, i) if dim is not None else arg for arg, dim in zip(args, dims)), **kwargs)
                   for i in range(batch)]
        return _stacked(outputs, out_dims)

    mapped.__name__ = f"vmap({getattr(func, '__name__', 'func')})"
    return mapped


def _stacked(outputs: list[Any], out_dims: Any) -> Any:
    first = outputs[0]
    if isinstance(first, tuple):
        dims = out_dims if isinstance(out_dims, (tuple, list)) else (out_dims,) * len(first)
        return tuple(_stacked([o[k] for o in outputs], dims[k]) for k in range(len(first)))
    if not isinstance(first, Tensor):
        raise ValueError(f"vmap: the function must return tensors, got {type(first).__name__}")
    return stack(outputs, out_dims if out_dims >= 0 else out_dims + first.ndim + 1)
