"""CUDA's recurrent cells: one CuPy elementwise kernel per step, forward and backward.

The time loop is ``zero.backends.array_kernels.recurrent``'s (one cuBLAS product per step,
the input projections of all steps as one product before it); these are the elementwise
part of a step, with the CPU's signatures (``zero.backends.cpu.kernels.recurrent`` says what
each computes). Each kernel runs over the step's (b, H) outputs; element i is row i / H,
column i % H of each gate block, read from the C-contiguous (b, G·H) gate arrays as raw
memory. Gate order as PyTorch's: LSTM i, f, g, o; GRU r, z, n.
"""
from __future__ import annotations

import sys
from typing import Any

from ...array_kernels import recurrent as through_time

from .. import runtime

cp = runtime.cupy()

__all__ = ["gru_cell", "gru_cell_backward", "lstm_cell", "lstm_cell_backward", "product", "recurrent_backward",
           "recurrent_forward", "recurrent_projected_backward", "recurrent_projected_forward", "rnn_cell",
           "rnn_cell_backward"]

_ROW = "const ptrdiff_t row = i / H, col = i % H;"

_rnn = cp.ElementwiseKernel(
    "T gx, T gh, bool relu", "T h_out",
    "T v = gx + gh; h_out = relu ? (v > (T)0 ? v : (T)0) : tanh(v);", "zero_rnn_cell")
_rnn_backward = cp.ElementwiseKernel(
    "T dh, T dh_out, T h_out, bool relu", "T d_pre",
    "T g = dh + dh_out; d_pre = relu ? (h_out > (T)0 ? g : (T)0) : g * ((T)1 - h_out * h_out);",
    "zero_rnn_cell_backward")
_lstm = cp.ElementwiseKernel(
    "raw T gx, raw T gh, T c, int64 H, bool keep", "T h_out, T c_out, raw T saved",
    _ROW + """
    const ptrdiff_t g = row * 4 * H + col, s = row * 5 * H + col;
    T ig = (T)1 / ((T)1 + exp(-(gx[g] + gh[g])));
    T fg = (T)1 / ((T)1 + exp(-(gx[g + H] + gh[g + H])));
    T gg = tanh(gx[g + 2 * H] + gh[g + 2 * H]);
    T og = (T)1 / ((T)1 + exp(-(gx[g + 3 * H] + gh[g + 3 * H])));
    T cell = fg * c + ig * gg;
    T tc = tanh(cell);
    c_out = cell;
    h_out = og * tc;
    if (keep) { saved[s] = ig; saved[s + H] = fg; saved[s + 2 * H] = gg; saved[s + 3 * H] = og; saved[s + 4 * H] = tc; }
    """, "zero_lstm_cell")
_lstm_backward = cp.ElementwiseKernel(
    "T dh, T dh_out, T c, raw T saved, int64 H", "T dc, raw T d_gates",
    _ROW + """
    const ptrdiff_t g = row * 4 * H + col, s = row * 5 * H + col;
    T ig = saved[s], fg = saved[s + H], gg = saved[s + 2 * H], og = saved[s + 3 * H], tc = saved[s + 4 * H];
    T grad_h = dh + dh_out;
    T grad_c = dc + grad_h * og * ((T)1 - tc * tc);
    d_gates[g] = grad_c * gg * ig * ((T)1 - ig);
    d_gates[g + H] = grad_c * c * fg * ((T)1 - fg);
    d_gates[g + 2 * H] = grad_c * ig * ((T)1 - gg * gg);
    d_gates[g + 3 * H] = grad_h * tc * og * ((T)1 - og);
    dc = grad_c * fg;
    """, "zero_lstm_cell_backward")
_gru = cp.ElementwiseKernel(
    "raw T gx, raw T gh, raw T b_hh, T h, int64 H, bool keep", "T h_out, raw T saved",
    _ROW + """
    const ptrdiff_t g = row * 3 * H + col, s = row * 4 * H + col;
    T hr = gh[g] + b_hh[col], hz = gh[g + H] + b_hh[col + H], hn = gh[g + 2 * H] + b_hh[col + 2 * H];
    T reset = (T)1 / ((T)1 + exp(-(gx[g] + hr)));
    T update = (T)1 / ((T)1 + exp(-(gx[g + H] + hz)));
    T fresh = tanh(gx[g + 2 * H] + reset * hn);
    h_out = fresh + update * (h - fresh);
    if (keep) { saved[s] = reset; saved[s + H] = update; saved[s + 2 * H] = fresh; saved[s + 3 * H] = hn; }
    """, "zero_gru_cell")
_gru_backward = cp.ElementwiseKernel(
    "T dh, T dh_out, T h, raw T saved, int64 H", "raw T d_gates_x, raw T d_gates_h, T dh_direct",
    _ROW + """
    const ptrdiff_t g = row * 3 * H + col, s = row * 4 * H + col;
    T reset = saved[s], update = saved[s + H], fresh = saved[s + 2 * H], hn = saved[s + 3 * H];
    T grad_h = dh + dh_out;
    T d_new = grad_h * ((T)1 - update) * ((T)1 - fresh * fresh);
    T d_update = grad_h * (h - fresh) * update * ((T)1 - update);
    T d_reset = d_new * hn * reset * ((T)1 - reset);
    d_gates_x[g] = d_reset; d_gates_x[g + H] = d_update; d_gates_x[g + 2 * H] = d_new;
    d_gates_h[g] = d_reset; d_gates_h[g + H] = d_update; d_gates_h[g + 2 * H] = d_new * reset;
    dh_direct = grad_h * update;
    """, "zero_gru_cell_backward")


def _kept(saved: Any, like: Any) -> tuple[Any, bool]:
    """(saved, True), or a one-element stand-in and False when nothing is kept."""
    return (saved, True) if saved is not None else (cp.empty(1, dtype=like.dtype), False)


def product(a: Any, b: Any, out: Any) -> None:
    """out = a @ b through cuBLAS."""
    cp.matmul(a, b, out=out)


def rnn_cell(relu: bool, gx: Any, gh: Any, h_out: Any) -> None:
    _rnn(gx, gh, relu, h_out)


def rnn_cell_backward(relu: bool, dh: Any, dh_out: Any, h_out: Any, d_pre: Any) -> None:
    _rnn_backward(dh, dh_out, h_out, relu, d_pre)


def lstm_cell(gx: Any, gh: Any, c: Any, h_out: Any, c_out: Any, saved: Any) -> None:
    saved, keep = _kept(saved, gx)
    _lstm(gx, gh, c, h_out.shape[1], keep, h_out, c_out, saved)


def lstm_cell_backward(dh: Any, dh_out: Any, dc: Any, c: Any, saved: Any, d_gates: Any) -> None:
    _lstm_backward(dh, dh_out, c, saved, dc.shape[1], dc, d_gates)


def gru_cell(gx: Any, gh: Any, b_hh: Any, h: Any, h_out: Any, saved: Any) -> None:
    saved, keep = _kept(saved, gx)
    _gru(gx, gh, b_hh, h, h_out.shape[1], keep, h_out, saved)


def gru_cell_backward(dh: Any, dh_out: Any, h: Any, saved: Any, d_gates_x: Any, d_gates_h: Any,
                      dh_direct: Any) -> None:
    _gru_backward(dh, dh_out, h, saved, h.shape[1], d_gates_x, d_gates_h, dh_direct)


def recurrent_forward(mode: str, x: Any, w_ih: Any, w_hh: Any, b_ih: Any, b_hh: Any, batch_sizes: Any, reverse: bool,
                      states: Any, saved: Any) -> None:
    """The contract's kernel: the shared time loop with these cells."""
    through_time.forward_through_time(cp, CELLS, product, mode, x, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse,
                                      states, saved)


def recurrent_backward(mode: str, grad_states: Any, x: Any, w_ih: Any, w_hh: Any, batch_sizes: Any, reverse: bool,
                       states: Any, saved: Any, grad_x: Any, grad_w_ih: Any, grad_w_hh: Any, grad_b_ih: Any,
                       grad_b_hh: Any, grad_h: Any, grad_c: Any) -> None:
    """The contract's kernel: the shared backward through time with these cells."""
    through_time.backward_through_time(cp, CELLS, product, mode, grad_states, x, w_ih, w_hh, batch_sizes, reverse,
                                       states, saved, grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh, grad_h,
                                       grad_c)



def recurrent_projected_forward(x: Any, w_ih: Any, w_hh: Any, w_hr: Any, b_ih: Any, b_hh: Any, batch_sizes: Any,
                                reverse: bool, states: Any, saved: Any) -> None:
    """The contract's kernel: the shared time loop of an LSTM with projections, these cells."""
    through_time.forward_through_time(cp, CELLS, product, "LSTM", x, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse,
                                      states, saved, w_hr)


def recurrent_projected_backward(grad_states: Any, x: Any, w_ih: Any, w_hh: Any, w_hr: Any, batch_sizes: Any,
                                 reverse: bool, states: Any, saved: Any, grad_x: Any, grad_w_ih: Any, grad_w_hh: Any,
                                 grad_w_hr: Any, grad_b_ih: Any, grad_b_hh: Any, grad_h: Any, grad_c: Any) -> None:
    """The contract's kernel: the shared backward through time of an LSTM with projections."""
    through_time.backward_through_time(cp, CELLS, product, "LSTM", grad_states, x, w_ih, w_hh, batch_sizes,
                                       reverse, states, saved, grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh,
                                       grad_h, grad_c, w_hr, grad_w_hr)

CELLS = sys.modules[__name__]   # what the shared time loop calls: this module's cells
