"""Matrix products through cuBLAS, reading strided views without copying them.

cuBLAS reads column-major matrices; Zero's are row-major. A row-major M×K matrix
with strides (s, 1) is, read column-major, its K×M transpose with leading
dimension s. So ``C = A @ B`` (row-major) is computed as ``Cᵀ = Bᵀ Aᵀ`` in
cuBLAS's terms: the operands swap places, and nothing moves in memory.

Each operand is classified (``_operand``):

    strides (s, 1), s >= columns    read as it is ('N'), leading dimension s
    strides (1, s), s >= rows       a transposed view: the transpose flag ('T'), leading dimension s
    anything else                   copied to contiguous memory first, then 'N'

Batches go to ``gemmStridedBatchedEx`` with one stride per operand: broadcast
batch dimensions have stride 0; batch dimensions that no single stride can step
through are made contiguous. ``[..., M, K] @ [K, N]`` (a linear layer) is one
GEMM over the flattened rows. ``zero.backends.cuda.matmul.allow_tf32`` (or
``ZERO_FAST_MATMUL=1``, the book's ``MX_FAST_MATMUL``) lets float32 products use
TF32 tensor cores: faster, with about 10 bits of mantissa instead of 23.

``plan_matmul`` only decides (it works on NumPy arrays too, which is how CI
checks the layouts against an emulation of cuBLAS); ``matmul`` runs the plan, and
``matmul_accumulate`` runs it with cuBLAS's beta = 1 (out += a @ b), which the fused
kernels use for running sums.

A plan depends only on the operands' shapes, strides and dtype, so ``matmul`` keeps the
plans that read the operands in place (no copy) by those, and later products of the
same layout skip the planning (a quarter of a product's host time on an H200; figures in
benchmarks/journal/).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

import numpy as np

from .... import dtypes
from ...kernel_contract import Array
from .. import matmul as matmul_flags
from ..runtime import cupy
from ._arrays import array_module

__all__ = ["matmul"]  # the kernel; plan_matmul, matmul_accumulate and Gemm are for tests and fused

OP_N, OP_T = 0, 1                                 # cublasOperation_t
CUDA_R_32F, CUDA_R_64F, CUDA_R_16F, CUDA_R_16BF = 0, 1, 2, 14      # cudaDataType_t
COMPUTE_32F, COMPUTE_32F_FAST_TF32, COMPUTE_64F = 68, 77, 70  # cublasComputeType_t
GEMM_DEFAULT = -1                                 # cublasGemmAlgo_t

_DATA_TYPE = {np.dtype(np.float32): CUDA_R_32F, np.dtype(np.float64): CUDA_R_64F,
              np.dtype(np.float16): CUDA_R_16F, np.dtype(dtypes.bfloat16.numpy): CUDA_R_16BF}


def fast_matmul() -> bool:
    """Whether float32 products may use TF32 tensor cores (``zero.backends.cuda.matmul``)."""
    return matmul_flags.allow_tf32


@dataclass
class Gemm:
    """One cuBLAS call: C (m×n, column-major) = op_a(A) @ op_b(B) for each of ``batch`` matrices.
    ``a``, ``b`` and ``c`` are arrays whose first element is where the matrix starts."""

    op_a: int
    op_b: int
    m: int
    n: int
    k: int
    a: Any
    lda: int
    stride_a: int
    b: Any
    ldb: int
    stride_b: int
    c: Any
    ldc: int
    stride_c: int
    batch: int


def _operand(xp: ModuleType, matrix: Array) -> tuple[Array, int, int]:
    """(array, op, leading dimension): how cuBLAS reads the row-major matrices in
    ``matrix`` (shape (..., rows, cols)) as column-major ones (see the module docstring)."""
    rows, cols = matrix.shape[-2:]
    row_stride, col_stride = (s // matrix.itemsize for s in matrix.strides[-2:])
    if (cols <= 1 or col_stride == 1) and (rows <= 1 or row_stride >= max(1, cols)):
        return matrix, OP_N, max(1, cols) if rows <= 1 else row_stride
    if (rows <= 1 or row_stride == 1) and (cols <= 1 or col_stride >= max(1, rows)):
        return matrix, OP_T, max(1, rows) if cols <= 1 else col_stride
    matrix = xp.ascontiguousarray(matrix)
    return matrix, OP_N, max(1, cols)


def _batch_stride(shape: tuple[int, ...], strides: tuple[int, ...]) -> int | None:
    """The one element stride that steps through all batch dimensions in order, or None."""
    stride: int | None = None
    expected = 0
    for n, s in zip(reversed(shape), reversed(strides)):
        if n == 1:
            continue
        if stride is None:
            stride, expected = s, s * n
        elif s != expected:
            return None
        else:
            expected = s * n
    return 0 if stride is None else stride


def _batched(xp: ModuleType, array: Array, batch: tuple[int, ...]) -> tuple[Array, int]:
    """``array`` broadcast to ``batch`` + its matrix shape, and its single batch stride
    (in elements); copied to contiguous memory when no single stride exists."""
    full = xp.broadcast_to(array, batch + array.shape[-2:])
    stride = _batch_stride(batch, tuple(s // full.itemsize for s in full.strides[:-2]))
    if stride is None or stride < 0:
        full = xp.ascontiguousarray(full)
        stride = full.shape[-1] * full.shape[-2]
    return full, stride


def plan_matmul(a: Array, b: Array, out: Array) -> Gemm:
    """The cuBLAS call that computes out = a @ b: (..., M, K) @ (..., K, N) -> (..., M, N)."""
    xp = array_module(a)
    rows, inner, cols = a.shape[-2], a.shape[-1], b.shape[-1]
    batch = tuple(out.shape[:-2])
    if a.ndim > 2 and b.ndim == 2:  # one GEMM over the flattened rows (a linear layer)
        a, batch = a.reshape(-1, inner), ()
        rows = a.shape[0]
        out = out.reshape(rows, cols)
    count = math.prod(batch)
    if count == 1:
        a, b, out = a.reshape(a.shape[-2:]), b.reshape(b.shape[-2:]), out.reshape(out.shape[-2:])
    if count == 1 or not batch:
        stride_a = stride_b = stride_c = 0
    else:
        a, stride_a = _batched(xp, a, batch)
        b, stride_b = _batched(xp, b, batch)
        stride_c = rows * cols
    b, op_b, ld_b = _operand(xp, b)  # B's transpose is cuBLAS's first operand ...
    a, op_a, ld_a = _operand(xp, a)  # ... and A's its second
    if count > 1:  # a contiguous batch (copied by _operand, or dense already) steps by whole matrices
        if a.flags.c_contiguous:
            stride_a = a.shape[-1] * a.shape[-2]
        if b.flags.c_contiguous:
            stride_b = b.shape[-1] * b.shape[-2]
    first = (0,) * (a.ndim - 2)
    return Gemm(op_b, op_a, cols, rows, inner, b[first] if b.ndim > 2 else b, ld_b, stride_b,
                a[first] if a.ndim > 2 else a, ld_a, stride_a, out, max(1, cols), stride_c, max(count, 1))


def matmul(a: Array, b: Array, out: Array) -> None:
    """out = a @ b with broadcast batch dimensions, through cuBLAS (float16/bfloat16/32/64; the
    16-bit types accumulate in float32)."""
    _product(a, b, out, accumulate=False)


def matmul_accumulate(a: Array, b: Array, out: Array) -> None:
    """out += a @ b in one GEMM (cuBLAS's beta = 1): the fused kernels' running sums. Not a
    kernel of the shared contract (the CPU's fused kernels add a product themselves)."""
    _product(a, b, out, accumulate=True)


def _product(a: Array, b: Array, out: Array, accumulate: bool) -> None:
    if isinstance(a, np.ndarray):  # the host arrays of the interpreter tests: NumPy's BLAS
        product = np.matmul(a, b)
        if accumulate:
            product += out
        np.copyto(out, product, casting="unsafe")
        return
    cp = cupy()
    if a.dtype not in _DATA_TYPE or a.dtype != b.dtype or out.dtype != a.dtype:
        product = cp.matmul(a, b)  # integers and mixed types: CuPy's own kernel
        if accumulate:
            product += out
        cp.copyto(out, product, casting="unsafe")
        return
    if out.size == 0:
        return
    if a.shape[-1] == 0:
        if not accumulate:
            out.fill(0)
        return
    target = out
    if not out.flags.c_contiguous:  # cuBLAS writes a dense C: work in a contiguous copy
        target = cp.ascontiguousarray(out) if accumulate else cp.empty(out.shape, out.dtype)
    beta = 1.0 if accumulate else 0.0
    layout = (a.shape, a.strides, b.shape, b.strides, target.shape, target.strides, target.dtype)
    in_place = _in_place_plans.get(layout)
    if in_place is not None:   # cuBLAS's first operand is b, its second a (the module docstring)
        _run(cp, in_place, beta, b.data.ptr, a.data.ptr, target.data.ptr, target.dtype)
    else:
        gemm = plan_matmul(a, b, target)
        pointers = (gemm.a.data.ptr, gemm.b.data.ptr, gemm.c.data.ptr)
        if pointers == (b.data.ptr, a.data.ptr, target.data.ptr):   # nothing was copied: the plan holds for the layout
            if len(_in_place_plans) >= _KEPT_PLANS:
                _in_place_plans.clear()
            _in_place_plans[layout] = replace(gemm, a=None, b=None, c=None)   # (no arrays kept alive)
        _run(cp, gemm, beta, *pointers, target.dtype)
    if target is not out:
        cp.copyto(out, target)


_in_place_plans: dict[tuple, Gemm] = {}   # operands' layout -> a plan without arrays
_KEPT_PLANS = 512


def _run(cp: ModuleType, gemm: Gemm, beta: float, a_pointer: int, b_pointer: int, c_pointer: int,
         dtype: np.dtype) -> None:
    """The cuBLAS call of ``gemm`` on the matrices at these addresses."""
    from cupy_backends.cuda.libs import cublas

    if dtype == np.float64:
        compute = COMPUTE_64F
    else:
        compute = COMPUTE_32F_FAST_TF32 if dtype == np.float32 and fast_matmul() else COMPUTE_32F
    scalar = np.float64 if dtype == np.float64 else np.float32   # cuBLAS's alpha and beta for float16/32: float32
    alpha, beta_host = _host_scalar(scalar, 1.0), _host_scalar(scalar, beta)
    handle = cp.cuda.device.get_cublas_handle()
    stream = cp.cuda.get_current_stream().ptr
    if cublas.getStream(handle) != stream:
        # Only when it differs (CuPy's gemmEx sets the current stream again itself).
        cublas.setStream(handle, stream)
    kind = _DATA_TYPE[dtype]
    if gemm.batch == 1:
        cublas.gemmEx(handle, gemm.op_a, gemm.op_b, gemm.m, gemm.n, gemm.k, alpha.ctypes.data,
                      a_pointer, kind, gemm.lda, b_pointer, kind, gemm.ldb, beta_host.ctypes.data,
                      c_pointer, kind, gemm.ldc, compute, GEMM_DEFAULT)
    else:
        cublas.gemmStridedBatchedEx(handle, gemm.op_a, gemm.op_b, gemm.m, gemm.n, gemm.k, alpha.ctypes.data,
                                    a_pointer, kind, gemm.lda, gemm.stride_a, b_pointer, kind,
                                    gemm.ldb, gemm.stride_b, beta_host.ctypes.data, c_pointer, kind, gemm.ldc,
                                    gemm.stride_c, gemm.batch, compute, GEMM_DEFAULT)


@functools.cache
def _host_scalar(scalar_type: type, value: float) -> np.ndarray:
    """A 0-d host array holding cuBLAS's alpha or beta (read at the call, never written):
    made once per type and value rather than per product."""
    array: np.ndarray = np.full((), value, scalar_type)
    array.flags.writeable = False
    return array
