"""Automatic mixed precision: ``zero.autocast`` runs chosen ops in float16 or bfloat16.

    model = GPT(config)                              # parameters stay float32 (master weights)
    scaler = zero.amp.GradScaler("cuda")
    with zero.autocast("cuda", dtype=zero.bfloat16):
        logits = model(x)                            # matrix products in bfloat16
        loss = F.cross_entropy(logits, y)            # the loss in float32
    scaler.scale(loss).backward()                    # gradients in each parameter's float32

PyTorch's rules ("Autocast Op Reference"), per device type, in ``POLICIES`` below: an op
name -> what autocast does to the op's floating-point tensor arguments.

    LOWER    cast to the autocast dtype (matrix products, linear, convolutions, attention)
    FLOAT32  cast to float32 (losses, reductions and functions that need the range)
    PROMOTE  cast to the widest dtype among them (ops that take several tensors)
    BANNED   refused (binary_cross_entropy under CUDA autocast: unsafe in float16)

float64 tensors are never cast, nor are integer ones; an op not on the table runs in
whatever its inputs are (a bfloat16 linear's output makes the next GELU bfloat16).
FLOAT32 ops that take ``dtype=`` (softmax, sum, cumsum ...) are left alone when it is given.

A cast is an ordinary op (``Tensor.to``), so backward casts each gradient back to its
input's dtype: a float32 parameter gets a float32 ``.grad``. With ``cache_enabled`` (the
default) a float32 leaf that requires grad -- a parameter -- is cast once per autocast
region and the copy reused by every op that takes it (a weight shared by two layers, or an
RNN's weights at every step); the cache empties when the outermost region exits.

The functional forms of the listed ops consult this table through
``zero.autograd.autocast_hook`` (one flag read when autocast is off). Autocast's state is the
process's (PyTorch keeps it per thread). Unlike PyTorch's, CUDA autocast turns on on a machine
without a GPU (so that the tests' played "cuda" checks CUDA's rules); on the GPU, float16 and
bfloat16 products go to cuBLAS with float32 accumulation (CuPy 14 holds bfloat16 arrays as
ml_dtypes' type), and the Triton kernels compute 16-bit arrays in float32.
"""
from __future__ import annotations

import functools
import warnings
from typing import Any

from .. import dtypes
from ..dtypes import DType
from ..autograd import autocast_hook
from ..ops.conversion import to_dtype
from ..tensors.tensor import Tensor

LOWER, FLOAT32, PROMOTE, BANNED = "lower precision", "float32", "promote", "banned"

# -- PyTorch's op lists (docs: "Autocast Op Reference"), the ops Zero has; its fused ops join their family.
# Not here yet (Zero has them; their functional forms do not ask the hook yet): chain_matmul (matmuls),
# adaptive_avg_pool3d, cholesky, cholesky_inverse, pinverse, renorm, grid_sample, index_put,
# multilabel_margin_loss. (multi_dot is matmuls: it follows them.) The RNN layers and cells ask from
# zero/nn/rnn.py.

_LOWER_COMMON = ("conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
                 "mm", "bmm", "matmul", "addmm", "addbmm", "baddbmm", "linear", "prelu",
                 "scaled_dot_product_attention",
                 # Zero's fused ops, compositions of the above: the same policy
                 "self_attention", "ffn")

_CPU = {
    **dict.fromkeys(_LOWER_COMMON, LOWER),
    # (the RNN layers: mkldnn_rnn_layer; the plain RNN cell is linear layers in PyTorch, the others fused)
    **dict.fromkeys(("linalg_vecdot", "lstm", "rnn_tanh", "rnn_relu", "rnn_tanh_cell", "rnn_relu_cell"), LOWER),
    **dict.fromkeys((
        # losses
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
        "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss",
        "margin_ranking_loss", "hinge_embedding_loss", "poisson_nll_loss", "triplet_margin_loss",
        "cosine_embedding_loss", "multi_margin_loss", "linear_cross_entropy",
        # reductions and linear algebra that need the range
        "prod", "trace", "cdist", "inverse",
        # 3-d pooling
        "avg_pool3d", "max_pool3d"), FLOAT32),
    **dict.fromkeys(("cat", "stack", "index_copy"), PROMOTE),
}

_CUDA = {
    **dict.fromkeys(_LOWER_COMMON, LOWER),
    **dict.fromkeys(("mv", "addmv", "addr", "lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell"), LOWER),
    **dict.fromkeys((
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
        "binary_cross_entropy_with_logits", "kl_div", "soft_margin_loss", "margin_ranking_loss",
        "hinge_embedding_loss", "poisson_nll_loss", "triplet_margin_loss", "cosine_embedding_loss",
        "multi_margin_loss", "linear_cross_entropy",
        "softmax", "log_softmax", "softmin", "layer_norm", "group_norm",
        "sum", "prod", "cumsum", "cumprod", "norm", "normalize", "cosine_similarity", "cdist", "pdist", "dist",
        "exp", "expm1", "log", "log10", "log1p", "log2", "pow", "reciprocal", "rsqrt", "erfinv",
        "acos", "asin", "cosh", "sinh", "tan", "softplus"), FLOAT32),
    **dict.fromkeys(("addcdiv", "addcmul", "atan2", "bilinear", "cross", "dot", "tensordot", "scatter_add",
                     "cat", "stack", "index_copy"), PROMOTE),
    "binary_cross_entropy": BANNED,
}

POLICIES: dict[str, dict[str, str]] = {"cpu": _CPU, "cuda": _CUDA}

_BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast.")


# -- the state: PyTorch's torch.is_autocast_enabled & co. -------------------------------------


class _State:
    def __init__(self) -> None:
        self.enabled = {"cpu": False, "cuda": False}
        self.dtype = {"cpu": dtypes.bfloat16, "cuda": dtypes.float16}
        self.cache_enabled = True
        self.nesting = 0
        self.cache: dict[int, tuple[Tensor, Tensor]] = {}   # id(parameter) -> (parameter, its cast)


_state = _State()


def _device_type(device_type: str) -> str:
    if device_type not in _state.enabled:
        raise RuntimeError(f"User specified an unsupported autocast device_type '{device_type}'")
    return device_type


def _update_active() -> None:
    autocast_hook.state.active = _state.enabled["cpu"] or _state.enabled["cuda"]


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """Whether autocast is on for ``device_type`` (without one: CUDA's, as PyTorch's old form)."""
    return _state.enabled[_device_type(device_type or "cuda")]


def set_autocast_enabled(device_type: str | bool, enabled: bool | None = None) -> None:
    """``set_autocast_enabled(device_type, enabled)``, or the old ``set_autocast_enabled(enabled)`` (CUDA)."""
    if enabled is None:
        device_type, enabled = "cuda", bool(device_type)
    _state.enabled[_device_type(str(device_type))] = bool(enabled)
    _update_active()


def get_autocast_dtype(device_type: str) -> DType:
    return _state.dtype[_device_type(device_type)]


def set_autocast_dtype(device_type: str, dtype: DType) -> None:
    _state.dtype[_device_type(device_type)] = dtypes.to_dtype(dtype)


def is_autocast_cpu_enabled() -> bool:
    return _state.enabled["cpu"]


def set_autocast_cpu_enabled(enabled: bool) -> None:
    set_autocast_enabled("cpu", enabled)


def get_autocast_cpu_dtype() -> DType:
    return _state.dtype["cpu"]


def get_autocast_gpu_dtype() -> DType:
    return _state.dtype["cuda"]


def set_autocast_cpu_dtype(dtype: DType) -> None:
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype: DType) -> None:
    set_autocast_dtype("cuda", dtype)


def is_autocast_cache_enabled() -> bool:
    return _state.cache_enabled


def set_autocast_cache_enabled(enabled: bool) -> None:
    _state.cache_enabled = bool(enabled)


def clear_autocast_cache() -> None:
    """Forget the parameters' low-precision copies (done when the outermost region exits)."""
    _state.cache.clear()


def autocast_increment_nesting() -> int:
    _state.nesting += 1
    return _state.nesting


def autocast_decrement_nesting() -> int:
    _state.nesting -= 1
    return _state.nesting


# -- the context manager and decorator ----------------------------------------------------------


class autocast:  # (PyTorch's lowercase name)
    """``with zero.autocast("cpu"):`` or ``@zero.autocast("cuda", dtype=zero.bfloat16)``.

    ``dtype`` defaults to the device type's autocast dtype (bfloat16 on the CPU, float16 on
    CUDA); ``enabled=False`` turns autocast off inside an enclosing region; ``cache_enabled``
    (default: the current setting, True) keeps parameters' casts for the region."""

    def __init__(self, device_type: str, dtype: DType | None = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        self.device = _device_type(device_type)
        self.fast_dtype = get_autocast_dtype(self.device) if dtype is None else dtypes.to_dtype(dtype)
        self._enabled = bool(enabled)
        self._cache_enabled = is_autocast_cache_enabled() if cache_enabled is None else bool(cache_enabled)
        if self._enabled and self.fast_dtype not in (dtypes.bfloat16, dtypes.float16):
            place = "CPU" if self.device == "cpu" else "CUDA"
            warnings.warn(f"In {place} autocast, but the target dtype is not supported. Disabling autocast.\n"
                          f"{place} Autocast only supports dtype of torch.bfloat16, torch.float16 currently.",
                          stacklevel=2)
            self._enabled = False

    def __enter__(self) -> None:
        self.prev_cache_enabled = _state.cache_enabled
        self.prev = _state.enabled[self.device]
        self.prev_fastdtype = _state.dtype[self.device]
        _state.enabled[self.device] = self._enabled
        _state.dtype[self.device] = self.fast_dtype
        _state.cache_enabled = self._cache_enabled
        autocast_increment_nesting()
        _update_active()

    def __exit__(self, *exc: Any) -> None:
        if autocast_decrement_nesting() == 0:
            clear_autocast_cache()
        _state.enabled[self.device] = self.prev
        _state.dtype[self.device] = self.prev_fastdtype
        _state.cache_enabled = self.prev_cache_enabled
        _update_active()

    def __call__(self, func):
        arguments = (self.device, self.fast_dtype, self._enabled, self._cache_enabled)

        @functools.wraps(func)
        def decorated(*args, **kwargs):
            with autocast(*arguments):
                return func(*args, **kwargs)

        return decorated


# -- the policy the ops consult -----------------------------------------------------------------


def _cast(value: Any, dtype: DType) -> Any:
    """``value`` in ``dtype`` if it is a floating tensor autocast may cast (not float64)."""
    if not isinstance(value, Tensor):
        return value
    own = value._meta.dtype
    if own is dtype or own.category != dtypes.FLOATING or own is dtypes.float64:
        return value
    if (_state.cache_enabled and own is dtypes.float32 and value.requires_grad and value.is_leaf
            and dtype.itemsize == 2):
        cached = _state.cache.get(id(value))
        if cached is None or cached[0] is not value or cached[1]._meta.dtype is not dtype:
            cached = (value, to_dtype(value, dtype))
            _state.cache[id(value)] = cached
        return cached[1]
    return to_dtype(value, dtype)


def apply_policy(op: str, arguments: tuple) -> tuple:
    """``arguments`` cast as ``op``'s policy for their device type says (``autocast_hook.cast``)."""
    device_type = None
    for value in arguments:
        if isinstance(value, Tensor):
            device_type = value._meta.device.type
            break
    if device_type is None or not _state.enabled.get(device_type, False):
        return arguments
    policy = POLICIES[device_type].get(op)
    if policy is None:
        return arguments
    if policy is LOWER:
        target = _state.dtype[device_type]
    elif policy is FLOAT32:
        target = dtypes.float32
    elif policy is PROMOTE:
        # PyTorch's: the widest of the autocast dtype and the castable (not float64) inputs
        target = functools.reduce(dtypes.promote_types, (
            v._meta.dtype for v in arguments if isinstance(v, Tensor) and v._meta.dtype.is_floating_point
            and v._meta.dtype is not dtypes.float64), _state.dtype[device_type])
    else:
        raise RuntimeError(_BANNED_MESSAGE)
    return tuple(_cast(value, target) for value in arguments)


autocast_hook.state.policy = apply_policy


# -- custom autograd functions: PyTorch's torch.amp.custom_fwd / custom_bwd ---------------------


def custom_fwd(fwd=None, *, device_type: str, cast_inputs: DType | None = None):
    """Decorates a custom ``Function``'s ``forward``. Without ``cast_inputs`` it runs under
    the autocast in force and notes it on ``ctx`` for ``custom_bwd``; with it, inside an
    autocast region, floating tensor arguments are cast to ``cast_inputs`` and forward runs
    with autocast off."""
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)
    _device_type(device_type)

    @functools.wraps(fwd)
    def decorate_fwd(*args, **kwargs):
        ctx = args[0]
        ctx._dtype = get_autocast_dtype(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = is_autocast_enabled(device_type)
            return fwd(*args, **kwargs)
        autocast_context = is_autocast_enabled(device_type)
        ctx._fwd_used_autocast = False
        if not autocast_context:
            return fwd(*args, **kwargs)
        target = dtypes.to_dtype(cast_inputs)
        args = (ctx, *(_cast_for_custom(a, target, device_type) for a in args[1:]))
        kwargs = {k: _cast_for_custom(v, target, device_type) for k, v in kwargs.items()}
        with autocast(device_type=device_type, enabled=False):
            return fwd(*args, **kwargs)

    return decorate_fwd


def custom_bwd(bwd=None, *, device_type: str):
    """Decorates a custom ``Function``'s ``backward``: it runs under the autocast state its
    forward (decorated with ``custom_fwd``) ran under."""
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)
    _device_type(device_type)

    @functools.wraps(bwd)
    def decorate_bwd(*args, **kwargs):
        ctx = args[0]
        with autocast(device_type=device_type, enabled=getattr(ctx, "_fwd_used_autocast", False),
                      dtype=getattr(ctx, "_dtype", None)):
            return bwd(*args, **kwargs)

    return decorate_bwd


def _cast_for_custom(value: Any, dtype: DType, device_type: str) -> Any:
    if isinstance(value, Tensor):
        if value._meta.device.type == device_type and value._meta.dtype.is_floating_point \
                and value._meta.dtype is not dtypes.float64:
            return to_dtype(value, dtype)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_cast_for_custom(v, dtype, device_type) for v in value)
    if isinstance(value, dict):
        return {k: _cast_for_custom(v, dtype, device_type) for k, v in value.items()}
    return value
