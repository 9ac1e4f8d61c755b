"""Tensor's methods and operators, in one table: ``x.exp()`` is ``exp(x)``, ``a + b`` is
``add(a, b)``, ``x.log1p_()`` is ``log1p`` in place.

Each op's functional form sits beside its class (``def exp(input): return Exp.apply(input)``
in ``elementwise.py``), and this table names it as a method of ``Tensor`` -- DeZero's
``setup_variable``: ``attach_to`` copies every entry onto ``Tensor`` when ``zero.ops``
loads. The ops import ``Tensor``, so ``Tensor`` cannot import them: imports run one way,
from here down to the tensor. Type checkers see the entries through the base class that
``tensors/tensor.py`` names under ``TYPE_CHECKING``.

Most entries are the function itself (its first parameter, ``input``, is the tensor). Four
helpers make the rest from a function, so that nothing is written twice:

    swapped(add)               the reflected operator: 2 + x is x.__radd__(2) = add(2, x)
    in_place(log1p)            x.log1p_(): log1p computed, written into x (``inplace.apply_``)
    sizes_as_arguments(reshape)  x.reshape(2, 3) as well as x.reshape((2, 3))
    property(...)              x.T, x.mT

The in-place ops with a kernel of their own (add_, mul_, copy_, fill_ ...) are in ``inplace``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..autograd.engine import backward_from
from ..autograd.op import register_post_accumulate_hook, register_tensor_hook
from ..tensors import creation
from ..tensors.tensor import number_of_elements
from . import comparison, conversion, elementwise, indexing, inplace, joining, reduction, selection, views
from . import softmax as softmax_ops
from .arguments import sizes_of
from .extra import (binary_math, closeness, linalg, norms, products, rearrange, sampling, searching, shaping,
                    sorting, statistics, unary_math)
from .extra import scatter as scatter_ops
from .extra import activations
from .extra import linalg_aliases, linalg_compositions
from .inplace import in_place
from .matmul import matmul
from .extra import more_math, order_statistics, random_functions, scans, tensor_types
from .extra.scatter_reduce import scatter_reduce
from .extra import linalg_solvers, special_math, statistics_extra
from . import inplace_twins  # (issue 37: torchnames)
from . import view_copies  # (issue 37: torchnames)
from .extra import strided_scatters  # (issue 37: torchnames)
from .extra import random_fills  # (issue 37: torchnames)
from . import tensor_extras  # (issue 37: torchnames)
from ..tensors import more_creation  # (issue 37: torchnames)

if TYPE_CHECKING:
    from ..tensors.tensor import Tensor

Other = TypeVar("Other")  # what a reflected operator takes on the left: a number, or a tensor


def swapped(function: Callable[[Other, Tensor], Tensor]) -> Callable[[Tensor, Other], Tensor]:
    """The reflected operator of a function of two operands: ``x.__radd__(other)`` is
    ``add(other, x)``, which Python calls for ``2 + x``."""
    def method(self: Tensor, other: Other) -> Tensor:
        return function(other, self)
    method.__name__ = method.__qualname__ = f"reflected {function.__name__}"
    return method


def sizes_as_arguments(function: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The method of a function taking sizes as one sequence, which takes them either way:
    ``x.permute(1, 0)`` and ``x.permute((1, 0))`` are both ``permute(x, (1, 0))``."""
    def method(self: Tensor, *sizes: Any) -> Tensor:
        return function(self, sizes_of(sizes))
    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    return method


class TensorMethods:
    """The table. Mixed into ``Tensor`` by ``attach_to``; never instantiated on its own."""

    __slots__ = ()

    # -- autograd (autograd/) ----------------------------------------------------------------
    backward = backward_from
    register_hook = register_tensor_hook
    register_post_accumulate_grad_hook = register_post_accumulate_hook

    # -- arithmetic (elementwise.py; div's rounding modes in extra/binary_math.py) ----------------
    __add__ = add = elementwise.add
    __sub__ = sub = subtract = elementwise.sub
    __mul__ = mul = multiply = elementwise.mul
    __truediv__ = true_divide = elementwise.true_divide
    __pow__ = pow = elementwise.pow
    __matmul__ = matmul = matmul
    __radd__ = swapped(elementwise.add)
    __rsub__ = swapped(elementwise.sub)
    __rmul__ = swapped(elementwise.mul)
    __rtruediv__ = swapped(elementwise.true_divide)
    __rpow__ = swapped(elementwise.pow)
    __rmatmul__ = swapped(matmul)
    __neg__ = neg = negative = elementwise.neg
    __pos__ = positive = elementwise.positive
    __abs__ = abs = absolute = elementwise.abs
    div = divide = binary_math.div
    sign = sgn = elementwise.sign
    square = elementwise.square
    maximum = elementwise.maximum
    minimum = elementwise.minimum
    __floordiv__ = floor_divide = binary_math.floor_divide
    __mod__ = remainder = binary_math.remainder
    __rfloordiv__ = swapped(binary_math.floor_divide)
    __rmod__ = swapped(binary_math.remainder)
    fmod = binary_math.fmod

    # -- in place: one kernel writing into the tensor (inplace.py) ------------------------------
    __iadd__ = add_ = inplace.add_
    __isub__ = sub_ = subtract_ = inplace.sub_
    __imul__ = mul_ = multiply_ = inplace.mul_
    __itruediv__ = true_divide_ = inplace.true_divide_
    div_ = divide_ = binary_math.div_
    copy_ = inplace.copy_
    zero_ = inplace.zero_
    fill_ = inplace.fill_
    clamp_ = clip_ = inplace.clamp_
    clamp_min_ = inplace.clamp_min_
    clamp_max_ = inplace.clamp_max_
    masked_fill_ = inplace.masked_fill_
    relu_ = inplace.relu_
    normal_ = inplace.normal_
    uniform_ = inplace.uniform_

    # -- in place: computed out of place, written in (inplace.in_place) -------------------------
    __ifloordiv__ = floor_divide_ = in_place(binary_math.floor_divide)
    __imod__ = remainder_ = in_place(binary_math.remainder)
    fmod_ = in_place(binary_math.fmod)
    abs_ = absolute_ = in_place(elementwise.abs)
    neg_ = negative_ = in_place(elementwise.neg)
    sign_ = sgn_ = in_place(elementwise.sign)
    square_ = in_place(elementwise.square)
    exp_ = in_place(elementwise.exp)
    log_ = in_place(elementwise.log)
    sqrt_ = in_place(elementwise.sqrt)
    rsqrt_ = in_place(elementwise.rsqrt)
    sin_ = in_place(elementwise.sin)
    cos_ = in_place(elementwise.cos)
    tanh_ = in_place(elementwise.tanh)
    sigmoid_ = in_place(elementwise.sigmoid)

    # -- elementwise functions (elementwise.py) --------------------------------------------------
    exp = elementwise.exp
    log = elementwise.log
    sqrt = elementwise.sqrt
    rsqrt = elementwise.rsqrt
    sin = elementwise.sin
    cos = elementwise.cos
    tanh = elementwise.tanh
    sigmoid = elementwise.sigmoid
    relu = elementwise.relu
    where = elementwise.keep_where

    # -- comparisons and logic (comparison.py); &, |, ^, ~ are bitwise, as in PyTorch -----------
    __eq__ = eq = comparison.eq  # type: ignore[assignment]  # (== gives a tensor, as in PyTorch)
    __ne__ = ne = not_equal = comparison.ne  # type: ignore[assignment]
    __lt__ = lt = less = comparison.lt
    __le__ = le = less_equal = comparison.le
    __gt__ = gt = greater = comparison.gt
    __ge__ = ge = greater_equal = comparison.ge
    __and__ = bitwise_and = comparison.bitwise_and
    __or__ = bitwise_or = comparison.bitwise_or
    __xor__ = bitwise_xor = comparison.bitwise_xor
    __invert__ = bitwise_not = comparison.bitwise_not
    __rand__ = swapped(comparison.bitwise_and)
    __ror__ = swapped(comparison.bitwise_or)
    __rxor__ = swapped(comparison.bitwise_xor)
    logical_and = comparison.logical_and
    logical_or = comparison.logical_or
    logical_xor = comparison.logical_xor
    logical_not = comparison.logical_not
    isclose = closeness.isclose
    allclose = closeness.allclose

    # -- selection (selection.py) ------------------------------------------------------------------
    clamp = clip = selection.clamp
    clamp_min = selection.clamp_min
    clamp_max = selection.clamp_max
    masked_fill = selection.masked_fill

    # -- reductions (reduction.py) and softmax (softmax.py) ---------------------------------------
    sum = reduction.sum
    mean = reduction.mean
    var = reduction.var
    std = reduction.std
    max = reduction.max
    min = reduction.min
    amax = reduction.amax
    amin = reduction.amin
    argmax = reduction.argmax
    argmin = reduction.argmin
    logsumexp = reduction.logsumexp
    all = reduction.all
    any = reduction.any
    softmax = softmax_ops.softmax
    log_softmax = softmax_ops.log_softmax
    nelement = number_of_elements

    # -- views (views.py) --------------------------------------------------------------------------
    view = views.view
    view_as = views.view_as
    reshape = sizes_as_arguments(views.reshape)
    reshape_as = views.reshape_as
    transpose = views.transpose
    permute = sizes_as_arguments(views.permute)
    if TYPE_CHECKING:  # (what the properties give: mypy reads property(function) as Any)
        @property
        def T(self) -> Tensor: ...
        @property
        def mT(self) -> Tensor: ...
    else:
        T = property(views.all_dims_reversed)
        mT = property(views.last_two_dims_swapped)
    t = views.t
    expand = views.expand
    expand_as = views.expand_as
    broadcast_to = views.broadcast_to
    squeeze = views.squeeze
    unsqueeze = views.unsqueeze
    flatten = views.flatten

    # -- indexing (indexing.py) --------------------------------------------------------------------
    __getitem__ = indexing.getitem
    __setitem__ = indexing.setitem
    __iter__ = indexing.iterate

    # -- copies and conversions (conversion.py) ----------------------------------------------------
    contiguous = conversion.contiguous
    clone = conversion.clone
    to = conversion.to
    cpu = conversion.cpu
    cuda = conversion.cuda
    type_as = conversion.type_as
    float = conversion.to_float32
    double = conversion.to_float64
    half = conversion.to_float16
    bfloat16 = conversion.to_bfloat16
    long = conversion.to_int64
    int = conversion.to_int32
    short = conversion.to_int16
    char = conversion.to_int8
    byte = conversion.to_uint8
    bool = conversion.to_bool
    new_zeros = creation.new_zeros
    new_ones = creation.new_ones
    new_full = creation.new_full
    new_empty = creation.new_empty
    new_tensor = creation.new_tensor

    # -- joining, splitting, gathering (joining.py) ------------------------------------------------
    split = joining.split
    chunk = joining.chunk
    unbind = joining.unbind
    gather = joining.gather
    index_select = joining.index_select
    tril = joining.tril
    triu = joining.triu

    # == PyTorch's other functions (extra/) =======================================================

    # -- math of one tensor (extra/unary_math.py) ------------------------------------------------
    isnan = unary_math.isnan
    isinf = unary_math.isinf
    isfinite = unary_math.isfinite
    isposinf = unary_math.isposinf
    isneginf = unary_math.isneginf
    signbit = unary_math.signbit
    nan_to_num = unary_math.nan_to_num
    floor = unary_math.floor
    ceil = unary_math.ceil
    round = unary_math.round
    trunc = fix = unary_math.trunc
    frac = unary_math.frac
    log1p = unary_math.log1p
    expm1 = unary_math.expm1
    log2 = unary_math.log2
    log10 = unary_math.log10
    exp2 = unary_math.exp2
    reciprocal = unary_math.reciprocal
    erf = unary_math.erf
    erfc = unary_math.erfc
    erfinv = unary_math.erfinv
    tan = unary_math.tan
    asin = arcsin = unary_math.asin
    acos = arccos = unary_math.acos
    atan = arctan = unary_math.atan
    sinh = unary_math.sinh
    cosh = unary_math.cosh
    asinh = arcsinh = unary_math.asinh
    acosh = arccosh = unary_math.acosh
    atanh = arctanh = unary_math.atanh
    nan_to_num_ = in_place(unary_math.nan_to_num)
    floor_ = in_place(unary_math.floor)
    ceil_ = in_place(unary_math.ceil)
    round_ = in_place(unary_math.round)
    trunc_ = fix_ = in_place(unary_math.trunc)
    frac_ = in_place(unary_math.frac)
    log1p_ = in_place(unary_math.log1p)
    expm1_ = in_place(unary_math.expm1)
    log2_ = in_place(unary_math.log2)
    log10_ = in_place(unary_math.log10)
    exp2_ = in_place(unary_math.exp2)
    reciprocal_ = in_place(unary_math.reciprocal)
    erf_ = in_place(unary_math.erf)
    erfc_ = in_place(unary_math.erfc)
    erfinv_ = in_place(unary_math.erfinv)
    tan_ = in_place(unary_math.tan)
    asin_ = arcsin_ = in_place(unary_math.asin)
    acos_ = arccos_ = in_place(unary_math.acos)
    atan_ = arctan_ = in_place(unary_math.atan)
    sinh_ = in_place(unary_math.sinh)
    cosh_ = in_place(unary_math.cosh)
    asinh_ = arcsinh_ = in_place(unary_math.asinh)
    acosh_ = arccosh_ = in_place(unary_math.acosh)
    atanh_ = arctanh_ = in_place(unary_math.atanh)

    # -- math of two or three tensors (extra/binary_math.py) -----------------------------------
    atan2 = arctan2 = binary_math.atan2
    hypot = binary_math.hypot
    logaddexp = binary_math.logaddexp
    xlogy = binary_math.xlogy
    fmax = binary_math.fmax
    fmin = binary_math.fmin
    lerp = binary_math.lerp
    addcmul = binary_math.addcmul
    addcdiv = binary_math.addcdiv
    atan2_ = arctan2_ = in_place(binary_math.atan2)
    hypot_ = in_place(binary_math.hypot)
    xlogy_ = in_place(binary_math.xlogy)
    lerp_ = in_place(binary_math.lerp)
    addcmul_ = in_place(binary_math.addcmul)
    addcdiv_ = in_place(binary_math.addcdiv)

    # -- products, statistics, norms (extra/products.py, statistics.py, norms.py) ----------------
    prod = products.prod
    cumprod = products.cumprod
    cumprod_ = in_place(products.cumprod)
    count_nonzero = statistics.count_nonzero
    nansum = statistics.nansum
    nanmean = statistics.nanmean
    median = statistics.median
    aminmax = statistics.aminmax
    norm = norms.norm
    dist = norms.dist

    # -- linear algebra (extra/linalg.py) --------------------------------------------------------
    mm = linalg.mm
    bmm = linalg.bmm
    mv = linalg.mv
    dot = linalg.dot
    vdot = linalg.vdot
    outer = ger = linalg.outer
    addmm = linalg.addmm
    addmv = linalg.addmv
    baddbmm = linalg.baddbmm
    addmm_ = in_place(linalg.addmm)
    addmv_ = in_place(linalg.addmv)
    baddbmm_ = in_place(linalg.baddbmm)
    diag = linalg.diag
    diagonal = linalg.diagonal
    diag_embed = linalg.diag_embed
    trace = linalg.trace
    kron = linalg.kron

    # -- sorting, sampling, rearranging (extra/sorting.py, sampling.py, rearrange.py) -----------
    sort = sorting.sort
    argsort = sorting.argsort
    topk = sorting.topk
    cumsum = sorting.cumsum
    multinomial = sampling.multinomial
    flip = sizes_as_arguments(rearrange.flip)
    roll = rearrange.roll
    repeat = sizes_as_arguments(rearrange.repeat)

    # -- scatters and picks (extra/scatter.py) -------------------------------------------------
    scatter = scatter_ops.scatter
    scatter_add = scatter_ops.scatter_add
    index_add = scatter_ops.index_add
    index_copy = scatter_ops.index_copy
    index_fill = scatter_ops.index_fill
    scatter_ = in_place(scatter_ops.scatter)
    scatter_add_ = in_place(scatter_ops.scatter_add)
    index_add_ = in_place(scatter_ops.index_add)
    index_copy_ = in_place(scatter_ops.index_copy)
    index_fill_ = in_place(scatter_ops.index_fill)
    take = scatter_ops.take
    take_along_dim = scatter_ops.take_along_dim
    masked_select = scatter_ops.masked_select
    nonzero = scatter_ops.nonzero
    argwhere = scatter_ops.argwhere

    # -- shaping (extra/shaping.py) --------------------------------------------------------------
    narrow = shaping.narrow
    tile = sizes_as_arguments(shaping.tile)
    movedim = moveaxis = shaping.movedim
    swapaxes = swapdims = shaping.swapaxes
    unflatten = shaping.unflatten
    tensor_split = shaping.tensor_split
    hsplit = shaping.hsplit
    vsplit = shaping.vsplit
    dsplit = shaping.dsplit
    rot90 = shaping.rot90
    fliplr = shaping.fliplr
    flipud = shaping.flipud

    # -- searches and counts (extra/searching.py) ------------------------------------------------
    unique = searching.unique
    bincount = searching.bincount
    histc = searching.histc

    # -- PyTorch's other activations (extra/activations.py) ---------------------------------------
    prelu = activations.prelu
    hardshrink = activations.hardshrink

    # -- matrix decompositions (extra/linalg_aliases.py) ---------------------------------------------
    det = linalg_aliases.det
    logdet = linalg_aliases.logdet
    slogdet = linalg_aliases.slogdet
    inverse = linalg_aliases.inverse
    pinverse = linalg_aliases.pinverse
    matrix_power = linalg_aliases.matrix_power
    cholesky = linalg_aliases.cholesky
    qr = linalg_aliases.qr
    svd = linalg_aliases.svd
    matrix_exp = linalg_compositions.matrix_exp

    # -- issue 37 (functions): scans, order statistics, more math, types (extra/scans.py,
    # order_statistics.py, more_math.py, random_functions.py, tensor_types.py) -----------------
    cummax = scans.cummax
    cummin = scans.cummin
    logcumsumexp = scans.logcumsumexp
    diff = scans.diff
    kthvalue = order_statistics.kthvalue
    mode = order_statistics.mode
    nanmedian = order_statistics.nanmedian
    quantile = order_statistics.quantile
    nanquantile = order_statistics.nanquantile
    lgamma = more_math.lgamma
    digamma = more_math.digamma
    lgamma_ = in_place(more_math.lgamma)
    digamma_ = in_place(more_math.digamma)
    __lshift__ = bitwise_left_shift = more_math.bitwise_left_shift
    __rshift__ = bitwise_right_shift = more_math.bitwise_right_shift
    __rlshift__ = swapped(more_math.bitwise_left_shift)
    __rrshift__ = swapped(more_math.bitwise_right_shift)
    __ilshift__ = bitwise_left_shift_ = in_place(more_math.bitwise_left_shift)
    __irshift__ = bitwise_right_shift_ = in_place(more_math.bitwise_right_shift)
    copysign = more_math.copysign
    copysign_ = in_place(more_math.copysign)
    repeat_interleave = more_math.repeat_interleave
    masked_scatter = more_math.masked_scatter
    masked_scatter_ = in_place(more_math.masked_scatter)
    cross = more_math.cross
    equal = more_math.equal
    bernoulli = random_functions.bernoulli
    bernoulli_ = random_functions.bernoulli_
    type = tensor_types.tensor_type
    unfold = more_math.unfold
    scatter_reduce = scatter_reduce
    scatter_reduce_ = in_place(scatter_reduce)

    # -- issue 37 (math names): special functions, statistics, old solvers (extra/special_math.py,
    # statistics_extra.py, linalg_solvers.py) ---------------------------------------------------
    deg2rad = special_math.deg2rad
    deg2rad_ = in_place(special_math.deg2rad)
    rad2deg = special_math.rad2deg
    rad2deg_ = in_place(special_math.rad2deg)
    sinc = special_math.sinc
    sinc_ = in_place(special_math.sinc)
    logit = special_math.logit
    logit_ = in_place(special_math.logit)
    heaviside = special_math.heaviside
    heaviside_ = in_place(special_math.heaviside)
    logaddexp2 = special_math.logaddexp2
    float_power = special_math.float_power
    float_power_ = special_math.float_power_
    ldexp = special_math.ldexp
    ldexp_ = in_place(special_math.ldexp)
    gcd = special_math.gcd
    gcd_ = in_place(special_math.gcd)
    lcm = special_math.lcm
    lcm_ = in_place(special_math.lcm)
    frexp = special_math.frexp
    isreal = special_math.isreal
    mvlgamma = special_math.mvlgamma
    mvlgamma_ = in_place(special_math.mvlgamma)
    polygamma = special_math.polygamma_method
    polygamma_ = in_place(special_math.polygamma_method, "polygamma_")
    addbmm = statistics_extra.addbmm
    addbmm_ = in_place(statistics_extra.addbmm)
    addr = statistics_extra.addr
    addr_ = in_place(statistics_extra.addr)
    inner = statistics_extra.inner
    adjoint = statistics_extra.adjoint
    if TYPE_CHECKING:
        @property
        def mH(self) -> Tensor: ...
        @property
        def H(self) -> Tensor: ...
    else:
        mH = property(statistics_extra.matrix_adjoint)
        H = property(statistics_extra.conjugate_transpose)
    cov = statistics_extra.cov
    corrcoef = statistics_extra.corrcoef
    diagflat = statistics_extra.diagflat
    msort = statistics_extra.msort
    renorm = statistics_extra.renorm
    renorm_ = in_place(statistics_extra.renorm)
    unique_consecutive = statistics_extra.unique_consecutive
    histogram = statistics_extra.histogram
    cholesky_solve = linalg_solvers.cholesky_solve
    cholesky_inverse = linalg_solvers.cholesky_inverse
    lu_solve = linalg_solvers.lu_solve
    triangular_solve = linalg_solvers.triangular_solve
    lu = linalg_solvers.lu
    orgqr = linalg_solvers.orgqr
    geqrf = linalg_solvers.geqrf
    angle = special_math.angle
    ormqr = linalg_solvers.ormqr
    i0 = special_math.i0
    i0_ = in_place(special_math.i0)
    nextafter = special_math.nextafter
    nextafter_ = in_place(special_math.nextafter)
    igamma = special_math.igamma
    igamma_ = in_place(special_math.igamma)
    igammac = special_math.igammac
    igammac_ = in_place(special_math.igammac)


    # -- issue 37 (torchnames): the in-place twins of comparisons, logic, pow, cumsum, tril/triu
    # (computed out of place, written in: inplace.in_place), and the in-place view changes
    # (inplace_twins.py) ---------------------------------------------------------------------------
    eq_ = inplace_twins.without_gradient(comparison.eq, "eq_")
    ne_ = not_equal_ = inplace_twins.without_gradient(comparison.ne, "ne_")
    lt_ = less_ = inplace_twins.without_gradient(comparison.lt, "lt_")
    le_ = less_equal_ = inplace_twins.without_gradient(comparison.le, "le_")
    gt_ = greater_ = inplace_twins.without_gradient(comparison.gt, "gt_")
    ge_ = greater_equal_ = inplace_twins.without_gradient(comparison.ge, "ge_")
    logical_and_ = inplace_twins.outside_the_graph(comparison.logical_and, "logical_and_")
    logical_or_ = inplace_twins.outside_the_graph(comparison.logical_or, "logical_or_")
    logical_xor_ = inplace_twins.outside_the_graph(comparison.logical_xor, "logical_xor_")
    logical_not_ = inplace_twins.outside_the_graph(comparison.logical_not, "logical_not_")
    __iand__ = bitwise_and_ = in_place(comparison.bitwise_and, "bitwise_and_")
    __ior__ = bitwise_or_ = in_place(comparison.bitwise_or, "bitwise_or_")
    __ixor__ = bitwise_xor_ = in_place(comparison.bitwise_xor, "bitwise_xor_")
    bitwise_not_ = in_place(comparison.bitwise_not, "bitwise_not_")
    __ipow__ = pow_ = in_place(elementwise.pow, "pow_")
    cumsum_ = in_place(sorting.cumsum, "cumsum_")
    tril_ = in_place(joining.tril, "tril_")
    triu_ = in_place(joining.triu, "triu_")
    t_ = inplace_twins.t_
    transpose_ = inplace_twins.transpose_
    swapaxes_ = inplace_twins.swapaxes_
    swapdims_ = inplace_twins.swapdims_
    squeeze_ = inplace_twins.squeeze_
    unsqueeze_ = inplace_twins.unsqueeze_

    # -- issue 37 (torchnames): views by other names, view copies, questions (view_copies.py) ---
    select = view_copies.select
    ravel = view_copies.ravel
    split_with_sizes = view_copies.split_with_sizes
    unsafe_split = view_copies.unsafe_split
    unsafe_split_with_sizes = view_copies.unsafe_split_with_sizes
    unsafe_chunk = view_copies.unsafe_chunk
    narrow_copy = view_copies.narrow_copy
    sum_to_size = view_copies.sum_to_size
    is_complex = view_copies.is_complex
    is_signed = view_copies.is_signed
    is_nonzero = view_copies.is_nonzero
    is_same_size = view_copies.is_same_size
    is_conj = view_copies.is_conj
    is_neg = view_copies.is_neg
    conj = view_copies.conj
    conj_physical = view_copies.conj_physical
    resolve_conj = view_copies.resolve_conj
    resolve_neg = view_copies.resolve_neg
    get_device = view_copies.get_device
    new_empty_strided = more_creation.new_empty_strided
    is_cpu = property(view_copies.is_cpu)
    is_meta = property(view_copies.is_meta)
    ndimension = view_copies.ndimension

    # -- issue 37 (torchnames): as_strided and the scatters into views (extra/strided_scatters.py) --
    as_strided = strided_scatters.as_strided
    as_strided_ = inplace_twins.as_strided_
    resize_ = inplace_twins.resize_
    resize_as_ = inplace_twins.resize_as_
    as_strided_scatter = strided_scatters.as_strided_scatter
    diagonal_scatter = strided_scatters.diagonal_scatter
    select_scatter = strided_scatters.select_scatter
    slice_scatter = strided_scatters.slice_scatter
    index_put = strided_scatters.index_put
    index_put_ = in_place(strided_scatters.index_put)
    put = strided_scatters.put
    put_ = in_place(strided_scatters.put)
    index_reduce = strided_scatters.index_reduce
    index_reduce_ = in_place(strided_scatters.index_reduce)

    # -- issue 37 (torchnames): in-place draws (extra/random_fills.py) ---------------------------
    random_ = random_fills.random_
    exponential_ = random_fills.exponential_
    geometric_ = random_fills.geometric_
    log_normal_ = random_fills.log_normal_
    cauchy_ = random_fills.cauchy_

    # -- issue 37 (torchnames): older and smaller methods (tensor_extras.py) ----------------------
    apply_ = tensor_extras.apply_
    map_ = tensor_extras.map_
    map2_ = tensor_extras.map2_
    new = tensor_extras.new
    const_data_ptr = tensor_extras.const_data_ptr
    is_set_to = tensor_extras.is_set_to
    dim_order = tensor_extras.dim_order
    is_distributed = tensor_extras.is_distributed
    nonzero_static = tensor_extras.nonzero_static
    conj_physical_ = tensor_extras.conj_physical_
    fill_diagonal_ = tensor_extras.fill_diagonal_
    set_ = tensor_extras.set_
    as_subclass = tensor_extras.as_subclass
    resize = tensor_extras.resize
    resize_as = tensor_extras.resize_as
    is_pinned = tensor_extras.is_pinned
    is_ipu = property(tensor_extras.is_ipu)
    is_maia = property(tensor_extras.is_maia)
    is_mtia = property(tensor_extras.is_mtia)
    is_xla = property(tensor_extras.is_xla)
    is_xpu = property(tensor_extras.is_xpu)
    is_mps = property(tensor_extras.is_mps)
    is_vulkan = property(tensor_extras.is_vulkan)
    is_mkldnn = property(tensor_extras.is_mkldnn)
    is_nested = property(tensor_extras.is_nested)
    is_quantized = property(tensor_extras.is_quantized)

def attach_to(tensor_class: type) -> None:
    """Give ``tensor_class`` (``Tensor``) every entry of the table."""
    class_attributes = {"__module__", "__qualname__", "__doc__", "__slots__", "__hash__", "__annotations__"}
    for name, value in vars(TensorMethods).items():
        if name not in class_attributes:  # (__hash__ is None here, as __eq__ is defined: keep Tensor's)
            setattr(tensor_class, name, value)
