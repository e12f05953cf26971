"""Recurrent layers (RNN, LSTM, GRU, their cells) and packed sequences, differentially against
PyTorch: PyTorch's state_dict is loaded into the fgrad module, and outputs, final states,
gradients of a scalar loss with respect to the input, the initial state and every parameter,
and a second-order quantity (the gradient of the squared input-gradient, create_graph=True)
must agree, in float32 and float64."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as fnn
from fgrad.torch.nn.utils import rnn as frnn

torch = pytest.importorskip("torch")
tnn = torch.nn
trnn = torch.nn.utils.rnn

# PyTorch's own notice that its oneDNN kernel skips projections
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

TOL = {np.float32: dict(rtol=2e-4, atol=2e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}
TDT = {np.float32: torch.float32, np.float64: torch.float64}


def _pair(kind: str, *args, dtype=np.float64, **kwargs):
    """(torch module, fgrad module) of one class, the fgrad one holding torch's weights."""
    torch.manual_seed(0)
    tm = getattr(tnn, kind)(*args, **kwargs).to(TDT[dtype])
    fm = getattr(fnn, kind)(*args, **kwargs).to(getattr(fgrad.torch, np.dtype(dtype).name))
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return tm, fm


def _t(a, grad=True):
    return torch.tensor(a, requires_grad=grad)


def _f(a, grad=True):
    return fgrad.torch.tensor(a, requires_grad=grad)


def _close(ours, ref, dtype, what):
    ref = ref.detach().numpy() if hasattr(ref, "detach") else np.asarray(ref)
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    np.testing.assert_allclose(ours, ref, err_msg=what, **TOL[dtype])


def _flat_outputs(out):
    """The tensors of a module's result, flattened: (output, h_n) or (output, (h_n, c_n))."""
    o, h = out
    if isinstance(o, tuple):  # PackedSequence
        o = o.data
    return [o] + (list(h) if isinstance(h, tuple) else [h])


def _weights(outs, seed):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, tuple(o.shape)) for o in outs]


def _loss(L, outs, ws):
    return sum((o * L.tensor(w, dtype=o.dtype)).sum() for o, w in zip(outs, ws))


CONFIGS = {
    "1layer": dict(),
    "2layer-bi": dict(num_layers=2, bidirectional=True),
    "batch_first-nobias": dict(batch_first=True, bias=False),
    "2layer-bi-batch_first": dict(num_layers=2, bidirectional=True, batch_first=True),
}
KINDS = {"RNN": dict(), "RNN-relu": dict(nonlinearity="relu"), "LSTM": dict(), "GRU": dict(),
         "LSTM-proj": dict(proj_size=3)}


def _kind(name):
    return name.split("-")[0], KINDS[name]


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_state_dict_matches_torch(kind, config):
    cls, extra = _kind(kind)
    kw = dict(CONFIGS[config], **extra)
    torch.manual_seed(7)
    tm = getattr(tnn, cls)(4, 5, **kw)
    fgrad.torch.manual_seed(7)
    fm = getattr(fnn, cls)(4, 5, **kw)
    assert list(fm.state_dict()) == list(tm.state_dict())
    for (k, a), b in zip(fm.state_dict().items(), tm.state_dict().values()):
        assert tuple(a.shape) == tuple(b.shape), k
    assert [[n for n in names] for names in fm._all_weights] == tm._all_weights
    assert repr(fm) == repr(tm)
    # U(-1/sqrt(H), 1/sqrt(H)) drawn from torch's stream in torch's order: the same weights
    for (k, a), b in zip(fm.state_dict().items(), tm.state_dict().values()):
        assert np.array_equal(a.numpy(), b.numpy()), k


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("config", list(CONFIGS))
def test_layer_matches_torch(kind, config, dtype):
    cls, extra = _kind(kind)
    kw = dict(CONFIGS[config], **extra)
    tm, fm = _pair(cls, 4, 5, dtype=dtype, **kw)
    D = 2 if kw.get("bidirectional") else 1
    L = kw.get("num_layers", 1)
    Hr = kw.get("proj_size") or 5
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 6, 4) if kw.get("batch_first") else (6, 3, 4)).astype(dtype)
    h0 = rng.standard_normal((L * D, 3, Hr)).astype(dtype)
    c0 = rng.standard_normal((L * D, 3, 5)).astype(dtype)
    res = {}
    for name, Lib, m, mk in (("torch", torch, tm, _t), ("fgrad", fgrad.torch, fm, _f)):
        xs = [mk(x), mk(h0)] + ([mk(c0)] if cls == "LSTM" else [])
        hx = (xs[1], xs[2]) if cls == "LSTM" else xs[1]
        outs = _flat_outputs(m(xs[0], hx))
        loss = _loss(Lib, outs, _weights(outs, 2))
        params = list(m.parameters())
        grads = Lib.autograd.grad(loss, xs + params)
        res[name] = (outs, grads)
    for k, (a, b) in enumerate(zip(res["fgrad"][0], res["torch"][0])):
        _close(a, b, dtype, f"output {k}")
    names = ["input", "h0", "c0"][:2 + (cls == "LSTM")] + [n for n, _ in tm.named_parameters()]
    for n, a, b in zip(names, res["fgrad"][1], res["torch"][1]):
        _close(a, b, dtype, f"gradient of {n}")


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU", "LSTM-proj"])
def test_second_order_matches_torch(kind):
    """d/d(x, params) of |d loss/dx|^2, through create_graph (float64)."""
    cls, extra = _kind(kind)
    tm, fm = _pair(cls, 3, 4, num_layers=2, bidirectional=True, **extra)
    x = np.random.default_rng(3).standard_normal((4, 2, 3))
    res = {}
    for name, Lib, m, mk in (("torch", torch, tm, _t), ("fgrad", fgrad.torch, fm, _f)):
        xt = mk(x)
        outs = _flat_outputs(m(xt))
        loss = _loss(Lib, [Lib.tanh(o) for o in outs], _weights(outs, 4))
        (gx,) = Lib.autograd.grad(loss, xt, create_graph=True)
        params = list(m.parameters())
        res[name] = Lib.autograd.grad((gx * gx).sum(), [xt] + params)
    for n, a, b in zip(["input"] + [n for n, _ in tm.named_parameters()], res["fgrad"], res["torch"]):
        _close(a, b, np.float64, f"second-order gradient of {n}")


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_sequence_matches_torch(kind, enforce_sorted):
    cls, extra = _kind(kind)
    tm, fm = _pair(cls, 3, 4, num_layers=2, bidirectional=True, **extra)
    lengths = [5, 4, 2, 1] if enforce_sorted else [2, 5, 1, 4]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((5, 4, 3))
    h0 = rng.standard_normal((4, 4, 4))
    res = {}
    for name, Lib, m, mk, R in (("torch", torch, tm, _t, trnn), ("fgrad", fgrad.torch, fm, _f, frnn)):
        xt, ht = mk(x), mk(h0)
        packed = R.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
        hx = (ht, ht * 0.5) if cls == "LSTM" else ht
        out, hn = m(packed, hx)
        padded, lens = R.pad_packed_sequence(out, total_length=6)
        outs = [padded] + (list(hn) if isinstance(hn, tuple) else [hn])
        loss = _loss(Lib, outs, _weights(outs, 6))
        res[name] = (out, lens, outs, Lib.autograd.grad(loss, [xt, ht] + list(m.parameters())))
    _close(res["fgrad"][0].data, res["torch"][0].data, np.float64, "packed output data")
    for f in ("batch_sizes", "sorted_indices", "unsorted_indices"):
        a, b = getattr(res["fgrad"][0], f), getattr(res["torch"][0], f)
        assert (a is None) == (b is None), f
        if a is not None:
            np.testing.assert_array_equal(a.numpy(), b.numpy(), err_msg=f)
    np.testing.assert_array_equal(res["fgrad"][1].numpy(), res["torch"][1].numpy())
    for k, (a, b) in enumerate(zip(res["fgrad"][2], res["torch"][2])):
        _close(a, b, np.float64, f"output {k}")
    names = ["input", "h0"] + [n for n, _ in tm.named_parameters()]
    for n, a, b in zip(names, res["fgrad"][3], res["torch"][3]):
        _close(a, b, np.float64, f"gradient of {n}")
    # padded positions of the input get no gradient
    gx = res["fgrad"][3][0].numpy()
    for b, n in enumerate(lengths):
        assert not gx[n:, b].any()


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_unbatched_input_matches_torch(kind):
    tm, fm = _pair(kind, 3, 4, num_layers=2)
    x = np.random.default_rng(7).standard_normal((5, 3))
    h0 = np.random.default_rng(8).standard_normal((2, 4))
    res = {}
    for name, Lib, m, mk in (("torch", torch, tm, _t), ("fgrad", fgrad.torch, fm, _f)):
        xt, ht = mk(x), mk(h0)
        outs = _flat_outputs(m(xt, (ht, ht) if kind == "LSTM" else ht))
        loss = _loss(Lib, outs, _weights(outs, 9))
        res[name] = outs + list(Lib.autograd.grad(loss, [xt, ht]))
    for k, (a, b) in enumerate(zip(res["fgrad"], res["torch"])):
        _close(a, b, np.float64, f"result {k}")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell", "RNNCell-relu"])
@pytest.mark.parametrize("batched", [True, False])
def test_cells_match_torch(kind, batched, dtype):
    cls = kind.split("-")[0]
    kw = dict(nonlinearity="relu") if kind.endswith("relu") else {}
    tm, fm = _pair(cls, 3, 4, dtype=dtype, **kw)
    assert repr(fm) == repr(tm)
    rng = np.random.default_rng(11)
    x = rng.standard_normal((2, 3) if batched else (3,)).astype(dtype)
    h = rng.standard_normal((2, 4) if batched else (4,)).astype(dtype)
    for with_state in (True, False):
        res = {}
        for name, Lib, m, mk in (("torch", torch, tm, _t), ("fgrad", fgrad.torch, fm, _f)):
            xt, ht = mk(x), mk(h)
            hx = ((ht, ht * 2) if cls == "LSTMCell" else ht) if with_state else None
            out = m(xt, hx)
            outs = list(out) if isinstance(out, tuple) else [out]
            loss = _loss(Lib, outs, _weights(outs, 12))
            wrt = [xt] + ([ht] if with_state else []) + list(m.parameters())
            res[name] = outs + list(Lib.autograd.grad(loss, wrt))
        for k, (a, b) in enumerate(zip(res["fgrad"], res["torch"])):
            _close(a, b, dtype, f"{kind} result {k} (state given: {with_state})")


def test_dropout_between_layers_only_in_training():
    fgrad.torch.manual_seed(0)
    m = fnn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = fgrad.torch.randn(5, 2, 3)
    m.eval()
    a = m(x)[0].detach().numpy()
    np.testing.assert_array_equal(a, m(x)[0].detach().numpy())
    m.train()
    b = m(x)[0].detach().numpy()
    assert not np.allclose(a, b)
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        single = fnn.GRU(3, 4, dropout=0.5)
    single.train()  # the last layer's output is never dropped
    np.testing.assert_array_equal(single(x)[0].detach().numpy(), single.eval()(x)[0].detach().numpy())


def test_functional_call_grad_vmap_and_jit_agree_with_backward():
    """The layer under fgrad's transforms: grad through functional_call equals .backward(),
    vmap over examples equals a loop, jit equals eager."""
    from fgrad.torch.func import functional_call
    torch_free = fnn.LSTM(3, 4, num_layers=2, bidirectional=True).double()
    x = np.random.default_rng(13).standard_normal((5, 2, 3))
    params = {k: v.detach().numpy() for k, v in torch_free.named_parameters()}

    def loss(p, x):
        out, (h, c) = functional_call(torch_free, p, (x,))
        return fgrad.numpy.sum(fgrad.numpy.tanh(out)) + fgrad.numpy.sum(h * c)
    g = fgrad.grad(loss)(params, x)
    xt = fgrad.torch.tensor(x)
    out, (h, c) = torch_free(xt)
    (out.tanh().sum() + (h * c).sum()).backward()
    for k, p in torch_free.named_parameters():
        np.testing.assert_allclose(np.asarray(g[k]), p.grad.numpy(), rtol=1e-10, atol=1e-12, err_msg=k)
    xs = np.random.default_rng(14).standard_normal((3, 5, 2, 3))
    batched = fgrad.vmap(lambda x: loss(params, x))(xs)
    np.testing.assert_allclose(np.asarray(batched), [loss(params, v) for v in xs], rtol=1e-12)
    np.testing.assert_allclose(fgrad.jit(loss)(params, x), loss(params, x), rtol=1e-12)
    # per-example gradients: vmap of grad (the scan's VJP under vmap) equals a loop
    per_example = fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0))(params, xs)
    for i, xi in enumerate(xs):
        gi = fgrad.grad(loss)(params, xi)
        for k in params:
            np.testing.assert_allclose(np.asarray(per_example[k][i]), np.asarray(gi[k]), rtol=1e-10,
                                       atol=1e-12, err_msg=k)
    # and jit of grad equals eager grad
    gj = fgrad.jit(fgrad.grad(loss))(params, x)
    for k in params:
        np.testing.assert_allclose(np.asarray(gj[k]), np.asarray(g[k]), rtol=1e-12, atol=1e-14, err_msg=k)


def test_hessian_vector_product_matches_finite_differences():
    """Forward-over-reverse through the scan (its JVP and its VJP's JVP) against central
    differences of the gradient."""
    from fgrad.torch.func import functional_call
    m = fnn.GRU(2, 3).double()
    params = {k: v.detach().numpy() for k, v in m.named_parameters()}
    x = np.random.default_rng(15).standard_normal((4, 2, 2))

    def loss(xv):
        out, h = functional_call(m, params, (xv,))
        return fgrad.numpy.sum(out ** 3) + fgrad.numpy.sum(h)
    v = np.random.default_rng(16).standard_normal(x.shape)
    hvp = fgrad.jvp(fgrad.grad(loss), (x,), (v,))[1]
    eps = 1e-5
    fd = (fgrad.grad(loss)(x + eps * v) - fgrad.grad(loss)(x - eps * v)) / (2 * eps)
    np.testing.assert_allclose(hvp, fd, rtol=1e-6, atol=1e-8)


# --- packed-sequence utilities -------------------------------------------------------------------

@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    rng = np.random.default_rng(17)
    seqs = [rng.standard_normal((n, 2)) for n in (3, 5, 1)]
    w = rng.standard_normal((5, 3, 2) if not batch_first else (3, 5, 2))
    res = {}
    for name, Lib, R, mk in (("torch", torch, trnn, _t), ("fgrad", fgrad.torch, frnn, _f)):
        ts = [mk(s) for s in seqs]
        out = R.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
        (out * Lib.tensor(w)).sum().backward()
        res[name] = [out] + [t.grad for t in ts]
    for a, b in zip(res["fgrad"], res["torch"]):
        _close(a, b, np.float64, "pad_sequence")


@pytest.mark.parametrize("batch_first", [False, True])
def test_pack_and_unpack_roundtrip_matches_torch(batch_first):
    rng = np.random.default_rng(18)
    seqs = [rng.standard_normal((n, 3)) for n in (2, 4, 3)]
    res = {}
    for name, R, mk in (("torch", trnn, _t), ("fgrad", frnn, _f)):
        ts = [mk(s, grad=False) for s in seqs]
        packed = R.pack_sequence(ts, enforce_sorted=False)
        padded, lens = R.pad_packed_sequence(packed, batch_first=batch_first, padding_value=7.0)
        # (a clone: PyTorch's unpad_sequence transposes its batch-second input in place)
        back = R.unpad_sequence(padded.clone(), lens, batch_first=batch_first)
        res[name] = [packed.data, padded, lens] + list(R.unpack_sequence(packed)) + back
        assert packed.sorted_indices.numpy().tolist() == [1, 2, 0]
    for a, b in zip(res["fgrad"], res["torch"]):
        _close(a, b, np.float64, "roundtrip")
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        frnn.pack_sequence([_f(s) for s in seqs])


def test_packed_sequence_errors():
    x = fgrad.torch.randn(4, 3, 2)
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        frnn.pack_padded_sequence(x, [2, 3, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        frnn.pack_padded_sequence(x, [3, 0, 0])
    with pytest.raises(RuntimeError, match="equal to batch_size"):
        frnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match="exceeds the 4 time steps"):
        frnn.pack_padded_sequence(x, [5, 3, 1])
    p = frnn.pack_padded_sequence(x, [4, 3, 1])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 4"):
        frnn.pad_packed_sequence(p, total_length=2)
    with pytest.raises(RuntimeError, match=r"sequence 1 has shape \(3, 4\)"):
        frnn.pad_sequence([fgrad.torch.randn(2, 3), fgrad.torch.randn(3, 4)])
    assert isinstance(p, tuple) and p.batch_sizes.tolist() == [3, 2, 2, 1]
    assert p.double().data.dtype == fgrad.torch.float64
    # built by hand with sorted_indices only: the layer restores the original order itself
    q = frnn.pack_padded_sequence(x, [1, 4, 3], enforce_sorted=False)
    m = fnn.GRU(2, 3)
    hand = frnn.PackedSequence(q.data, q.batch_sizes, q.sorted_indices)
    np.testing.assert_array_equal(m(hand)[1].detach().numpy(), m(q)[1].detach().numpy())


# --- argument checks, with PyTorch's exception types ----------------------------------------------

@pytest.mark.parametrize("make, call", [
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 2, 5, dtype=L.float64))),
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 2, 6))),
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 2, 5), (L.randn(1, 2, 4), L.randn(2, 2, 4)))),
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 2, 5), (L.randn(2, 2, 4), L.randn(2, 3, 4)))),
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 5), (L.randn(2, 1, 4), L.randn(2, 1, 4)))),
    (lambda nn: nn.LSTM(5, 4, 2), lambda L, m: m(L.randn(3, 2, 2, 5))),
    (lambda nn: nn.GRU(5, 4), lambda L, m: m(L.randn(3, 2, 5), L.randn(2, 2, 4))),
    (lambda nn: nn.GRU(5, 4), lambda L, m: m(L.randn(3, 2, 5), L.randn(1, 4))),
    (lambda nn: nn.LSTMCell(5, 4), lambda L, m: m(L.randn(3, 6))),
    (lambda nn: nn.LSTMCell(5, 4), lambda L, m: m(L.randn(3, 5), (L.randn(2, 4), L.randn(2, 4)))),
    (lambda nn: nn.LSTMCell(5, 4), lambda L, m: m(L.randn(3, 5), (L.randn(3, 3), L.randn(3, 4)))),
    (lambda nn: nn.LSTMCell(5, 4), lambda L, m: m(L.randn(2, 3, 5))),
    (lambda nn: nn.LSTMCell(5, 4), lambda L, m: m(L.randn(3, 5), (L.randn(3, 4),))),
    (lambda nn: nn.RNNCell(5, 4), lambda L, m: m(L.randn(3, 5), L.randn(2, 3, 4))),
])
def test_errors_match_torch(make, call):
    with pytest.raises(Exception) as want:
        call(torch, make(tnn))
    with pytest.raises(type(want.value)) as got:
        call(fgrad.torch, make(fnn))
    if "Expected" in str(want.value) or "inconsistent" in str(want.value):
        assert got.value.args[0] == str(want.value)  # args[0]: the message, without fgrad's '  at <user line>'


@pytest.mark.parametrize("make", [
    lambda nn: nn.RNN(5, 4, nonlinearity="gelu"), lambda nn: nn.LSTM(5, 4, proj_size=4),
    lambda nn: nn.GRU(5, 4, proj_size=2), lambda nn: nn.LSTM(5, 0), lambda nn: nn.LSTM(5, 4, dropout=2),
    lambda nn: nn.LSTM(5, 4.0), lambda nn: nn.LSTM(5, 4, num_layers=0)])
def test_constructor_errors_match_torch(make):
    with pytest.raises(Exception) as want:
        make(tnn)
    with pytest.raises(type(want.value), match=str(want.value)[:30].replace("(", r"\(")):
        make(fnn)


def test_float32_layer_under_jit_and_vmap_agrees_with_eager():
    """float32 runs the LSTM step's Numba kernels (fgrad/torch/nn/_lstm_kernels.py) in every
    path: jit and vmap (which folds examples into the batch rows) agree with eager."""
    from fgrad.torch.func import functional_call
    net = fnn.LSTM(3, 4, num_layers=2)
    x = np.random.default_rng(15).standard_normal((5, 2, 3)).astype(np.float32)
    params = {k: v.detach().numpy() for k, v in net.named_parameters()}

    def loss(p, x):
        out, (h, c) = functional_call(net, p, (x,))
        return fgrad.numpy.sum(fgrad.numpy.tanh(out)) + fgrad.numpy.sum(h * c)
    assert np.asarray(loss(params, x)).dtype == np.float32
    np.testing.assert_allclose(fgrad.jit(loss)(params, x), loss(params, x), rtol=1e-6)
    g, gj = fgrad.grad(loss)(params, x), fgrad.jit(fgrad.grad(loss))(params, x)
    for k in params:
        np.testing.assert_allclose(np.asarray(gj[k]), np.asarray(g[k]), rtol=1e-5, atol=1e-6, err_msg=k)
    xs = np.random.default_rng(16).standard_normal((3, 5, 2, 3)).astype(np.float32)
    np.testing.assert_allclose(np.asarray(fgrad.vmap(lambda v: loss(params, v))(xs)),
                               [loss(params, v) for v in xs], rtol=1e-5)
