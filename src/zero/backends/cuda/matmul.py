"""``zero.backends.cuda.matmul``: PyTorch's switches for matrix products on the GPU.

    allow_tf32    float32 products (cuBLAS GEMMs, and tl.dot in the fused attention
                  kernel) may round their inputs to TF32 on the tensor cores: about 10
                  bits of mantissa instead of 23, several times the speed. Off by
                  default, as in PyTorch; ``ZERO_FAST_MATMUL=1`` in the environment (the
                  book's ``MX_FAST_MATMUL``) starts it on.
    allow_fp16_reduced_precision_reduction, allow_bf16_reduced_precision_reduction
                  accepted as in PyTorch; Zero's half-precision GEMMs accumulate in
                  float32 whatever they say.

The kernels read ``allow_tf32`` at each call, so setting it takes effect at once.
``zero.set_float32_matmul_precision("high")`` is the same switch under PyTorch's other name.
"""
from __future__ import annotations

import os

allow_tf32: bool = os.environ.get("ZERO_FAST_MATMUL", "0") == "1"
allow_fp16_reduced_precision_reduction: bool = True
allow_bf16_reduced_precision_reduction: bool = True

PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision: str) -> None:
    """PyTorch's form of the switch: "highest" keeps float32 products in float32, "high"
    and "medium" allow TF32 (Zero has no bfloat16-based "medium" path; it uses TF32 too)."""
    global allow_tf32
    if precision not in PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: precision must be one of {', '.join(PRECISIONS)}, "
                         f"got {precision!r}")
    allow_tf32 = precision != "highest"


def get_float32_matmul_precision() -> str:
    return "high" if allow_tf32 else "highest"
