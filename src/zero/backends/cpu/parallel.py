"""When the CPU splits work over its pool's threads, and into which parts: the one place that decides.

The kernels compute; each computes the arrays it is given, whatever part of a larger array
they are. What runs a kernel on both cores is decided here, and applied in two ways:

- In the kernel table (``kernels/__init__.py``), around a kernel that is one loop or one
  NumPy call over elements or rows: ``elements(...)`` cuts its arrays into ranges of
  elements, ``rows(...)`` into ranges of rows, and below the size worth a split the
  kernel is called as it is, with no work here but a size test::

      gelu = parallel.elements(elementwise.gelu, ("x",), "out", ns_per_element=parallel.gelu_ns)

- Inside a kernel that is a chain of products and loops (matmul and sum through
  ``product``, conv2d, the fused kernels, layer norm's backward with its partial sums):
  the chain is the unit of work, split by rows with per-part scratch, and the kernel asks
  this module how (``product``, ``row_grain``, ``ranges``, ``run_all``).

The rule. A hand-off to a worker costs tens of microseconds, more after the worker has
slept, so a part must carry ``SPLIT_NS`` of one core's work. A loop states what an element
costs it (``*_NS``: one core's time per float32 element) and ``element_grain`` turns that
into the fewest items a part may take. Memory-bound loops (a copy, an addition, relu,
where) gain only once their operands outgrow the cache, so they split by size: parts of
``MEMORY_PART`` elements, from two. Matrix products split when each part gets
``SPLIT_FLOPS`` (and ``MIN_ROWS`` rows), layer norm by ``LAYER_NORM_PART`` elements.
Measured by ``benchmarks/investigations/split_costs.py``; figures in benchmarks/journal/
("Why the CPU kernels are as they are").

Results. A loop computes each element from the same operands however it is cut, so its
results are the same bits on any number of threads; a product cut into ranges of rows is
not bit for bit the uncut product (BLAS blocks a shorter matrix differently), but repeats
bit for bit for a given number of threads.
"""
from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import threads
from .threads import parallel_for, ranges, run_all, share, single_threaded_blas

__all__ = ["attention_parts", "element_grain", "elements", "layer_norm_chunk_grain", "parallel_for", "product",
           "ranges", "row_grain", "rows", "run_all", "share", "single_threaded_blas"]

Kernel = Callable[..., Any]

# -- the thresholds ---------------------------------------------------------------------------------

SPLIT_NS = 100_000          # one core's work in each part of a split loop, at least
MEMORY_PART = 1 << 20       # elements of each part of a memory-bound loop, at least
LAYER_NORM_PART = 1 << 18   # elements of each part of layer norm (it moves little data per row)
SPLIT_FLOPS = 12e6          # floating-point operations of each part of a split product, at least
MIN_ROWS = 8                # nor parts of fewer rows (or columns, or matrices) than this

# One core's time per float32 element of each loop, in nanoseconds (1 M elements; rows of 64
# for the row loops, less per element in longer rows).
SIGMOID_NS, SILU_NS = 0.3, 0.36
GELU_NS, GELU_BACKWARD_NS = 0.72, 0.8
GELU_TANH_NS, GELU_TANH_BACKWARD_NS = 0.52, 0.6
SOFTMAX_NS, SOFTMAX_BACKWARD_NS = 0.55, 0.2
LOG_SOFTMAX_NS, LOG_SOFTMAX_BACKWARD_NS = 0.65, 0.35
CROSS_ENTROPY_NS = 0.75     # forward, and backward the same
DROPOUT_NS = 0.65
ADAMW_NS, SGD_NS = 0.62, 0.38
SCORE_NS = 2.8              # attention forward, per score (query x key pair); the backward's is 3x
ROW_PASS_FLOPS = 256        # linear + cross-entropy's pass over a logit, counted in GEMM flops


def gelu_ns(x: Any, out: Any, approximate: str = "none") -> float:
    """The cost of an element of ``gelu`` (the tanh form's is less)."""
    return GELU_TANH_NS if approximate == "tanh" else GELU_NS


def gelu_backward_ns(grad: Any, x: Any, out: Any, approximate: str = "none") -> float:
    return GELU_TANH_BACKWARD_NS if approximate == "tanh" else GELU_BACKWARD_NS


# -- grains: the fewest items a part may take --------------------------------------------------------


def element_grain(elements_per_item: int, ns_per_element: float) -> int:
    """Items of ``elements_per_item`` elements, each element ``ns_per_element`` of one
    core's time, that make SPLIT_NS of work."""
    return max(1, math.ceil(SPLIT_NS / (max(elements_per_item, 1) * ns_per_element)))


def layer_norm_grain(width: int) -> int:
    """Rows of ``width`` elements that make LAYER_NORM_PART elements."""
    return -(-LAYER_NORM_PART // max(width, 1))


def row_grain(flops_per_row: float) -> int:
    """Rows of products of ``flops_per_row`` each that make SPLIT_FLOPS (MIN_ROWS at least):
    for the kernels that split a chain of products by rows themselves."""
    return max(MIN_ROWS, int(SPLIT_FLOPS // max(flops_per_row, 1)))


def attention_parts(batch: int, heads: int, length: int, source: int) -> list[tuple[int, int]]:
    """The batches of attention (``heads`` (batch, head) pairs each, ``length`` queries against
    ``source`` keys) as ranges, one per thread, each of SPLIT_NS of work at least."""
    return ranges(batch, element_grain(heads * length * source, SCORE_NS))


def layer_norm_chunk_grain(chunks: int, rows: int, width: int) -> int:
    """Chunks (of ``rows`` rows in all, cut into ``chunks``) worth a thread in layer norm's backward."""
    return max(1, chunks * layer_norm_grain(width) // max(rows, 1))


# -- matrix products ----------------------------------------------------------------------------------


def product(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """np.matmul(a, b, out=out), cut into independent products when it is large, each one
    BLAS call on views: a batch into ranges of its matrices, a matrix product into ranges
    of the output's rows, or of its columns when it has more columns than rows (each thread
    then reads only its share of the larger operand). Broadcast batch dimensions are left
    to one call."""
    single_threaded_blas()
    depth = a.shape[-1] if a.ndim else 1
    if 2.0 * out.size * depth < 2 * SPLIT_FLOPS or threads.get_num_threads() == 1:
        np.matmul(a, b, out=out)
    elif out.ndim >= 3 and a.ndim == b.ndim == out.ndim and a.shape[0] == b.shape[0] == out.shape[0]:
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b[lo:hi], out=out[lo:hi]), 1)
    elif out.ndim == 2 and a.ndim == b.ndim == 2:
        if out.shape[0] >= out.shape[1]:
            parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b, out=out[lo:hi]), MIN_ROWS)
        else:
            parallel_for(out.shape[1], lambda lo, hi: np.matmul(a, b[:, lo:hi], out=out[:, lo:hi]), MIN_ROWS)
    elif out.ndim == 1 and a.ndim == 1 and b.ndim == 2:       # a row vector times a matrix
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a, b[:, lo:hi], out=out[lo:hi]), MIN_ROWS)
    elif out.ndim == 1 and a.ndim == 2 and b.ndim == 1:       # a matrix times a column vector
        parallel_for(out.shape[0], lambda lo, hi: np.matmul(a[lo:hi], b, out=out[lo:hi]), MIN_ROWS)
    else:
        np.matmul(a, b, out=out)


# -- splits applied in the kernel table -----------------------------------------------------------------
#
# ``elements`` and ``rows`` return a function with the kernel's own parameters. Below the size
# worth a split it calls the kernel at once, after one size test (most calls, and every call
# of a small op, take this path: it must cost next to nothing); above, it decides how to cut
# the arrays and runs the parts. The function is generated from the kernel's signature, as
# ``collections.namedtuple`` and ``dataclasses`` generate theirs, so that the test and the call
# take no ``*args`` and no second frame.

MOST_NS = 0.8   # the largest cost per element of a loop below whose cost depends on its arguments


def elements(kernel: Kernel, operands: tuple[str, ...], output: str, *, ns_per_element: float | Kernel = 0.0,
             part: str = "", copies_strided: bool = False, first: str | None = None) -> Kernel:
    """``kernel`` run over ranges of the elements of its ``output`` array, on the pool's
    threads, when there are two parts' worth: parts of SPLIT_NS of work, an element costing
    ``ns_per_element`` (a number, or a function of the kernel's arguments), or, given
    ``part``, of as many elements as the constant of that name here (``"MEMORY_PART"``). Each
    part gets the same range of ``output`` and of each of the ``operands`` that is an array
    of its shape (C-contiguous; a strided one is copied first with ``copies_strided``, as a
    loop would copy it anyway); a number, a single element or a row of output's trailing
    shape (rows then cut whole) goes to every part as it is. Anything else -- a broadcast
    operand, one overlapping the output other than element for element, a strided output --
    is one plain call. With ``first``, the kernel's parameter of that name receives the
    index of the part's first element (the function offers the kernel's other parameters)."""
    out_index = _positions(kernel, (output,))[0]
    cut_indices = _positions(kernel, operands) + [out_index]
    cost = ns_per_element if callable(ns_per_element) else None
    fixed_ns = 0.0 if callable(ns_per_element) else float(ns_per_element)
    if not part and cost is None and fixed_ns <= 0:
        raise ValueError("parallel.elements: give the loop's cost (ns_per_element) or its part (part=)")

    def split(*args: Any, **kwargs: Any) -> Any:
        """Every call of two parts' worth, or that may be (the front's test is a lower bound)."""
        if part:
            grain = globals()[part]
        else:
            grain = element_grain(1, fixed_ns if cost is None else cost(*args, **kwargs))
        out = args[out_index]
        parts = ranges(out.size, grain) if out.size >= 2 * grain else [(0, out.size)]
        cut = _cut_by_elements(args, cut_indices, out, copies_strided) if len(parts) > 1 else None
        if cut is None:                 # (one part: small, one thread, or inside a task)
            return kernel(*args, **kwargs)
        unit, views, whole = cut
        if unit > 1:
            parts = ranges(views[out_index].shape[0], -(-grain // unit))
            if len(parts) == 1:
                return kernel(*args, **kwargs)

        calls: list[Callable[[], object]] = []   # made before the hand-off: a part reaches its loop at once
        for lo, hi in parts:
            part_args = list(args)
            pieces: dict[int, np.ndarray] = {}
            for i, view in views.items():     # one piece per array: ``a is out`` stays true (in place)
                piece = pieces.get(id(view))
                if piece is None:
                    piece = pieces[id(view)] = view[lo:hi]
                part_args[i] = piece
            for i, value in whole.items():
                part_args[i] = value
            calls.append(functools.partial(kernel, *part_args, **({**kwargs, first: lo * unit} if first else kwargs)))
        run_all(calls)
        return None

    small = (f"{output}.size < 2 * {part}" if part
             else f"{output}.size * {MOST_NS if cost is not None else fixed_ns!r} < 2 * SPLIT_NS")
    return _front(kernel, split, small, hidden=first)


def _cut_by_elements(args: tuple, indices: list[int], out: np.ndarray,
                     copies_strided: bool) -> tuple[int, dict[int, np.ndarray], dict[int, np.ndarray]] | None:
    """How ``elements`` cuts the arguments at ``indices`` (see there): (elements per row,
    {index: the array as (rows, *row shape)}, {index: what every part takes whole}), or None
    when they cannot be cut. (Plain loops: this runs before every split's hand-off.)"""
    if type(out) is not np.ndarray or not out.flags.c_contiguous:
        return None
    shape = out.shape
    row_shape: tuple[int, ...] = ()
    arrays: dict[int, np.ndarray] = {}
    whole: dict[int, np.ndarray] = {}
    for i in indices:
        x = args[i]
        if not isinstance(x, np.ndarray):
            continue                                    # a number (or None): as it is
        if x is out:
            arrays[i] = out
        elif x.shape == shape:
            if not x.flags.c_contiguous:
                if not copies_strided:
                    return None
                x = np.ascontiguousarray(x)             # a copy: nothing of it overlaps out
            elif np.may_share_memory(x, out) and (x.ctypes.data != out.ctypes.data or x.itemsize != out.itemsize):
                return None                             # overlapping out shifted: a part would race another
            arrays[i] = x
        elif np.may_share_memory(x, out):
            return None
        elif x.size == 1:
            whole[i] = x.reshape(())                    # broadcast to every part
        elif (0 < x.ndim < out.ndim and x.size and x.flags.c_contiguous and row_shape in ((), x.shape)
              and x.shape == shape[out.ndim - x.ndim:]):
            row_shape = x.shape                         # a row of out's trailing shape: parts of whole rows
        else:
            return None
    if not row_shape and out.ndim == 1:
        return 1, arrays, whole                         # flat already: the arrays as they are
    as_rows = (-1,) + row_shape
    views: dict[int, np.ndarray] = {}
    seen: dict[int, np.ndarray] = {}                    # one view per array (x + x; a is out)
    for i, x in arrays.items():
        view = seen.get(id(x))
        if view is None:
            view = seen[id(x)] = x.reshape(as_rows)
        views[i] = view
    unit = 1
    for n in row_shape:
        unit *= n
    return unit, views, whole


def rows(kernel: Kernel, operands: tuple[str, ...], *, ns_per_element: float = 0.0, part: str = "") -> Kernel:
    """``kernel`` run over ranges of rows on the pool's threads when there are two parts'
    worth. The first of ``operands`` is a (rows, width) array; each part gets its rows of
    every operand that is an array of as many rows (per-row vectors included), the other
    arguments whole. A part is SPLIT_NS of work, an element costing ``ns_per_element``, or,
    given ``part``, as many elements as the constant of that name here. (Each part prepares
    its own rows: a strided input is copied part by part.)"""
    indices = _positions(kernel, operands)
    first = indices[0]

    def split(*args: Any, **kwargs: Any) -> Any:
        x = args[first]
        count, width = x.shape[0], (x.shape[1] if x.ndim > 1 else 1)
        least = -(-globals()[part] // max(width, 1)) if part else element_grain(width, ns_per_element)
        parts = ranges(count, least) if count >= 2 * least else [(0, count)]
        if len(parts) == 1:
            return kernel(*args, **kwargs)

        def run_part(lo: int, hi: int) -> None:     # (cut on its own thread: the hand-off comes first)
            part_args = list(args)
            for i in indices:
                a = args[i] if i < len(args) else None
                if isinstance(a, np.ndarray) and a.ndim and a.shape[0] == count:
                    part_args[i] = a[lo:hi]
            kernel(*part_args, **kwargs)

        run_all([functools.partial(run_part, lo, hi) for lo, hi in parts])
        return None

    name = operands[0]
    small = f"{name}.size < 2 * {part}" if part else f"{name}.size * {float(ns_per_element)!r} < 2 * SPLIT_NS"
    return _front(kernel, split, small)


def _positions(kernel: Kernel, names: tuple[str, ...]) -> list[int]:
    parameters = list(inspect.signature(kernel).parameters)
    return [parameters.index(name) for name in names]


def _front(kernel: Kernel, split: Kernel, small: str, hidden: str | None = None) -> Kernel:
    """A function with ``kernel``'s parameters (less ``hidden``, which ``split`` passes itself)
    and name: ``kernel`` itself when the expression ``small`` holds (it reads the arguments
    and this module's constants, at each call), else ``split``. Every parameter is passed
    on by position; an argument given by keyword goes to ``split`` too, with the others."""
    signature = inspect.signature(kernel)
    parameters = [p for p in signature.parameters.values() if p.name != hidden]
    if any(p.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD for p in parameters):
        raise TypeError(f"parallel: {kernel!r} has parameters other than positional-or-keyword ones")
    defaults = {f"default_{p.name}": p.default for p in parameters if p.default is not inspect.Parameter.empty}
    declared = ", ".join(p.name if p.default is inspect.Parameter.empty else f"{p.name}=default_{p.name}"
                         for p in parameters)
    passed = ", ".join(p.name for p in parameters)
    function, bound = kernel, ""                 # a shared kernel bound to NumPy: its function, called directly
    if isinstance(kernel, functools.partial) and not kernel.keywords:
        function, bound = kernel.func, "".join(f"bound_{i}, " for i in range(len(kernel.args)))
        defaults.update({f"bound_{i}": value for i, value in enumerate(kernel.args)})
    name = getattr(function, "__name__", "kernel")
    source = (f"def make(function, split, {', '.join(defaults)}):\n"
              f"    def {name}({declared}):\n"
              f"        if {small}:\n"
              f"            return function({bound}{passed})\n"
              f"        return split({passed})\n"
              f"    return {name}\n")
    namespace: dict[str, Any] = {}
    exec(source, globals(), namespace)           # the function's globals are this module's: SPLIT_NS, ...
    front = namespace["make"](function, split, **defaults)
    functools.update_wrapper(front, kernel)
    front.__signature__ = signature.replace(parameters=parameters)
    return front


