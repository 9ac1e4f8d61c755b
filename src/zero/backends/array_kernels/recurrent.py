"""One recurrent layer in one direction (RNN, LSTM, GRU), forward and backward through time,
written once for NumPy and CuPy: the products through the array library, the elementwise
part of each step through the device's ``cells`` (CPU: Numba loops; CUDA: CuPy elementwise
kernels), large products through the device's ``product`` (the CPU splits them over its pool).
Each device's ``recurrent_forward``/``recurrent_backward`` kernels call these two with its own.

Layout (L steps, N rows, hidden size H, G gates: 1 RNN, 4 LSTM, 3 GRU):

    x (L, N, I)  w_ih (G·H, I)  w_hh (G·H, H)  b_ih, b_hh (G·H,) or None
    states (L + 1, N, H), LSTM (2, L + 1, N, H): hidden (and cell) states by slot; the step
        at time t reads slot t and writes slot t + 1 (reverse: reads t + 1, writes t), so
        the initial state is slot 0 (reverse: L), the outputs are slots 1..L (reverse: 0..L-1),
        each a view, and the final state the last slot written.
    saved (L, N, S·H) or None: what backward needs beyond the states; LSTM i, f, g, o,
        tanh(c) (S = 5), GRU r, z, n, W_hn h + b_hn (S = 4), RNN nothing.
    batch_sizes: None (all N rows every step) or, for packed sequences, the rows active at
        each time step, non-increasing (rows sorted by length): a step computes its first
        batch_sizes[t] rows, and copies the others' state on unchanged, so the last slot holds
        each sequence's state after its own last step (reverse: each starts from the initial
        state at its own last step).

LSTM with projections (w_hr (P, H) given; PyTorch's ``proj_size``): the hidden state has
size P, h' = (o tanh(c')) W_hrᵀ, and w_hh is (4H, P); states is then one flat array, the
hidden states (L + 1, N, P) followed by the cell states (L + 1, N, H) (``projected_states``).

Forward: gx = x W_ihᵀ + b for all steps in one product, then per step gh = h W_hhᵀ (one
product) and the cell (projected: the cell writes m = o tanh(c') into a scratch array, and
h' = m W_hrᵀ is one more product). Backward, steps in the opposite order: the cell's backward gives the
pre-activation gradients d_gates[t] (kept for all steps), then dh = d_gates[t] W_hh (one
product); afterwards grad_x = d_gates W_ih, grad_w_ih = d_gatesᵀ x, grad_w_hh = d_gatesᵀ
h_prev (h_prev: the slots read, one contiguous range) and the bias sums, one product each.
Projected, per step the whole gradient of h' is kept (d_hidden[t]) and dm = d_hidden[t] W_hr
goes into the cell's backward; afterwards grad_w_hr = d_hiddenᵀ m, one product, with m = o
tanh(c') recomputed from what the forward saved.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from ..kernel_contract import Array

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}
SAVED = {"RNN_TANH": 0, "RNN_RELU": 0, "LSTM": 5, "GRU": 4}
Product = Callable[[Array, Array, Array], None]


def projected_states(states: Array, length: int, rows: int, proj: int, hidden: int) -> tuple[Array, Array]:
    """The hidden (L + 1, N, P) and cell (L + 1, N, H) states, views of the flat ``states`` of an
    LSTM with projections (hidden first)."""
    split = (length + 1) * rows * proj
    return states[:split].reshape(length + 1, rows, proj), states[split:].reshape(length + 1, rows, hidden)


def _step_slots(t: int, length: int, reverse: bool) -> tuple[int, int]:
    """(the slot step t reads, the slot it writes)."""
    return (t + 1, t) if reverse else (t, t + 1)


def forward_through_time(xp: ModuleType, cells: Any, product: Product, mode: str, x: Array, w_ih: Array, w_hh: Array,
                         b_ih: Array | None, b_hh: Array | None, batch_sizes: Sequence[int] | None, reverse: bool,
                         states: Array, saved: Array | None, w_hr: Array | None = None) -> None:
    length, rows, inputs = x.shape
    width = w_hh.shape[0]                      # G·H
    lstm, gru = mode == "LSTM", mode == "GRU"
    projected = w_hr is not None
    cs: Any                                    # (used only when lstm)
    if w_hr is not None:                       # LSTM with projections: h' = (o tanh(c')) W_hrᵀ
        hs, cs = projected_states(states, length, rows, *w_hr.shape)
        w_hr_t = xp.ascontiguousarray(w_hr.T)  # (H, P)
        m = xp.empty((rows, w_hr.shape[1]), dtype=states.dtype)     # o tanh(c') of a step
    else:
        hs = states[0] if lstm else states
        cs = states[1] if lstm else None
    gx = xp.empty((length, rows, width), dtype=states.dtype)
    product(x.reshape(length * rows, inputs), w_ih.T, gx.reshape(length * rows, width))   # all steps at once
    bias = b_ih if gru or b_hh is None else (b_hh if b_ih is None else b_ih + b_hh)
    if bias is not None:
        gx += bias
    if gru:
        b_hh = xp.zeros(width, dtype=states.dtype) if b_hh is None else xp.ascontiguousarray(b_hh)
    w_hh_t = xp.ascontiguousarray(w_hh.T)     # (H, G·H): BLAS is faster on it than on the transposed view
    gh = xp.empty((rows, width), dtype=states.dtype)
    relu = mode == "RNN_RELU"
    for k in range(length):
        t = length - 1 - k if reverse else k
        src, dst = _step_slots(t, length, reverse)
        b = rows if batch_sizes is None else int(batch_sizes[t])
        h = hs[src, :b]
        xp.matmul(h, w_hh_t, out=gh[:b])
        keep = None if saved is None else saved[t, :b]
        if projected:
            cells.lstm_cell(gx[t, :b], gh[:b], cs[src, :b], m[:b], cs[dst, :b], keep)
            xp.matmul(m[:b], w_hr_t, out=hs[dst, :b])
        elif lstm:
            cells.lstm_cell(gx[t, :b], gh[:b], cs[src, :b], hs[dst, :b], cs[dst, :b], keep)
        elif gru:
            cells.gru_cell(gx[t, :b], gh[:b], b_hh, h, hs[dst, :b], keep)
        else:
            cells.rnn_cell(relu, gx[t, :b], gh[:b], hs[dst, :b])
        if b < rows:                           # packed: the rows past their end keep their state
            hs[dst, b:] = hs[src, b:]
            if lstm:
                cs[dst, b:] = cs[src, b:]


def backward_through_time(xp: ModuleType, cells: Any, product: Product, mode: str, grad_states: Array, x: Array,
                          w_ih: Array, w_hh: Array, batch_sizes: Sequence[int] | None, reverse: bool, states: Array,
                          saved: Array | None, grad_x: Array | None, grad_w_ih: Array | None,
                          grad_w_hh: Array | None, grad_b_ih: Array | None, grad_b_hh: Array | None,
                          grad_h: Array | None, grad_c: Array | None, w_hr: Array | None = None,
                          grad_w_hr: Array | None = None) -> None:
    length, rows, inputs = x.shape
    hidden = w_hh.shape[1]                     # the hidden state's size (projected: P)
    width = w_hh.shape[0]
    dtype = states.dtype
    lstm, gru = mode == "LSTM", mode == "GRU"
    relu = mode == "RNN_RELU"
    projected = w_hr is not None
    packed = batch_sizes is not None
    make = xp.zeros if packed else xp.empty    # packed: the rows past their end keep zero gradients
    if w_hr is not None:                       # LSTM with projections: h' = m W_hrᵀ, m = o tanh(c')
        hs, cs = projected_states(states, length, rows, *w_hr.shape)
        dys, dcs = projected_states(grad_states, length, rows, *w_hr.shape)
        d_hidden = make((length, rows, hidden), dtype=dtype)     # the whole gradient of each step's h'
        dm = xp.empty((rows, w_hr.shape[1]), dtype=dtype)
        no_grad = xp.zeros((rows, w_hr.shape[1]), dtype=dtype)  # m's gradient comes whole in dm
    else:
        hs, cs = (states[0], states[1]) if lstm else (states, states)     # (cs used only when lstm)
        dys, dcs = (grad_states[0], grad_states[1]) if lstm else (grad_states, grad_states)
    saved_: Any = saved                        # (Any: None only for RNN, which reads none of these)
    d_gates = make((length, rows, width), dtype=dtype)
    d_gates_h = make((length, rows, width), dtype=dtype) if gru else d_gates   # GRU: the n part differs
    dh = xp.zeros((rows, hidden), dtype=dtype)     # the state's gradient, less the output's at that slot
    direct: Any = xp.empty((rows, hidden), dtype=dtype) if gru else None
    final = 0 if reverse else length
    dc: Any = xp.array(dcs[final], dtype=dtype) if lstm else None   # the cell state's whole gradient
    for k in range(length - 1, -1, -1):
        t = length - 1 - k if reverse else k
        src, dst = _step_slots(t, length, reverse)
        b = rows if batch_sizes is None else int(batch_sizes[t])
        dh_out = dys[dst, :b]
        if projected:
            xp.add(dh[:b], dh_out, out=d_hidden[t, :b])
            xp.matmul(d_hidden[t, :b], w_hr, out=dm[:b])
            cells.lstm_cell_backward(dm[:b], no_grad[:b], dc[:b], cs[src, :b], saved_[t, :b], d_gates[t, :b])
        elif lstm:
            cells.lstm_cell_backward(dh[:b], dh_out, dc[:b], cs[src, :b], saved_[t, :b], d_gates[t, :b])
        elif gru:
            cells.gru_cell_backward(dh[:b], dh_out, hs[src, :b], saved_[t, :b], d_gates[t, :b], d_gates_h[t, :b],
                                    direct[:b])
        else:
            cells.rnn_cell_backward(relu, dh[:b], dh_out, hs[dst, :b], d_gates[t, :b])
        if b < rows:                           # packed: the state of the rows past their end was copied
            dh[b:] += dys[dst, b:]
        xp.matmul(d_gates_h[t, :b], w_hh, out=dh[:b])
        if gru:
            dh[:b] += direct[:b]
        if lstm:
            dc += dcs[src]
    first = length if reverse else 0
    if grad_h is not None:
        xp.add(dh, dys[first], out=grad_h)
    if grad_c is not None:
        grad_c[...] = dc
    all_gates = d_gates.reshape(length * rows, width)
    all_gates_h = d_gates_h.reshape(length * rows, width)
    if grad_x is not None:
        product(all_gates, w_ih, grad_x.reshape(length * rows, inputs))
    if grad_w_ih is not None:
        product(all_gates.T, x.reshape(length * rows, inputs), grad_w_ih)
    if grad_w_hh is not None:
        h_prev = hs[1:] if reverse else hs[:length]            # the slots the steps read, by time
        product(all_gates_h.T, h_prev.reshape(length * rows, hidden), grad_w_hh)
    if grad_b_ih is not None or grad_b_hh is not None:
        ones = xp.ones(length * rows, dtype=dtype)
        if grad_b_ih is not None:
            product(ones, all_gates, grad_b_ih)
        if grad_b_hh is not None:
            product(ones, all_gates_h, grad_b_hh)
    if grad_w_hr is not None:
        _projection_grad(xp, product, d_hidden, saved_, batch_sizes, grad_w_hr)


def _projection_grad(xp: ModuleType, product: Product, d_hidden: Array, saved: Array,
                     batch_sizes: Sequence[int] | None, grad_w_hr: Array) -> None:
    """grad_w_hr (P, H) = d_hiddenᵀ m over all steps and rows, one product, with m = o tanh(c')
    from the saved gates (L, N, 5H); packed: m is zero where a row is past its end (what the
    forward saved there was never written, so it is not read)."""
    length, rows, proj = d_hidden.shape
    hidden = grad_w_hr.shape[1]
    o, tanh_c = saved[:, :, 3 * hidden:4 * hidden], saved[:, :, 4 * hidden:]
    if batch_sizes is None:
        m = xp.multiply(o, tanh_c)                                  # (L, N, H)
    else:
        m = xp.zeros((length, rows, hidden), dtype=d_hidden.dtype)
        for t, b in enumerate(batch_sizes):
            xp.multiply(o[t, :b], tanh_c[t, :b], out=m[t, :b])
    product(d_hidden.reshape(length * rows, proj).T, m.reshape(length * rows, hidden), grad_w_hr)
