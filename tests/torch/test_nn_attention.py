"""Attention and transformers, differentially against PyTorch: F.scaled_dot_product_attention,
nn.MultiheadAttention, the Transformer layers and stacks. PyTorch's state_dict is loaded into
the fgrad module; outputs, attention weights, gradients with respect to the inputs and every
parameter, and a second-order quantity (create_graph) must agree, in float32 and float64."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.torch.nn as fnn
import fgrad.torch.nn.functional as F

torch = pytest.importorskip("torch")
tnn = torch.nn
TF = torch.nn.functional

# PyTorch's notice that its nested-tensor fast path needs batch_first
pytestmark = pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")

TOL = {np.float32: dict(rtol=2e-4, atol=3e-5), np.float64: dict(rtol=1e-9, atol=1e-11)}
TDT = {np.float32: torch.float32, np.float64: torch.float64}
LIBS = (("torch", torch, TF), ("fgrad", fgrad.torch, F))


def _close(ours, ref, dtype, what):
    ref = ref.detach().numpy() if hasattr(ref, "detach") else np.asarray(ref)
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    assert ours.shape == ref.shape, f"{what}: shape {ours.shape} != {ref.shape}"
    np.testing.assert_allclose(ours, ref, err_msg=what, **TOL[dtype])


def _load(tm, fm, dtype):
    tm.to(TDT[dtype])
    fm.to(getattr(fgrad.torch, np.dtype(dtype).name))
    fm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return tm, fm


def _pair(make, dtype=np.float64):
    torch.manual_seed(0)
    return _load(make(tnn), make(fnn), dtype)


def _loss(L, outs, seed):
    rng = np.random.default_rng(seed)
    return sum((o * L.tensor(rng.uniform(-1, 1, tuple(o.shape)), dtype=o.dtype)).sum() for o in outs)


def _mask(L, m):
    return None if m is None else L.tensor(m)


# --- scaled_dot_product_attention -------------------------------------------------------------

_L, _S = 4, 5
_BOOL = np.random.default_rng(0).uniform(size=(_L, _S)) > 0.3
_BOOL[:, 0] = True
_DEAD = _BOOL.copy()
_DEAD[2] = False  # a query with no key: zero output, as PyTorch's CPU kernels give
_FLOAT = np.random.default_rng(1).standard_normal((_L, _S))
_FLOAT[1, 2] = -np.inf
SDPA_CASES = {
    "plain": dict(),
    "bool-mask": dict(attn_mask=_BOOL),
    "bool-mask-dead-row": dict(attn_mask=_DEAD),
    "float-mask": dict(attn_mask=_FLOAT),
    "batched-mask": dict(attn_mask=np.broadcast_to(_BOOL, (2, 3, _L, _S)).copy()),
    "causal": dict(is_causal=True),
    "scale": dict(scale=0.3),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_sdpa_matches_torch(case, dtype):
    kw = dict(SDPA_CASES[case])
    rng = np.random.default_rng(2)
    q = rng.standard_normal((2, 3, _L, 6)).astype(dtype)
    k = rng.standard_normal((2, 3, _S, 6)).astype(dtype)
    v = rng.standard_normal((2, 3, _S, 7)).astype(dtype)
    if case == "causal":
        k, v = k[:, :, :_L], v[:, :, :_L]
    res = {}
    for name, L, Fn in LIBS:
        xs = [L.tensor(a, requires_grad=True) for a in (q, k, v)]
        mkw = dict(kw)
        if "attn_mask" in mkw:
            mkw["attn_mask"] = L.tensor(mkw["attn_mask"], dtype=None if mkw["attn_mask"].dtype == bool
                                        else TDT[dtype] if L is torch else getattr(fgrad.torch, np.dtype(dtype).name))
        out = Fn.scaled_dot_product_attention(*xs, **mkw)
        res[name] = [out] + list(L.autograd.grad(_loss(L, [out], 3), xs))
    for n, a, b in zip(["output", "dq", "dk", "dv"], res["fgrad"], res["torch"]):
        _close(a, b, dtype, f"{case}: {n}")


def test_sdpa_grouped_query_attention_and_second_order():
    rng = np.random.default_rng(4)
    q, k, v = (rng.standard_normal(s) for s in ((1, 4, 3, 5), (1, 2, 6, 5), (1, 2, 6, 5)))
    res = {}
    for name, L, Fn in LIBS:
        xs = [L.tensor(a, requires_grad=True) for a in (q, k, v)]
        # PyTorch's fused CPU kernel has no second derivative: its reference math kernel does
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            out = Fn.scaled_dot_product_attention(*xs, enable_gqa=True)
            (gq,) = L.autograd.grad(_loss(L, [out], 5), xs[0], create_graph=True)
            res[name] = [out] + list(L.autograd.grad((gq * gq).sum(), xs))
    for n, a, b in zip(["output", "d2q", "d2k", "d2v"], res["fgrad"], res["torch"]):
        _close(a, b, np.float64, n)


def test_sdpa_dropout_is_seeded_and_scales():
    q = fgrad.torch.randn(2, 64, 8)
    plain = F.scaled_dot_product_attention(q, q, q).numpy()
    fgrad.torch.manual_seed(3)
    a = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    fgrad.torch.manual_seed(3)
    b = F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy()
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, plain)
    # kept weights are scaled by 1 / (1 - p): the mean over many draws approaches the plain output
    mean = np.mean([F.scaled_dot_product_attention(q, q, q, dropout_p=0.5).numpy() for _ in range(400)], 0)
    assert np.abs(mean - plain).mean() < 0.1 * np.abs(plain).mean()
    np.testing.assert_array_equal(F.scaled_dot_product_attention(q, q, q, dropout_p=1.0).numpy(), 0)


def test_sdpa_errors_match_torch():
    q, k = fgrad.torch.randn(2, 3, 4), fgrad.torch.randn(2, 5, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set when is_causal=True"):
        F.scaled_dot_product_attention(q, k, k, attn_mask=fgrad.torch.ones(3, 5, dtype=fgrad.torch.bool), is_causal=True)
    with pytest.raises(RuntimeError, match="Expected query, key, and value to have the same dtype"):
        F.scaled_dot_product_attention(q, k.double(), k)
    with pytest.raises(RuntimeError, match=r"query \(2, 3, 4\), key \(2, 5, 3\)"):
        F.scaled_dot_product_attention(q, fgrad.torch.randn(2, 5, 3), k)


# --- MultiheadAttention -----------------------------------------------------------------------------

MHA_CASES = {
    "self": dict(make=dict(), self_attn=True),
    "self-batch_first": dict(make=dict(batch_first=True), self_attn=True),
    "cross-kdim-vdim": dict(make=dict(kdim=3, vdim=5)),
    "cross-nobias": dict(make=dict(bias=False)),
    "bias_kv-zero_attn": dict(make=dict(add_bias_kv=True, add_zero_attn=True)),
    "kpm-bool": dict(make=dict(), kpm="bool"),
    "kpm-float": dict(make=dict(), kpm="float"),
    "attn_mask-bool": dict(make=dict(), attn_mask="bool", self_attn=True),
    "attn_mask-float-3d": dict(make=dict(), attn_mask="float3", kpm="float"),
    "causal": dict(make=dict(), attn_mask="causal", self_attn=True, is_causal=True),
    "per-head-weights": dict(make=dict(), average=False),
    "no-weights": dict(make=dict(), need_weights=False, kpm="bool", attn_mask="bool"),
}
_N, _T, _SRC, _E, _H = 2, 4, 5, 6, 2


def _mha_inputs(case, dtype, rng):
    c = MHA_CASES[case]
    mk = c["make"]
    bf = mk.get("batch_first", False)
    shape_q = (_N, _T, _E) if bf else (_T, _N, _E)
    q = rng.standard_normal(shape_q).astype(dtype)
    S = _T if c.get("self_attn") else _SRC
    k = rng.standard_normal((S, _N, mk.get("kdim", _E))).astype(dtype)
    v = rng.standard_normal((S, _N, mk.get("vdim", _E))).astype(dtype)
    kpm = attn = None
    if c.get("kpm") == "bool":
        kpm = rng.uniform(size=(_N, S)) > 0.6
        kpm[:, 0] = False
    elif c.get("kpm") == "float":
        kpm = rng.standard_normal((_N, S)).astype(dtype)
    if c.get("attn_mask") == "bool":
        attn = rng.uniform(size=(_T, S)) > 0.7
        attn[:, 1] = False
    elif c.get("attn_mask") == "float3":
        attn = rng.standard_normal((_N * _H, _T, S)).astype(dtype)
    elif c.get("attn_mask") == "causal":
        attn = np.triu(np.full((_T, _T), -np.inf, dtype), 1)
    return q, k, v, kpm, attn


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case, dtype):
    c = MHA_CASES[case]
    tm, fm = _pair(lambda nn: nn.MultiheadAttention(_E, _H, **c["make"]), dtype)
    assert list(fm.state_dict()) == list(tm.state_dict()) and repr(fm) == repr(tm)
    q, k, v, kpm, attn = _mha_inputs(case, dtype, np.random.default_rng(6))
    res = {}
    for name, L, m in (("torch", torch, tm), ("fgrad", fgrad.torch, fm)):
        qt = L.tensor(q, requires_grad=True)
        if c.get("self_attn"):
            kt = vt = qt
            inputs = [qt]
        else:
            kt, vt = L.tensor(k, requires_grad=True), L.tensor(v, requires_grad=True)
            inputs = [qt, kt, vt]
        out, w = m(qt, kt, vt, key_padding_mask=_mask(L, kpm), attn_mask=_mask(L, attn),
                   need_weights=c.get("need_weights", True), average_attn_weights=c.get("average", True),
                   is_causal=c.get("is_causal", False))
        outs = [out] + ([w] if w is not None else [])
        res[name] = outs, L.autograd.grad(_loss(L, outs, 7), inputs + list(m.parameters()))
    assert len(res["fgrad"][0]) == len(res["torch"][0])
    for kk, (a, b) in enumerate(zip(res["fgrad"][0], res["torch"][0])):
        _close(a, b, dtype, f"{case}: output {kk}")
    names = ["query", "key", "value"][:len(res["torch"][1]) - len(list(tm.parameters()))] + \
        [n for n, _ in tm.named_parameters()]
    for n, a, b in zip(names, res["fgrad"][1], res["torch"][1]):
        _close(a, b, dtype, f"{case}: gradient of {n}")


@pytest.mark.parametrize("need_weights", [True, False])
def test_multihead_attention_unbatched_matches_torch(need_weights):
    tm, fm = _pair(lambda nn: nn.MultiheadAttention(_E, _H))
    rng = np.random.default_rng(8)
    q, k = rng.standard_normal((_T, _E)), rng.standard_normal((_SRC, _E))
    kpm = np.array([False, True, False, False, True])
    res = {}
    for name, L, m in (("torch", torch, tm), ("fgrad", fgrad.torch, fm)):
        qt, kt = L.tensor(q, requires_grad=True), L.tensor(k, requires_grad=True)
        out, w = m(qt, kt, kt, key_padding_mask=L.tensor(kpm), need_weights=need_weights)
        outs = [out] + ([w] if w is not None else [])
        res[name] = outs + list(L.autograd.grad(_loss(L, outs, 9), [qt, kt]))
    for kk, (a, b) in enumerate(zip(res["fgrad"], res["torch"])):
        _close(a, b, np.float64, f"result {kk}")


def test_multihead_attention_second_order_matches_torch():
    tm, fm = _pair(lambda nn: nn.MultiheadAttention(_E, _H, kdim=3, vdim=4))
    q, k, v, _, _ = _mha_inputs("cross-kdim-vdim", np.float64, np.random.default_rng(10))
    v = v[..., :4]
    kpm = np.zeros((_N, _SRC), bool)
    kpm[0, 3] = True
    res = {}
    for name, L, m in (("torch", torch, tm), ("fgrad", fgrad.torch, fm)):
        xs = [L.tensor(a, requires_grad=True) for a in (q, k, v)]
        out, w = m(*xs, key_padding_mask=L.tensor(kpm))
        (gq,) = L.autograd.grad(_loss(L, [out, w], 11), xs[0], create_graph=True)
        wrt = xs + list(m.parameters())
        gs = L.autograd.grad((gq * gq).sum(), wrt, allow_unused=True)  # (out_proj.bias: unused)
        res[name] = [L.zeros_like(x) if g is None else g for g, x in zip(gs, wrt)]
    for n, a, b in zip(["query", "key", "value"] + [n for n, _ in tm.named_parameters()], res["fgrad"],
                       res["torch"]):
        _close(a, b, np.float64, f"second-order gradient of {n}")


def test_multihead_attention_dropout_only_in_training():
    fgrad.torch.manual_seed(0)
    m = fnn.MultiheadAttention(_E, _H, dropout=0.5)
    x = fgrad.torch.randn(_T, _N, _E)
    a = m.eval()(x, x, x)[0].detach().numpy()
    b = m.train()(x, x, x)[0].detach().numpy()
    assert not np.allclose(a, b)
    np.testing.assert_array_equal(a, m.eval()(x, x, x)[0].detach().numpy())


@pytest.mark.parametrize("call", [
    lambda L, m, x: m(x, x, x, attn_mask=L.zeros(4, 3)),
    lambda L, m, x: m(x, x, x, attn_mask=L.zeros(5, 4, 4)),
    lambda L, m, x: m(x, x, x, is_causal=True),
    lambda L, m, x: m(L.randn(4, 2, 5), x, x),
])
def test_multihead_attention_errors_match_torch(call):
    with pytest.raises(Exception) as want:
        call(torch, tnn.MultiheadAttention(6, 2), torch.randn(4, 2, 6))
    with pytest.raises(type(want.value)) as got:
        call(fgrad.torch, fnn.MultiheadAttention(6, 2), fgrad.torch.randn(4, 2, 6))
    assert got.value.args[0] == str(want.value).replace("torch.Size", "torch.Size")  # the message, less the user line
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        fnn.MultiheadAttention(5, 2)


# --- transformer layers and stacks ------------------------------------------------------------------

LAYER_CASES = {
    "relu-post": dict(),
    "gelu-pre-batch_first": dict(activation="gelu", norm_first=True, batch_first=True),
    "callable-nobias": dict(activation="callable", bias=False),
}


def _layer_kw(nn_mod, Fn, case):
    kw = dict(LAYER_CASES[case])
    if kw.get("activation") == "callable":
        kw["activation"] = Fn.silu
    return dict(d_model=_E, nhead=_H, dim_feedforward=10, dropout=0.1, **kw)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", list(LAYER_CASES))
@pytest.mark.parametrize("kind", ["encoder", "decoder"])
def test_transformer_layers_match_torch(kind, case, dtype):
    cls = "TransformerEncoderLayer" if kind == "encoder" else "TransformerDecoderLayer"
    torch.manual_seed(0)
    tm = getattr(tnn, cls)(**_layer_kw(tnn, TF, case))
    fm = getattr(fnn, cls)(**_layer_kw(fnn, F, case))
    _load(tm, fm, dtype)
    assert list(fm.state_dict()) == list(tm.state_dict())
    tm.eval(), fm.eval()  # dropout off
    bf = LAYER_CASES[case].get("batch_first", False)
    rng = np.random.default_rng(12)
    x = rng.standard_normal((_N, _T, _E) if bf else (_T, _N, _E)).astype(dtype)
    mem = rng.standard_normal((_N, _SRC, _E) if bf else (_SRC, _N, _E)).astype(dtype)
    causal = np.triu(np.full((_T, _T), -np.inf, dtype), 1)
    kpm = np.zeros((_N, _SRC), bool)
    kpm[1, -2:] = True
    res = {}
    for name, L, m in (("torch", torch, tm), ("fgrad", fgrad.torch, fm)):
        xt = L.tensor(x, requires_grad=True)
        if kind == "encoder":
            out = m(xt, src_mask=L.tensor(causal), is_causal=True)
            inputs = [xt]
        else:
            mt = L.tensor(mem, requires_grad=True)
            out = m(xt, mt, tgt_mask=L.tensor(causal), memory_key_padding_mask=L.tensor(kpm), tgt_is_causal=True)
            inputs = [xt, mt]
        res[name] = [out] + list(L.autograd.grad(_loss(L, [out], 13), inputs + list(m.parameters())))
    names = ["output", "input", "memory"][:len(res["torch"]) - len(list(tm.parameters()))] + \
        [n for n, _ in tm.named_parameters()]
    for n, a, b in zip(names, res["fgrad"], res["torch"]):
        _close(a, b, dtype, f"{kind} {case}: {n}")


def test_transformer_matches_torch_with_masks_and_second_order():
    kw = dict(d_model=_E, nhead=_H, num_encoder_layers=2, num_decoder_layers=2, dim_feedforward=8, dropout=0.0)
    torch.manual_seed(0)
    tm = tnn.Transformer(**kw)
    fm = fnn.Transformer(**kw)
    _load(tm, fm, np.float64)
    assert list(fm.state_dict()) == list(tm.state_dict())
    rng = np.random.default_rng(14)
    src, tgt = rng.standard_normal((_SRC, _N, _E)), rng.standard_normal((_T, _N, _E))
    skpm = np.zeros((_N, _SRC), bool)
    skpm[0, -1] = True
    res = {}
    for name, L, m in (("torch", torch, tm), ("fgrad", fgrad.torch, fm)):
        s, t = L.tensor(src, requires_grad=True), L.tensor(tgt, requires_grad=True)
        mask = m.generate_square_subsequent_mask(_T, dtype=L.float64)
        # PyTorch's fused CPU attention kernel has no second derivative: its math kernel does
        with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):
            out = m(s, t, tgt_mask=mask, src_key_padding_mask=L.tensor(skpm),
                    memory_key_padding_mask=L.tensor(skpm))
            (gs,) = L.autograd.grad(_loss(L, [out], 15), s, create_graph=True)
            wrt = [s, t] + list(m.parameters())
            gs = L.autograd.grad((gs * gs).sum(), wrt, allow_unused=True)  # (the last norm's bias: unused)
            res[name] = [out] + [L.zeros_like(x) if g is None else g for g, x in zip(gs, wrt)]
    for n, a, b in zip(["output", "src", "tgt"] + [n for n, _ in tm.named_parameters()], res["fgrad"],
                       res["torch"]):
        _close(a, b, np.float64, f"transformer: {n}")


def test_encoder_and_decoder_stacks_match_torch():
    torch.manual_seed(0)
    te = tnn.TransformerEncoder(tnn.TransformerEncoderLayer(_E, _H, 8, batch_first=True), 2, tnn.LayerNorm(_E),
                                enable_nested_tensor=False)
    fe = fnn.TransformerEncoder(fnn.TransformerEncoderLayer(_E, _H, 8, batch_first=True), 2, fnn.LayerNorm(_E))
    td = tnn.TransformerDecoder(tnn.TransformerDecoderLayer(_E, _H, 8, batch_first=True), 2)
    fd = fnn.TransformerDecoder(fnn.TransformerDecoderLayer(_E, _H, 8, batch_first=True), 2)
    for t, f in ((te, fe), (td, fd)):
        _load(t, f, np.float64)
        assert list(f.state_dict()) == list(t.state_dict())
        t.eval(), f.eval()
    # the clones are independent copies
    assert fe.layers[0].linear1.weight is not fe.layers[1].linear1.weight
    rng = np.random.default_rng(16)
    x = rng.standard_normal((_N, _T, _E))
    kpm = np.zeros((_N, _T), bool)
    kpm[1, -1] = True
    res = {}
    for name, L, e, d in (("torch", torch, te, td), ("fgrad", fgrad.torch, fe, fd)):
        xt = L.tensor(x, requires_grad=True)
        mem = e(xt, src_key_padding_mask=L.tensor(kpm))
        out = d(xt, mem, tgt_mask=L.tensor(np.triu(np.full((_T, _T), -np.inf), 1)), tgt_is_causal=True)
        res[name] = [mem, out] + list(L.autograd.grad(_loss(L, [mem, out], 17), [xt]))
    for kk, (a, b) in enumerate(zip(res["fgrad"], res["torch"])):
        _close(a, b, np.float64, f"stack result {kk}")


def test_generate_square_subsequent_mask_and_errors_match_torch():
    for sz in (1, 4):
        np.testing.assert_array_equal(fnn.Transformer.generate_square_subsequent_mask(sz).numpy(),
                                      tnn.Transformer.generate_square_subsequent_mask(sz).numpy())
    assert fnn.Transformer.generate_square_subsequent_mask(3).dtype == fgrad.torch.float32
    assert fnn.Transformer.generate_square_subsequent_mask(3, dtype=fgrad.torch.float64).dtype == fgrad.torch.float64
    m = fnn.Transformer(4, 2, 1, 1, 8)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        m(fgrad.torch.randn(3, 2, 4), fgrad.torch.randn(3, 3, 4))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal to d_model"):
        m(fgrad.torch.randn(3, 2, 4), fgrad.torch.randn(3, 2, 5))
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        fnn.TransformerEncoderLayer(4, 2, activation="tanh")
