"""CUDA's kernel table (the book's ``tensor_ops_gpu.cu``): every kernel of the contract, by
name, and the function that runs it.

The same names and signatures as the CPU's table (``zero.backends.kernel_contract`` lists
them; ``tests/backends/cuda/test_kernel_tables.py`` checks both), so an op never asks which
device it runs on. A kernel takes CuPy arrays (strided views of device storage, or Python
scalars) and writes the ``out`` array it is given; it launches work on the current stream
and returns without waiting for the GPU: the host waits only where it reads a value
(``item()``, ``.cpu()``). This module imports CuPy and Triton, so it is imported only when
the first CUDA tensor is made (``zero.backends.cuda.check_device``). An entry is one of

    partial(array_kernels.<topic>.<name>, cp)   the kernel shared with the CPU, on CuPy
    <module>.<name>                             CUDA's own (the modules below)

CUDA's own kernels, by module:

    elementwise   copy (uploads host arrays); sigmoid, SiLU (CuPy kernels), GELU (Triton)
    indexing      index_add_along (atomic scatter-adds)
    reduction     sums over leading axes (bias gradients) and index extremes in Triton
    linalg        cuBLAS GEMMs, strided views as transpose flags
    nn            softmax, cross-entropy, NLL, layer norm, dropout in Triton
    conv          conv2d forward and backward: Triton im2col/col2im, cuBLAS GEMMs
    pooling       max and average pooling, forward and backward, in Triton
    fused         linear, GELU FFN, linear + cross-entropy (cuBLAS + Triton), flash attention (Triton)
    optim         AdamW and SGD steps, gradient norms and scaling (clip_grad_norm_) in Triton
    recurrent     RNN, LSTM and GRU cells, forward and backward (CuPy elementwise kernels)

Several of CUDA's own fall back to the shared kernel for what their Triton path does not
take (``sum`` of other layouts, ``squared_norms`` of mixed dtypes ...).
"""
from functools import partial

from ... import array_kernels
from .. import runtime
from . import conv, elementwise, fused, indexing, linalg, nn, optim, pooling, reduction
from . import recurrent

cp = runtime.cupy()

# -- fills, arithmetic, comparisons, logic ----------------------------------------------------------
fill = partial(array_kernels.arithmetic.fill, cp)
copy = elementwise.copy
add = partial(array_kernels.arithmetic.add, cp)
sub = partial(array_kernels.arithmetic.sub, cp)
mul = partial(array_kernels.arithmetic.mul, cp)
div = partial(array_kernels.arithmetic.div, cp)
pow = partial(array_kernels.arithmetic.pow, cp)
maximum = partial(array_kernels.arithmetic.maximum, cp)
minimum = partial(array_kernels.arithmetic.minimum, cp)
fmax = partial(array_kernels.arithmetic.fmax, cp)
fmin = partial(array_kernels.arithmetic.fmin, cp)
eq = partial(array_kernels.arithmetic.eq, cp)
ne = partial(array_kernels.arithmetic.ne, cp)
lt = partial(array_kernels.arithmetic.lt, cp)
le = partial(array_kernels.arithmetic.le, cp)
gt = partial(array_kernels.arithmetic.gt, cp)
ge = partial(array_kernels.arithmetic.ge, cp)
logical_and = partial(array_kernels.arithmetic.logical_and, cp)
logical_or = partial(array_kernels.arithmetic.logical_or, cp)
logical_xor = partial(array_kernels.arithmetic.logical_xor, cp)
bitwise_and = partial(array_kernels.arithmetic.bitwise_and, cp)
bitwise_or = partial(array_kernels.arithmetic.bitwise_or, cp)
bitwise_xor = partial(array_kernels.arithmetic.bitwise_xor, cp)
arctan2 = partial(array_kernels.arithmetic.arctan2, cp)
hypot = partial(array_kernels.arithmetic.hypot, cp)
logaddexp = partial(array_kernels.arithmetic.logaddexp, cp)
floor_divide = partial(array_kernels.arithmetic.floor_divide, cp)
truncate_divide = partial(array_kernels.arithmetic.truncate_divide, cp)
remainder = partial(array_kernels.arithmetic.remainder, cp)
fmod = partial(array_kernels.arithmetic.fmod, cp)
xlogy = partial(array_kernels.arithmetic.xlogy, cp)
lerp = partial(array_kernels.arithmetic.lerp, cp)
addcmul = partial(array_kernels.arithmetic.addcmul, cp)
addcdiv = partial(array_kernels.arithmetic.addcdiv, cp)
any_zero = partial(array_kernels.arithmetic.any_zero, cp)
where = partial(array_kernels.arithmetic.where, cp)
clamp = partial(array_kernels.arithmetic.clamp, cp)

# -- unary math -------------------------------------------------------------------------------------
neg = partial(array_kernels.unary.neg, cp)
abs = partial(array_kernels.unary.abs, cp)
sign = partial(array_kernels.unary.sign, cp)
bitwise_not = partial(array_kernels.unary.bitwise_not, cp)
logical_not = partial(array_kernels.unary.logical_not, cp)
exp = partial(array_kernels.unary.exp, cp)
exp2 = partial(array_kernels.unary.exp2, cp)
expm1 = partial(array_kernels.unary.expm1, cp)
log = partial(array_kernels.unary.log, cp)
log2 = partial(array_kernels.unary.log2, cp)
log10 = partial(array_kernels.unary.log10, cp)
log1p = partial(array_kernels.unary.log1p, cp)
sqrt = partial(array_kernels.unary.sqrt, cp)
rsqrt = partial(array_kernels.unary.rsqrt, cp)
reciprocal = partial(array_kernels.unary.reciprocal, cp)
sin = partial(array_kernels.unary.sin, cp)
cos = partial(array_kernels.unary.cos, cp)
tan = partial(array_kernels.unary.tan, cp)
arcsin = partial(array_kernels.unary.arcsin, cp)
arccos = partial(array_kernels.unary.arccos, cp)
arctan = partial(array_kernels.unary.arctan, cp)
sinh = partial(array_kernels.unary.sinh, cp)
cosh = partial(array_kernels.unary.cosh, cp)
tanh = partial(array_kernels.unary.tanh, cp)
arcsinh = partial(array_kernels.unary.arcsinh, cp)
arccosh = partial(array_kernels.unary.arccosh, cp)
arctanh = partial(array_kernels.unary.arctanh, cp)
erf = partial(array_kernels.unary.erf, cp)
erfc = partial(array_kernels.unary.erfc, cp)
erfinv = partial(array_kernels.unary.erfinv, cp)
floor = partial(array_kernels.unary.floor, cp)
ceil = partial(array_kernels.unary.ceil, cp)
trunc = partial(array_kernels.unary.trunc, cp)
rint = partial(array_kernels.unary.rint, cp)
round_decimals = partial(array_kernels.unary.round_decimals, cp)
frac = partial(array_kernels.unary.frac, cp)
signbit = partial(array_kernels.unary.signbit, cp)
isnan = partial(array_kernels.unary.isnan, cp)
isinf = partial(array_kernels.unary.isinf, cp)
isfinite = partial(array_kernels.unary.isfinite, cp)
equals_value = partial(array_kernels.unary.equals_value, cp)
nan_to_num = partial(array_kernels.unary.nan_to_num, cp)

# -- activations -------------------------------------------------------------------------------------
relu = partial(array_kernels.unary.relu, cp)
relu_backward = partial(array_kernels.unary.relu_backward, cp)
sigmoid = elementwise.sigmoid
silu = elementwise.silu
gelu = elementwise.gelu
gelu_backward = elementwise.gelu_backward

# -- reductions --------------------------------------------------------------------------------------
sum = reduction.sum
prod = partial(array_kernels.reduction.prod, cp)
amax = partial(array_kernels.reduction.amax, cp)
amin = partial(array_kernels.reduction.amin, cp)
all = partial(array_kernels.reduction.all, cp)
any = partial(array_kernels.reduction.any, cp)
var = partial(array_kernels.reduction.var, cp)
std = partial(array_kernels.reduction.std, cp)
logsumexp = partial(array_kernels.reduction.logsumexp, cp)
argmax = partial(array_kernels.reduction.argmax, cp)
argmin = partial(array_kernels.reduction.argmin, cp)
max_with_indices = partial(array_kernels.reduction.max_with_indices, cp)
min_with_indices = partial(array_kernels.reduction.min_with_indices, cp)
sort = partial(array_kernels.reduction.sort, cp)
cumsum = partial(array_kernels.reduction.cumsum, cp)
cumprod = partial(array_kernels.reduction.cumprod, cp)

# -- indexing, gathers and scatters ------------------------------------------------------------------
index_get = partial(array_kernels.indexing.index_get, cp)
index_put = partial(array_kernels.indexing.index_put, cp)
index_add = partial(array_kernels.indexing.index_add, cp)
index_select = partial(array_kernels.indexing.index_select, cp)
index_add_along = indexing.index_add_along
index_extremes = partial(array_kernels.indexing.index_extremes, cp)
index_extremes_parts = reduction.index_extremes_parts
gather = partial(array_kernels.indexing.gather, cp)
scatter_add = partial(array_kernels.indexing.scatter_add, cp)
scatter_along = partial(array_kernels.indexing.scatter_along, cp)
scatter_window = partial(array_kernels.indexing.scatter_window, cp)
triangle = partial(array_kernels.indexing.triangle, cp)
argwhere = partial(array_kernels.indexing.argwhere, cp)
unique = partial(array_kernels.indexing.unique, cp)
bincount = partial(array_kernels.indexing.bincount, cp)
searchsorted = partial(array_kernels.indexing.searchsorted, cp)
histogram = partial(array_kernels.indexing.histogram, cp)

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
softmax_forward = nn.softmax_forward
softmax_backward = nn.softmax_backward
log_softmax_forward = nn.log_softmax_forward
log_softmax_backward = nn.log_softmax_backward
cross_entropy_forward = nn.cross_entropy_forward
cross_entropy_backward = nn.cross_entropy_backward
nll_loss_forward = nn.nll_loss_forward
nll_loss_backward = nn.nll_loss_backward
class_loss_mean = nn.class_loss_mean
layer_norm_forward = nn.layer_norm_forward
layer_norm_backward = nn.layer_norm_backward
dropout_forward = nn.dropout_forward
dropout_backward = nn.dropout_backward
dropout_forward_seeded = nn.dropout_forward_seeded     # the seed read on the device (issue 38: graphs)
dropout_backward_seeded = nn.dropout_backward_seeded

# -- fused ops ---------------------------------------------------------------------------------------
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
adamw_step = optim.adamw_step
adamw_step_many = optim.adamw_step_many
sgd_step = optim.sgd_step
squared_norms = optim.squared_norms
clip_factor = partial(array_kernels.reduction.clip_factor, cp)
scale_in_place = optim.scale_in_place

# -- PyTorch's other activations (array_kernels/activation.py) -----------------------------------
leaky_relu = partial(array_kernels.activation.leaky_relu, cp)
leaky_relu_backward = partial(array_kernels.activation.leaky_relu_backward, cp)
hardtanh = partial(array_kernels.activation.hardtanh, cp)
hardtanh_backward = partial(array_kernels.activation.hardtanh_backward, cp)
threshold = partial(array_kernels.activation.threshold, cp)
threshold_backward = partial(array_kernels.activation.threshold_backward, cp)
softshrink = partial(array_kernels.activation.softshrink, cp)
softshrink_backward = partial(array_kernels.activation.softshrink_backward, cp)
hardshrink = partial(array_kernels.activation.hardshrink, cp)
hardshrink_backward = partial(array_kernels.activation.hardshrink_backward, cp)
hardsigmoid = partial(array_kernels.activation.hardsigmoid, cp)
hardsigmoid_backward = partial(array_kernels.activation.hardsigmoid_backward, cp)
hardswish = partial(array_kernels.activation.hardswish, cp)
hardswish_backward = partial(array_kernels.activation.hardswish_backward, cp)
elu = partial(array_kernels.activation.elu, cp)
elu_backward = partial(array_kernels.activation.elu_backward, cp)
softplus = partial(array_kernels.activation.softplus, cp)
softplus_backward = partial(array_kernels.activation.softplus_backward, cp)
logsigmoid = partial(array_kernels.activation.logsigmoid, cp)
logsigmoid_backward = partial(array_kernels.activation.logsigmoid_backward, cp)
mish = partial(array_kernels.activation.mish, cp)
mish_backward = partial(array_kernels.activation.mish_backward, cp)
softsign = partial(array_kernels.activation.softsign, cp)
softsign_backward = partial(array_kernels.activation.softsign_backward, cp)
tanhshrink = partial(array_kernels.activation.tanhshrink, cp)
tanhshrink_backward = partial(array_kernels.activation.tanhshrink_backward, cp)
# -- recurrent layers (the time loop shared with the CPU; cuBLAS per step, the cells CuPy kernels) -----
recurrent_forward = recurrent.recurrent_forward
recurrent_backward = recurrent.recurrent_backward
recurrent_projected_forward = recurrent.recurrent_projected_forward     # LSTM with proj_size
recurrent_projected_backward = recurrent.recurrent_projected_backward
# -- matrix decompositions (LAPACK through NumPy / cuSOLVER through CuPy) ------------------------------
det = partial(array_kernels.decompositions.det, cp)
slogdet = partial(array_kernels.decompositions.slogdet, cp)
inv = partial(array_kernels.decompositions.inv, cp)
solve = partial(array_kernels.decompositions.solve, cp)
cholesky = partial(array_kernels.decompositions.cholesky, cp)
qr = partial(array_kernels.decompositions.qr, cp)
svd = partial(array_kernels.decompositions.svd, cp)
eigh = partial(array_kernels.decompositions.eigh, cp)
# -- the gamma family and the bit shifts (array_kernels/more_math.py) ------------------------------
lgamma = partial(array_kernels.more_math.lgamma, cp)
digamma = partial(array_kernels.more_math.digamma, cp)
trigamma = partial(array_kernels.more_math.trigamma, cp)
left_shift = partial(array_kernels.more_math.left_shift, cp)
right_shift = partial(array_kernels.more_math.right_shift, cp)
scatter_reduce = partial(array_kernels.more_math.scatter_reduce, cp)
geqrf = partial(array_kernels.householder.geqrf, cp)     # issue 37 (math names)
# -- attention's softmax: zeros for a fully masked row (cuda/kernels/nn.py) --------------------------
masked_softmax_forward = nn.masked_softmax_forward
# -- issue 38 (CUDA graphs): AdamW's capturable step, the counts and the lr read on the device (kernels/optim.py) --
adamw_step_many_capturable = optim.adamw_step_many_capturable
