"""Triton kernels: the fused, memory-bound work of a training step, one program per
block of elements or per row.

These are the kernels alone (``@triton.jit`` functions). The functions that pick
block sizes and launch them, under the contract's names and signatures, are in
``zero.backends.cuda.kernels``. Conventions:

- Arrays arrive as pointers to contiguous memory; a row kernel also gets the row
  length, and a program computes one row (``tl.program_id(0)``), looping over it
  in chunks of ``BLOCK`` columns so any width works.
- Arithmetic runs in the arrays' own float type (float32 or float64), in float32 for
  float16 and bfloat16 arrays (``precision.wide``, applied to every load); scalars
  that must not lose digits are annotated ``tl.float64``.
- Offsets that may pass 2**31 are computed in int64.
- Every load and store past the end of a row or array is masked.

CI runs each kernel under ``TRITON_INTERPRET=1`` against the CPU kernels and
compiles each one ahead of time for sm_90 (see tests/backends/cuda).
"""
