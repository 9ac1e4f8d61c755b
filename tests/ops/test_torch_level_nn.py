"""PyTorch's ``torch`` names issue 37 (torchnames) adds, against PyTorch (2 of 3): nn.functional's
ops at torch's level with torch's signatures (convolutions, pools, norms, dropout, losses with
an int reduction, the native_ forms, recurrent cells and layers), and the torch-level names
Zero had that no test named."""
from __future__ import annotations

import numpy as np
import pytest

import zero
from torch_namespace_data import (B3, BIAS2, BIAS4, CH3, F32, IMG, INTS, OTHER, RNG, SIG, UNIT, VOL, W1, W2, W3, WT1,
                                  WT2, WT3, compare)

torch = pytest.importorskip("torch")


TORCH_LEVEL = {
    "conv1d": (lambda lib, x, w, b: lib.conv1d(x, w, b, 2, 1), [SIG, W1, BIAS4]),
    "conv2d": (lambda lib, x, w, b: lib.conv2d(x, w, b, 1, 1, 1, 1), [IMG, W2, BIAS4]),
    "conv3d": (lambda lib, x, w: lib.conv3d(x, w, None, 1, 0, 1, 1), [VOL, W3]),
    "conv_transpose1d": (lambda lib, x, w, b: lib.conv_transpose1d(x, w, b, 2, 1, 1), [SIG, WT1, BIAS2]),
    "conv_transpose2d": (lambda lib, x, w: lib.conv_transpose2d(x, w, None, 2, 0, 1), [IMG, WT2]),
    "conv_transpose3d": (lambda lib, x, w: lib.conv_transpose3d(x, w), [VOL, WT3]),
    "convolution": (lambda lib, x, w, b: lib.convolution(x, w, b, [1, 1], [1, 0], [1, 1], False, [0, 0], 1),
                    [IMG, W2, BIAS4]),
    "convolution-transposed": (lambda lib, x, w: lib.convolution(x, w, None, [2], [1], [1], True, [1], 1),
                               [SIG, WT1]),
    "convolution-3d": (lambda lib, x, w: lib.convolution(x, w, None, [1] * 3, [0] * 3, [1] * 3, False, [0] * 3, 1),
                       [VOL, W3]),
    "avg_pool1d": (lambda lib, x: lib.avg_pool1d(x, 3, 2, 1, True, False), [SIG]),
    "max_pool1d": (lambda lib, x: lib.max_pool1d(x, 2, 2, 0, 1, True), [SIG]),
    "max_pool2d": (lambda lib, x: lib.max_pool2d(x, 2), [IMG]),
    "max_pool3d": (lambda lib, x: lib.max_pool3d(x, 2, 1), [VOL]),
    "max_pool1d_with_indices": (lambda lib, x: lib.max_pool1d_with_indices(x, 3, 2), [SIG]),
    "adaptive_avg_pool1d": (lambda lib, x: lib.adaptive_avg_pool1d(x, 3), [SIG]),
    "adaptive_max_pool1d": (lambda lib, x: lib.adaptive_max_pool1d(x, 3), [SIG]),
    "batch_norm-training": (lambda lib, x, w, b: lib.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
                            [IMG, CH3, CH3 * 2]),
    "batch_norm-eval": (lambda lib, x, m, v: lib.batch_norm(x, None, None, m.detach(), v.detach(), False, 0.1,
                                                            1e-3, False),
                        [SIG, CH3, CH3 + 1.0]),
    "instance_norm": (lambda lib, x, w, b: lib.instance_norm(x, w, b, None, None, True, 0.1, 1e-5, True),
                      [IMG, CH3, CH3]),
    "layer_norm": (lambda lib, x, w, b: lib.layer_norm(x, [5], w, b, 1e-4, True), [IMG, BIAS4[:1].repeat(5),
                                                                                  CH3[:1].repeat(5)]),
    "layer_norm-plain": (lambda lib, x: lib.layer_norm(x, (5, 5)), [IMG]),
    "group_norm": (lambda lib, x, w, b: lib.group_norm(x, 3, w, b, 1e-5, True), [IMG, CH3, CH3]),
    "rms_norm": (lambda lib, x, w: lib.rms_norm(x, [7], w, 1e-6), [SIG, RNG.uniform(0.5, 1, 7).astype(F32)]),
    "embedding": (lambda lib, w, i: lib.embedding(w, i), [W2[:, :, 0, 0].copy(), np.array([[0, 2], [3, 2]])]),
    "embedding-padding_idx": (lambda lib, w, i: lib.embedding(w, i, 2), [W2[:, :, 0, 0].copy(),
                                                                          np.array([[0, 2], [3, 2]])]),
    "bilinear": (lambda lib, a, b, w, c: lib.bilinear(a, b, w, c), [UNIT, OTHER, RNG.uniform(-1, 1, (2, 4, 4)).astype(
        F32), BIAS2]),
    "pdist": (lambda lib, x: lib.pdist(x, 3.0), [UNIT]),
    "channel_shuffle": (lambda lib, x: lib.channel_shuffle(x, 3), [np.concatenate([IMG, IMG], 1)]),
    "native_channel_shuffle": (lambda lib, x: lib.native_channel_shuffle(x.detach(), 2),  # (torch: no derivative)
                               [np.concatenate([IMG, IMG], 1)]),
    "pixel_shuffle": (lambda lib, x: lib.pixel_shuffle(x, 2), [RNG.uniform(0, 1, (1, 8, 2, 3)).astype(F32)]),
    "pixel_unshuffle": (lambda lib, x: lib.pixel_unshuffle(x, 2), [RNG.uniform(0, 1, (1, 2, 4, 6)).astype(F32)]),
    "constant_pad_nd": (lambda lib, x: lib.constant_pad_nd(x, [1, 2, 0, 1], 0.5), [IMG]),
    "constant_pad_nd-crop": (lambda lib, x: lib.constant_pad_nd(x, [-1, 2]), [SIG]),
    "dropout-eval": (lambda lib, x: lib.dropout(x, 0.5, False), [UNIT]),
    "dropout-p0": (lambda lib, x: lib.dropout(x * 1.0, 0.0, True), [UNIT]),
    "alpha_dropout-eval": (lambda lib, x: lib.alpha_dropout(x, 0.5, False), [UNIT]),
    "feature_dropout-eval": (lambda lib, x: lib.feature_dropout(x, 0.5, False), [IMG]),
    "feature_alpha_dropout-eval": (lambda lib, x: lib.feature_alpha_dropout(x, 0.5, False), [IMG]),
}


@pytest.mark.parametrize("case", sorted(TORCH_LEVEL))
def test_nn_ops_at_torch_level_as_pytorch(case):
    fn, arrays = TORCH_LEVEL[case]
    compare(fn, arrays)


def test_batch_norm_at_torch_level_updates_the_running_statistics():
    stats = {}
    for lib in (torch, zero):
        mean, var = lib.zeros(3), lib.ones(3)
        lib.batch_norm(lib.tensor(IMG), None, None, mean, var, True, 0.2, 1e-5, True)
        stats[lib] = (mean.numpy().copy(), var.numpy().copy())
        with pytest.raises(RuntimeError):
            lib.batch_norm(lib.tensor(IMG), None, None, None, None, False, 0.1, 1e-5, True)
    np.testing.assert_allclose(stats[zero][0], stats[torch][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(stats[zero][1], stats[torch][1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["dropout", "alpha_dropout", "feature_dropout", "feature_alpha_dropout"])
def test_dropout_at_torch_level(name):
    x = np.ones((40, 50, 3), F32)
    for lib in (torch, zero):
        function, in_place = getattr(lib, name), getattr(lib, name + "_")
        t = lib.tensor(x)
        assert function(t, 0.5, False) is t                       # not training: the input itself
        with pytest.raises(RuntimeError, match="probability"):
            function(t, 1.5, True)
        lib.manual_seed(3)
        out = function(t, 0.3, True)
        dropped = out.numpy() != out.numpy().max()
        assert abs(dropped.mean() - 0.3) < 0.03, (lib.__name__, dropped.mean())
        if name.startswith("feature"):                            # whole feature maps (dimension 2 on)
            assert (dropped == dropped[:, :, :1]).all()
            with pytest.raises(RuntimeError, match="2 dimensions"):
                function(lib.ones(3), 0.5, True)
        if name.endswith("alpha_dropout"):                        # mean and variance kept (SELU's)
            normal = lib.tensor(RNG.standard_normal((200, 300)).astype(F32))
            out_normal = function(normal, 0.2, True)
            assert abs(float(out_normal.mean())) < 0.05 and abs(float(out_normal.std()) - 1.0) < 0.05
        else:
            np.testing.assert_allclose(out.numpy()[~dropped], 1 / 0.7, rtol=1e-6)
        lib.manual_seed(3)
        again = function(t, 0.3, True)
        assert bool((again == out).all())                          # the same seed, the same mask
        copy = t.clone()
        assert in_place(copy, 0.3, True) is copy and not bool((copy == t).all())


# -- torch-level names Zero had but no test named ---------------------------------------------------

LOSS_TARGET = np.array([1.0, -1.0, 1.0], F32)
EXISTING = {
    "atleast_1d": (lambda lib, x: lib.atleast_1d(x), [np.array(2.0, F32)]),
    "atleast_2d": (lambda lib, x: lib.atleast_2d(x), [OTHER[0]]),
    "atleast_3d": (lambda lib, x: lib.atleast_3d(x), [UNIT]),
    "flip": (lambda lib, x: lib.flip(x, (0, 1)), [UNIT]),
    "roll": (lambda lib, x: lib.roll(x, (1, -2), (0, 1)), [UNIT]),
    "sort": (lambda lib, x: lib.sort(x, 1, True), [UNIT]),
    "topk": (lambda lib, x: lib.topk(x, 2, 0, False), [UNIT]),
    "tril": (lambda lib, x: lib.tril(x, -1), [UNIT]),
    "sign": (lambda lib, x: lib.sign(x), [UNIT - 0.5]),
    "prelu": (lambda lib, x, w: lib.prelu(x, w), [UNIT - 0.5, np.array([0.25], F32)]),
    "rrelu": (lambda lib, x: lib.rrelu(x, 0.1, 0.3, False), [UNIT - 0.5]),
    "rrelu_": (lambda lib, x: lib.rrelu_(x * 1.0, 0.1, 0.3), [UNIT - 0.5]),
    "celu_": (lambda lib, x: lib.celu_(x * 1.0, 0.5), [UNIT - 0.5]),
    "greater": (lambda lib, x, y: lib.greater(x, y), [UNIT, OTHER]),
    "greater_equal": (lambda lib, x, y: lib.greater_equal(x, y), [UNIT, OTHER]),
    "less": (lambda lib, x, y: lib.less(x, y), [UNIT, OTHER]),
    "less_equal": (lambda lib, x, y: lib.less_equal(x, y), [UNIT, OTHER]),
    "not_equal": (lambda lib, x, y: lib.not_equal(x, y), [UNIT, UNIT.round(1)]),
    "bitwise_not": (lambda lib, x: lib.bitwise_not(x), [INTS]),
    "bitwise_or": (lambda lib, x, y: lib.bitwise_or(x, y), [INTS, INTS[::-1].copy()]),
    "bitwise_xor": (lambda lib, x, y: lib.bitwise_xor(x, y), [INTS, INTS[::-1].copy()]),
    # the losses at torch's level, called with the positional arguments torch's and F's share
    # the losses at torch's level: the reduction an int, none by default
    "binary_cross_entropy_with_logits": (lambda lib, x, y, w: lib.binary_cross_entropy_with_logits(
        x, y, w.detach(), w.detach() * 2), [UNIT - 0.5, OTHER.round(), OTHER]),
    "binary_cross_entropy_with_logits-mean": (lambda lib, x, y: lib.binary_cross_entropy_with_logits(
        x, y, None, None, 1), [UNIT - 0.5, OTHER.round()]),
    "cosine_embedding_loss": (lambda lib, a, b, t: lib.cosine_embedding_loss(a, b, t, 0.1),
                              [UNIT, OTHER - 0.5, LOSS_TARGET]),
    "cosine_embedding_loss-sum": (lambda lib, a, b, t: lib.cosine_embedding_loss(a, b, t, 0.1, 2),
                                  [UNIT, OTHER - 0.5, LOSS_TARGET]),
    "hinge_embedding_loss": (lambda lib, x, t: lib.hinge_embedding_loss(x, t, 0.5), [UNIT, np.sign(OTHER - 0.5)]),
    "hinge_embedding_loss-mean": (lambda lib, x, t: lib.hinge_embedding_loss(x, t, 0.5, 1),
                                  [UNIT, np.sign(OTHER - 0.5)]),
    "margin_ranking_loss": (lambda lib, a, b, t: lib.margin_ranking_loss(a, b, t, 0.1),
                            [UNIT[0], OTHER[0], np.array([1.0, -1.0, 1.0, -1.0], F32)]),
    "margin_ranking_loss-sum": (lambda lib, a, b, t: lib.margin_ranking_loss(a, b, t, 0.1, 2),
                                [UNIT[0], OTHER[0], np.array([1.0, -1.0, 1.0, -1.0], F32)]),
    "triplet_margin_loss": (lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n, 1.0, 2.0, 1e-6, True),
                            [UNIT, OTHER, UNIT[::-1].copy()]),
    "triplet_margin_loss-mean": (lambda lib, a, p, n: lib.triplet_margin_loss(a, p, n, 0.5, 1.0, 1e-6, False, 1),
                                 [UNIT, OTHER, UNIT[::-1].copy()]),
    "poisson_nll_loss": (lambda lib, x, t: lib.poisson_nll_loss(x, t, True, False, 1e-8, 0), [UNIT, OTHER * 3]),
    "poisson_nll_loss-full-sum": (lambda lib, x, t: lib.poisson_nll_loss(x, t, False, True, 1e-6, 2),
                                  [UNIT + 0.5, OTHER * 3]),
}


@pytest.mark.parametrize("case", sorted(EXISTING))
def test_existing_torch_level_names_as_pytorch(case):
    fn, arrays = EXISTING[case]
    compare(fn, arrays)


def test_is_tensor_and_numel():
    for lib in (torch, zero):
        t = lib.tensor(UNIT)
        assert lib.is_tensor(t) and not lib.is_tensor(UNIT) and not lib.is_tensor(1.0)
        assert lib.numel(t) == 12 and lib.numel(lib.tensor(1.0)) == 1


def test_dropout_in_place_forms_are_named():
    for name in ("dropout_", "alpha_dropout_", "feature_dropout_", "feature_alpha_dropout_"):
        for lib in (torch, zero):
            t = lib.ones(2, 3, 4)
            assert getattr(lib, name)(t, 0.0, True) is t and bool((t == 1.0).all())


def test_tensor_methods_without_a_test_of_their_own():
    for lib in (torch, zero):
        a, b, c = (lib.tensor(arr) for arr in (UNIT, OTHER, OTHER[::-1].copy()))
        want = (UNIT + 0.5 * OTHER / OTHER[::-1]).astype(F32)
        np.testing.assert_allclose(a.clone().addcdiv_(b, c, value=0.5).numpy(), want, rtol=1e-6)
        np.testing.assert_allclose(a.clone().erfinv_().numpy(), torch.erfinv(torch.tensor(UNIT)).numpy(), rtol=1e-5)
        ints, other = lib.tensor(INTS), lib.tensor(INTS[::-1].copy())
        assert ints.bitwise_not().tolist() == (~INTS).tolist()
        assert ints.bitwise_or(other).tolist() == (INTS | INTS[::-1]).tolist()
        assert ints.bitwise_xor(other).tolist() == (INTS ^ INTS[::-1]).tolist()
        assert tuple(lib.ones(3).expand_as(a[:, :3].t()).shape) == (3, 3)
        assert a.type_as(ints).dtype == lib.int64 and ints.type_as(a).dtype == lib.float32


# -- the native_ forms -------------------------------------------------------------------------------

def _detached_tail(result):
    return (result[0],) + tuple(t.detach() for t in result[1:])


NATIVE = {
    "native_layer_norm": (lambda lib, x, w, b: _detached_tail(lib.native_layer_norm(x, [4], w, b, 1e-5)),
                          [B3, OTHER[0], OTHER[1]]),
    "native_layer_norm-2d": (lambda lib, x: _detached_tail(lib.native_layer_norm(x, (3, 4), None, None, 1e-3)),
                             [B3]),
    "native_batch_norm": (lambda lib, x, w, b: _detached_tail(lib.native_batch_norm(
        x, w, b, None, None, True, 0.1, 1e-5)), [IMG, CH3, CH3]),
    "native_batch_norm-eval": (lambda lib, x: _detached_tail(lib.native_batch_norm(
        x, None, None, lib.zeros(3), lib.ones(3) * 2, False, 0.1, 1e-5)), [IMG]),
    "native_group_norm": (lambda lib, x, w, b: _detached_tail(lib.native_group_norm(x, w, b, 2, 3, 25, 3, 1e-5)),
                          [IMG, CH3, CH3]),
    "native_dropout-eval": (lambda lib, x: lib.native_dropout(x, 0.5, False), [UNIT]),
}


@pytest.mark.parametrize("case", sorted(NATIVE))
def test_native_forms_as_pytorch(case):
    fn, arrays = NATIVE[case]
    compare(fn, arrays)


def test_native_dropout_mask_and_scaling():
    for lib in (torch, zero):
        x = lib.tensor(RNG.uniform(1, 2, (100, 100)).astype(F32), requires_grad=True)
        out, mask = lib.native_dropout(x, 0.25, True)
        assert mask.dtype == lib.bool and abs(float(mask.float().mean()) - 0.75) < 0.03
        np.testing.assert_allclose(out.detach().numpy(), np.where(mask.numpy(), x.detach().numpy() / 0.75, 0),
                                   rtol=1e-6)
        out.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.75, rtol=1e-6)
        with pytest.raises(RuntimeError):
            lib.native_dropout(x, 1.5, True)


# -- recurrent cells, conv_tbc, embedding_renorm_ ------------------------------------------------------

H_IN, H_STATE = RNG.uniform(-1, 1, (3, 4)).astype(F32), RNG.uniform(-1, 1, (3, 5)).astype(F32)
C_STATE = RNG.uniform(-1, 1, (3, 5)).astype(F32)


def _weights(gates):
    return [RNG.uniform(-0.5, 0.5, s).astype(F32) for s in ((gates * 5, 4), (gates * 5, 5), (gates * 5,), (gates * 5,))]


CELLS = {
    "lstm_cell": (lambda lib, x, h, c, wi, wh, bi, bh: lib.lstm_cell(x, (h, c), wi, wh, bi, bh),
                  [H_IN, H_STATE, C_STATE, *_weights(4)]),
    "lstm_cell-no-bias": (lambda lib, x, h, c, wi, wh: lib.lstm_cell(x, [h, c], wi, wh),
                          [H_IN, H_STATE, C_STATE, *_weights(4)[:2]]),
    "gru_cell": (lambda lib, x, h, wi, wh, bi, bh: lib.gru_cell(x, h, wi, wh, bi, bh), [H_IN, H_STATE, *_weights(3)]),
    "rnn_tanh_cell": (lambda lib, x, h, wi, wh, bi, bh: lib.rnn_tanh_cell(x, h, wi, wh, bi, bh),
                      [H_IN, H_STATE, *_weights(1)]),
    "rnn_relu_cell": (lambda lib, x, h, wi, wh: lib.rnn_relu_cell(x, h, wi, wh), [H_IN, H_STATE, *_weights(1)[:2]]),
    "conv_tbc": (lambda lib, x, w, b: lib.conv_tbc(x, w, b, 1), [RNG.uniform(-1, 1, (7, 2, 3)).astype(F32),
                                                                 RNG.uniform(-1, 1, (3, 3, 4)).astype(F32), BIAS4]),
    "conv_tbc-no-pad": (lambda lib, x, w, b: lib.conv_tbc(x, w, b), [RNG.uniform(-1, 1, (5, 1, 2)).astype(F32),
                                                                     RNG.uniform(-1, 1, (2, 2, 3)).astype(F32),
                                                                     CH3]),
}


@pytest.mark.parametrize("case", sorted(CELLS))
def test_recurrent_cells_and_conv_tbc_as_pytorch(case):
    fn, arrays = CELLS[case]
    compare(fn, arrays, rtol=1e-5)


def test_embedding_renorm_as_pytorch():
    rows = []
    for lib in (torch, zero):
        weight = lib.tensor(RNG.uniform(-2, 2, (5, 3)).astype(F32)) if lib is torch else lib.tensor(rows[0][1])
        original = weight.clone()
        with lib.no_grad():
            assert lib.embedding_renorm_(weight, lib.tensor([0, 2, 2]), 1.0, 2.0) is weight
        rows.append((weight.numpy().copy(), original.numpy().copy()))
    np.testing.assert_allclose(rows[1][0], rows[0][0], rtol=1e-6)
    untouched = [1, 3, 4]
    np.testing.assert_array_equal(rows[1][0][untouched], rows[1][1][untouched])


def _layer_params(gates, input_size, hidden, layers, directions, biases):
    params = []
    for layer in range(layers):
        size = input_size if layer == 0 else hidden * directions
        for _ in range(directions):
            params += [RNG.uniform(-0.4, 0.4, (gates * hidden, size)).astype(F32),
                       RNG.uniform(-0.4, 0.4, (gates * hidden, hidden)).astype(F32)]
            if biases:
                params += [RNG.uniform(-0.4, 0.4, (gates * hidden,)).astype(F32) for _ in range(2)]
    return params


@pytest.mark.parametrize("name, gates", [("lstm", 4), ("gru", 3), ("rnn_tanh", 1), ("rnn_relu", 1)])
@pytest.mark.parametrize("layers, bidirectional, batch_first, biases", [
    (1, False, False, True), (2, True, True, True), (2, False, False, False)])
def test_recurrent_layers_at_torch_level_as_pytorch(name, gates, layers, bidirectional, batch_first, biases):
    directions = 2 if bidirectional else 1
    x = RNG.uniform(-1, 1, (2, 4, 3) if batch_first else (4, 2, 3)).astype(F32)
    h0 = RNG.uniform(-1, 1, (layers * directions, 2, 5)).astype(F32)
    params = _layer_params(gates, 3, 5, layers, directions, biases)
    options = (biases, layers, 0.0, True, bidirectional, batch_first)

    def run(lib, x, h0, *params):
        hx = (h0, h0 * 0.5) if name == "lstm" else h0
        return getattr(lib, name)(x, hx, list(params), *options)

    compare(run, [x, h0, *params], rtol=1e-5)
    with pytest.raises(RuntimeError):
        getattr(zero, name)(zero.tensor(x), (zero.tensor(h0),) * 2 if name == "lstm" else zero.tensor(h0),
                            [zero.tensor(p) for p in params[:-1]], *options)
