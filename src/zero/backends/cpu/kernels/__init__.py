"""The CPU's kernel table (the book's ``tensor_ops_cpu.cc``): every kernel of the contract,
by name, and the function that runs it.

``zero.backends.kernel_contract`` lists the kernels every device offers, with their
signatures; this module offers each of them once, below, as a module attribute, so that
``device.kernels.add(a, b, out)`` is an attribute lookup and a reader finds what runs by
the name (``grep "^add = "``). An entry is one of

    partial(array_kernels.<topic>.<name>, np)   the kernel shared with CUDA, on NumPy
    <module>.<name>                             the CPU's own (the modules below)
    parallel.elements(...) / parallel.rows(...) either, run over ranges of its elements or
                                                rows on both cores when large (``cpu/parallel.py``)

The CPU's own kernels, by module:

    elementwise   copy; add (an array plus a row as a Numba loop); where, relu and its
                  backward as select loops; sigmoid, SiLU, both GELUs (Numba loops)
    indexing      index_select (NumPy's take, unbuffered), index_add_along (a loop for
                  embeddings), the extremes of an index array in one pass
    linalg        matmul and sums over leading axes through BLAS
    nn            softmax, cross-entropy, NLL, layer norm, dropout (Numba loops)
    conv          conv2d forward and backward: im2col (Numba), BLAS GEMMs, col2im
    pooling       max and average pooling, forward and backward (Numba loops)
    fused         linear, FFN, linear + cross-entropy, flash attention
    optim         AdamW and SGD steps (Numba loops)
    recurrent     RNN, LSTM and GRU cells, forward and backward (Numba loops, one per time step)

A new kernel: its signature in the contract, its function in ``array_kernels`` (when it is
a NumPy call that CuPy has too) or in a module here, and one line below (and in CUDA's
table); ``tests/backends/test_kernel_contract.py`` checks the three agree.
"""
from functools import partial

import numpy as np

from ... import array_kernels
from .. import parallel
from . import conv, elementwise, fused, indexing, linalg, nn, optim, pooling
from . import recurrent

# -- fills, arithmetic, comparisons, logic ----------------------------------------------------------
fill = partial(array_kernels.arithmetic.fill, np)
copy = parallel.elements(elementwise.copy, ("src",), "out", part="MEMORY_PART")
add = parallel.elements(elementwise.add, ("a", "b"), "out", part="MEMORY_PART")
sub = parallel.elements(partial(array_kernels.arithmetic.sub, np), ("a", "b"), "out", part="MEMORY_PART")
mul = parallel.elements(partial(array_kernels.arithmetic.mul, np), ("a", "b"), "out", part="MEMORY_PART")
div = parallel.elements(partial(array_kernels.arithmetic.div, np), ("a", "b"), "out", part="MEMORY_PART")
pow = partial(array_kernels.arithmetic.pow, np)
maximum = partial(array_kernels.arithmetic.maximum, np)
minimum = partial(array_kernels.arithmetic.minimum, np)
fmax = partial(array_kernels.arithmetic.fmax, np)
fmin = partial(array_kernels.arithmetic.fmin, np)
eq = partial(array_kernels.arithmetic.eq, np)
ne = partial(array_kernels.arithmetic.ne, np)
lt = partial(array_kernels.arithmetic.lt, np)
le = partial(array_kernels.arithmetic.le, np)
gt = partial(array_kernels.arithmetic.gt, np)
ge = partial(array_kernels.arithmetic.ge, np)
logical_and = partial(array_kernels.arithmetic.logical_and, np)
logical_or = partial(array_kernels.arithmetic.logical_or, np)
logical_xor = partial(array_kernels.arithmetic.logical_xor, np)
bitwise_and = partial(array_kernels.arithmetic.bitwise_and, np)
bitwise_or = partial(array_kernels.arithmetic.bitwise_or, np)
bitwise_xor = partial(array_kernels.arithmetic.bitwise_xor, np)
arctan2 = partial(array_kernels.arithmetic.arctan2, np)
hypot = partial(array_kernels.arithmetic.hypot, np)
logaddexp = partial(array_kernels.arithmetic.logaddexp, np)
floor_divide = partial(array_kernels.arithmetic.floor_divide, np)
truncate_divide = partial(array_kernels.arithmetic.truncate_divide, np)
remainder = partial(array_kernels.arithmetic.remainder, np)
fmod = partial(array_kernels.arithmetic.fmod, np)
xlogy = partial(array_kernels.arithmetic.xlogy, np)
lerp = partial(array_kernels.arithmetic.lerp, np)
addcmul = partial(array_kernels.arithmetic.addcmul, np)
addcdiv = partial(array_kernels.arithmetic.addcdiv, np)
any_zero = partial(array_kernels.arithmetic.any_zero, np)
where = parallel.elements(elementwise.where, ("condition", "a", "b"), "out", part="MEMORY_PART", copies_strided=True)
clamp = partial(array_kernels.arithmetic.clamp, np)

# -- unary math -------------------------------------------------------------------------------------
neg = partial(array_kernels.unary.neg, np)
abs = partial(array_kernels.unary.abs, np)
sign = partial(array_kernels.unary.sign, np)
bitwise_not = partial(array_kernels.unary.bitwise_not, np)
logical_not = partial(array_kernels.unary.logical_not, np)
exp = partial(array_kernels.unary.exp, np)
exp2 = partial(array_kernels.unary.exp2, np)
expm1 = partial(array_kernels.unary.expm1, np)
log = partial(array_kernels.unary.log, np)
log2 = partial(array_kernels.unary.log2, np)
log10 = partial(array_kernels.unary.log10, np)
log1p = partial(array_kernels.unary.log1p, np)
sqrt = partial(array_kernels.unary.sqrt, np)
rsqrt = partial(array_kernels.unary.rsqrt, np)
reciprocal = partial(array_kernels.unary.reciprocal, np)
sin = partial(array_kernels.unary.sin, np)
cos = partial(array_kernels.unary.cos, np)
tan = partial(array_kernels.unary.tan, np)
arcsin = partial(array_kernels.unary.arcsin, np)
arccos = partial(array_kernels.unary.arccos, np)
arctan = partial(array_kernels.unary.arctan, np)
sinh = partial(array_kernels.unary.sinh, np)
cosh = partial(array_kernels.unary.cosh, np)
tanh = partial(array_kernels.unary.tanh, np)
arcsinh = partial(array_kernels.unary.arcsinh, np)
arccosh = partial(array_kernels.unary.arccosh, np)
arctanh = partial(array_kernels.unary.arctanh, np)
erf = partial(array_kernels.unary.erf, np)
erfc = partial(array_kernels.unary.erfc, np)
erfinv = partial(array_kernels.unary.erfinv, np)
floor = partial(array_kernels.unary.floor, np)
ceil = partial(array_kernels.unary.ceil, np)
trunc = partial(array_kernels.unary.trunc, np)
rint = partial(array_kernels.unary.rint, np)
round_decimals = partial(array_kernels.unary.round_decimals, np)
frac = partial(array_kernels.unary.frac, np)
signbit = partial(array_kernels.unary.signbit, np)
isnan = partial(array_kernels.unary.isnan, np)
isinf = partial(array_kernels.unary.isinf, np)
isfinite = partial(array_kernels.unary.isfinite, np)
equals_value = partial(array_kernels.unary.equals_value, np)
nan_to_num = partial(array_kernels.unary.nan_to_num, np)

# -- activations -------------------------------------------------------------------------------------
relu = parallel.elements(elementwise.relu, ("x",), "out", part="MEMORY_PART", copies_strided=True)
relu_backward = parallel.elements(elementwise.relu_backward, ("grad", "out"), "grad_in", part="MEMORY_PART",
                                  copies_strided=True)
sigmoid = parallel.elements(elementwise.sigmoid, ("x",), "out", ns_per_element=parallel.SIGMOID_NS,
                            copies_strided=True)
silu = parallel.elements(elementwise.silu, ("x",), "out", ns_per_element=parallel.SILU_NS, copies_strided=True)
gelu = parallel.elements(elementwise.gelu, ("x",), "out", ns_per_element=parallel.gelu_ns, copies_strided=True)
gelu_backward = parallel.elements(elementwise.gelu_backward, ("grad", "x"), "out",
                                  ns_per_element=parallel.gelu_backward_ns, copies_strided=True)

# -- reductions --------------------------------------------------------------------------------------
sum = linalg.sum
prod = partial(array_kernels.reduction.prod, np)
amax = partial(array_kernels.reduction.amax, np)
amin = partial(array_kernels.reduction.amin, np)
all = partial(array_kernels.reduction.all, np)
any = partial(array_kernels.reduction.any, np)
var = partial(array_kernels.reduction.var, np)
std = partial(array_kernels.reduction.std, np)
logsumexp = partial(array_kernels.reduction.logsumexp, np)
argmax = partial(array_kernels.reduction.argmax, np)
argmin = partial(array_kernels.reduction.argmin, np)
max_with_indices = partial(array_kernels.reduction.max_with_indices, np)
min_with_indices = partial(array_kernels.reduction.min_with_indices, np)
sort = partial(array_kernels.reduction.sort, np)
cumsum = partial(array_kernels.reduction.cumsum, np)
cumprod = partial(array_kernels.reduction.cumprod, np)

# -- indexing, gathers and scatters ------------------------------------------------------------------
index_get = partial(array_kernels.indexing.index_get, np)
index_put = partial(array_kernels.indexing.index_put, np)
index_add = partial(array_kernels.indexing.index_add, np)
index_select = indexing.index_select
index_add_along = indexing.index_add_along
index_extremes = indexing.index_extremes
index_extremes_parts = indexing.index_extremes_parts
gather = partial(array_kernels.indexing.gather, np)
scatter_add = partial(array_kernels.indexing.scatter_add, np)
scatter_along = partial(array_kernels.indexing.scatter_along, np)
scatter_window = partial(array_kernels.indexing.scatter_window, np)
triangle = partial(array_kernels.indexing.triangle, np)
argwhere = partial(array_kernels.indexing.argwhere, np)
unique = partial(array_kernels.indexing.unique, np)
bincount = partial(array_kernels.indexing.bincount, np)
searchsorted = partial(array_kernels.indexing.searchsorted, np)
histogram = partial(array_kernels.indexing.histogram, np)

# -- products, convolution, pooling ------------------------------------------------------------------
matmul = linalg.matmul
conv2d_forward = conv.conv2d_forward
conv2d_backward = conv.conv2d_backward
max_pool2d_forward = pooling.max_pool2d_forward
max_pool2d_backward = pooling.max_pool2d_backward
avg_pool2d_forward = pooling.avg_pool2d_forward
avg_pool2d_backward = pooling.avg_pool2d_backward
im2col = conv.im2col
col2im = conv.col2im

# -- softmax, losses, layer norm, dropout ------------------------------------------------------------
softmax_forward = parallel.rows(nn.softmax_forward, ("x", "out"), ns_per_element=parallel.SOFTMAX_NS)
softmax_backward = parallel.rows(nn.softmax_backward, ("grad", "out", "grad_in"),
                                 ns_per_element=parallel.SOFTMAX_BACKWARD_NS)
log_softmax_forward = parallel.rows(nn.log_softmax_forward, ("x", "out"), ns_per_element=parallel.LOG_SOFTMAX_NS)
log_softmax_backward = parallel.rows(nn.log_softmax_backward, ("grad", "out", "grad_in"),
                                     ns_per_element=parallel.LOG_SOFTMAX_BACKWARD_NS)
cross_entropy_forward = parallel.rows(nn.cross_entropy_forward, ("logits", "target", "loss", "logsumexp"),
                                      ns_per_element=parallel.CROSS_ENTROPY_NS)
cross_entropy_backward = parallel.rows(nn.cross_entropy_backward,
                                       ("logits", "grad_loss", "target", "logsumexp", "grad_logits"),
                                       ns_per_element=parallel.CROSS_ENTROPY_NS)
nll_loss_forward = nn.nll_loss_forward
nll_loss_backward = nn.nll_loss_backward
class_loss_mean = nn.class_loss_mean
layer_norm_forward = parallel.rows(nn.layer_norm_forward, ("x", "out", "mean", "rstd"),
                                   part="LAYER_NORM_PART")
layer_norm_backward = nn.layer_norm_backward        # splits its fixed chunks of rows itself
dropout_forward = parallel.elements(nn.dropout_forward, ("x",), "out", ns_per_element=parallel.DROPOUT_NS,
                                    copies_strided=True, first="first")
dropout_backward = parallel.elements(nn.dropout_backward, ("grad",), "grad_in", ns_per_element=parallel.DROPOUT_NS,
                                     copies_strided=True, first="first")
dropout_forward_seeded = parallel.elements(nn.dropout_forward_seeded, ("x",), "out",
                                           ns_per_element=parallel.DROPOUT_NS, copies_strided=True, first="first")
dropout_backward_seeded = parallel.elements(nn.dropout_backward_seeded, ("grad",), "grad_in",
                                            ns_per_element=parallel.DROPOUT_NS, copies_strided=True, first="first")

# -- fused ops (each splits its chain of products and loops itself) ------------------------------------
linear_forward = fused.linear_forward
linear_backward = fused.linear_backward
ffn_forward = fused.ffn_forward
ffn_backward = fused.ffn_backward
linear_cross_entropy_forward = fused.linear_cross_entropy_forward
linear_cross_entropy_backward = fused.linear_cross_entropy_backward
flash_attention_forward = fused.flash_attention_forward
flash_attention_backward = fused.flash_attention_backward
self_attention_forward = fused.self_attention_forward
self_attention_backward = fused.self_attention_backward

# -- optimizers and gradient clipping ----------------------------------------------------------------
adamw_step = parallel.elements(optim.adamw_step, ("grad", "exp_avg", "exp_avg_sq"), "param",
                               ns_per_element=parallel.ADAMW_NS)
adamw_step_many = partial(optim.adamw_step_many, adamw_step)     # a loop of the step above
sgd_step = parallel.elements(optim.sgd_step, ("grad", "momentum_buffer"), "param", ns_per_element=parallel.SGD_NS)
squared_norms = partial(array_kernels.reduction.squared_norms, np)
clip_factor = partial(array_kernels.reduction.clip_factor, np)
scale_in_place = partial(array_kernels.reduction.scale_in_place, np)

# -- PyTorch's other activations (array_kernels/activation.py) -----------------------------------
leaky_relu = partial(array_kernels.activation.leaky_relu, np)
leaky_relu_backward = partial(array_kernels.activation.leaky_relu_backward, np)
hardtanh = partial(array_kernels.activation.hardtanh, np)
hardtanh_backward = partial(array_kernels.activation.hardtanh_backward, np)
threshold = partial(array_kernels.activation.threshold, np)
threshold_backward = partial(array_kernels.activation.threshold_backward, np)
softshrink = partial(array_kernels.activation.softshrink, np)
softshrink_backward = partial(array_kernels.activation.softshrink_backward, np)
hardshrink = partial(array_kernels.activation.hardshrink, np)
hardshrink_backward = partial(array_kernels.activation.hardshrink_backward, np)
hardsigmoid = partial(array_kernels.activation.hardsigmoid, np)
hardsigmoid_backward = partial(array_kernels.activation.hardsigmoid_backward, np)
hardswish = partial(array_kernels.activation.hardswish, np)
hardswish_backward = partial(array_kernels.activation.hardswish_backward, np)
elu = partial(array_kernels.activation.elu, np)
elu_backward = partial(array_kernels.activation.elu_backward, np)
softplus = partial(array_kernels.activation.softplus, np)
softplus_backward = partial(array_kernels.activation.softplus_backward, np)
logsigmoid = partial(array_kernels.activation.logsigmoid, np)
logsigmoid_backward = partial(array_kernels.activation.logsigmoid_backward, np)
mish = partial(array_kernels.activation.mish, np)
mish_backward = partial(array_kernels.activation.mish_backward, np)
softsign = partial(array_kernels.activation.softsign, np)
softsign_backward = partial(array_kernels.activation.softsign_backward, np)
tanhshrink = partial(array_kernels.activation.tanhshrink, np)
tanhshrink_backward = partial(array_kernels.activation.tanhshrink_backward, np)
# -- recurrent layers (the time loop shared with CUDA; the cells Numba loops) ------------------------
recurrent_forward = recurrent.recurrent_forward
recurrent_backward = recurrent.recurrent_backward
recurrent_projected_forward = recurrent.recurrent_projected_forward     # LSTM with proj_size
recurrent_projected_backward = recurrent.recurrent_projected_backward
# -- matrix decompositions (LAPACK through NumPy / cuSOLVER through CuPy) ------------------------------
det = partial(array_kernels.decompositions.det, np)
slogdet = partial(array_kernels.decompositions.slogdet, np)
inv = partial(array_kernels.decompositions.inv, np)
solve = partial(array_kernels.decompositions.solve, np)
cholesky = partial(array_kernels.decompositions.cholesky, np)
qr = partial(array_kernels.decompositions.qr, np)
svd = partial(array_kernels.decompositions.svd, np)
eigh = partial(array_kernels.decompositions.eigh, np)
# -- the gamma family and the bit shifts (array_kernels/more_math.py) ------------------------------
lgamma = partial(array_kernels.more_math.lgamma, np)
digamma = partial(array_kernels.more_math.digamma, np)
trigamma = partial(array_kernels.more_math.trigamma, np)
left_shift = partial(array_kernels.more_math.left_shift, np)
right_shift = partial(array_kernels.more_math.right_shift, np)
scatter_reduce = partial(array_kernels.more_math.scatter_reduce, np)
geqrf = partial(array_kernels.householder.geqrf, np)     # issue 37 (math names)
# -- attention's softmax: zeros for a fully masked row (cpu/kernels/nn.py) ---------------------------
masked_softmax_forward = parallel.rows(nn.masked_softmax_forward, ("x", "out"), ns_per_element=parallel.SOFTMAX_NS)
# -- issue 38 (CUDA graphs): AdamW's capturable step, the counts and the lr read here (cpu/kernels/optim.py) --
adamw_step_many_capturable = partial(optim.adamw_step_many_capturable, adamw_step)

# -- float16 and bfloat16 (issue 38: autocast): the CPU's own kernels run them in float32 ---------------
# (``cpu/low_precision.py``); the shared NumPy kernels above take them as they are.
from ..low_precision import in_float32 as _in_float32  # noqa: E402

for _name in ("where", "relu", "relu_backward", "sigmoid", "silu", "gelu", "gelu_backward", "index_select",
              "index_add_along", "matmul", "conv2d_forward", "conv2d_backward", "max_pool2d_forward",
              "max_pool2d_backward", "avg_pool2d_forward", "avg_pool2d_backward", "im2col", "col2im",
              "softmax_forward", "softmax_backward", "log_softmax_forward", "log_softmax_backward",
              "cross_entropy_forward", "cross_entropy_backward", "nll_loss_forward", "nll_loss_backward",
              "class_loss_mean", "layer_norm_forward", "layer_norm_backward", "dropout_forward", "dropout_backward",
              "linear_forward", "linear_backward", "ffn_forward", "ffn_backward", "linear_cross_entropy_forward",
              "linear_cross_entropy_backward", "flash_attention_forward", "flash_attention_backward",
              "self_attention_forward", "self_attention_backward", "recurrent_forward", "recurrent_backward",
              "recurrent_projected_forward", "recurrent_projected_backward", "masked_softmax_forward"):
    globals()[_name] = _in_float32(globals()[_name])
for _name in ("dropout_forward_seeded", "dropout_backward_seeded"):     # (issue 38: CUDA graphs' seed slots)
    globals()[_name] = _in_float32(globals()[_name])
del _name, _in_float32
