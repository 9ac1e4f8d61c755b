"""TransformerEncoderLayer / DecoderLayer / Encoder / Decoder / Transformer against PyTorch
with PyTorch's state_dict loaded: outputs and gradients, norm_first and batch_first both ways,
key-padding and causal masks (bool and float), dropout 0 in training and eval mode."""
from __future__ import annotations

import copy

import numpy as np
import pytest

import zero
from zero import nn

torch = pytest.importorskip("torch")

D, HEADS, FF = 8, 2, 16


def _load(ours, theirs, seed=0):
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def _inputs(batch_first, length, seed):
    shape = (2, length, D) if batch_first else (length, 2, D)
    array = np.random.default_rng(seed).standard_normal(shape)
    return zero.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def _masks(kind, length, source=None):
    """(ours, theirs) masks: a causal (L, S) mask, bool or float, and a (2, S) key padding mask."""
    source = source or length
    if kind is None:
        return None, None
    if kind == "causal bool":
        m = np.triu(np.ones((length, source), bool), 1)
    elif kind == "causal float":
        m = np.triu(np.full((length, source), -np.inf), 1)
    elif kind == "padding bool":
        m = np.zeros((2, source), bool)
        m[0, -2:] = True
    else:  # "padding float"
        m = np.zeros((2, source))
        m[1, -1] = -np.inf
        m[0, 0] = -0.5
    return zero.tensor(m), torch.tensor(m)


def _check(out, tout, leaves, tleaves, ours, theirs, atol=1e-9):
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-8, atol=atol)
    upstream = np.random.default_rng(3).standard_normal(tuple(tout.shape))
    (out * zero.tensor(upstream)).sum().backward()
    (tout * torch.tensor(upstream)).sum().backward()
    for x, tx in zip(leaves, tleaves):
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-7, atol=atol)
    grads = {n: p.grad for n, p in theirs.named_parameters()}
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), grads[name].numpy(), rtol=1e-7, atol=atol, err_msg=name)


ENCODER_CASES = [(norm_first, batch_first, mask, activation)
                 for norm_first in (False, True) for batch_first in (False, True)
                 for mask, activation in (("causal bool", "relu"), ("padding float", "gelu"))] + [
    (False, True, "causal float", "relu"), (True, False, "padding bool", "relu"), (False, False, None, "gelu")]


@pytest.mark.parametrize("norm_first, batch_first, mask, activation", ENCODER_CASES)
def test_encoder_layer_matches_pytorch(norm_first, batch_first, mask, activation):
    made = dict(dim_feedforward=FF, dropout=0.0, activation=activation, batch_first=batch_first,
                norm_first=norm_first)
    ours = nn.TransformerEncoderLayer(D, HEADS, dtype=zero.float64, **made)
    theirs = torch.nn.TransformerEncoderLayer(D, HEADS, dtype=torch.float64, **made)
    _load(ours, theirs)
    x, tx = _inputs(batch_first, 5, 1)
    m, tm = _masks(mask, 5)
    kwargs, tkwargs = {}, {}
    if mask and mask.startswith("causal"):
        kwargs, tkwargs = {"src_mask": m}, {"src_mask": tm}
    elif mask:
        kwargs, tkwargs = {"src_key_padding_mask": m}, {"src_key_padding_mask": tm}
    _check(ours(x, **kwargs), theirs(tx, **tkwargs), [x], [tx], ours, theirs)


@pytest.mark.parametrize("norm_first, batch_first", [(False, False), (True, True), (False, True)])
def test_decoder_layer_matches_pytorch(norm_first, batch_first):
    made = dict(dim_feedforward=FF, dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    ours = nn.TransformerDecoderLayer(D, HEADS, dtype=zero.float64, **made)
    theirs = torch.nn.TransformerDecoderLayer(D, HEADS, dtype=torch.float64, **made)
    _load(ours, theirs)
    tgt, ttgt = _inputs(batch_first, 4, 1)
    memory, tmemory = _inputs(batch_first, 6, 2)
    causal, tcausal = _masks("causal bool", 4)
    padding, tpadding = _masks("padding bool", 4, 6)
    out = ours(tgt, memory, tgt_mask=causal, memory_key_padding_mask=padding)
    tout = theirs(ttgt, tmemory, tgt_mask=tcausal, memory_key_padding_mask=tpadding)
    _check(out, tout, [tgt, memory], [ttgt, tmemory], ours, theirs)


def test_encoder_stack_eval_mode_deep_copies_and_repr():
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.3, batch_first=True, dtype=zero.float64)
    ours = nn.TransformerEncoder(layer, 2, norm=nn.LayerNorm(D, dtype=zero.float64), enable_nested_tensor=False)
    theirs = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.3, batch_first=True, dtype=torch.float64), 2,
        norm=torch.nn.LayerNorm(D, dtype=torch.float64), enable_nested_tensor=False)
    assert repr(ours).replace("zero", "torch") == repr(theirs)
    assert ours.layers[0].linear1.weight is not ours.layers[1].linear1.weight
    assert ours.layers[0].linear1.weight is not layer.linear1.weight
    _load(ours, theirs)
    ours.eval(), theirs.eval()
    x, tx = _inputs(True, 5, 4)
    m, tm = _masks("padding bool", 5)
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=zero.float64)
    tcausal = torch.nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    np.testing.assert_array_equal(causal.numpy(), tcausal.numpy())
    out = ours(x, mask=causal, src_key_padding_mask=m, is_causal=True)
    tout = theirs(tx, mask=tcausal, src_key_padding_mask=tm, is_causal=True)
    _check(out, tout, [x], [tx], ours, theirs)


def test_decoder_stack_matches_pytorch():
    made = dict(dim_feedforward=FF, dropout=0.0)
    ours = nn.TransformerDecoder(nn.TransformerDecoderLayer(D, HEADS, dtype=zero.float64, **made), 2)
    theirs = torch.nn.TransformerDecoder(torch.nn.TransformerDecoderLayer(D, HEADS, dtype=torch.float64, **made), 2)
    _load(ours, theirs)
    tgt, ttgt = _inputs(False, 4, 1)
    memory, tmemory = _inputs(False, 3, 2)
    _check(ours(tgt, memory), theirs(ttgt, tmemory), [tgt, memory], [ttgt, tmemory], ours, theirs)


@pytest.mark.parametrize("batch_first, norm_first", [(False, False), (True, True)])
def test_transformer_end_to_end(batch_first, norm_first):
    made = dict(d_model=D, nhead=HEADS, num_encoder_layers=2, num_decoder_layers=1, dim_feedforward=FF,
                dropout=0.0, batch_first=batch_first, norm_first=norm_first)
    ours = nn.Transformer(dtype=zero.float64, **made)
    theirs = torch.nn.Transformer(dtype=torch.float64, **made)
    assert repr(ours).replace("zero", "torch") == repr(theirs)
    # Glorot-uniform on every matrix: bounded by sqrt(6 / (fan_in + fan_out))
    w = ours.encoder.layers[0].linear1.weight.detach().numpy()
    assert np.abs(w).max() <= np.sqrt(6 / (D + FF)) and w.std() > 0.2
    _load(ours, theirs)
    src, tsrc = _inputs(batch_first, 5, 1)
    tgt, ttgt = _inputs(batch_first, 4, 2)
    tgt_mask = nn.Transformer.generate_square_subsequent_mask(4, dtype=zero.float64)
    ttgt_mask = torch.nn.Transformer.generate_square_subsequent_mask(4, dtype=torch.float64)
    padding, tpadding = _masks("padding bool", 5)
    out = ours(src, tgt, tgt_mask=tgt_mask, src_key_padding_mask=padding, memory_key_padding_mask=padding)
    tout = theirs(tsrc, ttgt, tgt_mask=ttgt_mask, src_key_padding_mask=tpadding, memory_key_padding_mask=tpadding)
    _check(out, tout, [src, tgt], [tsrc, ttgt], ours, theirs)
    # state_dict the other way: ours into PyTorch's
    back = torch.nn.Transformer(dtype=torch.float64, **made)
    back.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    np.testing.assert_allclose(back(tsrc, ttgt, tgt_mask=ttgt_mask).detach().numpy(),
                               ours(src, tgt, tgt_mask=tgt_mask).detach().numpy(), rtol=1e-8, atol=1e-9)


def test_unbatched_input_deepcopy_and_errors():
    zero.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.0)
    x = zero.randn(5, D)
    out = layer(x)
    assert out.shape == (5, D)
    twin = copy.deepcopy(layer)
    np.testing.assert_array_equal(twin(x).detach().numpy(), out.detach().numpy())
    with pytest.raises(RuntimeError):
        nn.TransformerEncoderLayer(D, HEADS, activation="tanh")
    model = nn.Transformer(D, HEADS, 1, 1, FF)
    with pytest.raises(RuntimeError):
        model(zero.randn(5, 2, D), zero.randn(4, 3, D))
    custom = nn.TransformerEncoderLayer(D, HEADS, FF, activation=nn.GELU())
    assert "(activation): GELU" in repr(custom)


def test_multihead_attention_repr_and_positional_factory_arguments():
    ours = nn.MultiheadAttention(8, 2, 0.0, True, False, False, None, None, True, None, zero.float64)
    assert ours.in_proj_weight.dtype is zero.float64
    assert repr(ours) == repr(torch.nn.MultiheadAttention(8, 2))


def test_dropout_in_training_changes_the_output():
    zero.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D, HEADS, FF, dropout=0.5)
    x = zero.randn(5, 2, D)
    first, second = layer(x), layer(x)
    assert not np.allclose(first.detach().numpy(), second.detach().numpy())
    layer.eval()
    np.testing.assert_array_equal(layer(x).detach().numpy(), layer(x).detach().numpy())
