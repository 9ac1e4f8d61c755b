"""The CPU's recurrent cells: one Numba pass per time step over the gates of all active rows.

``zero.backends.array_kernels.recurrent`` runs the time loop (one BLAS product per step for
the hidden state, the input projections of all steps as one product before it) and calls
these for the elementwise part of a step, forward and backward, on C-contiguous arrays of
the step's active rows (b rows, hidden size H; G gates of H columns side by side, in
PyTorch's order: LSTM i, f, g, o; GRU r, z, n). Each is one loop over b·H elements that
reads the pre-activations once and writes the new state, what backward needs, or the
pre-activation gradients. The sigmoid and tanh are ``_fastmath``'s vectorisable ones.

Measured on this machine for hidden 200, batch 20 (SciPy is not installed, so Numba's
``np.dot`` -- which calls BLAS through SciPy -- is not available; the time loop therefore
stays in Python around NumPy's GEMM, one call of a cell per step, a few microseconds
against the product's ~80).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

from ...array_kernels import recurrent as through_time
from .. import parallel

from ._fastmath import fast_exp, fast_tanh, like
from ._jit import jit, njit, prange

__all__ = ["gru_cell", "gru_cell_backward", "lstm_cell", "lstm_cell_backward", "recurrent_backward",
           "recurrent_forward", "recurrent_projected_backward", "recurrent_projected_forward", "rnn_cell",
           "rnn_cell_backward"]


def rnn_cell(relu: bool, gx, gh, h_out) -> None:
    """h_out (b, H) = act(gx + gh): gx holds x W_ihᵀ + b_ih + b_hh, gh = h W_hhᵀ."""
    _rnn_cell(relu, gx, gh, h_out)


def rnn_cell_backward(relu: bool, dh, dh_out, h_out, d_pre) -> None:
    """d_pre (b, H) = (dh + dh_out) · act'(pre), from the step's output h_out."""
    _rnn_cell_backward(relu, dh, dh_out, h_out, d_pre)


def lstm_cell(gx, gh, c, h_out, c_out, saved) -> None:
    """One LSTM step: gates = gx + gh (b, 4H), c_out = f c + i g, h_out = o tanh(c_out);
    saved (b, 5H) = i, f, g, o, tanh(c_out) (None: nothing kept)."""
    _lstm_cell(gx, gh, c, h_out, c_out, np.empty((gx.shape[0], 5 * c.shape[1]), gx.dtype) if saved is None else saved)


def lstm_cell_backward(dh, dh_out, dc, c, saved, d_gates) -> None:
    """d_gates (b, 4H) of one LSTM step from dh + dh_out (the state's and the output's
    gradient), dc (updated in place to the gradient of the previous cell state) and c
    (the previous cell state)."""
    _lstm_cell_backward(dh, dh_out, dc, c, saved, d_gates)


def gru_cell(gx, gh, b_hh, h, h_out, saved) -> None:
    """One GRU step: gx = x W_ihᵀ + b_ih, gh = h W_hhᵀ (b_hh added here: the reset gate
    multiplies W_hn h + b_hn); saved (b, 4H) = r, z, n, W_hn h + b_hn (None: nothing kept)."""
    _gru_cell(gx, gh, b_hh, h, h_out, np.empty((gx.shape[0], 4 * h.shape[1]), gx.dtype) if saved is None else saved)


def gru_cell_backward(dh, dh_out, h, saved, d_gates_x, d_gates_h, dh_direct) -> None:
    """d_gates_x, d_gates_h (b, 3H) of one GRU step (they differ in the n part: the hidden
    side's is multiplied by r), and dh_direct = dh z, the gradient through h' = ... + z h."""
    _gru_cell_backward(dh, dh_out, h, saved, d_gates_x, d_gates_h, dh_direct)


@jit(inline="always")
def _sigmoid(v):
    one = like(v, 1.0)
    return np.divide(one, one + fast_exp(-v))


# The forward cells run, row by row, a few one-loop helpers over contiguous 1-D pieces of the
# gate arrays: a loop that reads several gates and writes several outputs at offsets LLVM
# cannot tell apart is not vectorised (measured: the LSTM step at hidden 200, batch 20 took
# ~300 µs as one loop, ~25 µs as these), and each helper, compiled on its own, is.

@njit
def _sigmoid_of_sum(a, b, out):
    for k in prange(out.size):
        out[k] = _sigmoid(a[k] + b[k])


@njit
def _sigmoid_of_sum3(a, b, c, out):
    for k in prange(out.size):
        out[k] = _sigmoid(a[k] + b[k] + c[k])


@njit
def _tanh_of_sum(a, b, out):
    for k in prange(out.size):
        out[k] = fast_tanh(a[k] + b[k])


@njit
def _relu_of_sum(a, b, out):
    for k in prange(out.size):
        v = a[k] + b[k]
        out[k] = max(v, like(v, 0.0))


@njit
def _tanh_of_fma(a, b, c, out):
    for k in prange(out.size):
        out[k] = fast_tanh(a[k] + b[k] * c[k])


@njit
def _sum(a, b, out):
    for k in prange(out.size):
        out[k] = a[k] + b[k]


@njit
def _tanh(x, out):
    for k in prange(out.size):
        out[k] = fast_tanh(x[k])


@njit
def _product(a, b, out):
    for k in prange(out.size):
        out[k] = a[k] * b[k]


@njit
def _two_products(a, b, c, d, out):
    for k in prange(out.size):
        out[k] = a[k] * b[k] + c[k] * d[k]


@njit
def _between(new, weight, old, out):
    for k in prange(out.size):
        out[k] = new[k] + weight[k] * (old[k] - new[k])


@njit
def _rnn_cell(relu, gx, gh, h_out):
    for r in range(h_out.shape[0]):
        if relu:
            _relu_of_sum(gx[r], gh[r], h_out[r])
        else:
            _tanh_of_sum(gx[r], gh[r], h_out[r])


@njit
def _lstm_cell(gx, gh, c, h_out, c_out, saved):
    rows, hidden = h_out.shape
    for r in range(rows):
        a, b, s = gx[r], gh[r], saved[r]
        _sigmoid_of_sum(a[:2 * hidden], b[:2 * hidden], s[:2 * hidden])              # i, f
        _tanh_of_sum(a[2 * hidden:3 * hidden], b[2 * hidden:3 * hidden], s[2 * hidden:3 * hidden])   # g
        _sigmoid_of_sum(a[3 * hidden:], b[3 * hidden:], s[3 * hidden:4 * hidden])    # o
        _two_products(s[hidden:2 * hidden], c[r], s[:hidden], s[2 * hidden:3 * hidden], c_out[r])   # f c + i g
        _tanh(c_out[r], s[4 * hidden:])
        _product(s[3 * hidden:4 * hidden], s[4 * hidden:], h_out[r])


@njit
def _rnn_cell_backward(relu, dh, dh_out, h_out, d_pre):
    rows, hidden = h_out.shape
    for r in range(rows):
        for j in prange(hidden):
            y = h_out[r, j]
            grad_h = dh[r, j] + dh_out[r, j]
            if relu:
                d_pre[r, j] = grad_h if y > like(y, 0.0) else like(y, 0.0)
            else:
                d_pre[r, j] = grad_h * (like(y, 1.0) - y * y)


@njit
def _grad_of_cell(dc, grad_h, o, tc):
    for k in prange(dc.size):
        one = like(tc[k], 1.0)
        dc[k] = dc[k] + grad_h[k] * o[k] * (one - tc[k] * tc[k])


@njit
def _grad_through_sigmoid(a, b, s, out):
    """out = a b σ'(x), with s = σ(x)."""
    for k in prange(out.size):
        out[k] = a[k] * b[k] * s[k] * (like(s[k], 1.0) - s[k])


@njit
def _grad_through_tanh(a, b, t, out):
    """out = a b tanh'(x), with t = tanh(x)."""
    for k in prange(out.size):
        out[k] = a[k] * b[k] * (like(t[k], 1.0) - t[k] * t[k])


@njit
def _grad_of_update(grad_h, h, new, z, out):
    for k in prange(out.size):
        out[k] = grad_h[k] * (h[k] - new[k]) * z[k] * (like(z[k], 1.0) - z[k])


@njit
def _grad_of_new(grad_h, z, new, out):
    for k in prange(out.size):
        one = like(z[k], 1.0)
        out[k] = grad_h[k] * (one - z[k]) * (one - new[k] * new[k])


@njit
def _copy(x, out):
    for k in prange(out.size):
        out[k] = x[k]


@njit
def _lstm_cell_backward(dh, dh_out, dc, c, saved, d_gates):
    rows, hidden = dc.shape
    grad_h = np.empty(hidden, dc.dtype)
    for r in range(rows):
        s, d = saved[r], d_gates[r]
        i, f, g, o = s[:hidden], s[hidden:2 * hidden], s[2 * hidden:3 * hidden], s[3 * hidden:4 * hidden]
        tc = s[4 * hidden:]
        _sum(dh[r], dh_out[r], grad_h)
        _grad_of_cell(dc[r], grad_h, o, tc)                                  # dc += dh o tanh'(c)
        _grad_through_sigmoid(dc[r], g, i, d[:hidden])                       # di
        _grad_through_sigmoid(dc[r], c[r], f, d[hidden:2 * hidden])          # df
        _grad_through_tanh(dc[r], i, g, d[2 * hidden:3 * hidden])            # dg
        _grad_through_sigmoid(grad_h, tc, o, d[3 * hidden:])                 # do
        _product(dc[r], f, dc[r])                                            # the previous cell's


@njit
def _gru_cell(gx, gh, b_hh, h, h_out, saved):
    rows, hidden = h_out.shape
    for r in range(rows):
        a, b, s = gx[r], gh[r], saved[r]
        _sigmoid_of_sum3(a[:2 * hidden], b[:2 * hidden], b_hh[:2 * hidden], s[:2 * hidden])    # r, z
        _sum(b[2 * hidden:], b_hh[2 * hidden:], s[3 * hidden:])                              # W_hn h + b_hn
        _tanh_of_fma(a[2 * hidden:], s[:hidden], s[3 * hidden:], s[2 * hidden:3 * hidden])   # n
        _between(s[2 * hidden:3 * hidden], s[hidden:2 * hidden], h[r], h_out[r])             # n + z (h - n)


@njit
def _gru_cell_backward(dh, dh_out, h, saved, d_gates_x, d_gates_h, dh_direct):
    rows, hidden = h.shape
    grad_h = np.empty(hidden, h.dtype)
    for r in range(rows):
        s, dx, dhh = saved[r], d_gates_x[r], d_gates_h[r]
        reset, update, new, hn = s[:hidden], s[hidden:2 * hidden], s[2 * hidden:3 * hidden], s[3 * hidden:]
        _sum(dh[r], dh_out[r], grad_h)
        _grad_of_new(grad_h, update, new, dx[2 * hidden:])                    # d of n's pre-activation
        _grad_of_update(grad_h, h[r], new, update, dx[hidden:2 * hidden])     # dz
        _grad_through_sigmoid(dx[2 * hidden:], hn, reset, dx[:hidden])        # dr
        _copy(dx[:2 * hidden], dhh[:2 * hidden])
        _product(dx[2 * hidden:], reset, dhh[2 * hidden:])                    # the hidden side's n: times r
        _product(grad_h, update, dh_direct[r])


def recurrent_forward(mode: str, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, batch_sizes: Any,
                      reverse: bool, states: Any, saved: Any) -> None:
    """The contract's kernel: the shared time loop with these cells."""
    through_time.forward_through_time(np, CELLS, parallel.product, mode, x, w_ih, w_hh, b_ih, b_hh, batch_sizes,
                                      reverse, states, saved)


def recurrent_backward(mode: str, grad_states: Any, x: Any, w_ih: Any, w_hh: Any, batch_sizes: Any, reverse: bool,
                       states: Any, saved: Any, grad_x: Any, grad_w_ih: Any, grad_w_hh: Any, grad_b_ih: Any,
                       grad_b_hh: Any, grad_h: Any, grad_c: Any) -> None:
    """The contract's kernel: the shared backward through time with these cells."""
    through_time.backward_through_time(np, CELLS, parallel.product, mode, grad_states, x, w_ih, w_hh, batch_sizes,
                                       reverse, states, saved, grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh,
                                       grad_h, grad_c)



def recurrent_projected_forward(x: Any, w_ih: Any, w_hh: Any, w_hr: Any, b_ih: Any, b_hh: Any, batch_sizes: Any,
                                reverse: bool, states: Any, saved: Any) -> None:
    """The contract's kernel: the shared time loop of an LSTM with projections, these cells."""
    through_time.forward_through_time(np, CELLS, parallel.product, "LSTM", x, w_ih, w_hh, b_ih, b_hh, batch_sizes,
                                      reverse, states, saved, w_hr)


def recurrent_projected_backward(grad_states: Any, x: Any, w_ih: Any, w_hh: Any, w_hr: Any, batch_sizes: Any,
                                 reverse: bool, states: Any, saved: Any, grad_x: Any, grad_w_ih: Any, grad_w_hh: Any,
                                 grad_w_hr: Any, grad_b_ih: Any, grad_b_hh: Any, grad_h: Any, grad_c: Any) -> None:
    """The contract's kernel: the shared backward through time of an LSTM with projections."""
    through_time.backward_through_time(np, CELLS, parallel.product, "LSTM", grad_states, x, w_ih, w_hh, batch_sizes,
                                       reverse, states, saved, grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh,
                                       grad_h, grad_c, w_hr, grad_w_hr)

CELLS = sys.modules[__name__]   # what the shared time loop calls: this module's cells
