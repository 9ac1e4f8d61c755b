"""The aliasing rule: an op's result shares storage with an input exactly when PyTorch's does.

Every public function of ``zero`` and ``zero.nn.functional`` and every Tensor method is run
on small inputs by a recipe from the tables below, the same call is run in PyTorch, and for
each tensor the result holds we ask, in both libraries, whether it shares memory with one of
the inputs (PyTorch: the storages' addresses; Zero: the same Storage, or NumPy's overlap of
the arrays) and whether it is the input object itself. The two must agree: a view where
PyTorch gives a view, new memory where PyTorch gives new memory -- also in the no-op cases
(``roll(x, 0)``, ``x.repeat(1, 1)``, ``flip(x, ())``, ``x.sum(())``).

A public name with no recipe makes ``test_every_public_name_has_a_recipe`` fail ("add a
recipe"): the next op added cannot miss the rule. Names that cannot be called by a simple
recipe (no tensor result, files, hooks, devices) are listed in ``NOT_CALLED`` with the reason.
"""
from __future__ import annotations

import inspect
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

import zero
import zero.nn.functional as zero_functional

torch = pytest.importorskip("torch")


class In:
    """A marker in a recipe for one of the inputs (see ``_arrays``)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


class A:
    """A recipe: the call's arguments, inputs marked by ``In``."""

    def __init__(self, *args, **kwargs) -> None:
        self.args, self.kwargs = args, kwargs

    def __repr__(self) -> str:
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.kwargs.items()]
        return "(" + ", ".join(parts) + ")"


x, y, z, v, w, s, m, b3, b4 = (In(n) for n in ("x", "y", "z", "v", "w", "s", "m", "b3", "b4"))
img, sig, vol, x0, u8, iv, ix, lab, mask, nv, sv, ii, pos = (
    In(n) for n in ("img", "sig", "vol", "x0", "u8", "iv", "ix", "lab", "mask", "nv", "sv", "ii", "pos"))
wconv1, wconv2, wconv3, seq3, filt = (In(n) for n in ("wconv1", "wconv2", "wconv3", "seq3", "filt"))


def _arrays() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    f = np.float32
    return {
        "x": rng.uniform(0.1, 0.9, (3, 4)).astype(f), "y": rng.uniform(0.1, 0.9, (3, 4)).astype(f),
        "z": rng.uniform(0.1, 0.9, (3, 4)).astype(f), "v": rng.uniform(0.1, 0.9, (4,)).astype(f),
        "w": rng.uniform(0.1, 0.9, (3,)).astype(f), "s": rng.uniform(0.1, 0.9, (3, 3)).astype(f),
        "m": rng.uniform(0.1, 0.9, (4, 2)).astype(f), "b3": rng.uniform(0.1, 0.9, (2, 3, 4)).astype(f),
        "b4": rng.uniform(0.1, 0.9, (2, 4, 2)).astype(f), "img": rng.uniform(0.1, 0.9, (1, 2, 4, 4)).astype(f),
        "sig": rng.uniform(0.1, 0.9, (1, 2, 6)).astype(f), "vol": rng.uniform(0.1, 0.9, (1, 2, 4, 4, 4)).astype(f),
        "x0": np.array(0.5, dtype=f), "u8": np.array([[1, 2, 3], [4, 5, 6]], dtype=np.uint8),
        "iv": np.array([0, 2], dtype=np.int64), "ix": np.array([[0, 3], [1, 1], [2, 0]], dtype=np.int64),
        "lab": np.array([0, 3, 1], dtype=np.int64), "mask": rng.uniform(0, 1, (3, 4)) > 0.5,
        "nv": np.array([0, 2, 2, 1, 4], dtype=np.int64), "sv": np.array([0.2, 0.4, 0.6, 0.8], dtype=f),
        "ii": np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int64),
        "pos": np.array([[1.0, -1.0, 1.0, -1.0], [1.0, 1.0, -1.0, -1.0], [-1.0, 1.0, 1.0, 1.0]], dtype=f),
        "wconv1": rng.uniform(-0.5, 0.5, (3, 2, 3)).astype(f), "wconv2": rng.uniform(-0.5, 0.5, (3, 2, 3, 3)).astype(f),
        "wconv3": rng.uniform(-0.5, 0.5, (3, 2, 3, 3, 3)).astype(f),
        "seq3": rng.uniform(-0.5, 0.5, (1, 2, 3, 4)).astype(f), "filt": rng.uniform(-0.5, 0.5, (2, 3, 3, 3)).astype(f),
    }


# Recipes for the functions of ``zero`` / ``torch`` and ``zero.nn.functional``; a Tensor method
# of the same name uses them with the first argument as self (see ``_method_recipes``).
FUNCS: dict[str, list[A]] = {
    # elementwise, one input
    **{name: [A(x)] for name in (
        "abs", "absolute", "acos", "arccos", "asin", "arcsin", "atan", "arctan", "ceil", "cos", "cosh", "erf",
        "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "log", "log10", "log1p", "log2", "neg",
        "negative", "reciprocal", "round", "rsqrt", "sgn", "sigmoid", "sign", "signbit", "sin", "sinh", "sqrt",
        "square", "tan", "tanh", "trunc", "isfinite", "isinf", "isnan", "isneginf", "isposinf", "logical_not",
        "nan_to_num", "relu", "selu", "celu", "positive", "relu6", "elu", "gelu", "hardsigmoid", "hardswish",
        "hardtanh", "leaky_relu", "logsigmoid", "mish", "silu", "softplus", "softshrink", "softsign",
        "tanhshrink", "hardshrink", "rrelu", "clone", "erfinv", "asinh", "arcsinh", "t")},
    "acosh": [A(x)], "arccosh": [A(x)], "atanh": [A(x)], "arctanh": [A(x)],
    "relu_": [A(x)], "selu_": [A(x)], "celu_": [A(x)], "rrelu_": [A(x)], "elu_": [A(x)], "hardtanh_": [A(x)],
    "leaky_relu_": [A(x)], "threshold_": [A(x, 0.5, 0.0)],
    "bitwise_not": [A(ii)], "bitwise_and": [A(ii, ii)], "bitwise_or": [A(ii, ii)], "bitwise_xor": [A(ii, ii)],
    "threshold": [A(x, 0.5, 0.0)],
    "clamp": [A(x, 0.2, 0.8), A(x, 0.2), A(x, None, 0.8), A(x, -1.0, 2.0)], "clip": [A(x, 0.2, 0.8)],
    "clamp_min": [A(x, 0.2)], "clamp_max": [A(x, 0.8)],
    # elementwise, two or three inputs
    **{name: [A(x, y), A(x, 2.0), A(x, 1.0), A(x, 0.0)] for name in (
        "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide", "floor_divide", "fmod",
        "remainder", "pow", "maximum", "minimum", "fmax", "fmin", "atan2", "arctan2", "hypot", "logaddexp",
        "xlogy", "eq", "ne", "not_equal", "lt", "less", "le", "less_equal", "gt", "greater", "ge",
        "greater_equal", "logical_and", "logical_or", "logical_xor")},
    "maximum": [A(x, y)], "minimum": [A(x, y)], "fmax": [A(x, y)], "fmin": [A(x, y)], "hypot": [A(x, y)],
    "logaddexp": [A(x, y)], "atan2": [A(x, y)], "arctan2": [A(x, y)],
    "logical_and": [A(x, y)], "logical_or": [A(x, y)], "logical_xor": [A(x, y)],
    "lerp": [A(x, y, 0.5), A(x, y, z)], "addcmul": [A(x, y, z)], "addcdiv": [A(x, y, z)],
    "isclose": [A(x, y)], "allclose": [A(x, y)],
    "where": [A(mask, x, y), A(mask, x, 0.0)],
    "masked_fill": [A(x, mask, 0.0)], "masked_select": [A(x, mask)],
    "prelu": [A(x, In("one"))],
    # reductions
    **{name: [A(x), A(x, 1)] for name in (
        "sum", "mean", "prod", "amax", "amin", "argmax", "argmin", "logsumexp", "nansum", "nanmean", "std",
        "var", "median", "max", "min", "all", "any", "count_nonzero", "cumsum", "cumprod", "norm",
        "std_mean", "var_mean", "softmax", "log_softmax", "softmin", "aminmax", "argsort", "sort",
        "unique", "glu")},
    "sum": [A(x), A(x, ()), A(x, 1), A(x, dim=1, keepdim=True)], "mean": [A(x), A(x, 1)],
    "amax": [A(x, 1), A(x, ())], "amin": [A(x, 1)], "logsumexp": [A(x, 1)],
    "cumsum": [A(x, 1)], "cumprod": [A(x, 1)], "softmax": [A(x, 1)], "log_softmax": [A(x, 1)],
    "softmin": [A(x, 1)], "prod": [A(x), A(x, 1)], "aminmax": [A(x), A(x, dim=1)],
    "argsort": [A(x, 1), A(sv)], "sort": [A(x, 1), A(sv)], "unique": [A(x), A(nv)],
    "all": [A(mask), A(mask, 1)], "any": [A(mask), A(mask, 1)], "count_nonzero": [A(mask), A(mask, 1)],
    "logsumexp_": [], "glu": [A(x, 1)],
    "topk": [A(x, 2), A(v, 4)], "dist": [A(x, y)], "trace": [A(s)], "histc": [A(x, 4)],
    "bincount": [A(nv)], "nonzero": [A(mask)], "argwhere": [A(mask)],
    "searchsorted": [A(sv, x)], "bucketize": [A(x, sv)],
    # products
    "matmul": [A(x, m), A(v, v)], "mm": [A(x, m)], "bmm": [A(b3, b4)], "mv": [A(x, v)], "dot": [A(v, v)],
    "vdot": [A(v, v)], "outer": [A(v, w)], "ger": [A(v, w)], "kron": [A(s, s)],
    "addmm": [A(In("x2"), x, m)], "addmv": [A(w, x, v)], "baddbmm": [A(In("b32"), b3, b4)],
    "einsum": [A("ij->ij", x), A("ij,jk->ik", x, m), A("ij->ji", x)], "tensordot": [A(x, m, 1)],
    "cartesian_prod": [A(v, w)], "block_diag": [A(x, s), A(x)],
    # shaping, views
    "reshape": [A(x, (4, 3)), A(x, (3, 4)), A(x, (-1,))], "flatten": [A(x), A(v), A(b3, 1), A(x, 1, 1), A(x0)],
    "unflatten": [A(v, 0, (2, 2))], "squeeze": [A(x), A(In("col")), A(In("col"), 1), A(x, 0)],
    "unsqueeze": [A(x, 0)], "permute": [A(x, (1, 0)), A(x, (0, 1))],
    "transpose": [A(x, 0, 1), A(x, 0, 0)], "swapaxes": [A(x, 0, 1), A(x, 1, 1)], "swapdims": [A(x, 0, 1)],
    "movedim": [A(x, 0, 1), A(x, 0, 0)], "moveaxis": [A(x, 0, 1), A(x, 1, 1)],
    "narrow": [A(x, 1, 0, 2), A(x, 1, 0, 4)], "diagonal": [A(s)], "diag": [A(s), A(w)], "diag_embed": [A(w)],
    "broadcast_to": [A(v, (3, 4)), A(x, (3, 4))], "atleast_1d": [A(x0), A(x)], "atleast_2d": [A(v), A(x)],
    "atleast_3d": [A(x), A(b3)], "chunk": [A(x, 2, 1), A(x, 1)], "split": [A(x, 2, 1), A(x, 4, 1)],
    "tensor_split": [A(x, 2, 1)], "unbind": [A(x)], "hsplit": [A(x, 2)], "vsplit": [A(In("x4"), 2)],
    "dsplit": [A(b3, 2)], "flip": [A(x, (0,)), A(x, ())], "fliplr": [A(x)], "flipud": [A(x)],
    "roll": [A(x, 0), A(x, 0, 1), A(x, 1, 1), A(x, 4, 1), A(s, 3, 1)], "rot90": [A(x), A(x, 0), A(x, 4)],
    "tile": [A(x, (1, 1)), A(x, (2,))], "tril": [A(x)], "triu": [A(x)],
    "cat": [A([x, y]), A([x])], "concat": [A([x, y])], "concatenate": [A([x])], "stack": [A([x, y]), A([x])],
    "hstack": [A([x, y]), A([x])], "vstack": [A([x, y]), A([x])], "row_stack": [A([x])],
    "column_stack": [A([x]), A([v])], "dstack": [A([x])],
    "meshgrid": [A(v, w, indexing="ij"), A(v, indexing="ij")],
    # indexing, scatters
    "gather": [A(x, 1, ix)], "take": [A(x, nv)], "take_along_dim": [A(x, ix, 1)],
    "index_select": [A(x, 1, iv)], "index_add": [A(x, 0, iv, In("x2r"))], "index_copy": [A(x, 0, iv, In("x2r"))],
    "index_fill": [A(x, 1, iv, 0.0)], "scatter": [A(x, 1, ix, In("x32"))], "scatter_add": [A(x, 1, ix, In("x32"))],
    # statistics, misc
    "cosine_similarity": [A(x, y)], "pairwise_distance": [A(x, y)], "cumsum_": [],
    "numel": [A(x)],
    # creation
    "as_tensor": [A(x), A(x, dtype=zero.float32)], "tensor": [A([1.0, 2.0]), A(x)], "clone_": [],
    "zeros_like": [A(x)], "ones_like": [A(x)], "empty_like": [A(x)], "full_like": [A(x, 2.0)],
    "rand_like": [A(x)], "randn_like": [A(x)],
    "zeros": [A(2, 3)], "ones": [A(2, 3)], "empty": [A(2, 3)], "full": [A((2, 3), 1.0)], "eye": [A(3)],
    "arange": [A(5)], "linspace": [A(0.0, 1.0, 5)], "rand": [A(2, 3)], "randn": [A(2, 3)],
    "randint": [A(0, 5, (3,))], "randperm": [A(5)], "multinomial": [A(v, 2)],
    "tril_indices": [A(3, 3)], "triu_indices": [A(3, 3)],
    # nn.functional
    "dropout": [A(x, 0.5, False), A(x, 0.0), A(x, 0.5)], "alpha_dropout": [A(x, 0.5, False), A(x, 0.5, True)],
    "feature_alpha_dropout": [A(x, 0.5, False)], "dropout1d": [A(sig, 0.5, False)],
    "dropout2d": [A(img, 0.5, False), A(img, 0.5)], "dropout3d": [A(vol, 0.5, False)],
    "linear": [A(x, In("lw")), A(x, In("lw"), w)], "bilinear": [A(x, x, In("bw"))],
    "layer_norm": [A(x, (4,))], "rms_norm": [A(x, (4,))], "group_norm": [A(img, 1)], "instance_norm": [A(img)],
    "batch_norm": [A(x, In("rm"), In("rv"))], "local_response_norm": [A(img, 2)], "normalize": [A(x)],
    "conv1d": [A(sig, wconv1)], "conv2d": [A(img, wconv2)], "conv3d": [A(vol, wconv3)],
    "conv_transpose1d": [A(In("sig3"), wconv1)], "conv_transpose2d": [A(In("img3"), wconv2)],
    "conv_transpose3d": [A(In("vol3"), wconv3)],
    "avg_pool1d": [A(sig, 2), A(sig, 1)], "avg_pool2d": [A(img, 2), A(img, 1)], "avg_pool3d": [A(vol, 2), A(vol, 1)],
    "max_pool1d": [A(sig, 2), A(sig, 1)], "max_pool2d": [A(img, 2), A(img, 1)], "max_pool3d": [A(vol, 2)],
    "adaptive_avg_pool1d": [A(sig, 3), A(sig, 6)], "adaptive_avg_pool2d": [A(img, 2), A(img, 4)],
    "adaptive_avg_pool3d": [A(vol, 2), A(vol, 4)], "adaptive_max_pool1d": [A(sig, 3), A(sig, 6)],
    "adaptive_max_pool2d": [A(img, 2), A(img, 4)],
    "max_unpool1d": [A(In("pooled1"), In("pooled1_i"), 2)], "max_unpool2d": [A(In("pooled2"), In("pooled2_i"), 2)],
    "pad": [A(x, (1, 1)), A(x, (0, 0)), A(sig, (0, 0), mode="reflect"), A(sig, (1, 1), mode="replicate"),
            A(sig, (0, 0), mode="circular"), A(img, (0, 0, 0, 0), mode="replicate"), A(sig, (1, 1), mode="reflect")],
    "interpolate": [A(img, scale_factor=2.0), A(img, size=(4, 4)), A(img, size=(4, 4), mode="bilinear")],
    "upsample": [A(img, scale_factor=2.0), A(img, size=(4, 4))], "upsample_nearest": [A(img, size=(4, 4))],
    "upsample_bilinear": [A(img, size=(4, 4))],
    "pixel_shuffle": [A(img, 1)], "pixel_unshuffle": [A(img, 1)],
    "unfold": [A(img, 2)], "fold": [A(In("cols"), (4, 4), 2)],
    "embedding": [A(lab, In("x4"))], "embedding_bag": [A(ix, In("x4"))], "one_hot": [A(lab, 4)],
    "scaled_dot_product_attention": [A(b3, b3, b3)],
    # losses
    **{name: [A(x, y), A(x, y, reduction="none")] for name in (
        "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
        "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss")},
    "soft_margin_loss": [A(x, pos)], "multilabel_soft_margin_loss": [A(x, In("mask_f"))],
    "cross_entropy": [A(x, lab), A(x, lab, reduction="none")], "nll_loss": [A(x, lab)],
    "multi_margin_loss": [A(x, lab)], "gaussian_nll_loss": [A(x, y, z)],
    "hinge_embedding_loss": [A(x, pos)], "margin_ranking_loss": [A(v, v, In("sign4"))],
    "cosine_embedding_loss": [A(x, y, In("sign3"))], "triplet_margin_loss": [A(x, y, z)],
}
# No-op cases: a reduction, scan or sort over a dimension of size 1, all-or-nothing masks, a
# selection of everything -- new memory in PyTorch (views only where the op is a view).
col = In("col")
for _name, _more in {
    "sum": [A(col, 1), A(col, 1, keepdim=True)], "mean": [A(col, 1, keepdim=True)], "prod": [A(col, 1)],
    "amax": [A(col, 1, keepdim=True)], "amin": [A(col, 1)], "max": [A(col, 1), A(x0)], "min": [A(col, 1)],
    "logsumexp": [A(col, 1)], "cumsum": [A(col, 1), A(x0, 0)], "cumprod": [A(col, 1)], "sort": [A(col, 1)],
    "argsort": [A(col, 1)], "topk": [A(col, 1)], "median": [A(col, 1)], "nansum": [A(col, 1)],
    "nanmean": [A(col, 1)], "softmax": [A(col, 0)], "norm": [A(col, 2, 1)], "std": [A(col, 0)],
    "var": [A(col, 0)], "masked_fill": [A(x, In("none"), 0.0)], "where": [A(In("every"), x, y)],
    "index_select": [A(x, 0, In("all3"))], "gather": [A(col, 1, In("zeros31"))], "take": [A(v, In("all4"))],
    "masked_select": [A(x, In("every"))], "nan_to_num": [A(x, 0.0)], "clamp": [A(x, -5.0, 5.0)],
    "tril": [A(In("lower"))], "triu": [A(s, -5)], "diag_embed": [A(In("w1"))],
    "roll": [A(In("w1"), 1)], "fliplr": [A(col)], "flipud": [A(In("row"))], "unique": [A(sv)],
    "flip": [A(In("w1"), (0,))],
    "broadcast_to": [A(x, (1, 3, 4))], "cat": [A([x, In("empty4")])], "lerp": [A(x, y, 0.0)],
    "where_": [],
}.items():
    FUNCS.setdefault(_name, []).extend(_more)
for _name, _more in {
    "reshape": [A(In("xt"), (12,)), A(In("xt"), (4, 3)), A(In("xt"), (2, 2, 3))], "clone": [A(In("xt"))],
    "squeeze": [A(x0)], "unsqueeze": [A(x0, 0)], "atleast_2d": [A(x0)], "unflatten": [A(x, 1, (4,))],
    "as_tensor": [A(x, dtype=zero.float64)], "sum": [A(x, 1, dtype=zero.float64)],
    "softmax": [A(x, 1, dtype=zero.float64)], "max": [A(x, y)], "min": [A(x, y)],
    "interpolate": [A(img, scale_factor=1.0)], "expand": [A(x, -1, -1)], "movedim": [A(b3, (0, 1), (1, 0))],
    "permute": [A(b3, (2, 0, 1))], "chunk": [A(x, 3, 1)], "tensor_split": [A(x, 1)], "narrow": [A(x, 0, 1, 1)],
    "diagonal": [A(s, 1)], "select": [], "split": [A(x, [1, 3], 1)],
    "where_": [],
}.items():
    FUNCS.setdefault(_name, []).extend(_more)
for _empty in ("logsumexp_", "cumsum_", "clone_", "where_", "select"):
    del FUNCS[_empty]

# More recipes for ``zero.nn.functional`` alone (the in-place forms: the input itself).
FUNCTIONAL: dict[str, list[A]] = {
    "relu": [A(x, inplace=True)], "threshold": [A(x, 0.5, 0.0, True)], "hardtanh": [A(x, inplace=True)],
    "leaky_relu": [A(x, 0.01, True)], "elu": [A(x, inplace=True)], "dropout": [A(x, 0.5, True, True)],
    "selu": [A(x, inplace=True)], "celu": [A(x, inplace=True)], "relu6": [A(x, inplace=True)],
    "silu": [A(x, inplace=True)], "mish": [A(x, inplace=True)],
    "hardswish": [A(x, inplace=True)], "hardsigmoid": [A(x, inplace=True)],
    "alpha_dropout": [A(x, 0.5, True, True), A(x, 0.0, True)], "dropout2d": [A(img, 0.5, True, True)],
    "dropout1d": [A(sig, 0.0, True)], "dropout3d": [A(vol, 0.0, True)], "feature_alpha_dropout": [A(img, 0.0, True)],
    "rrelu": [A(x, training=True), A(x, 0.1, 0.3, False, True)],
}

# The recipes of ``zero.``'s functions where torch's top-level function takes other arguments than
# its nn.functional form (the reduction as an int).
TOP: dict[str, list[A]] = {
    "binary_cross_entropy_with_logits": [A(x, y)], "kl_div": [A(x, y)],
    "abs": [A(x), A(u8)], "absolute": [A(x), A(u8)],
    **{name: [A(x), A(ii)] for name in ("floor", "ceil", "round", "trunc", "fix", "positive", "nan_to_num",
                                        "sgn", "clone")},
    "sign": [A(x), A(mask)], "clamp": [A(x, 0.2, 0.8), A(x, 0.2), A(x, None, 0.8), A(x, -1.0, 2.0), A(ii, 0, 9)],
}

# Zero's recipes where PyTorch's Tensor method takes other arguments than its function.
METHODS: dict[str, list[A]] = {
    "contiguous": [A(x), A(In("xt"))],
    "to": [A(x, zero.float32), A(x, zero.float64), A(x, "cpu"), A(x, zero.float32, copy=True), A(x, y), A(x, ii),
           A(x, "cpu", zero.float32), A(x, dtype=zero.float32), A(x, device="cpu"), A(In("xt"), zero.float32),
           A(x, "cpu", copy=True)],
    "float": [A(x), A(ii)], "double": [A(x), A(ii)], "half": [A(x)], "bfloat16": [A(x)], "int": [A(x)], "long": [A(ii)],
    "bool": [A(mask), A(x)], "cpu": [A(x)], "type_as": [A(x, y), A(x, ii)], "detach": [A(x)],
    "expand": [A(v, 3, 4), A(x, 3, 4), A(x, -1, -1), A(x, (3, 4))], "expand_as": [A(v, x)],
    "view": [A(x, 4, 3), A(x, 3, 4), A(x, zero.int32), A(x, zero.float32)],
    "view_as": [A(x, y)], "reshape_as": [A(x, y)], "repeat": [A(x, 1, 1), A(x, 2, 1), A(x, 1, 1, 1), A(x, (1, 1))],
    "new_empty": [A(x, (2,))], "new_full": [A(x, (2,), 1.0)], "new_ones": [A(x, (2,))],
    "new_zeros": [A(x, (2,))], "new_tensor": [A(x, [1.0])],
    "fill_": [A(x, 1.0)], "zero_": [A(x)], "copy_": [A(x, y)], "normal_": [A(x)], "uniform_": [A(x)],
    "requires_grad_": [A(x)],
    "add_": [A(x, 0.0), A(x, y)], "mul_": [A(x, 1.0)], "detach_": [A(x)],
    "flip": [A(x, 0), A(x, ())], "roll": [A(x, 0), A(x, 4, 1)],
    "permute": [A(x, 1, 0), A(x, 0, 1)], "tile": [A(x, 1, 1), A(x, (1,))], "where": [A(x, mask, y)],
    "masked_fill_": [A(x, mask, 0.0)], "clamp_": [A(x, 0.2, 0.8)], "squeeze": [A(x), A(In("col"), 1)],
    "index_add_": [A(x, 0, iv, In("x2r"))], "index_copy_": [A(x, 0, iv, In("x2r"))],
    "index_fill_": [A(x, 1, iv, 0.0)], "scatter_": [A(x, 1, ix, In("x32"))],
    "scatter_add_": [A(x, 1, ix, In("x32"))], "lerp_": [A(x, y, 0.5)],
    "bitwise_not": [A(ii)], "multinomial": [A(v, 2)], "bincount": [A(nv)], "reshape": [A(x, 4, 3), A(x, 3, 4)],
    "softmax": [A(x, 1)], "log_softmax": [A(x, 1)], "where_": [],
}
del METHODS["where_"]

# Tensor's operators (called as methods) and the properties that give a tensor.
DUNDERS: dict[str, list[A]] = {
    "__getitem__": [A(x, 0), A(x, (slice(None),)), A(x, Ellipsis), A(x, None), A(x, (0, 1)), A(x, iv),
                    A(x, mask), A(x, (slice(None), iv)), A(x, [0, 1]), A(x, (Ellipsis, None))],
    **{name: [A(x, y), A(x, 1.0), A(x, 0.0)] for name in (
        "__add__", "__sub__", "__mul__", "__truediv__", "__floordiv__", "__mod__", "__pow__", "__radd__",
        "__rsub__", "__rmul__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__", "__iadd__", "__isub__",
        "__imul__", "__itruediv__", "__ifloordiv__", "__imod__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__",
        "__ge__")},
    **{name: [A(ii, ii), A(ii, 0)] for name in ("__and__", "__or__", "__xor__", "__rand__", "__ror__", "__rxor__")},
    "__abs__": [A(x)], "__neg__": [A(x)], "__pos__": [A(x)], "__invert__": [A(mask)], "__matmul__": [A(x, m)],
    "__rmatmul__": [A(m, x)], "__iter__": [A(x)], "__deepcopy__": [A(x, {})],
}
PROPERTIES: dict[str, list[A]] = {"T": [A(x), A(v)], "mT": [A(x)], "data": [A(x)]}

# Public names not called by a recipe, with the reason.
NOT_CALLED = {
    "get_default_dtype": "no tensor result", "set_default_dtype": "changes global state, no tensor result",
    "get_float32_matmul_precision": "no tensor result", "set_float32_matmul_precision": "global state",
    "get_num_threads": "no tensor result", "set_num_threads": "global state", "get_printoptions": "no tensor",
    "set_printoptions": "global state", "get_rng_state": "a new state tensor, not from an input",
    "set_rng_state": "global state", "initial_seed": "no tensor result", "manual_seed": "global state",
    "seed": "global state", "is_grad_enabled": "no tensor result", "is_tensor": "no tensor result",
    "promote_types": "dtypes", "result_type": "a dtype", "save": "writes a file", "load": "reads a file",
    "from_numpy": "takes a NumPy array (test_numpy_arrays_shared_as_in_pytorch)",
    "on_first_use": "Zero's hook registry",
    "describe": "a string", "nelement": "an int (torch has it only as a method)",
    "ffn": "Zero's fused block (no PyTorch counterpart)",
    "self_attention": "Zero's fused block (no PyTorch counterpart)",
    "linear_cross_entropy": "Zero's fused loss (no PyTorch counterpart)",
    # Tensor methods
    "backward": "autograd, no result", "register_hook": "autograd hook", "retain_grad": "autograd",
    "register_post_accumulate_grad_hook": "autograd hook", "cuda": "needs a GPU", "data_ptr": "an int",
    "dim": "an int", "element_size": "an int", "is_contiguous": "a bool", "is_floating_point": "a bool",
    "item": "a number", "size": "a tuple", "storage_offset": "an int", "stride": "a tuple", "tolist": "a list",
    "__array__": "an array", "__bool__": "a bool", "__float__": "a float", "__index__": "an int",
    "__int__": "an int", "__len__": "an int", "__setitem__": "no result (writes; see test_setitem_writes_in_place)",
    "untyped_storage": "the storage (tested in test_numpy_shares)", "numpy": "an array (test_numpy_shares)",
}
# Recipes for names issue 37's other parts add (PyTorch's signatures); they run once the name is
# in Zero's namespace.
FUNCS.update({
    "diff": [A(x), A(x, 1, 1)], "cummax": [A(x, 1), A(col, 1)], "cummin": [A(x, 1)], "logcumsumexp": [A(x, 1)],
    "repeat_interleave": [A(x, 2), A(x, 1), A(x, 1, 0)], "broadcast_tensors": [A(x, v), A(x)],
    "quantile": [A(v, 0.5)], "nanquantile": [A(v, 0.5)], "kthvalue": [A(x, 1, 1), A(col, 1, 1)],
    "mode": [A(x, 1), A(col, 1)], "nanmedian": [A(x), A(col, 1)], "lgamma": [A(x)], "digamma": [A(x)],
    "bernoulli": [A(x)], "normal": [A(x, 1.0), A(0.0, 1.0, (3,))], "randint_like": [A(x, 5)],
    "logspace": [A(0.0, 1.0, 5)], "cross": [A(In("x3"), In("y3"), dim=1)], "cdist": [A(x, y)],
    "combinations": [A(v), A(v, 1)], "masked_scatter": [A(x, mask, y)],
    "scatter_reduce": [A(x, 1, ix, In("x32"), "sum"), A(x, 1, ix, In("x32"), "amax")],
    "copysign": [A(x, y), A(x, 1.0)], "bitwise_left_shift": [A(ii, 1), A(ii, 0)],
    "bitwise_right_shift": [A(ii, 1), A(ii, 0)], "square_": [], "sparse_coo_tensor": [],
    **{name: [A([1.0, 2.0]), A(2, 3)] for name in (
        "FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor")},
    **{name: [A([1, 2]), A(2, 3)] for name in (
        "LongTensor", "IntTensor", "ShortTensor", "ByteTensor", "CharTensor", "BoolTensor")},
})
del FUNCS["square_"], FUNCS["sparse_coo_tensor"]
sq, spd, sig3, img3, vol3 = In("sq"), In("spd"), In("sig3"), In("img3"), In("vol3")
LINEAR_ALGEBRA = {  # (the square matrices are invertible; spd is symmetric positive definite)
    "det": [A(sq)], "logdet": [A(spd)], "slogdet": [A(sq)], "inverse": [A(sq)], "pinverse": [A(x)],
    "matrix_power": [A(sq, 2), A(sq, 1), A(sq, 0), A(sq, -1)], "cholesky": [A(spd)], "qr": [A(x)],
    "svd": [A(x)], "matrix_exp": [A(sq)],
}
FUNCS.update(LINEAR_ALGEBRA)
FUNCS.update({
    "channel_shuffle": [A(img3, 3), A(img3, 1)], "native_channel_shuffle": [A(img3, 3), A(img3, 1)],
    "gumbel_softmax": [A(x), A(x, hard=True)], "lp_pool1d": [A(sig3, 2, 2)], "lp_pool2d": [A(img3, 2, 2)],
    "lp_pool3d": [A(vol3, 2, 2)], "pdist": [A(x)], "triplet_margin_with_distance_loss": [A(x, y, z)],
    "max_pool1d_with_indices": [A(sig3, 2)], "max_pool2d_with_indices": [A(img3, 2)],
    "max_pool3d_with_indices": [A(vol3, 2)], "adaptive_max_pool1d_with_indices": [A(sig3, 2)],
    "adaptive_max_pool2d_with_indices": [A(img3, 2)],
})
METHODS.update(LINEAR_ALGEBRA)
METHODS.update({  # parity2: the other integer dtypes (new memory, or the tensor itself when it has the dtype)
    "byte": [A(ii), A(u8)], "char": [A(ii), A(x)], "short": [A(ii), A(x)],
})
METHODS.update({
    "type": [A(x, zero.float32), A(x, zero.float64)],
    "unfold": [A(x, 1, 2, 1), A(x, 0, 3, 1)], "bernoulli_": [A(x, 0.5)],
    "new_zeros": [A(x, (2,)), A(x, 2, 3)],
    "masked_scatter_": [A(x, mask, y)], "scatter_reduce_": [A(x, 1, ix, In("x32"), "sum")],
    "copysign_": [A(x, y)], "__lshift__": [A(ii, 1)], "__rshift__": [A(ii, 1)],
    "__ilshift__": [A(ii, 1)], "__irshift__": [A(ii, 1)], "__rlshift__": [A(ii, 1)], "__rrshift__": [A(ii, 1)],
})
NOT_CALLED.update({
    "equal": "a bool", "broadcast_shapes": "a shape", "is_nonzero": "a bool", "is_floating_point": "a bool",
    "is_complex": "a bool", "Size": "a shape", "typename": "a string", "to_sparse": "a sparse tensor",
    "to_dense": "of a sparse tensor", "coalesce": "of a sparse tensor", "sparse_coo_tensor": "a sparse tensor",
})
# sparse COO tensors (issue 37: zero/sparse/): spmm of dense operands is mm; the rest take or give sparse tensors
FUNCS.update({"spmm": [A(x, m)]})
NOT_CALLED.update({
    "hspmm": "takes a sparse tensor (tests/sparse)", "smm": "takes a sparse tensor (tests/sparse)",
    "sparse_mask": "takes a sparse mask (tests/sparse)",
    "to_sparse_coo": "a sparse tensor (tests/sparse)", "sparse_dim": "an int", "dense_dim": "an int",
})

# -- issue 37 (torchnames): the top-level in-place forms, the in-place twins, fill, constants --
FUNCS.update({
    **{name + "_": [A(x)] for name in (
        "abs", "acos", "arccos", "asin", "arcsin", "asinh", "arcsinh", "atan", "arctan", "atanh", "arctanh",
        "ceil", "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1", "fix", "floor", "frac", "log", "log10",
        "log1p", "log2", "nan_to_num", "neg", "negative", "reciprocal", "round", "rsqrt", "sigmoid", "sin", "sinh",
        "sqrt", "square", "tan", "tanh", "trunc", "zero", "detach")},
    "acosh_": [A(In("x_above_1"))], "arccosh_": [A(In("x_above_1"))],
    "clamp_": [A(x, 0.2, 0.8)], "clip_": [A(x, 0.2, 0.8)], "clamp_min_": [A(x, 0.2)], "clamp_max_": [A(x, 0.8)],
    "xlogy_": [A(x, y)], "fill_": [A(x, 2.0)],
    "fill": [A(x, 2.0), A(x, In("x0"))], "detach": [A(x)],
    "deg2rad_": [A(x)], "rad2deg_": [A(x)], "sinc_": [A(x)], "logit_": [A(x)], "i0_": [A(x)], "ldexp_": [A(x, y)],
    "gcd_": [A(ii, ii)], "lcm_": [A(ii, ii)],
})
METHODS.update({
    **{name: [A(x, y), A(x, 0.5)] for name in (
        "eq_", "ne_", "not_equal_", "lt_", "less_", "le_", "less_equal_", "gt_", "greater_", "ge_",
        "greater_equal_")},
    "logical_and_": [A(x, y)], "logical_or_": [A(x, y)], "logical_xor_": [A(x, y)], "logical_not_": [A(x)],
    "bitwise_and_": [A(ii, ii)], "bitwise_or_": [A(ii, 1)], "bitwise_xor_": [A(ii, ii)],
    "bitwise_not_": [A(ii)], "pow_": [A(x, 2.0), A(x, 1.0)], "cumsum_": [A(x, 1)], "tril_": [A(x)],
    "triu_": [A(x, 1)], "t_": [A(x)], "transpose_": [A(x, 0, 1)], "swapaxes_": [A(x, 0, 1)],
    "swapdims_": [A(x, 1, 0)], "squeeze_": [A(In("col")), A(In("col"), 1)], "unsqueeze_": [A(x, 0)],
})
DUNDERS.update({
    "__iand__": [A(ii, ii)], "__ior__": [A(ii, 1)], "__ixor__": [A(ii, ii)], "__ipow__": [A(x, 2.0)],
})
# nn.functional's ops at torch's level (nn/torch_level.py): torch's signatures where they differ from F's
TOP.update({
    **{name: [A(x, 0.5, False), A(x, 0.0, True), A(x, 0.5, True)] for name in (
        "dropout", "alpha_dropout", "dropout_", "alpha_dropout_")},
    **{name: [A(img, 0.5, False), A(img, 0.0, True), A(img, 0.5, True)] for name in (
        "feature_dropout", "feature_alpha_dropout", "feature_dropout_", "feature_alpha_dropout_")},
    "batch_norm": [A(img, None, None, In("rm2"), In("rv2"), False, 0.1, 1e-5, True),
                   A(img, None, None, None, None, True, 0.1, 1e-5, True)],
    "instance_norm": [A(img, None, None, None, None, True, 0.1, 1e-5, True)],
    "embedding": [A(In("x4"), lab), A(In("x4"), lab, 1)],
    "constant_pad_nd": [A(x, [1, 1]), A(x, [0, 0]), A(x, [-1, 0])],
    "native_layer_norm": [A(x, [4], None, None, 1e-5)],
    "native_batch_norm": [A(img, None, None, None, None, True, 0.1, 1e-5)],
    "native_group_norm": [A(img, None, None, 1, 2, 16, 2, 1e-5)],
    "native_dropout": [A(x, 0.5, True), A(x, 0.5, False)],
    "rnn_tanh_cell": [A(x, In("x3r"), In("sq2"), In("sq2"))], "rnn_relu_cell": [A(x, In("x3r"), In("sq2"), In("sq2"))],
    "gru_cell": [A(x, In("x3r"), In("gw"), In("sq3"))],
    "lstm_cell": [A(x, (In("x3r"), In("x3r")), In("lw2"), In("sq4"))],
    "rnn_tanh": [A(b3, In("h3"), [In("sq2"), In("sq2")], False, 1, 0.0, False, False, False)],
    "rnn_relu": [A(b3, In("h3"), [In("sq2"), In("sq2")], False, 1, 0.0, True, False, False)],
    "gru": [A(b3, In("h3"), [In("gw"), In("sq3")], False, 1, 0.0, False, False, False)],
    "lstm": [A(b3, (In("h3"), In("h3")), [In("lw2"), In("sq4")], False, 1, 0.0, False, False, False)],
    "conv_tbc": [A(In("tbc"), wconv1, In("w1c3"))], "embedding_renorm_": [A(x, iv, 0.5, 2.0)],
    "convolution": [A(sig, wconv1, None, [1], [0], [1], False, [0], 1),
                    A(sig3, wconv1, None, [1], [0], [1], True, [0], 1)],
})

# view copies, views by other names, questions (ops/view_copies.py), factories (tensors/more_creation.py)
FUNCS.update({
    "alias_copy": [A(x)], "detach_copy": [A(x)], "diagonal_copy": [A(s), A(b3, 0, 1, 2)],
    "expand_copy": [A(v, (3, 4)), A(x, (3, 4))], "narrow_copy": [A(x, 1, 0, 4), A(x, 0, 1, 1)],
    "permute_copy": [A(x, (1, 0)), A(x, (0, 1))], "select_copy": [A(x, 0, 1)],
    "slice_copy": [A(x), A(x, 1, 1, 3)], "split_copy": [A(x, 2), A(x, 3)],
    "split_with_sizes_copy": [A(x, [1, 2]), A(x, [3])], "squeeze_copy": [A(x), A(In("col"))],
    "t_copy": [A(x)], "transpose_copy": [A(x, 0, 1), A(x, 1, 1)], "unbind_copy": [A(x)],
    "unfold_copy": [A(x, 1, 2, 1)], "unsqueeze_copy": [A(x, 0)], "view_copy": [A(x, (4, 3)), A(x, (3, 4))],
    "select": [A(x, 0, 1), A(x, 1, -1)], "split_with_sizes": [A(x, [1, 2]), A(x, [3])],
    "unsafe_split": [A(x, 2), A(x, 3)], "unsafe_split_with_sizes": [A(x, [1, 2])], "unsafe_chunk": [A(x, 2)],
    "ravel": [A(x), A(In("xt"))], "conj": [A(x)], "conj_physical": [A(x)], "resolve_conj": [A(x)],
    "resolve_neg": [A(x)], "sum_to_size": [A(x, 3, 4), A(x, 1, 4), A(b3, 4)],
    "scalar_tensor": [A(2.0), A(3)], "range": [A(0, 3), A(0.0, 1.0, 0.25)],
    "empty_strided": [A((2, 3), (1, 2))], "empty_permuted": [A((2, 3), (1, 0))],
    "asarray": [A(x), A(x, copy=True), A(x, dtype=zero.float64), A([1.0, 2.0])],
})
FUNCS.update({"resize_as_": [A(x, y), A(x, In("x2"))]})
METHODS.update({"resize_": [A(x, 3, 4), A(x, 2, 2)], "resize": [A(x, 4, 3), A(In("xt"), 12)],
                "resize_as": [A(x, In("x4"))]})
METHODS.update({"apply_": [A(x, abs)], "map_": [A(x, y, max)], "map2_": [A(x, y, z, min)],
                "new": [A(x, 2, 3), A(x, [1.0, 2.0]), A(x)]})
FUNCS.update({"nonzero_static": [A(mask, size=3)], "conj_physical_": [A(x)]})
NOT_CALLED.update({
    **{name: "plain numbers (zero/symbolic.py)" for name in (
        "sym_float", "sym_int", "sym_ite", "sym_max", "sym_min", "sym_not", "sym_sqrt", "sym_sum")},
    "vmap": "returns a function (test_torch_namespace.py::test_vmap_as_pytorch)", "from_file": "reads a file",
    "set_default_tensor_type": "global state", "cudnn_is_acceptable": "a bool",
})
METHODS.update({"fill_diagonal_": [A(s, 1.0), A(x, 2.0, True)], "set_": [A(x, y)]})
NOT_CALLED.update({"is_pinned": "a bool", "as_subclass": "takes a Tensor subclass, one per library "
                   "(test_torch_namespace.py::test_as_subclass_shares_and_keeps_the_graph)"})
NOT_CALLED.update({"const_data_ptr": "an int", "is_set_to": "a bool", "dim_order": "a tuple",
                   "is_distributed": "a bool"})
NOT_CALLED.update({"is_inference_mode_enabled": "a bool", "is_vulkan_available": "a bool",
                   "set_flush_denormal": "a bool (global state)"})
NOT_CALLED.update({"frombuffer": "takes a buffer (test_torch_views_scatters.py::test_frombuffer_shares_the_buffer)"})
METHODS.update({"new_empty_strided": [A(x, (2, 3), (1, 2))], "sum_to_size": [A(x, 3, 4), A(x, 1, 4)]})
NOT_CALLED.update({
    "is_signed": "a bool", "is_same_size": "a bool", "is_conj": "a bool", "is_neg": "a bool",
    "get_device": "an int", "is_storage": "a bool", "can_cast": "a bool", "ndimension": "an int",
})

# as_strided and the scatters into views (ops/extra/strided_scatters.py)
FUNCS.update({
    "as_strided": [A(x, (2, 2), (1, 4)), A(x, (3, 4), (4, 1), 0)], "as_strided_copy": [A(x, (2, 2), (1, 4))],
    "as_strided_": [A(x, (2, 2), (1, 4))], "as_strided_scatter": [A(x, In("x2r"), (2, 4), (4, 1))],
    "diagonal_scatter": [A(s, w), A(x, w)], "select_scatter": [A(x, v, 0, 1)],
    "slice_scatter": [A(x, y), A(x, In("x2r"), 0, 1)], "index_put": [A(x, (iv,), In("x2r")), A(x, (iv,), x0, True)],
    "index_put_": [A(x, (iv,), In("x2r"))], "put": [A(x, iv, In("w2")), A(x, iv, In("w2"), True)],
    "index_reduce": [A(x, 0, iv, In("x2r"), "amax"), A(x, 1, iv, In("x2"), "prod", include_self=False)],
})
METHODS.update({"put_": [A(x, iv, In("w2"))], "index_put_": [A(x, (iv,), In("x2r"), True)]})
METHODS.update({"random_": [A(x), A(x, 0, 5)], "exponential_": [A(x)], "geometric_": [A(x, 0.5)],
                "log_normal_": [A(x)], "cauchy_": [A(x)]})
# autocast's state functions (issue 38: autocast): global state, no tensor result (tests/amp/test_autocast.py)
NOT_CALLED.update(dict.fromkeys((
    "autocast_decrement_nesting", "autocast_increment_nesting", "clear_autocast_cache", "get_autocast_cpu_dtype",
    "get_autocast_dtype", "get_autocast_gpu_dtype", "is_autocast_cache_enabled", "is_autocast_cpu_enabled",
    "is_autocast_enabled", "set_autocast_cache_enabled", "set_autocast_cpu_dtype", "set_autocast_cpu_enabled",
    "set_autocast_dtype", "set_autocast_enabled", "set_autocast_gpu_dtype"), "autocast's global state"))

TOP_NOT_CALLED = {  # zero.<name> only
    "poisson_nll_loss": "torch.poisson_nll_loss needs (log_input, full, eps, reduction as an int) positionally, "
                        "Zero's takes F.poisson_nll_loss's arguments; F.poisson_nll_loss is checked",
}
ZERO_ONLY_FUNCTIONAL = {"arange"}  # in zero.nn.functional only as Zero's re-export


def _all_arrays() -> dict[str, np.ndarray]:
    arrays = _arrays()
    rng = np.random.default_rng(1)
    f = np.float32
    arrays.update({
        "one": np.array([0.25], f), "x2": rng.uniform(0, 1, (3, 2)).astype(f),
        "b32": rng.uniform(0, 1, (2, 3, 2)).astype(f), "col": rng.uniform(0, 1, (3, 1)).astype(f),
        "x4": rng.uniform(0, 1, (4, 3)).astype(f), "x2r": rng.uniform(0, 1, (2, 4)).astype(f),
        "x32": rng.uniform(0, 1, (3, 2)).astype(f), "lw": rng.uniform(0, 1, (3, 4)).astype(f),
        "bw": rng.uniform(0, 1, (2, 4, 4)).astype(f), "rm": np.zeros(4, f), "rv": np.ones(4, f),
        "sig3": rng.uniform(0, 1, (1, 3, 5)).astype(f), "img3": rng.uniform(0, 1, (1, 3, 3, 3)).astype(f),
        "vol3": rng.uniform(0, 1, (1, 3, 2, 2, 2)).astype(f), "cols": rng.uniform(0, 1, (1, 8, 9)).astype(f),
        "mask_f": arrays["mask"].astype(f), "sign4": np.array([1.0, -1.0, 1.0, -1.0], f),
        "sign3": np.array([1.0, -1.0, 1.0], f), "pooled1": np.array([[[0.5, 0.9, 0.7]]], f),
        "pooled1_i": np.array([[[1, 2, 5]]], np.int64), "pooled2": np.array([[[[0.5, 0.9], [0.1, 0.3]]]], f),
        "pooled2_i": np.array([[[[0, 3], [9, 14]]]], np.int64),
        "x3": rng.uniform(0, 1, (2, 3)).astype(f), "y3": rng.uniform(0, 1, (2, 3)).astype(f),
        "sq": (rng.uniform(0, 1, (3, 3)) + 2 * np.eye(3)).astype(f),
        "spd": (np.eye(3) * 3 + 0.5).astype(f),
        "none": np.zeros((3, 4), bool), "every": np.ones((3, 4), bool), "all3": np.arange(3),
        "all4": np.arange(4), "zeros31": np.zeros((3, 1), np.int64), "lower": np.tril(np.ones((3, 3), f)),
        "w1": np.ones(1, f), "row": np.ones((1, 4), f), "empty4": np.zeros((0, 4), f),
    })
    return arrays


ARRAYS = _all_arrays()
ARRAYS.update({"x_above_1": ARRAYS["x"] + 1.5, "rm2": np.zeros(2, np.float32),  # (issue 37: torchnames)
               "rv2": np.ones(2, np.float32), "w2": np.array([5.0, 6.0], np.float32)})
ARRAYS.update({"sq2": np.ones((4, 4), np.float32) * 0.1, "x3r": np.zeros((3, 4), np.float32),  # (torchnames)
               "gw": np.ones((12, 4), np.float32) * 0.1, "sq3": np.ones((12, 4), np.float32) * 0.1,
               "lw2": np.ones((16, 4), np.float32) * 0.1, "sq4": np.ones((16, 4), np.float32) * 0.1,
               "tbc": np.ones((5, 1, 2), np.float32), "w1c3": np.zeros(3, np.float32),
               "h3": np.zeros((1, 3, 4), np.float32)})


# -- issue 37 (math names): special functions, statistics, windows, old solvers -----------------
ARRAYS.update({"x64": ARRAYS["x"].astype(np.float64), "eye3": np.eye(3, dtype=np.float32),
               "piv3": np.array([1, 2, 3], np.int32)})
x64, eye3, piv3, lower, x2, x4 = In("x64"), In("eye3"), In("piv3"), In("lower"), In("x2"), In("x4")
FUNCS.update({
    **{name: [A(x)] for name in ("deg2rad", "rad2deg", "sinc", "isreal", "msort", "frexp", "cov", "corrcoef",
                                 "adjoint", "nuclear_norm")},
    "logit": [A(x), A(x, 0.2)], "mvlgamma": [A(x, 1)], "polygamma": [A(1, x), A(0, x)],
    "heaviside": [A(x, y)], "logaddexp2": [A(x, y)], "rsub": [A(x, y), A(x, 1.0), A(x, 0.0)],
    "float_power": [A(x, 2.0), A(x, y)], "ldexp": [A(x, y)], "gcd": [A(ii, ii)], "lcm": [A(ii, ii)],
    "isin": [A(ii, iv)], "addbmm": [A(x2, b3, b4)], "addr": [A(x, w, v)], "inner": [A(x, y)],
    "chain_matmul": [A(x, m), A(x)], "cholesky_inverse": [A(lower)], "cholesky_solve": [A(x2, lower)],
    **{name: [A(x), A(x, dim=0), A(col)] for name in ("trapezoid", "trapz", "cumulative_trapezoid")},
    "diagflat": [A(v), A(x)], "frobenius_norm": [A(x, (0, 1))], "norm_except_dim": [A(x, 2, 0), A(x, 2, -1)],
    "histogram": [A(x, 4)], "histogramdd": [A(x, 2), A(b3, [2, 3, 1, 2])],
    "renorm": [A(x, 2, 0, 1.0), A(x, 2, 0, 100.0)], "unique_consecutive": [A(nv), A(x)],
    "unravel_index": [A(nv, (2, 3))], "vander": [A(w), A(w, 1)],
    **{name: [A(5), A(1)] for name in ("bartlett_window", "blackman_window", "hamming_window", "hann_window",
                                       "kaiser_window")},
    "lu": [A(sq)], "lu_solve": [A(x2, eye3, piv3)], "lu_unpack": [A(sq, piv3)], "triangular_solve": [A(x2, sq)],
    "orgqr": [A(x4, w)], "ormqr": [A(x4, w, x4)], "geqrf": [A(x4), A(x), A(b3)],
    "i0": [A(x)], "nextafter": [A(x, y)], "igamma": [A(x, y)], "igammac": [A(x, y)], "poisson": [A(x)],
    "binomial": [A(In("x3"), In("y3"))], "angle": [A(x), A(pos)],
    "gradient": [A(x), A(x, dim=1), A(x, spacing=2.0, edge_order=2), A(v, spacing=(v,))],
})
TOP.update({"addmv_": [A(w, x, v)]})
METHODS.update({"polygamma": [A(x, 1)], "polygamma_": [A(x, 1)], "float_power_": [A(x64, 2.0)]})
PROPERTIES.update({"H": [A(x)], "mH": [A(x), A(b3)]})


def _names_in(value) -> set[str]:
    if isinstance(value, In):
        return {value.name}
    if isinstance(value, (list, tuple)):
        return {n for item in value for n in _names_in(item)}
    if isinstance(value, dict):
        return {n for item in value.values() for n in _names_in(item)}
    return set()


def _lib_inputs(lib, names: set[str]) -> SimpleNamespace:
    """The inputs a recipe names, as ``lib``'s tensors, fresh for every call (``xt``: x.t(), a view)."""
    t = {k: lib.tensor(ARRAYS["x" if k == "xt" else k].copy()) for k in names}
    if "xt" in t:
        t["xt"] = t["xt"].t()
    return SimpleNamespace(**t)


def _resolve(value, inputs):
    if isinstance(value, In):
        return getattr(inputs, value.name)
    if isinstance(value, list):
        return [_resolve(item, inputs) for item in value]
    if isinstance(value, tuple):
        return tuple(_resolve(item, inputs) for item in value)
    return value


def _tensors(result, tensor_type):
    if isinstance(result, tensor_type):
        return [result]
    if isinstance(result, (tuple, list)):
        return [t for item in result for t in _tensors(item, tensor_type)]
    return []


def _torch_shares(out, inp) -> bool:
    return out.untyped_storage().data_ptr() == inp.untyped_storage().data_ptr() and inp.numel() > 0


def _zero_shares(out, inp) -> bool:
    if out._storage is inp._storage:
        return True
    return bool(np.may_share_memory(np.asarray(out._array), np.asarray(inp._array)))


def _convert_dtypes(value, lib):
    """zero's dtypes in a recipe, as ``lib``'s."""
    if isinstance(value, zero.dtype) and lib is torch:
        return getattr(torch, value.name)
    return value


def _run(lib, kind: str, name: str, recipe: A):
    inputs = _lib_inputs(lib, _names_in(list(recipe.args)) | _names_in(recipe.kwargs))
    args = [_convert_dtypes(_resolve(a, inputs), lib) for a in recipe.args]
    kwargs = {k: _convert_dtypes(_resolve(a, inputs), lib) for k, a in recipe.kwargs.items()}
    if kind == "property":
        owner = args[0]
        target, args = (lambda: getattr(owner, name)), []
    elif kind == "method":
        target, args = getattr(args[0], name), args[1:]
    else:
        namespace = {"zero": lib, "functional": lib.nn.functional}[kind]
        target = getattr(namespace, name)
    before = {k: t for k, t in vars(inputs).items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = target(*args, **kwargs)
    if inspect.isgenerator(result) or type(result).__name__.endswith("iterator"):
        result = list(result)
    tensor_type = torch.Tensor if lib is torch else zero.Tensor
    shares = _zero_shares if lib is zero else _torch_shares
    return [
        (sorted(k for k, t in before.items() if shares(out, t)), sorted(k for k, t in before.items() if out is t))
        for out in _tensors(result, tensor_type)
    ]


def _public(namespace) -> list[str]:
    return sorted(n for n in dir(namespace) if not n.startswith("_") and callable(getattr(namespace, n))
                  and not inspect.isclass(getattr(namespace, n)) and not inspect.ismodule(getattr(namespace, n)))


def _method_names() -> list[str]:
    """Tensor's public methods, and the operators it defines (dunders object does not have)."""
    return sorted(n for n in dir(zero.Tensor) if callable(getattr(zero.Tensor, n)) and (
        not n.startswith("_") or (n.startswith("__") and n not in dir(object))))


def _names():
    yield "zero", _public(zero)
    yield "functional", _public(zero_functional)
    yield "method", _method_names()
    yield "property", sorted(PROPERTIES)


def _method_recipes(name: str) -> list[A] | None:
    if name in METHODS:
        return METHODS[name]
    base = name[:-1] if name.endswith("_") and name[:-1] in FUNCS else name
    recipes = FUNCS.get(base)
    if recipes is None:
        return None
    return [r for r in recipes if r.args and isinstance(r.args[0], In)]


def _skipped(kind: str, name: str) -> bool:
    return (name in NOT_CALLED or (kind == "functional" and name in ZERO_ONLY_FUNCTIONAL)
            or (kind == "zero" and name in TOP_NOT_CALLED))


def _recipes(kind: str, name: str) -> list[A] | None:
    if kind == "property":
        return PROPERTIES[name]
    if kind == "method":
        return DUNDERS.get(name) or _method_recipes(name)
    if kind == "zero" and name in TOP:
        return TOP[name]
    if kind == "functional":
        return FUNCS.get(name, []) + FUNCTIONAL.get(name, [])
    return FUNCS.get(name)


def _cases():
    for kind, names in _names():
        for name in names:
            if _skipped(kind, name):
                continue
            recipes = _recipes(kind, name)
            for k, recipe in enumerate(recipes or ()):
                yield pytest.param(kind, name, recipe, id=f"{kind}.{name}-{k}")


def test_every_public_name_has_a_recipe():
    missing = []
    for kind, names in _names():
        for name in names:
            if _skipped(kind, name):
                continue
            recipes = _recipes(kind, name)
            if not recipes:
                missing.append(f"{kind}.{name}")
    assert not missing, ("add a recipe to tests/ops/test_aliasing.py (FUNCS or METHODS), or the name to "
                         f"NOT_CALLED with a reason, for: {', '.join(missing)}")


@pytest.mark.parametrize("kind, name, recipe", list(_cases()))
def test_aliases_as_pytorch(kind, name, recipe):
    _check(kind, name, recipe)


def test_the_check_sees_a_shortcut(monkeypatch):
    """The old shortcut (roll by nothing returned the input) and a copy where PyTorch views both fail."""
    monkeypatch.setattr(zero, "roll", lambda t, shifts, dims=None: t)
    with pytest.raises(AssertionError, match="shares memory with"):
        _check("zero", "roll", A(x, 0))
    monkeypatch.setattr(zero, "transpose", lambda t, d0, d1: t.clone())
    with pytest.raises(AssertionError, match="PyTorch's with"):
        _check("zero", "transpose", A(x, 0, 1))


def _check(kind: str, name: str, recipe: A) -> None:
    want = _run(torch, kind, name, recipe)
    got = _run(zero, kind, name, recipe)
    call = f"{'Tensor.' if kind in ('method', 'property') else kind + '.'}{name}{recipe!r}"
    assert len(got) == len(want), f"{call}: {len(got)} tensors in the result, PyTorch {len(want)}"
    for k, ((got_shared, got_same), (want_shared, want_same)) in enumerate(zip(got, want)):
        assert got_shared == want_shared, (f"{call} result {k}: shares memory with {got_shared or 'no input'}, "
                                           f"PyTorch's with {want_shared or 'no input'}")
        assert got_same == want_same, (f"{call} result {k}: is the input object {got_same or 'no'}, "
                                       f"PyTorch's {want_same or 'no'}")


def test_numpy_shares():
    t = zero.ones(3)
    a = t.numpy()
    a[0] = 5.0
    assert t[0].item() == 5.0  # as torch.Tensor.numpy: the same memory


def test_setitem_writes_in_place():
    t = zero.zeros(3, 4)
    view = t[1]
    t[1, 2] = 5.0
    assert view[2].item() == 5.0


@pytest.mark.parametrize("make, shares", [
    (lambda lib, a: lib.from_numpy(a), True), (lambda lib, a: lib.as_tensor(a), True),
    (lambda lib, a: lib.tensor(a), False), (lambda lib, a: lib.as_tensor(a, dtype=lib.float64), False),
])
def test_numpy_arrays_shared_as_in_pytorch(make, shares):
    for lib in (torch, zero):
        a = np.ones(3, np.float32)
        t = make(lib, a)
        t[0] = 5.0
        assert bool(a[0] == 5.0) is shares, lib.__name__


def test_asarray_of_a_tensor_shares():
    t = zero.ones(3)
    np.asarray(t)[0] = 5.0
    assert t[0].item() == 5.0

