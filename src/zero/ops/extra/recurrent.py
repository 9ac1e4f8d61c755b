"""One recurrent layer in one direction as one op: RNN (tanh or relu), LSTM and GRU.

    x (L, N, I)  h0 (N, H)  c0 (N, H) LSTM only  w_ih (G·H, I)  w_hh (G·H, H)  b_ih, b_hh (G·H,)
    -> states (L + 1, N, H), LSTM (2, L + 1, N, H): the hidden (and cell) state by slot

PyTorch's cells (gates side by side in w_ih and w_hh, in its order):

    RNN    h' = act(x W_ihᵀ + b_ih + h W_hhᵀ + b_hh)
    LSTM   i, f, g, o = σ, σ, tanh, σ of (x W_ihᵀ + b_ih + h W_hhᵀ + b_hh);  c' = f c + i g;  h' = o tanh(c')
    GRU    r, z = σ(x W_i{r,z}ᵀ + b_i{r,z} + h W_h{r,z}ᵀ + b_h{r,z});
           n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn));  h' = (1 - z) n + z h

The step at time t reads slot t and writes slot t + 1 (``reverse``: reads t + 1, writes
t), so the output of every step is a view of the states (slots 1..L, reverse 0..L-1) and
so is the final state (slot L, reverse 0): one op, one output tensor, and the gradients
of the output and of the final states arrive together as the gradient of ``states``.
``batch_sizes`` (packed sequences, rows sorted by length) stops each row's recurrence at
its own length; the slots of a row past its end carry its state on (the final slot holds
it) and their output is not used.

LSTM with projections (PyTorch's ``proj_size``; w_hr (P, H) given, w_hh then (4H, P), h0 (N, P)):
h' = (o tanh(c')) W_hrᵀ, so the hidden states have size P and the cell states H; the one
output is then flat, the hidden states (L + 1, N, P) followed by the cell states (L + 1, N, H),
and ``recurrence`` returns the two as views of it. The projection runs inside the same time
loop (``recurrent_projected_forward``/``_backward``): one more product per step.

The kernels (``recurrent_forward``/``recurrent_backward``) compute the input projections
of all steps as one product and the time loop as one product and one fused cell pass per
step; backward runs the steps in the opposite order and then takes the weight and input
gradients as one product each (``zero.backends.array_kernels.recurrent``).
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autograd.op import Grads, Op
from ...backends.array_kernels.recurrent import projected_states
from ...tensors.tensor import Tensor
from ..arguments import array_or_none

SAVED_GATES = {"RNN_TANH": 0, "RNN_RELU": 0, "LSTM": 5, "GRU": 4}


class Recurrence(Op):
    """One layer, one direction; arguments checked by the modules (``zero.nn.rnn``)."""

    def forward(self, x: Tensor, h0: Tensor, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None,
                b_hh: Tensor | None, mode: str, batch_sizes: tuple[int, ...] | None, reverse: bool,
                w_hr: Tensor | None = None) -> Tensor:
        length, rows, _ = x.shape
        hidden = w_hh.shape[1]                       # the hidden state's size (projected: P)
        cell = hidden if w_hr is None else w_hr.shape[1]
        lstm = mode == "LSTM"
        kernels = x.device.kernels
        first = length if reverse else 0
        if w_hr is not None:
            states = Tensor._empty(((length + 1) * rows * (hidden + cell),), x.dtype, x.device)
            hs, cs = projected_states(states._array, length, rows, hidden, cell)
            kernels.copy(h0._array, hs[first])
            assert c0 is not None
            kernels.copy(c0._array, cs[first])
        else:
            shape = (2, length + 1, rows, hidden) if lstm else (length + 1, rows, hidden)
            states = Tensor._empty(shape, x.dtype, x.device)
            if lstm:
                assert c0 is not None
                kernels.copy(h0._array, states._array[0, first])
                kernels.copy(c0._array, states._array[1, first])
            else:
                kernels.copy(h0._array, states._array[first])
        width = SAVED_GATES[mode] * cell
        saved = Tensor._empty((length, rows, width), x.dtype, x.device) if self.recording and width else None
        if w_hr is not None:
            kernels.recurrent_projected_forward(x._array, w_ih._array, w_hh._array, w_hr._array, array_or_none(b_ih),
                                                array_or_none(b_hh), batch_sizes, reverse, states._array,
                                                array_or_none(saved))
        else:
            kernels.recurrent_forward(mode, x._array, w_ih._array, w_hh._array, array_or_none(b_ih),
                                      array_or_none(b_hh), batch_sizes, reverse, states._array, array_or_none(saved))
        self.save_for_backward(x, w_ih, w_hh, states, saved, w_hr)
        self.arguments = (mode, batch_sizes, reverse)
        return states

    def backward(self, grad: Tensor) -> Grads:
        x, w_ih, w_hh, states, saved, w_hr = self.saved_tensors
        mode, batch_sizes, reverse = self.arguments
        need = self.needs_input_grad
        device, dtype = grad.device, grad.dtype

        def new(needed: bool, like: Tensor | None, shape: tuple[int, ...] | None = None) -> Tensor | None:
            if not needed:
                return None
            return Tensor._empty(shape if shape is not None else like.shape, dtype, device)  # type: ignore[union-attr]

        rows, hidden = x.shape[1], w_hh.shape[1]
        cell = hidden if w_hr is None else w_hr.shape[1]
        grad_x, grad_h0, grad_c0 = new(need[0], x), new(need[1], None, (rows, hidden)), new(need[2], None, (rows, cell))
        grad_w_ih, grad_w_hh = new(need[3], w_ih), new(need[4], w_hh)
        grad_b_ih, grad_b_hh = new(need[5], None, (w_hh.shape[0],)), new(need[6], None, (w_hh.shape[0],))
        grad_states = grad if grad.is_contiguous() else grad.contiguous()
        if w_hr is not None:
            grad_w_hr = new(need[10], w_hr)
            device.kernels.recurrent_projected_backward(
                grad_states._array, x._array, w_ih._array, w_hh._array, w_hr._array, batch_sizes, reverse,
                states._array, saved._array, array_or_none(grad_x), array_or_none(grad_w_ih), array_or_none(grad_w_hh),
                array_or_none(grad_w_hr), array_or_none(grad_b_ih), array_or_none(grad_b_hh), array_or_none(grad_h0),
                array_or_none(grad_c0))
        else:
            grad_w_hr = None
            device.kernels.recurrent_backward(
                mode, grad_states._array, x._array, w_ih._array, w_hh._array, batch_sizes, reverse, states._array,
                array_or_none(saved), *(array_or_none(t) for t in (grad_x, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh,
                                                                   grad_h0, grad_c0)))
        return grad_x, grad_h0, grad_c0, grad_w_ih, grad_w_hh, grad_b_ih, grad_b_hh, None, None, None, grad_w_hr


def recurrence(mode: str, x: Tensor, h0: Tensor, c0: Tensor | None, w_ih: Tensor, w_hh: Tensor,
               b_ih: Tensor | None, b_hh: Tensor | None, batch_sizes: Sequence[int] | None = None,
               reverse: bool = False, w_hr: Tensor | None = None) -> Any:
    """The states (L + 1, N, H) (LSTM: (2, L + 1, N, H)) of one recurrent layer in one
    direction over x (L, N, I) from h0 (and c0) (N, H); see the module docstring. An LSTM
    with projections (w_hr (P, H)): the pair hidden states (L + 1, N, P), cell states
    (L + 1, N, H), views of the op's one flat output."""
    sizes = None if batch_sizes is None else tuple(int(b) for b in batch_sizes)
    if w_hr is None:
        return Recurrence.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mode, sizes, reverse)
    states = Recurrence.apply(x, h0, c0, w_ih, w_hh, b_ih, b_hh, mode, sizes, reverse, w_hr)
    return projected_states(states, x.shape[0], x.shape[1], *w_hr.shape)     # (Tensor views, as of arrays)
