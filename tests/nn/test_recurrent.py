"""nn.RNN, nn.LSTM, nn.GRU and their cells against PyTorch with the same weights: outputs,
final states, and the gradients of the input, the initial states and every parameter."""
from __future__ import annotations

import itertools
import os

import numpy as np
import pytest

import zero
from zero.autograd import gradcheck
from zero.ops.extra.recurrent import recurrence

torch = pytest.importorskip("torch")

L, N, I, H = 5, 3, 4, 6  # noqa: E741
LAYERS = {"RNN_TANH": ("RNN", {}), "RNN_RELU": ("RNN", {"nonlinearity": "relu"}), "LSTM": ("LSTM", {}),
          "GRU": ("GRU", {})}


def pair(mode: str, **kwargs):
    """A PyTorch layer (float64) and a Zero one with its weights."""
    name, extra = LAYERS[mode]
    ours = getattr(zero.nn, name)(I, H, **extra, **kwargs, dtype=zero.float64)
    theirs = getattr(torch.nn, name)(I, H, **extra, **kwargs, dtype=torch.float64)
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def leaf(array: np.ndarray):
    return zero.tensor(array, requires_grad=True), torch.tensor(array, requires_grad=True)


def close(ours, theirs, what: str, tol: float = 1e-10) -> None:
    got = ours.detach().numpy() if hasattr(ours, "detach") else ours.numpy()
    np.testing.assert_allclose(got, theirs.detach().numpy(), rtol=tol, atol=tol, err_msg=what)


def check_grads(ours_module, theirs_module, leaves) -> None:
    for (name, p), (_, q) in zip(ours_module.named_parameters(), theirs_module.named_parameters()):
        assert p.grad is not None, name
        close(p.grad, q.grad, f"grad of {name}")
    for k, (a, b) in enumerate(leaves):
        close(a.grad, b.grad, f"grad of input {k}")


def run_both(mode, ours, theirs, x_shape, with_states, state_shape):
    rng = np.random.default_rng(0)
    x, tx = leaf(rng.standard_normal(x_shape))
    leaves = [(x, tx)]
    args, targs = [x], [tx]
    if with_states:
        h, th = leaf(rng.standard_normal(state_shape))
        leaves.append((h, th))
        if mode == "LSTM":
            c, tc = leaf(rng.standard_normal(state_shape))
            leaves.append((c, tc))
            args.append((h, c))
            targs.append((th, tc))
        else:
            args.append(h)
            targs.append(th)
    out, state = ours(*args)
    tout, tstate = theirs(*targs)
    return out, state, tout, tstate, leaves


def loss_pair(out, state, tout, tstate, mode):
    """A loss reading every output and final state with different weights."""
    weights = np.linspace(-1.0, 1.0, out.shape[-1])
    loss = (out * zero.tensor(weights)).sum()
    tloss = (tout * torch.tensor(weights)).sum()
    states = state if mode == "LSTM" else (state,)
    tstates = tstate if mode == "LSTM" else (tstate,)
    for k, (s, ts) in enumerate(zip(states, tstates)):
        loss = loss + ((s ** 2) * (k + 1)).sum()
        tloss = tloss + ((ts ** 2) * (k + 1)).sum()
    return loss, tloss


@pytest.mark.parametrize("mode", list(LAYERS))
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,with_states",
                         [(1, False, False, False), (1, True, True, True), (2, False, True, True),
                          (2, True, False, False), (2, True, True, True)])
def test_layer_matches_pytorch(mode, num_layers, bidirectional, batch_first, with_states):
    ours, theirs = pair(mode, num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    directions = 2 if bidirectional else 1
    x_shape = (N, L, I) if batch_first else (L, N, I)
    out, state, tout, tstate, leaves = run_both(mode, ours, theirs, x_shape, with_states,
                                                (num_layers * directions, N, H))
    assert tuple(out.shape) == tuple(tout.shape)
    close(out, tout, "output")
    for s, ts in zip(state if mode == "LSTM" else (state,), tstate if mode == "LSTM" else (tstate,)):
        close(s, ts, "final state")
    loss, tloss = loss_pair(out, state, tout, tstate, mode)
    loss.backward()
    tloss.backward()
    check_grads(ours, theirs, leaves)


@pytest.mark.parametrize("mode", list(LAYERS))
def test_unbatched_input(mode):
    ours, theirs = pair(mode, num_layers=2, bidirectional=True)
    out, state, tout, tstate, leaves = run_both(mode, ours, theirs, (L, I), True, (4, H))
    assert tuple(out.shape) == (L, 2 * H)
    close(out, tout, "output")
    loss, tloss = loss_pair(out, state, tout, tstate, mode)
    loss.backward()
    tloss.backward()
    check_grads(ours, theirs, leaves)


@pytest.mark.parametrize("mode", list(LAYERS))
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input(mode, enforce_sorted):
    from torch.nn.utils import rnn as trnn

    from zero.nn.utils import rnn as zrnn

    lengths = [5, 4, 4, 2] if enforce_sorted else [2, 5, 1, 4]
    ours, theirs = pair(mode, num_layers=2, bidirectional=True)
    rng = np.random.default_rng(1)
    x, tx = leaf(rng.standard_normal((5, 4, I)))
    h, th = leaf(rng.standard_normal((4, 4, H)))
    c, tc = leaf(rng.standard_normal((4, 4, H)))
    packed = zrnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    tpacked = trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted)
    lstm = mode == "LSTM"
    out, state = ours(packed, (h, c) if lstm else h)
    tout, tstate = theirs(tpacked, (th, tc) if lstm else th)
    assert isinstance(out, zrnn.PackedSequence)
    close(out.data, tout.data, "packed output")
    assert out.batch_sizes.tolist() == tout.batch_sizes.tolist()
    padded, out_lengths = zrnn.pad_packed_sequence(out)
    tpadded, tlengths = trnn.pad_packed_sequence(tout)
    close(padded, tpadded, "padded output")
    assert out_lengths.tolist() == tlengths.tolist() == lengths
    loss, tloss = loss_pair(padded, state, tpadded, tstate, mode)
    loss.backward()
    tloss.backward()
    check_grads(ours, theirs, [(x, tx), (h, th)] + ([(c, tc)] if lstm else []))


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
def test_dropout_between_layers(mode):
    ours, theirs = pair(mode, num_layers=2, dropout=0.5)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((L, N, I))
    ours.eval()
    theirs.eval()
    close(ours(zero.tensor(x))[0], theirs(torch.tensor(x))[0], "eval output")
    ours.train()
    trained = ours(zero.tensor(x))[0].detach().numpy()
    assert not np.allclose(trained, theirs(torch.tensor(x))[0].detach().numpy())


@pytest.mark.parametrize("mode", list(LAYERS))
def test_bias_false_and_float32(mode):
    name, extra = LAYERS[mode]
    theirs = getattr(torch.nn, name)(I, H, **extra, bias=False)
    ours = getattr(zero.nn, name)(I, H, **extra, bias=False)
    assert [n for n, _ in ours.named_parameters()] == ["weight_ih_l0", "weight_hh_l0"]
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((L, N, I)).astype(np.float32)
    out, tout = ours(zero.tensor(x))[0], theirs(torch.tensor(x))[0]
    assert out.dtype == zero.float32
    close(out, tout, "output", tol=1e-5)


CELLS = {"RNN_TANH": ("RNNCell", {}), "RNN_RELU": ("RNNCell", {"nonlinearity": "relu"}), "LSTM": ("LSTMCell", {}),
         "GRU": ("GRUCell", {})}


@pytest.mark.parametrize("mode", list(CELLS))
@pytest.mark.parametrize("batched,with_states", [(True, True), (True, False), (False, True)])
def test_cell_matches_pytorch(mode, batched, with_states):
    name, extra = CELLS[mode]
    theirs = getattr(torch.nn, name)(I, H, **extra, dtype=torch.float64)
    ours = getattr(zero.nn, name)(I, H, **extra, dtype=zero.float64)
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    rng = np.random.default_rng(4)
    x, tx = leaf(rng.standard_normal((N, I) if batched else (I,)))
    state_shape = (N, H) if batched else (H,)
    leaves = [(x, tx)]
    if with_states:
        pairs = [leaf(rng.standard_normal(state_shape)) for _ in range(2 if mode == "LSTM" else 1)]
        leaves += pairs
        hx = tuple(a for a, _ in pairs) if mode == "LSTM" else pairs[0][0]
        thx = tuple(b for _, b in pairs) if mode == "LSTM" else pairs[0][1]
        got, want = ours(x, hx), theirs(tx, thx)
    else:
        got, want = ours(x), theirs(tx)
    got, want = (got, want) if mode == "LSTM" else ((got,), (want,))
    loss, tloss = 0, 0
    for k, (a, b) in enumerate(zip(got, want)):
        assert tuple(a.shape) == tuple(b.shape)
        close(a, b, f"state {k}")
        loss = loss + (a * (k + 1.5)).sum()
        tloss = tloss + (b * (k + 1.5)).sum()
    loss.backward()
    tloss.backward()
    check_grads(ours, theirs, leaves)


def test_state_dict_loads_into_pytorch_and_init_bounds():
    ours = zero.nn.LSTM(I, H, num_layers=2, bidirectional=True, dtype=zero.float64)
    theirs = torch.nn.LSTM(I, H, num_layers=2, bidirectional=True, dtype=torch.float64)
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    bound = 1 / np.sqrt(H)
    for p in ours.parameters():
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 4
    x = np.random.default_rng(5).standard_normal((L, N, I))
    close(ours(zero.tensor(x))[0], theirs(torch.tensor(x))[0], "output after loading into PyTorch")
    assert len(ours.all_weights) == 4 and len(ours.all_weights[0]) == 4
    ours.flatten_parameters()


def test_repr_matches_pytorch():
    cases = [("RNN", (3, 4), {"nonlinearity": "relu", "num_layers": 2, "bias": False, "batch_first": True,
                              "dropout": 0.5, "bidirectional": True}),
             ("LSTM", (3, 4), {}), ("GRU", (3, 4), {"num_layers": 3}),
             ("RNNCell", (3, 4), {"nonlinearity": "relu", "bias": False}), ("LSTMCell", (3, 4), {}),
             ("GRUCell", (3, 4), {"bias": False})]
    for name, args, kwargs in cases:
        assert repr(getattr(zero.nn, name)(*args, **kwargs)) == repr(getattr(torch.nn, name)(*args, **kwargs))


def test_errors_as_pytorch():
    def message(fn):
        try:
            fn()
        except Exception as error:
            return type(error), str(error)
        return None

    for name in ("RNN", "LSTM", "GRU"):
        ours, theirs = getattr(zero.nn, name)(3, 4), getattr(torch.nn, name)(3, 4)
        for shape in [(5, 2, 5), (5, 2, 3, 1)]:
            got = message(lambda: ours(zero.zeros(*shape)))
            want = message(lambda: theirs(torch.zeros(*shape)))
            assert got is not None and want is not None
            assert issubclass(got[0], want[0]) and got[1] == want[1]
    lstm, tlstm = zero.nn.LSTM(3, 4), torch.nn.LSTM(3, 4)
    for h_shape, c_shape, x_shape in [((1, 3, 4), (1, 2, 4), (5, 2, 3)), ((1, 2, 4), (1, 3, 4), (5, 2, 3)),
                                      ((2, 4), (2, 4), (5, 2, 3))]:
        got = message(lambda: lstm(zero.zeros(*x_shape), (zero.zeros(*h_shape), zero.zeros(*c_shape))))
        want = message(lambda: tlstm(torch.zeros(*x_shape), (torch.zeros(*h_shape), torch.zeros(*c_shape))))
        assert got is not None and want is not None and issubclass(got[0], want[0]) and got[1] == want[1]
    gru, tgru = zero.nn.GRU(3, 4), torch.nn.GRU(3, 4)
    got = message(lambda: gru(zero.zeros(5, 2, 3), zero.zeros(2, 2, 4)))
    want = message(lambda: tgru(torch.zeros(5, 2, 3), torch.zeros(2, 2, 4)))
    assert got is not None and want is not None and issubclass(got[0], want[0]) and got[1] == want[1]
    for name in ("RNNCell", "LSTMCell", "GRUCell"):
        ours, theirs = getattr(zero.nn, name)(3, 4), getattr(torch.nn, name)(3, 4)
        for shape in [(2, 5), (2, 3, 3)]:
            got = message(lambda: ours(zero.zeros(*shape)))
            want = message(lambda: theirs(torch.zeros(*shape)))
            assert got is not None and want is not None and issubclass(got[0], want[0]) and got[1] == want[1]
    for kwargs in [{"nonlinearity": "sigmoid"}, {"dropout": 2}, {"num_layers": 0}]:
        got = message(lambda: zero.nn.RNN(3, 4, **kwargs))
        want = message(lambda: torch.nn.RNN(3, 4, **kwargs))
        assert got is not None and want is not None and issubclass(got[0], want[0]) and got[1] == want[1]
    for kwargs in [{"proj_size": 4}, {"proj_size": 5}, {"proj_size": -1}]:
        got = message(lambda: zero.nn.LSTM(3, 4, **kwargs))
        want = message(lambda: torch.nn.LSTM(3, 4, **kwargs))
        assert got is not None and want is not None and issubclass(got[0], want[0]) and got[1] == want[1]


@pytest.mark.parametrize("mode,reverse,packed", list(itertools.product(["RNN_TANH", "LSTM", "GRU"], [False, True],
                                                                       [False, True])))
def test_gradcheck_of_the_op(mode, reverse, packed):
    gates = {"RNN_TANH": 1, "LSTM": 4, "GRU": 3}[mode]
    rng = np.random.default_rng(6)
    length, rows, inputs, hidden = 3, 3, 2, 2

    def make(*shape):
        return zero.tensor(rng.standard_normal(shape) * 0.7, requires_grad=True)

    x, h0, c0 = make(length, rows, inputs), make(rows, hidden), make(rows, hidden)
    w_ih, w_hh = make(gates * hidden, inputs), make(gates * hidden, hidden)
    b_ih, b_hh = make(gates * hidden), make(gates * hidden)
    sizes = (3, 2, 1) if packed else None

    def states(x, h0, c0, w_ih, w_hh, b_ih, b_hh):
        return recurrence(mode, x, h0, c0 if mode == "LSTM" else None, w_ih, w_hh, b_ih, b_hh, sizes, reverse)

    assert gradcheck(states, (x, h0, c0, w_ih, w_hh, b_ih, b_hh))


# -- LSTM with projections (proj_size P > 0): h' = (o tanh(c')) W_hrᵀ, h of size P, c of size H ----------------
# These run on ZERO_TEST_DEVICE (the played-CUDA dry run and the GPU check put modules and inputs there).

DEVICE = os.environ.get("ZERO_TEST_DEVICE", "cpu")
P = 3


def projected_pair(**kwargs):
    """A PyTorch LSTM with proj_size P (float64, CPU) and a Zero one on DEVICE with its weights."""
    theirs = torch.nn.LSTM(I, H, proj_size=P, **kwargs, dtype=torch.float64)
    ours = zero.nn.LSTM(I, H, proj_size=P, **kwargs, device=DEVICE, dtype=zero.float64)
    ours.load_state_dict({k: zero.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})
    return ours, theirs


def device_leaf(array: np.ndarray):
    return zero.tensor(array, requires_grad=True, device=DEVICE), torch.tensor(array, requires_grad=True)


def host_close(ours, theirs, what: str, tol: float = 1e-10) -> None:
    assert tuple(ours.shape) == tuple(theirs.shape), what
    np.testing.assert_allclose(ours.detach().cpu().numpy(), theirs.detach().numpy(), rtol=tol, atol=tol,
                               err_msg=what)


def check_projected(ours, theirs, out, state, tout, tstate, leaves) -> None:
    """Output, h_n and c_n equal; then every gradient after a loss reading all three."""
    host_close(out, tout, "output")
    host_close(state[0], tstate[0], "h_n")
    host_close(state[1], tstate[1], "c_n")
    weights = np.linspace(-1.0, 1.0, out.shape[-1])
    loss = (out * zero.tensor(weights, device=DEVICE)).sum() + (state[0] ** 2).sum() + 2 * (state[1] ** 2).sum()
    tloss = (tout * torch.tensor(weights)).sum() + (tstate[0] ** 2).sum() + 2 * (tstate[1] ** 2).sum()
    loss.backward()
    tloss.backward()
    names = [n for n, _ in ours.named_parameters()]
    assert names == [n for n, _ in theirs.named_parameters()]
    assert any(n.startswith("weight_hr") for n in names)
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert p.grad is not None, name
        host_close(p.grad, q.grad, f"grad of {name}")
    for k, (a, b) in enumerate(leaves):
        host_close(a.grad, b.grad, f"grad of input {k}")


@pytest.mark.parametrize("num_layers,bidirectional,batch_first,with_states",
                         [(1, False, False, False), (1, False, False, True), (1, True, True, True),
                          (2, False, True, True), (2, True, False, False), (2, True, True, True)])
def test_projected_lstm_matches_pytorch(num_layers, bidirectional, batch_first, with_states):
    ours, theirs = projected_pair(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first)
    layers = num_layers * (2 if bidirectional else 1)
    rng = np.random.default_rng(7)
    x, tx = device_leaf(rng.standard_normal((N, L, I) if batch_first else (L, N, I)))
    leaves = [(x, tx)]
    if with_states:
        (h, th), (c, tc) = device_leaf(rng.standard_normal((layers, N, P))), device_leaf(
            rng.standard_normal((layers, N, H)))
        leaves += [(h, th), (c, tc)]
        (out, state), (tout, tstate) = ours(x, (h, c)), theirs(tx, (th, tc))
    else:
        (out, state), (tout, tstate) = ours(x), theirs(tx)
    assert tuple(out.shape[-1:]) == (P * (2 if bidirectional else 1),)
    assert tuple(state[0].shape) == (layers, N, P) and tuple(state[1].shape) == (layers, N, H)
    check_projected(ours, theirs, out, state, tout, tstate, leaves)


@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_projected_lstm_packed(enforce_sorted):
    from torch.nn.utils import rnn as trnn

    from zero.nn.utils import rnn as zrnn

    lengths = [5, 4, 4, 2] if enforce_sorted else [2, 5, 1, 4]
    ours, theirs = projected_pair(num_layers=2, bidirectional=True)
    rng = np.random.default_rng(8)
    x, tx = device_leaf(rng.standard_normal((5, 4, I)))
    h, th = device_leaf(rng.standard_normal((4, 4, P)))
    c, tc = device_leaf(rng.standard_normal((4, 4, H)))
    out, state = ours(zrnn.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted), (h, c))
    tout, tstate = theirs(trnn.pack_padded_sequence(tx, lengths, enforce_sorted=enforce_sorted), (th, tc))
    assert isinstance(out, zrnn.PackedSequence)
    host_close(out.data, tout.data, "packed output")
    padded, out_lengths = zrnn.pad_packed_sequence(out)
    tpadded, _ = trnn.pad_packed_sequence(tout)
    assert out_lengths.tolist() == lengths
    check_projected(ours, theirs, padded, state, tpadded, tstate, [(x, tx), (h, th), (c, tc)])


def test_projected_lstm_unbatched():
    ours, theirs = projected_pair(num_layers=2, bidirectional=True)
    rng = np.random.default_rng(9)
    x, tx = device_leaf(rng.standard_normal((L, I)))
    h, th = device_leaf(rng.standard_normal((4, P)))
    c, tc = device_leaf(rng.standard_normal((4, H)))
    out, state = ours(x, (h, c))
    tout, tstate = theirs(tx, (th, tc))
    assert tuple(out.shape) == (L, 2 * P)
    check_projected(ours, theirs, out, state, tout, tstate, [(x, tx), (h, th), (c, tc)])


@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")
def test_projected_lstm_parameters_init_repr_and_state_dict():
    ours = zero.nn.LSTM(10, 20, proj_size=5, num_layers=2, bidirectional=True)
    theirs = torch.nn.LSTM(10, 20, proj_size=5, num_layers=2, bidirectional=True)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [tuple(p.shape) for p in ours._flat_weights] == [tuple(p.shape) for p in theirs._flat_weights]
    assert [[tuple(p.shape) for p in ws] for ws in ours.all_weights] == \
        [[tuple(p.shape) for p in ws] for ws in theirs.all_weights]
    assert repr(ours) == repr(theirs) == "LSTM(10, 20, proj_size=5, num_layers=2, bidirectional=True)"
    bound = 1 / np.sqrt(20)
    for name, p in ours.named_parameters():
        values = p.detach().numpy()
        assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 4, name
    theirs.load_state_dict({k: torch.tensor(v.numpy()) for k, v in ours.state_dict().items()})
    x = np.random.default_rng(10).standard_normal((4, 2, 10)).astype(np.float32)
    close(ours(zero.tensor(x))[0], theirs(torch.tensor(x))[0], "output after loading into PyTorch", tol=1e-5)


def test_projected_lstm_state_size_errors_as_pytorch():
    ours, theirs = zero.nn.LSTM(3, 4, proj_size=2), torch.nn.LSTM(3, 4, proj_size=2)
    for h_shape, c_shape in [((1, 2, 4), (1, 2, 4)), ((1, 2, 2), (1, 2, 2)), ((1, 2, 2), (1, 3, 4))]:
        with pytest.raises(RuntimeError) as got:
            ours(zero.zeros(5, 2, 3), (zero.zeros(*h_shape), zero.zeros(*c_shape)))
        with pytest.raises(RuntimeError) as want:
            theirs(torch.zeros(5, 2, 3), (torch.zeros(*h_shape), torch.zeros(*c_shape)))
        assert str(got.value) == str(want.value)


@pytest.mark.parametrize("reverse,packed", list(itertools.product([False, True], [False, True])))
def test_gradcheck_of_the_op_with_projection(reverse, packed):
    rng = np.random.default_rng(11)
    length, rows, inputs, hidden, proj = 3, 3, 2, 3, 2

    def make(*shape):
        return zero.tensor(rng.standard_normal(shape) * 0.7, requires_grad=True, device=DEVICE)

    x, h0, c0 = make(length, rows, inputs), make(rows, proj), make(rows, hidden)
    w_ih, w_hh, w_hr = make(4 * hidden, inputs), make(4 * hidden, proj), make(proj, hidden)
    b_ih, b_hh = make(4 * hidden), make(4 * hidden)
    sizes = (3, 2, 1) if packed else None

    def states(x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr):
        hs, cs = recurrence("LSTM", x, h0, c0, w_ih, w_hh, b_ih, b_hh, sizes, reverse, w_hr)
        assert tuple(hs.shape) == (length + 1, rows, proj) and tuple(cs.shape) == (length + 1, rows, hidden)
        return hs, cs

    assert gradcheck(states, (x, h0, c0, w_ih, w_hh, b_ih, b_hh, w_hr))
