"""Recurrent layers: ``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their one-step cells.

Parameters as PyTorch names and shapes them, per layer k and direction (``_reverse`` for the
backward one): ``weight_ih_l{k}`` (G·H, input size; layer k > 0: D·H), ``weight_hh_l{k}``
(G·H, H), ``bias_ih_l{k}``, ``bias_hh_l{k}`` (G·H,), G gates side by side (RNN 1; LSTM 4 in
the order i, f, g, o; GRU 3: r, z, n), all initialised uniform on ±1/√H, so state dicts move
both ways. An LSTM with ``proj_size`` P > 0 has h' = (o tanh(c')) W_hrᵀ: ``weight_hr_l{k}``
(P, H) after the biases, ``weight_hh_l{k}`` (4H, P), the next layer's input D·P, outputs and
h (…, P), c (…, H). Each layer and direction is one op (``zero.ops.extra.recurrent``): the input
projections of all steps in one product, one product and one fused cell pass per step.

Inputs: (L, N, H_in), (N, L, H_in) with ``batch_first``, unbatched (L, H_in), or a
``PackedSequence`` (then the output is one too, and each sequence stops at its own length).
Initial states (num_layers·D, N, H) (unbatched: (num_layers·D, H)), zeros when not given
(projected: h0 of size P).
Dropout (training only) applies to the outputs of every layer but the last.
"""
from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ..autograd import autocast_hook
from ..ops.extra.recurrent import recurrence
from ..ops.joining import cat, index_select, stack
from ..tensors.creation import empty, zeros
from ..tensors.tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence, packed_to_padded, padded_to_packed, sizes_of

GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, their checks, the layer loop."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", UserWarning, stacklevel=2)
        for name, value in (("hidden_size", hidden_size), ("num_layers", num_layers)):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")
            if value <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode, self.input_size, self.hidden_size, self.num_layers = mode, input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size
        directions = 2 if bidirectional else 1
        width = GATES[mode] * hidden_size
        state_size = proj_size or hidden_size      # the hidden state's (and each layer's output's) size
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else state_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes: list[tuple[str, tuple[int, ...]]] = [("weight_ih", (width, layer_input)),
                                                             ("weight_hh", (width, state_size))]
                if bias:
                    shapes += [("bias_ih", (width,)), ("bias_hh", (width,))]
                if proj_size:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for name, shape in shapes:
                    setattr(self, name + suffix, Parameter(empty(*shape, device=device, dtype=dtype)))
                    names.append(name + suffix)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def flatten_parameters(self) -> None:
        """A no-op: Zero keeps no fused weight buffer (PyTorch's is cuDNN's)."""

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    @property
    def _flat_weights_names(self) -> list[str]:
        """Every parameter's name, layer by layer and direction by direction, as PyTorch orders them."""
        return [name for names in self._all_weights for name in names]

    @property
    def _flat_weights(self) -> list[Parameter]:
        return [getattr(self, name) for name in self._flat_weights_names]

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            text += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            text += f", num_layers={self.num_layers}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        if self.batch_first is not False:
            text += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            text += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            text += f", bidirectional={self.bidirectional}"
        return text

    # -- forward --------------------------------------------------------------------------------
    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002  (PyTorch's name)
        name, lstm = type(self).__name__, self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        packed = isinstance(input, PackedSequence)
        batch_sizes: tuple[int, ...] | None = None
        if packed:
            batch_sizes = sizes_of(input.batch_sizes)
            x = packed_to_padded(input.data, batch_sizes)                 # (L, N, I), sorted by length
            batched = True
        else:
            x = input
            if x.ndim not in (2, 3):
                tensor_word = " tensor" if self.mode.startswith("RNN") else ""
                raise ValueError(f"{name}: Expected input to be 2D or 3D, got {x.ndim}D{tensor_word} instead")
            batched = x.ndim == 3
            if not batched:
                x = x.unsqueeze(1)
            elif self.batch_first:
                x = x.transpose(0, 1)
        if x.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {x.shape[-1]}")
        length, rows = x.shape[0], x.shape[1]
        states = self._initial_states(hx, batched, rows, x, input if packed else None)
        h0, c0 = states if lstm else (states, None)
        outputs, finals_h, finals_c = x, [], []
        for layer in range(self.num_layers):
            per_direction = []
            for direction in range(directions):
                index = layer * directions + direction
                weights = self.all_weights[index]
                w_ih, w_hh = weights[0], weights[1]
                b_ih, b_hh = (weights[2], weights[3]) if self.bias else (None, None)
                w_hr = weights[-1] if self.proj_size else None
                reverse = direction == 1
                h0_i, c0_i = h0[index], None if c0 is None else c0[index]
                if autocast_hook.state.active:  # ("lstm", "gru", "rnn_tanh", "rnn_relu")
                    outputs, h0_i, c0_i, w_ih, w_hh, b_ih, b_hh, w_hr = autocast_hook.cast(
                        self.mode.lower(), outputs, h0_i, c0_i, w_ih, w_hh, b_ih, b_hh, w_hr)
                out = recurrence(self.mode, outputs, h0_i, c0_i, w_ih, w_hh, b_ih, b_hh, batch_sizes, reverse, w_hr)
                hs = out[0] if lstm else out
                last = 0 if reverse else length
                per_direction.append(hs[0:length] if reverse else hs[1:])
                finals_h.append(hs[last])
                if lstm:
                    finals_c.append(out[1][last])
            outputs = per_direction[0] if directions == 1 else cat(per_direction, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                outputs = F.dropout(outputs, self.dropout, True)
        h_n = stack(finals_h)
        c_n = stack(finals_c) if lstm else None
        if packed:
            unsorted = input.unsorted_indices
            if unsorted is not None:
                h_n = index_select(h_n, 1, unsorted)
                c_n = None if c_n is None else index_select(c_n, 1, unsorted)
            result: Any = PackedSequence(padded_to_packed(outputs, batch_sizes),   # type: ignore[arg-type]
                                         input.batch_sizes, input.sorted_indices, unsorted)
        elif not batched:
            result = outputs.squeeze(1)
            h_n = h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        else:
            result = outputs.transpose(0, 1) if self.batch_first else outputs
        return (result, (h_n, c_n)) if lstm else (result, h_n)

    def _initial_states(self, hx: Any, batched: bool, rows: int, x: Tensor, packed: Any) -> Any:
        """h0 (and c0) as (num_layers·D, N, H) (projected: h0 (num_layers·D, N, P)), zeros when
        not given, checked as PyTorch checks them and put in the packed batch's sorted order."""
        lstm = self.mode == "LSTM"
        expected = (self.num_layers * (2 if self.bidirectional else 1), rows, self.hidden_size)
        expected_h = expected[:2] + (self.proj_size or self.hidden_size,)
        if hx is None:
            h = zeros(*expected_h, dtype=x.dtype, device=x.device)
            return (h, zeros(*expected, dtype=x.dtype, device=x.device)) if lstm else h
        given = list(hx) if lstm else [hx]
        if lstm and len(given) != 2:
            raise RuntimeError("LSTM: hx must be a tuple (h_0, c_0)")
        dims = 3 if batched else 2
        if any(t.ndim != dims for t in given):
            got = ", ".join(f"{t.ndim}-D" for t in given)
            which, word = ("hx and cx", "tensors") if lstm else ("hx", "tensor")
            kind = "batched 3-D" if batched else "unbatched 2-D"
            shown = f"({got})" if lstm else got
            raise RuntimeError(f"For {kind} input, {which} should also be {dims}-D but got {shown} {word}")
        if not batched:
            given = [t.unsqueeze(1) for t in given]
        if packed is not None and packed.sorted_indices is not None:
            given = [index_select(t, 1, packed.sorted_indices) for t in given]
        for k, t in enumerate(given):
            want = expected_h if k == 0 else expected
            if tuple(t.shape) != want:
                label = f"hidden[{k}]" if lstm else "hidden"
                raise RuntimeError(f"Expected {label} size {want}, got {list(t.shape)}")
        return tuple(given) if lstm else given[0]


class RNN(RNNBase):
    """Elman RNN: h' = tanh (or relu) of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh, per layer."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(modes[nonlinearity], input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o; c' = f c + i g, h' = o tanh(c') (``proj_size``
    P > 0: h' = (o tanh(c')) W_hrᵀ, of size P). Returns (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False, proj_size: int = 0,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         proj_size, device=device, dtype=dtype)


class GRU(RNNBase):
    """Gated recurrent unit: gates r, z, n; n = tanh(x W_inᵀ + b_in + r (h W_hnᵀ + b_hn)),
    h' = (1 - z) n + z h."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout, bidirectional,
                         device=device, dtype=dtype)


class RNNCellBase(Module):
    """One step of a recurrent layer: (N, H_in) or unbatched (H_in,) and the state(s) in,
    the next state(s) out. Runs as the layer's op over one time step."""

    mode = "RNN_TANH"  # which cell: each subclass names its own

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None,
                 dtype: Any = None) -> None:
        """PyTorch's arguments: ``num_chunks`` gates side by side in each weight (RNN 1,
        LSTM 4, GRU 3)."""
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        width = num_chunks * hidden_size
        self.weight_ih = Parameter(empty(width, input_size, device=device, dtype=dtype))
        self.weight_hh = Parameter(empty(width, hidden_size, device=device, dtype=dtype))
        self.bias_ih: Parameter | None = Parameter(empty(width, device=device, dtype=dtype)) if bias else None
        self.bias_hh: Parameter | None = Parameter(empty(width, device=device, dtype=dtype)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0.0
        for weight in self.parameters():
            init.uniform_(weight, -bound, bound)

    def extra_repr(self) -> str:
        text = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            text += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        if nonlinearity != "tanh":
            text += f", nonlinearity={nonlinearity}"
        return text

    def _step(self, input: Tensor, hx: Any) -> tuple[Tensor, Tensor | None, bool]:  # noqa: A002
        """(h', c' or None, batched) after one step from input and hx (checked as PyTorch does)."""
        name, lstm = type(self).__name__, self.mode == "LSTM"
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        batched = input.ndim == 2
        x = input if batched else input.unsqueeze(0)
        if x.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {x.shape[1]} expected {self.input_size}")
        rows = x.shape[0]
        if hx is None:
            states = [zeros(rows, self.hidden_size, dtype=x.dtype, device=x.device) for _ in range(2 if lstm else 1)]
        else:
            states = [t if batched else t.unsqueeze(0) for t in (hx if lstm else (hx,))]
        for k, t in enumerate(states):
            if t.shape[0] != rows:
                raise RuntimeError(f"Input batch size {rows} doesn't match hidden{k} batch size {t.shape[0]}")
            if t.ndim != 2 or t.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got {t.shape[-1]}, expected "
                                   f"{self.hidden_size}")
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if autocast_hook.state.active:  # ("lstm_cell", "gru_cell", "rnn_tanh_cell", "rnn_relu_cell")
            x, *states, w_ih, w_hh, b_ih, b_hh = autocast_hook.cast(f"{self.mode.lower()}_cell", x, *states, *weights)
            weights = (w_ih, w_hh, b_ih, b_hh)
        out = recurrence(self.mode, x.unsqueeze(0), states[0], states[1] if lstm else None, *weights)
        h = (out[0] if lstm else out)[1]
        c = out[1][1] if lstm else None
        if not batched:
            h = h.squeeze(0)
            c = None if c is None else c.squeeze(0)
        return h, c, batched


class RNNCell(RNNCellBase):
    """h' = tanh (or relu) of x W_ihᵀ + b_ih + h W_hhᵀ + b_hh."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device: Any = None, dtype: Any = None) -> None:
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.mode, self.nonlinearity = modes[nonlinearity], nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._step(input, hx)[0]


class LSTMCell(RNNCellBase):
    """(h', c') from x and (h, c): one LSTM step."""

    mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=GATES[self.mode], device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        h, c, _ = self._step(input, hx)
        assert c is not None
        return h, c


class GRUCell(RNNCellBase):
    """h' from x and h: one GRU step."""

    mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=GATES[self.mode], device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        return self._step(input, hx)[0]
