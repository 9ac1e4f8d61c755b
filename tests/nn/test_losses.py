"""PyTorch's losses (ops/extra/losses.py, ops/loss.py, nn/loss.py) against PyTorch: values and
gradients for every reduction in float32 and float64, the edge values (BCE at 0 and 1, huge
logits, zero-size inputs), cross-entropy's class weights and probability targets, the
deprecated size_average/reduce, the modules' arguments and reprs, and the errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import zero
import zero.nn as nn
import zero.nn.functional as F

torch = pytest.importorskip("torch")

REDUCTIONS = ["none", "mean", "sum"]
TOLERANCE = {"float32": dict(rtol=2e-5, atol=2e-6), "float64": dict(rtol=1e-10, atol=1e-12)}


def compare(fn, arrays, differentiable, dtype="float64", **kwargs):
    """fn(library, *tensors) in Zero and in PyTorch: the values, and the gradients of the
    inputs numbered in ``differentiable`` (PyTorch refuses the others' gradients)."""
    tolerance = TOLERANCE[dtype]
    arrays = [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]
    ours = [zero.tensor(a, requires_grad=i in differentiable) for i, a in enumerate(arrays)]
    theirs = [torch.tensor(a, requires_grad=i in differentiable) for i, a in enumerate(arrays)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = fn(zero, *ours, **kwargs), fn(torch, *theirs, **kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), equal_nan=True, **tolerance)
    cotangent = np.random.default_rng(0).uniform(0.5, 1.5, tuple(want.shape)).astype(dtype)
    got.backward(zero.tensor(cotangent))
    want.backward(torch.tensor(cotangent))
    for i in differentiable:
        np.testing.assert_allclose(ours[i].grad.numpy(), theirs[i].grad.numpy(), equal_nan=True,
                                   err_msg=f"gradient of input {i}", **tolerance)


rng = np.random.default_rng(0)
X, Y = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
PROBABILITIES = rng.uniform(0.01, 0.99, (4, 5))
PROBABILITIES[0, :2] = [0.0, 1.0]                           # BCE at the ends: log clamped at -100
BINARY = rng.integers(0, 2, (4, 5)).astype(np.float64)
SIGNS = np.sign(rng.standard_normal((4, 5)))
SIGNS4 = np.array([1.0, -1.0, -1.0, 1.0])
W_ROWS = rng.uniform(0.5, 2, (4, 1))
POS_WEIGHT = np.array([1.0, 2.0, 3.0, 0.5, 1.0])

# name: (function of (library, tensors...), arrays, the inputs PyTorch differentiates)
LOSSES = {
    "bce": (lambda lib, p, y, **k: lib.nn.functional.binary_cross_entropy(p, y, **k), [PROBABILITIES, BINARY], {0, 1}),
    "bce_soft_target": (lambda lib, p, y, **k: lib.nn.functional.binary_cross_entropy(p, y, **k),
                        [PROBABILITIES, PROBABILITIES[::-1].copy()], {0, 1}),
    "bce_weight": (lambda lib, p, y, w, **k: lib.nn.functional.binary_cross_entropy(p, y, w, **k),
                   [PROBABILITIES, BINARY, W_ROWS], {0}),
    "bce_logits": (lambda lib, x, y, **k: lib.nn.functional.binary_cross_entropy_with_logits(x, y, **k),
                   [X * 40, PROBABILITIES], {0, 1}),
    "bce_logits_weights": (lambda lib, x, y, w, pw, **k: lib.nn.functional.binary_cross_entropy_with_logits(
        x, y, w, pos_weight=pw, **k), [X * 40, PROBABILITIES, W_ROWS, POS_WEIGHT], {0, 1}),
    "l1": (lambda lib, x, y, **k: lib.nn.functional.l1_loss(x, y, **k), [X, Y], {0, 1}),
    "smooth_l1": (lambda lib, x, y, **k: lib.nn.functional.smooth_l1_loss(x, y, beta=0.7, **k), [X, Y], {0, 1}),
    "smooth_l1_beta0": (lambda lib, x, y, **k: lib.nn.functional.smooth_l1_loss(x, y, beta=0.0, **k), [X, Y], {0, 1}),
    "huber": (lambda lib, x, y, **k: lib.nn.functional.huber_loss(x, y, delta=0.7, **k), [X, Y], {0, 1}),
    "kl_div": (lambda lib, x, y, **k: lib.nn.functional.kl_div(x, y, **k), [X, PROBABILITIES], {0, 1}),
    "kl_div_log_target": (lambda lib, x, y, **k: lib.nn.functional.kl_div(x, y, log_target=True, **k),
                          [X, Y], {0, 1}),
    "soft_margin": (lambda lib, x, y, **k: lib.nn.functional.soft_margin_loss(x, y, **k), [X * 30, SIGNS], {0}),
    "multilabel_soft_margin": (lambda lib, x, y, **k: lib.nn.functional.multilabel_soft_margin_loss(x, y, **k),
                               [X * 30, BINARY], {0}),
    "multilabel_soft_margin_weight": (lambda lib, x, y, w, **k: lib.nn.functional.multilabel_soft_margin_loss(
        x, y, w, **k), [X, BINARY, POS_WEIGHT], {0}),
    "poisson_nll": (lambda lib, x, y, **k: lib.nn.functional.poisson_nll_loss(x, y, **k), [X, np.abs(Y) * 3], {0}),
    "poisson_nll_full": (lambda lib, x, y, **k: lib.nn.functional.poisson_nll_loss(x, y, full=True, **k),
                         [X, np.abs(Y) * 3], {0}),
    "poisson_nll_rates": (lambda lib, x, y, **k: lib.nn.functional.poisson_nll_loss(x, y, log_input=False, **k),
                          [np.abs(X), np.abs(Y) * 3], {0}),
    "gaussian_nll": (lambda lib, x, y, v, **k: lib.nn.functional.gaussian_nll_loss(x, y, v, full=True, **k),
                     [X, Y, np.abs(Y) + 0.1], {0, 1, 2}),
    "gaussian_nll_per_sample_var": (lambda lib, x, y, v, **k: lib.nn.functional.gaussian_nll_loss(x, y, v, **k),
                                    [X, Y, np.abs(Y[:, 0]) + 1e-9], {0, 1, 2}),
    "margin_ranking": (lambda lib, a, b, y, **k: lib.nn.functional.margin_ranking_loss(a, b, y, 0.3, **k),
                       [X[:, 0].copy(), Y[:, 0].copy(), SIGNS4], {0, 1}),
    "hinge_embedding": (lambda lib, x, y, **k: lib.nn.functional.hinge_embedding_loss(x, y, 0.5, **k),
                        [X, SIGNS], {0}),
    "cosine_embedding": (lambda lib, a, b, y, **k: lib.nn.functional.cosine_embedding_loss(a, b, y, 0.2, **k),
                         [X, Y, SIGNS4], {0, 1}),
    "triplet_margin": (lambda lib, a, p, n, **k: lib.nn.functional.triplet_margin_loss(a, p, n, 0.5, **k),
                       [X, Y, Y * 0.5 + X * 0.3], {0, 1, 2}),
    "triplet_margin_swap_p1": (lambda lib, a, p, n, **k: lib.nn.functional.triplet_margin_loss(
        a, p, n, p=1, swap=True, **k), [X, Y, Y * 0.5 + X * 0.3], {0, 1, 2}),
    "mse": (lambda lib, x, y, **k: lib.nn.functional.mse_loss(x, y, **k), [X, Y], {0, 1}),
    "multi_margin": (lambda lib, x, t, **k: lib.nn.functional.multi_margin_loss(x, t, margin=0.8, **k),
                     [X, np.array([0, 4, 2, 2])], {0}),
    "multi_margin_p2_weight": (lambda lib, x, t, w, **k: lib.nn.functional.multi_margin_loss(x, t, 2, 1.0, w, **k),
                               [X, np.array([0, 4, 2, 2]), POS_WEIGHT], {0}),
    "multi_margin_unbatched": (lambda lib, x, t, **k: lib.nn.functional.multi_margin_loss(x, t, **k),
                               [X[0].copy(), np.array(3)], {0}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_pytorch(name, reduction, dtype):
    fn, arrays, differentiable = LOSSES[name]
    compare(fn, arrays, differentiable, dtype, reduction=reduction)


def test_kl_div_batchmean():
    compare(lambda lib, x, y: lib.nn.functional.kl_div(x, y, reduction="batchmean"), [X, PROBABILITIES], {0, 1})
    compare(lambda lib, x, y: lib.nn.functional.kl_div(x, y, reduction="batchmean", log_target=True), [X, Y],
            {0, 1})


def test_kl_div_mean_warns_like_pytorch():
    with pytest.warns(UserWarning, match="batchmean"):
        F.kl_div(zero.tensor(X), zero.tensor(PROBABILITIES))


@pytest.mark.parametrize("name", ["bce", "bce_logits", "l1", "smooth_l1", "huber", "soft_margin", "mse", "kl_div"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_loss_of_zero_size_inputs(name, reduction):
    fn, arrays, differentiable = LOSSES[name]
    compare(fn, [np.zeros((0, 5)) for _ in arrays], differentiable, reduction=reduction)


def test_bce_with_logits_is_finite_for_huge_logits():
    logits = zero.tensor([-1e4, -100.0, 100.0, 1e4], requires_grad=True)
    loss = F.binary_cross_entropy_with_logits(logits, zero.tensor([1.0, 0.0, 1.0, 0.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [1e4, 0.0, 0.0, 1e4], rtol=1e-6, atol=1e-30)
    loss.sum().backward()
    np.testing.assert_allclose(logits.grad.numpy(), [-1.0, 0.0, 0.0, 1.0])


def test_bce_at_zero_and_one_is_clamped_at_100():
    p = zero.tensor([0.0, 1.0, 0.0, 1.0], requires_grad=True)
    loss = F.binary_cross_entropy(p, zero.tensor([1.0, 0.0, 0.0, 1.0]), reduction="none")
    np.testing.assert_allclose(loss.detach().numpy(), [100.0, 100.0, 0.0, 0.0])
    loss.sum().backward()
    assert np.all(np.isfinite(p.grad.numpy()))


# -- cross-entropy: class weights, probability targets, PyTorch's positional order -------------------------

LOGITS = rng.standard_normal((6, 5))
CLASSES = np.array([0, 3, 4, 1, -100, 2])
CLASS_WEIGHTS = np.array([1.0, 2.0, 0.5, 3.0, 1.5])
SOFT = rng.dirichlet(np.ones(5), 6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_with_class_weights(reduction, smoothing, dtype):
    compare(lambda lib, x, t, w, **k: lib.nn.functional.cross_entropy(x, t, w, **k),
            [LOGITS, CLASSES, CLASS_WEIGHTS], {0}, dtype, reduction=reduction, label_smoothing=smoothing)
    compare(lambda lib, x, t, w, **k: lib.nn.CrossEntropyLoss(w, **k)(x, t),
            [LOGITS, CLASSES, CLASS_WEIGHTS], {0}, dtype, reduction=reduction, label_smoothing=smoothing)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("smoothing", [0.0, 0.3])
@pytest.mark.parametrize("weighted", [False, True])
def test_cross_entropy_with_probability_targets(reduction, smoothing, weighted, dtype):
    def fn(lib, x, t, w, **k):
        return lib.nn.functional.cross_entropy(x, t, w if weighted else None, **k)
    compare(fn, [LOGITS, SOFT, CLASS_WEIGHTS], {0, 1}, dtype, reduction=reduction, label_smoothing=smoothing)


def test_cross_entropy_with_probability_targets_over_spatial_dimensions():
    logits, target = rng.standard_normal((2, 5, 3)), rng.dirichlet(np.ones(5), (2, 3)).transpose(0, 2, 1).copy()
    for reduction in REDUCTIONS:
        compare(lambda lib, x, t, **k: lib.nn.functional.cross_entropy(x, t, **k), [logits, target], {0, 1},
                reduction=reduction)


def test_nll_loss_module_with_weight_and_ignore_index():
    log_probabilities = np.log(rng.dirichlet(np.ones(5), 6))
    for reduction in REDUCTIONS:
        compare(lambda lib, x, t, w, **k: lib.nn.NLLLoss(w, ignore_index=2, **k)(x, t),
                [log_probabilities, np.array([0, 2, 4, 1, 2, 3]), CLASS_WEIGHTS], {0}, reduction=reduction)


@pytest.mark.parametrize("size_average,reduce", [(None, False), (False, None), (True, True), (False, True),
                                                 (True, None), (None, True)])
def test_deprecated_size_average_and_reduce_map_as_in_pytorch(size_average, reduce):
    arrays = [LOGITS, CLASSES, CLASS_WEIGHTS]
    compare(lambda lib, x, t, w: lib.nn.CrossEntropyLoss(w, size_average, -100, reduce)(x, t), arrays, {0})
    compare(lambda lib, x, t, w: lib.nn.functional.cross_entropy(x, t, w, size_average, -100, reduce), arrays, {0})
    compare(lambda lib, x, y: lib.nn.L1Loss(size_average, reduce)(x, y), [X, Y], {0, 1})
    compare(lambda lib, p, y: lib.nn.functional.binary_cross_entropy(p, y, None, size_average, reduce),
            [PROBABILITIES, BINARY], {0})


# -- distances --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cosine_similarity_and_pairwise_distance(dtype):
    compare(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, 0, 1e-6), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.functional.cosine_similarity(a, b, -1), [X, Y[:1].copy()], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.functional.pairwise_distance(a, b, 1.0, 1e-3, True), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.CosineSimilarity(dim=0)(a, b), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.nn.PairwiseDistance(p=3.0)(a, b), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.cosine_similarity(a, b), [X, Y], {0, 1}, dtype)
    compare(lambda lib, a, b: lib.pairwise_distance(a, b), [X, Y], {0, 1}, dtype)


# -- modules ------------------------------------------------------------------------------------------------

MODULES = {
    "BCELoss()": ([PROBABILITIES, BINARY], {0}), "BCELoss(reduction='sum')": ([PROBABILITIES, BINARY], {0}),
    "BCEWithLogitsLoss()": ([X, BINARY], {0}), "L1Loss()": ([X, Y], {0}), "MSELoss(reduction='none')": ([X, Y], {0}),
    "SmoothL1Loss(beta=0.5)": ([X, Y], {0}), "HuberLoss('sum', 0.5)": ([X, Y], {0}),
    "KLDivLoss(reduction='batchmean')": ([X, PROBABILITIES], {0}),
    "KLDivLoss(log_target=True, reduction='sum')": ([X, Y], {0}),
    "SoftMarginLoss()": ([X, SIGNS], {0}), "MultiLabelSoftMarginLoss()": ([X, BINARY], {0}),
    "PoissonNLLLoss()": ([X, np.abs(Y)], {0}), "PoissonNLLLoss(False, True, eps=1e-3)": ([np.abs(X), np.abs(Y)], {0}),
    "HingeEmbeddingLoss(2.0)": ([X, SIGNS], {0}), "CrossEntropyLoss(label_smoothing=0.1)": ([LOGITS, CLASSES], {0}),
    "MarginRankingLoss(0.1)": ([X[:, 0].copy(), Y[:, 0].copy(), SIGNS4], {0, 1}),
    "CosineEmbeddingLoss(0.3)": ([X, Y, SIGNS4], {0, 1}),
    "TripletMarginLoss(2.0, swap=True)": ([X, Y, Y * 0.5], {0, 1, 2}),
    "GaussianNLLLoss(full=True)": ([X, Y, np.abs(Y) + 0.5], {0, 1, 2}),
    "MultiMarginLoss(2, 0.5)": ([X, np.array([1, 0, 3, 4])], {0}),
}


@pytest.mark.parametrize("call", sorted(MODULES))
def test_module_matches_pytorch(call):
    arrays, differentiable = MODULES[call]
    compare(lambda lib, *tensors: eval("lib.nn." + call)(*tensors), arrays, differentiable)


REPRS = ["BCELoss()", "BCEWithLogitsLoss()", "NLLLoss()", "L1Loss()", "SmoothL1Loss()", "HuberLoss()", "KLDivLoss()",
         "CosineEmbeddingLoss()", "MarginRankingLoss()", "TripletMarginLoss()", "SoftMarginLoss()",
         "MultiLabelSoftMarginLoss()", "PoissonNLLLoss()", "GaussianNLLLoss()", "HingeEmbeddingLoss()",
         "CosineSimilarity()", "PairwiseDistance()", "CrossEntropyLoss()", "MSELoss()", "MultiMarginLoss(2, 0.5)"]


@pytest.mark.parametrize("call", REPRS)
def test_module_repr_and_options_are_pytorchs(call):
    ours, theirs = eval("nn." + call), eval("torch.nn." + call)
    assert repr(ours) == repr(theirs)
    for name in ["reduction", "margin", "beta", "delta", "log_target", "ignore_index", "label_smoothing", "p", "eps",
                 "swap", "log_input", "full", "dim", "norm", "keepdim"]:
        assert getattr(ours, name, None) == getattr(theirs, name, None), name


def test_weights_are_buffers_as_in_pytorch():
    weight = np.array([1.0, 2.0, 3.0])
    ours, theirs = nn.CrossEntropyLoss(zero.tensor(weight)), torch.nn.CrossEntropyLoss(torch.tensor(weight))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    ours = nn.BCEWithLogitsLoss(pos_weight=zero.tensor(weight))
    assert list(ours.state_dict()) == list(torch.nn.BCEWithLogitsLoss(pos_weight=torch.tensor(weight)).state_dict())
    assert nn.CrossEntropyLoss.__module__ == "zero.nn.loss"


# -- errors --------------------------------------------------------------------------------------------------


def test_errors_like_pytorch():
    x, y = zero.rand(3), zero.rand(4)
    with pytest.raises(ValueError):
        F.binary_cross_entropy(x, y)
    with pytest.raises(ValueError):
        F.binary_cross_entropy_with_logits(x, y)
    with pytest.raises(RuntimeError, match="between 0 and 1"):
        F.binary_cross_entropy(x * 3 + 1, x)
    for fn in [F.l1_loss, F.binary_cross_entropy, F.binary_cross_entropy_with_logits, F.smooth_l1_loss,
               F.soft_margin_loss, F.huber_loss, F.kl_div, F.mse_loss]:
        with pytest.raises(ValueError, match="reduction"):
            fn(x, x, reduction="avg")
    with pytest.raises(ValueError, match="reduction"):
        nn.L1Loss(reduction="avg")(x, x)
    with pytest.raises(RuntimeError, match="delta"):
        F.huber_loss(x, x, delta=0.0)
    with pytest.raises(RuntimeError, match="beta"):
        F.smooth_l1_loss(x, x, beta=-1.0)
    with pytest.raises(ValueError, match="var"):
        F.gaussian_nll_loss(zero.rand(3, 2), zero.rand(3, 2), zero.rand(2, 2))
    with pytest.raises(ValueError, match="negative"):
        F.gaussian_nll_loss(x, x, -zero.ones(3))
    with pytest.raises(ValueError, match="margin"):
        nn.TripletMarginLoss(margin=0.0)
    with pytest.raises(TypeError):
        F.l1_loss([1.0], x)
    with pytest.raises(ValueError, match="p == 1"):
        F.multi_margin_loss(zero.rand(2, 3), zero.tensor([0, 1]), p=3)
