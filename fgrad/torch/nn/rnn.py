"""Recurrent layers with PyTorch's names, parameters and semantics: RNN (tanh or relu), LSTM
(with proj_size), GRU, and the single-step RNNCell, LSTMCell and GRUCell.

Parameters are PyTorch's, name for name and shape for shape (weight_ih_l{k}[_reverse],
weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, weight_hr_l{k}; gates stacked in PyTorch's order:
LSTM i, f, g, o; GRU r, z, n), so state_dicts load across the two libraries, and every
parameter starts as U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)).

A layer direction is one GEMM for the input projection of all steps, then the recurrence as
one `rnn_scan` primitive (fgrad/torch/nn/_rnn_ops.py: a NumPy loop forward, BPTT backward, and
derivatives of every order through the same recurrence written in fgrad ops). With Tensors, an
LSTM that PyTorch runs through oneDNN (float32 or bfloat16, no projection) is composed as
PyTorch's graph: one torch op per layer and direction (MkldnnRnnLayerBackward0 over the layer's
input, weights and initial states), the final states stacked. Every other layer's whole forward
is one torch op over values (fgrad.torch._tensor._boundary.call: one node, named after the layer,
whose parents are the input, the states and the parameters), where PyTorch unrolls the
recurrence into a node per step and gate (unrolling costs 3-4x a fused layer's time); the cells
are composed of torch ops in the order of PyTorch's cell functions, so their graphs are
PyTorch's. Inputs may also be arrays or tracers (results follow them), so layers also run under
fgrad.torch.func.functional_call with grad, vmap or hessian.
"""
from __future__ import annotations

import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from ... import numpy as fnp
from .. import _tensor as T  # the facade namespace: T.empty, ...
from ...core.errors import FgradRuntimeError, FgradTypeError, FgradValueError
from ...core.trace import xp_of
from ...extend import lax as xlax
from ...extend import nn as nnops
from ...extend.lax import concatenate, dot_general, reshape, transpose
from ...extend.lax import slice as _slice
from .._tensor._boundary import call
from . import functional as F
from . import init
from ._rnn_ops import cell_math, gate_count, hidden_projection, rnn_scan
from ._spatial import _keep_mask
from .._tensor.tensor import Tensor, _make
from ._util import arr, dtype, shape, val
from .module import Module
from .parameter import Parameter
from .utils_rnn import PackedSequence, _ints, _on_device_of, _padded_index

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _zeros_like_state(x, shape_: tuple, dt):
    """Zeros on x's device (the default initial state)."""
    return xp_of((val(x),)).zeros(shape_, dt)


def _take(x, idx: np.ndarray, axis: int):
    """x's entries at the integer positions idx along axis (a differentiable gather)."""
    return fnp.take(x, _on_device_of(x, idx), axis=axis)


def _check_size(value, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise FgradTypeError(f"{what} should be of type int, got: {type(value).__name__}")
    if value <= 0:
        raise FgradValueError(f"{what} must be greater than zero")
    return int(value)


def _project(x, w, b):
    """x W^T + b over the last axis (no bias: a dot_general)."""
    if b is None:
        nd = len(shape(x))
        return dot_general(x, w, (((nd - 1,), (1,)), ((), ())))
    return nnops.linear(x, w, b)


def _through_boundary(name: str, fn, args: tuple):
    """fn(*args) as one torch op (node `name`) when a Tensor is among args; on values as they
    are (arrays, tracers under functional_call and fgrad's transforms) otherwise, so results
    follow the inputs."""
    if any(isinstance(a, Tensor) for a in args):
        return call(name, fn, args)
    return fn(*args)


def _layer_state(hx, k: int, B: int, width: int, like, dt):
    """State k of a stacked [L*D, B, width] initial state (zeros when hx is None)."""
    if hx is None:
        return _zeros_like_state(like, (B, width), dt)
    return reshape(_slice(hx, (k, 0, 0), (k + 1, B, width)), (B, width))


_LAYER_OPERANDS = (0, 1, 2, 3, 4, 5, 6)  # (input, w_ih, w_hh, b_ih, b_hh, h_0, c_0): PyTorch's order


def _lstm_layer(reverse: bool):
    """One LSTM layer direction on values: (x [T, B, I], w_ih, w_hh, b_ih, b_hh, h_0, c_0) ->
    (output [T, B, H], h_T, c_T); the biases and states may be None (no bias; zero states).
    The input projection of all steps is one GEMM, the recurrence one rnn_scan."""
    def layer(x, w_ih, w_hh, b_ih, b_hh, h, c):
        Tn, B = shape(x)[:2]
        H = shape(w_hh)[1]
        dt = dtype(x)
        if h is None:
            h = _zeros_like_state(x, (B, H), dt)
            c = _zeros_like_state(x, (B, H), dt)
        xw = _project(x, w_ih, None if b_ih is None else xlax.add(b_ih, b_hh))
        Y = rnn_scan("LSTM", xw, h, c, w_hh, None, None, reverse=reverse, lengths=None)
        # out and c_T slice Y itself: each slice's transpose pads its cotangent to Y's width,
        # and a final state's cotangent is usually none at all, so the backward pass builds
        # Y's cotangent with one pad per layer (slices of slices would pad twice)
        out = _slice(Y, (0, 0, 0), (Tn, B, H))
        last = 0 if reverse else Tn - 1  # the step that ran last holds the final state
        h_t = reshape(_slice(out, (last, 0, 0), (last + 1, B, H)), (B, H))
        c_t = reshape(_slice(Y, (last, 0, H), (last + 1, B, 2 * H)), (B, H))
        return out, h_t, c_t
    return layer


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrence shared by RNN, LSTM and GRU
    (PyTorch's RNNBase: `mode` is "RNN_TANH", "RNN_RELU", "LSTM" or "GRU")."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1:
            raise FgradValueError("dropout should be a number in range [0, 1] representing the probability of "
                             "an element being zeroed")
        hidden_size = _check_size(hidden_size, "hidden_size")
        num_layers = _check_size(num_layers, "num_layers")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero "
                          f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", UserWarning, stacklevel=3)
        if isinstance(proj_size, bool) or not isinstance(proj_size, (int, np.integer)) or proj_size < 0:
            raise FgradValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise FgradValueError("proj_size has to be smaller than hidden_size")
        if proj_size and mode != "LSTM":
            raise FgradValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size, self.hidden_size = int(input_size), hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bool(bias), bool(batch_first)
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bool(bidirectional), int(proj_size)
        D = 2 if bidirectional else 1
        G = gate_count(mode) * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(D):
                layer_input = self.input_size if layer == 0 else real_hidden * D
                sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                shapes = [(f"weight_ih{sfx}", (G, layer_input)), (f"weight_hh{sfx}", (G, real_hidden))]
                if bias:
                    shapes += [(f"bias_ih{sfx}", (G,)), (f"bias_hh{sfx}", (G,))]
                if proj_size > 0:
                    shapes.append((f"weight_hr{sfx}", (proj_size, hidden_size)))
                for name, shp in shapes:
                    setattr(self, name, Parameter(T.empty(*shp, dtype=dtype, device=device)))
                self._flat_weights_names.extend(n for n, _ in shapes)
                self._all_weights.append([n for n, _ in shapes])
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) (PyTorch's init)."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """PyTorch compacts cuDNN's weight buffer here; fgrad keeps no such buffer, so there is
        nothing to do (kept so that code calling it runs unchanged)."""

    @property
    def all_weights(self) -> list:
        """The parameters per layer and direction: [[w_ih, w_hh, b_ih, b_hh(, w_hr)], ...]."""
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, name) for name in self._flat_weights_names]

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # --- forward --------------------------------------------------------------------------------

    def _widths(self) -> tuple[int, int]:
        """(width of h, width of c): proj_size (or hidden_size), hidden_size."""
        return (self.proj_size or self.hidden_size), self.hidden_size

    def _check_input(self, x) -> None:
        in_dt, w_dt = dtype(x), dtype(self.weight_ih_l0)
        if in_dt != w_dt:
            raise FgradValueError(f"RNN input dtype ({in_dt}) does not match weight dtype ({w_dt}). Convert "
                             f"input: input.to({w_dt}), or convert model: model.to({in_dt})")
        n = shape(x)[-1]
        if n != self.input_size:
            raise FgradRuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {n}")

    def _check_hidden(self, h, expected: tuple, what: str, got: tuple | None = None) -> None:
        got = shape(h) if got is None else got
        if tuple(got) != tuple(expected):
            raise FgradRuntimeError(f"Expected {what} size {tuple(expected)}, got {list(got)}")
        if dtype(h) != dtype(self.weight_ih_l0):
            raise FgradRuntimeError(f"{type(self).__name__}: the initial state has dtype {dtype(h)} but the "
                               f"weights have {dtype(self.weight_ih_l0)}; convert it with .to(dtype)")

    def _split_hx(self, hx) -> tuple:
        """(h0, c0) from the hx argument (c0 None but for LSTM)."""
        if self.mode == "LSTM":
            if hx is None:
                return None, None
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise FgradRuntimeError("LSTM expects hx to be a tuple (h_0, c_0) of two tensors")
            return arr(hx[0], "LSTM"), arr(hx[1], "LSTM")
        if isinstance(hx, (tuple, list)):
            raise FgradRuntimeError(f"{type(self).__name__} expects hx to be a tensor, got a "
                               f"{type(hx).__name__}")
        return (None if hx is None else arr(hx, type(self).__name__)), None

    def _check_hx_dims(self, h0, c0, batched: bool) -> None:
        want = 3 if batched else 2
        kind = "batched 3-D" if batched else "unbatched 2-D"
        if self.mode == "LSTM":
            if h0 is not None and (len(shape(h0)) != want or len(shape(c0)) != want):
                raise FgradRuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({len(shape(h0))}-D, {len(shape(c0))}-D) tensors")
        elif h0 is not None and len(shape(h0)) != want:
            raise FgradRuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{len(shape(h0))}-D tensor")

    def _check_states(self, h0, c0, B: int, unbatched: bool = False) -> None:
        """The initial states' shapes (an unbatched one [L*D, H] as the [L*D, 1, H] it runs as)."""
        D = 2 if self.bidirectional else 1
        Hr, H = self._widths()

        def seen(h):
            s = tuple(shape(h))
            return (s[0], 1, s[1]) if unbatched else s
        if self.mode == "LSTM":
            if h0 is not None:
                self._check_hidden(h0, (self.num_layers * D, B, Hr), "hidden[0]", seen(h0))
                self._check_hidden(c0, (self.num_layers * D, B, H), "hidden[1]", seen(c0))
        elif h0 is not None:
            self._check_hidden(h0, (self.num_layers * D, B, Hr), "hidden", seen(h0))

    def _dropout_masks(self, Tn: int, B: int, dt) -> list:
        """The scaled keep-masks of the dropout after each layer but the last (training only),
        drawn before the op runs (torch's bernoulli_(1 - p) stream, layer by layer, as
        F.dropout draws them): the op's computation is then a function of its inputs alone,
        which create_graph may run again."""
        if not (self.dropout and self.training and self.num_layers > 1):
            return [None] * self.num_layers
        width = (2 if self.bidirectional else 1) * self._widths()[0]
        p, n = self.dropout, Tn * B * width
        masks = []
        for _ in range(self.num_layers - 1):
            if p == 1.0:
                masks.append(0.0)
            elif n == 0:
                masks.append(None)
            else:
                keep = _keep_mask(np.broadcast_to(np.zeros((), dt), (Tn, B, width)), p, False)
                masks.append(keep.astype(dt) / dt.type(1.0 - p))
        return masks + [None]

    def _op_name(self) -> str:
        # PyTorch's CPU RNN and GRU unroll the recurrence (a node per time step and gate);
        # fgrad's forward is one fused scan, one node named after the layer
        return f"{type(self).__name__}Backward0"

    def _run(self, x, h0, c0, lengths, weights: Sequence, masks: list):
        """The stacked layers on a time-major x [T, B, I] (values: arrays or tracers), with the
        parameters `weights` in _flat_weights_names' order and the dropout `masks` after each
        layer: (output [T, B, D*Hr], h_n, c_n)."""
        named = dict(zip(self._flat_weights_names, weights))
        Tn, B = shape(x)[:2]
        D = 2 if self.bidirectional else 1
        Hr, H = self._widths()
        dt = dtype(x)
        lstm = self.mode == "LSTM"
        h_out, c_out = [], []
        layer_in = x
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                names = self._all_weights[layer * D + d]
                w = {n.split("_l")[0]: named[n] for n in names}
                b_ih, b_hh = w.get("bias_ih"), w.get("bias_hh")
                if b_ih is not None and self.mode != "GRU":
                    # b_hh joins b_ih in the input projection (GRU needs it apart: r (h W_hn + b_hn))
                    b_ih, b_hh = xlax.add(b_ih, b_hh), None
                xw = _project(layer_in, w["weight_ih"], b_ih)
                k = layer * D + d
                hs = _layer_state(h0, k, B, Hr, x, dt)
                cs = _layer_state(c0, k, B, H, x, dt) if lstm else None
                Y = rnn_scan(self.mode, xw, hs, cs, w["weight_hh"], b_hh, w.get("weight_hr"),
                             reverse=d == 1, lengths=lengths)
                # the final states are sliced from the state columns, not from Y: each slice's
                # backward pads its cotangent to its operand's shape, and Y is ~6x wider
                states = _slice(Y, (0, 0, 0), (Tn, B, Hr + H)) if lstm else Y
                out_d = _slice(states, (0, 0, 0), (Tn, B, Hr))
                outs.append(out_d)
                last = 0 if d == 1 else Tn - 1  # the step that ran last holds every row's final state
                h_out.append(_slice(out_d, (last, 0, 0), (last + 1, B, Hr)))
                if lstm:
                    c_out.append(_slice(states, (last, 0, Hr), (last + 1, B, Hr + H)))
            layer_in = outs[0] if D == 1 else concatenate(outs, 2)
            m = masks[layer]
            if isinstance(m, float):  # p = 1: everything dropped
                layer_in = xlax.mul(layer_in, xlax.const(layer_in, 0.0))
            elif m is not None:
                layer_in = fnp.multiply(layer_in, _on_device_of(layer_in, m))
        return layer_in, concatenate(h_out, 0), (concatenate(c_out, 0) if lstm else None)

    def _result(self, out, h_n, c_n):
        return out, ((h_n, c_n) if self.mode == "LSTM" else h_n)

    def forward(self, input, hx=None):
        """input [T, B, I] ([B, T, I] with batch_first), [T, I] (unbatched) or a PackedSequence;
        hx the initial state(s) [num_layers * D, B, H] (zeros by default). Returns (output,
        h_n), or (output, (h_n, c_n)) for LSTM, as PyTorch does."""
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        x = arr(input, type(self).__name__)
        nd = len(shape(x))
        if nd not in (2, 3):
            raise FgradValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got {nd}D instead")
        batched = nd == 3
        h0, c0 = self._split_hx(hx)
        self._check_hx_dims(h0, c0, batched)
        self._check_input(x)
        xs = shape(x)
        Tn, B = (xs[0], 1) if not batched else (xs[1], xs[0]) if self.batch_first else xs[:2]
        if Tn == 0:
            raise FgradRuntimeError(f"{type(self).__name__}: the input has no time steps (shape "
                               f"{shape(input)}); sequences need at least one")
        self._check_states(h0, c0, B, unbatched=not batched)
        masks = self._dropout_masks(Tn, B, dtype(x))
        lstm = self.mode == "LSTM"
        if lstm and self._runs_as_onednn(x) and (h0 is None or isinstance(h0, Tensor) and isinstance(c0, Tensor)):
            return self._forward_layers(x, h0, c0, batched, masks)

        def forward_values(x, h0, c0, *weights):
            if not batched:
                x = reshape(x, (Tn, 1, shape(x)[1]))
                h0 = None if h0 is None else reshape(h0, (shape(h0)[0], 1, shape(h0)[1]))
                c0 = None if c0 is None else reshape(c0, (shape(c0)[0], 1, shape(c0)[1]))
            elif self.batch_first:
                x = transpose(x, (1, 0, 2))
            out, h_n, c_n = self._run(x, h0, c0, None, weights, masks)
            if not batched:
                out = reshape(out, (Tn, shape(out)[2]))
                h_n = reshape(h_n, (shape(h_n)[0], shape(h_n)[2]))
                c_n = None if c_n is None else reshape(c_n, (shape(c_n)[0], shape(c_n)[2]))
            elif self.batch_first:
                out = transpose(out, (1, 0, 2))
            return (out, h_n, c_n) if lstm else (out, h_n)
        res = _through_boundary(self._op_name(), forward_values, (x, h0, c0, *self._flat_weights))
        return self._result(*res) if lstm else self._result(*res, None)

    def _runs_as_onednn(self, x) -> bool:
        """Whether PyTorch's CPU LSTM runs this input through oneDNN's fused layer (float32 or
        bfloat16 Tensors, no projection, a non-empty input): its graph is then one
        MkldnnRnnLayerBackward0 per layer and direction, which _forward_layers builds. Other
        LSTMs (and RNN, GRU) PyTorch unrolls into a node per step and gate; fgrad keeps its one
        fused node for them."""
        return (isinstance(x, Tensor) and not self.proj_size and str(dtype(x)) in ("float32", "bfloat16")
                and 0 not in shape(x) and all(isinstance(w, Tensor) for w in self._flat_weights))

    def _forward_layers(self, x, h0, c0, batched: bool, masks: list):
        """The LSTM as PyTorch's oneDNN path composes it of torch ops: the input made time-major
        (unsqueezed when unbatched, transposed with batch_first) and contiguous, then per
        layer and direction one fused op (MkldnnRnnLayerBackward0 over the layer's input, w_ih,
        w_hh, b_ih, b_hh and its initial states, selected from h_0 and c_0), the directions
        concatenated, dropout between layers a product with the scaled mask; h_n and c_n
        stacked from the layers' final states."""
        if not batched:
            x = x.unsqueeze(1)
            h0, c0 = (None, None) if h0 is None else (h0.unsqueeze(1), c0.unsqueeze(1))
        elif self.batch_first:
            x = x.transpose(0, 1)
        D = 2 if self.bidirectional else 1
        hs, cs = [], []
        layer_in = x.contiguous()  # (oneDNN reads a dense input: a copy where it is not)
        for layer in range(self.num_layers):
            outs = []
            for d in range(D):
                k = layer * D + d
                w = [getattr(self, n) for n in self._all_weights[k]]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                states = (None, None) if h0 is None else (h0.select(0, k), c0.select(0, k))
                out, hy, cy = call("MkldnnRnnLayerBackward0", _lstm_layer(d == 1),
                                   (layer_in, w[0], w[1], b_ih, b_hh, *states), operands=_LAYER_OPERANDS)
                outs.append(out)
                hs.append(hy)
                cs.append(cy)
            layer_in = outs[0] if D == 1 else T.cat(outs, 2)
            m = masks[layer]
            if isinstance(m, float):  # p = 1: everything dropped
                layer_in = layer_in * 0.0
            elif m is not None:
                layer_in = layer_in * _make(_on_device_of(val(layer_in), m))
        h_n, c_n = T.stack(hs, 0), T.stack(cs, 0)
        if not batched:
            return layer_in.squeeze(1), (h_n.squeeze(1), c_n.squeeze(1))
        return (layer_in.transpose(0, 1) if self.batch_first else layer_in), (h_n, c_n)

    def _forward_packed(self, packed: PackedSequence, hx):
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        data = arr(data, type(self).__name__)
        if len(shape(data)) != 2:
            raise FgradValueError(f"{type(self).__name__}: a PackedSequence's data must be 2-D [sum of lengths, "
                             f"input_size], got shape {shape(data)}")
        bs = _ints(batch_sizes, "batch_sizes")
        Tn, B = bs.size, int(bs[0])
        h0, c0 = self._split_hx(hx)
        self._check_hx_dims(h0, c0, True)
        self._check_input(data)
        si = _ints(sorted_indices, "sorted_indices")
        self._check_states(h0, c0, B)  # (the sorting below permutes rows: shapes stay)
        N, n_in = shape(data)
        dt = dtype(data)
        idx, lengths = _padded_index(bs, None, Tn, N, batch_first=False)
        lengths = tuple(int(v) for v in lengths)
        rows = np.concatenate([t * B + np.arange(n) for t, n in enumerate(bs)])
        ui = _ints(unsorted_indices, "unsorted_indices")
        if ui is None and si is not None:  # a PackedSequence built by hand with sorted_indices only
            ui = np.argsort(si)
        masks = self._dropout_masks(Tn, B, dt)
        lstm = self.mode == "LSTM"

        def forward_values(data, h0, c0, *weights):
            if si is not None:  # states are given in the original batch order; the rows run sorted
                h0 = None if h0 is None else _take(h0, si, 1)
                c0 = None if c0 is None else _take(c0, si, 1)
            src = concatenate([data, _on_device_of(data, np.zeros((1, n_in), dt))], 0)
            x = reshape(_take(src, idx.reshape(-1), 0), (Tn, B, n_in))
            out, h_n, c_n = self._run(x, h0, c0, lengths, weights, masks)
            out_data = _take(reshape(out, (Tn * B, shape(out)[2])), rows, 0)
            if ui is not None:
                h_n = _take(h_n, ui, 1)
                c_n = None if c_n is None else _take(c_n, ui, 1)
            return (out_data, h_n, c_n) if lstm else (out_data, h_n)
        res = _through_boundary(self._op_name(), forward_values, (data, h0, c0, *self._flat_weights))
        out_data, h_n, c_n = res if lstm else (*res, None)
        return self._result(PackedSequence(out_data, batch_sizes, sorted_indices, unsorted_indices), h_n, c_n)


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, nonlinearity: str = "tanh",
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None, proj_size: int = 0) -> None:
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise FgradValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        # proj_size is accepted to refuse it with PyTorch's message (LSTM only)
        super().__init__(mode, input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory: gates i, f, g, o from x_t and h_{t-1}; c_t = f c_{t-1} + i g,
    h_t = o tanh(c_t) (times W_hr^T with proj_size > 0). forward returns (output, (h_n, c_n))."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 proj_size: int = 0, device=None, dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit: r, z = sigmoid(...), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn)),
    h_t = (1 - z) n + z h_{t-1}."""

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 device=None, dtype=None, proj_size: int = 0) -> None:
        # proj_size is accepted to refuse it with PyTorch's message (LSTM only)
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, proj_size, device, dtype)


# --- cells ------------------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One step of a recurrent layer: weight_ih [G, input_size], weight_hh [G, hidden_size],
    bias_ih, bias_hh [G] (G = gates * hidden_size), all ~ U(-1/sqrt(hidden), 1/sqrt(hidden))."""

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None,
                 dtype=None) -> None:
        super().__init__()
        self.input_size = int(input_size)
        self.hidden_size = _check_size(hidden_size, "hidden_size")
        self.bias = bool(bias)
        G = num_chunks * self.hidden_size
        self.weight_ih = Parameter(T.empty(G, self.input_size, dtype=dtype, device=device))
        self.weight_hh = Parameter(T.empty(G, self.hidden_size, dtype=dtype, device=device))
        if bias:
            self.bias_ih = Parameter(T.empty(G, dtype=dtype, device=device))
            self.bias_hh = Parameter(T.empty(G, dtype=dtype, device=device))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Every weight and bias ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size))."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for w in self.parameters():
            init.uniform_(w, -stdv, stdv)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, states: list, names: list) -> tuple:
        """(x, states (None where not given), batched) as given, checked as PyTorch checks
        them (an unbatched x [I] and states [H] as the [1, I] and [1, H] they run as)."""
        cls = type(self).__name__
        x = arr(input, cls)
        nd = len(shape(x))
        if nd not in (1, 2):
            raise FgradValueError(f"{cls}: Expected input to be 1D or 2D, got {nd}D instead")
        for name, s in zip(names, states):
            if s is not None and len(shape(s)) not in (1, 2):
                raise FgradValueError(f"{cls}: Expected {name} to be 1D or 2D, got {len(shape(s))}D instead")
        batched = nd == 2
        B, n_in = shape(x) if batched else (1,) + tuple(shape(x))
        if n_in != self.input_size:
            raise FgradRuntimeError(f"input has inconsistent input_size: got {n_in} expected {self.input_size}")
        if dtype(x) != dtype(self.weight_ih):
            raise FgradRuntimeError(f"{cls}: input dtype {dtype(x)} does not match weight dtype "
                               f"{dtype(self.weight_ih)}; convert the input or the cell with .to(dtype)")
        out = []
        for k, s in enumerate(states):
            if s is None:
                out.append(None)
                continue
            s = arr(s, cls)
            ss = shape(s) if batched else (1,) + tuple(shape(s))
            if ss[0] != B:
                raise FgradRuntimeError(f"Input batch size {B} doesn't match hidden{k} batch size {ss[0]}")
            if ss[1] != self.hidden_size:
                raise FgradRuntimeError(f"hidden{k} has inconsistent hidden_size: got {ss[1]}, expected "
                                   f"{self.hidden_size}")
            if dtype(s) != dtype(x):
                raise FgradRuntimeError(f"{cls}: hidden{k} dtype {dtype(s)} does not match input dtype {dtype(x)}")
            out.append(s)
        return x, out, batched

    def _cell(self, x, states: list, batched: bool) -> tuple:
        """The step's new states (h', and c' for LSTM) from checked inputs (see _prepare). With
        Tensors it is composed of torch ops as PyTorch's cells are (so the graph is theirs);
        on values (arrays, tracers under functional_call and fgrad's transforms) it is the
        same equations in fgrad ops (cell_math), and the results are values."""
        weights = (self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        B = shape(x)[0] if batched else 1
        if any(isinstance(v, Tensor) for v in (x, *states, *weights)):
            x = x if isinstance(x, Tensor) else _make(val(x))
            if not batched:
                x = x.unsqueeze(0)
            hs = []
            for s in states:
                if s is None:
                    s = _make(_zeros_like_state(x, (B, self.hidden_size), dtype(x)))
                else:
                    s = s if isinstance(s, Tensor) else _make(val(s))
                    s = s if batched else s.unsqueeze(0)
                hs.append(s)
            out = _torch_cell(self._mode, x, hs, *weights)
            return out if batched else tuple(o.squeeze(0) for o in out)
        if not batched:
            x = reshape(x, (1,) + shape(x))
        hs = [_zeros_like_state(x, (B, self.hidden_size), dtype(x)) if s is None else
              (s if batched else reshape(s, (1,) + shape(s))) for s in states]
        h_new, c_new, _ = self._step(x, *hs)
        out = (h_new,) if c_new is None else (h_new, c_new)
        return out if batched else tuple(reshape(o, shape(o)[1:]) for o in out)

    def _step(self, x, h, c=None):
        xg = _project(x, self.weight_ih, self.bias_ih)
        hh = hidden_projection(h, self.weight_hh, self.bias_hh)
        return cell_math(self._mode, xg, hh, h, c)


def _torch_cell(mode: str, x, states: list, w_ih, w_hh, b_ih, b_hh) -> tuple:
    """One step on Tensors [B, .], in torch ops, in the order of PyTorch's rnn_tanh_cell,
    lstm_cell and gru_cell (the values are cell_math's: the same operations)."""
    h = states[0]
    if mode in ("RNN_TANH", "RNN_RELU"):
        a = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
        return (a.tanh() if mode == "RNN_TANH" else a.relu()),
    if mode == "LSTM":
        gates = F.linear(x, w_ih, b_ih) + F.linear(h, w_hh, b_hh)
        i, f, g, o = gates.unsafe_chunk(4, 1)  # (PyTorch's lstm_cell: UnsafeSplitBackward0)
        i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
        cy = f * states[1] + i * g
        return o * cy.tanh(), cy
    gi, gh = F.linear(x, w_ih, b_ih), F.linear(h, w_hh, b_hh)
    i_r, i_i, i_n = gi.chunk(3, 1)
    h_r, h_i, h_n = gh.chunk(3, 1)
    r, z = (i_r + h_r).sigmoid(), (i_i + h_i).sigmoid()
    n = (i_n + r * h_n).tanh()
    return ((h - n) * z + n),


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise FgradValueError(f"Unknown nonlinearity: {nonlinearity}")
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity
        self._mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"

    def forward(self, input, hx=None):
        """input [B, I] or [I]; hx [B, H] or [H] (zeros by default). Returns h'."""
        x, states, batched = self._prepare(input, [hx], ["hidden"])
        return self._cell(x, states, batched)[0]


class LSTMCell(RNNCellBase):
    """One LSTM step: returns (h', c')."""

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        """input [B, I] or [I]; hx = (h, c), each [B, H] or [H] (zeros by default)."""
        if hx is not None and (not isinstance(hx, (tuple, list)) or len(hx) != 2):
            raise FgradRuntimeError("lstm_cell expects two hidden states")
        states = [None, None] if hx is None else list(hx)
        x, states, batched = self._prepare(input, states, ["hx[0]", "hx[1]"])
        return self._cell(x, states, batched)


class GRUCell(RNNCellBase):
    """One GRU step: returns h'."""

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        """input [B, I] or [I]; hx [B, H] or [H] (zeros by default). Returns h'."""
        x, states, batched = self._prepare(input, [hx], ["hidden"])
        return self._cell(x, states, batched)[0]

