"""The kernels that are a call or two into the array library, written once for NumPy and CuPy.

Much of the kernel contract (``zero.backends.kernel_contract``) is a NumPy routine that
CuPy offers under the same name with the same arguments: ``add(a, b, out)`` is
``xp.add(a, b, out=out, casting="unsafe")`` whether ``xp`` is ``numpy`` (the CPU) or
``cupy`` (CUDA). So each kernel here is a function of the array module first,
``add(xp, a, b, out)``, and a device's table binds it to its own module:

    add = partial(array_kernels.arithmetic.add, np)     # in zero.backends.cpu.kernels (or one of its own)

    arithmetic    fills, the binary operations, comparisons, logic, where, clamp
    unary         the unary math functions, relu
    activation    PyTorch's other activations (leaky_relu, elu, softplus ...), forward and backward
    reduction     sums, products, extremes, variance, logsumexp, sorts, scans, clip_grad_norm_'s passes
    indexing      advanced indexing (bounds checked), gathers and scatters, NLL, searches and counts
    recurrent     RNN, LSTM and GRU layers through time (the device's cells do each step's gates)

The two array libraries differ in three places, and the kernels say so where it matters:

- NumPy warns about division by zero, overflow and invalid values; PyTorch gives inf and
  nan silently, and so do GPUs. NumPy's calls that may meet them run under
  ``np.errstate(all="ignore")`` (``quiet``); CuPy's need nothing. Addition, subtraction and
  multiplication, on every step's hot path, do not pay what a context costs: a warnings
  filter for this package silences their rarer overflow and inf - inf instead.
- CuPy's advanced indexing wraps out-of-range indices instead of raising. ``index_get`` and
  ``index_put`` check the bounds first on CuPy (reading two numbers back to the host), as
  NumPy does by itself; ``index_select``, on the hot path of every embedding, does not.
- Reducing over no axes at all is a copy; it is written as one rather than left to the
  library (CuPy's reductions are not documented for ``axis=()``).
"""
from . import arithmetic, indexing, reduction, unary
from . import activation
from . import recurrent
from . import decompositions
from . import more_math
from . import householder
