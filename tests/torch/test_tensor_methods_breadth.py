"""The breadth rows of _methods.py's table against PyTorch 2.13: every in-place row written by
INPLACE equals its out-of-place function, bumps the version counter, refuses a leaf that
requires grad and gives torch's values and gradients; the methods of same-name torch functions
and the Tensor-only methods (layout queries, legacy constructors, Python fills, resize, unfold,
in-place views) give torch's results and errors."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fgrad.torch as ft
from fgrad.torch._tensor import _methods as M
from fgrad.torch._tensor import _tensor_api as A

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
UNIT = RNG.uniform(0.2, 0.9, (3, 4))
OTHER = RNG.uniform(0.2, 0.9, (3, 4))
INTS = RNG.integers(1, 30, (3, 4))
INTS2 = RNG.integers(1, 5, (3, 4))

# in-place rows by the inputs they take: (self, args as arrays or plain values, differentiable)
_UNARY = ("absolute_ acos_ arccos_ arcsin_ asin_ atan_ arctan_ cosh_ sinh_ tan_ "
          "erf_ exp2_ log10_ log2_ fix_ negative_ conj_physical_ deg2rad_ rad2deg_ digamma_ erfc_ erfinv_ i0_ "
          "lgamma_ sgn_ sinc_ nan_to_num_ tril_ triu_").split()
_BINARY = "atan2_ arctan2_ copysign_ heaviside_ nextafter_ igamma_ igammac_ ldexp_".split()
_COMPARE = ("eq_ ne_ lt_ le_ gt_ ge_ greater_ greater_equal_ less_ less_equal_ not_equal_ logical_and_ "
            "logical_or_ logical_xor_").split()
_INTEGER = "bitwise_and_ bitwise_or_ bitwise_xor_ gcd_ lcm_ bitwise_left_shift_ bitwise_right_shift_".split()

RECIPES: dict[str, tuple] = {}
RECIPES.update({n: (UNIT, (), n not in ("fix_", "sgn_")) for n in _UNARY})
# PyTorch defines no derivative for these in-place forms (test_inplace_without_derivative...)
_NO_DERIVATIVE = ("acosh_", "arccosh_", "asinh_", "arcsinh_", "atanh_", "arctanh_")
RECIPES.update({n: (UNIT + 1.0 if "cosh" in n else UNIT, (), False) for n in _NO_DERIVATIVE})
RECIPES.update({n: (UNIT, (OTHER,), n not in ("heaviside_", "nextafter_", "igamma_", "igammac_", "copysign_"))
                for n in _BINARY})
RECIPES["ldexp_"] = (UNIT, (INTS2,), True)
RECIPES.update({n: (np.round(UNIT * 2), (np.round(OTHER * 2),), False) for n in _COMPARE})
# torch records no node for the logical ones: the tensor's old grad_fn stays, gradients pass
RECIPES.update({n: (np.round(UNIT * 2), (np.round(OTHER * 2),), True) for n in _COMPARE if n.startswith("logical")})
RECIPES.update({n: (INTS, (INTS2,), False) for n in _INTEGER})
RECIPES.update({
    "bitwise_not_": (INTS, (), False), "cumsum_": (UNIT, (1,), True), "mvlgamma_": (UNIT + 1.0, (2,), True),
    "addr_": (UNIT, (OTHER[:, 0], OTHER[0]), True), "renorm_": (UNIT, (2, 0, 1.0), True),
    "put_": (UNIT, (np.array([0, 5, 11]), np.array([1.0, 2.0, 3.0])), True),
    "index_reduce_": (UNIT, (0, np.array([0, 2]), OTHER[:2], "prod"), True),
})


def _inplace_rows():
    generated = {n for n, (kind, _) in M.TABLE.items() if kind in (M.INPLACE, M.INPLACE_ON_COPY)}
    return sorted((generated | set(A.COMPARE_INPLACE) | set(A.NO_DERIVATIVE_INPLACE) | set(A.LOGICAL_INPLACE))
                  & set(RECIPES))


# grad_fn classes that differ from torch's over a tensor with history, left for the owners of
# the functions (_ops_breadth.py): fgrad's heaviside/igamma/igammac/nextafter record no node
# (torch: nodes whose backward raises, nextafter's passes the gradient), so their in-place
# forms write a constant (CopyBackwards); a real conj_physical_ is torch's
# ConjPhysicalBackward1, fgrad's identity a MulBackward0 (the same gradient)
GRAD_FN_DIFFERS = {"heaviside_", "igamma_", "igammac_", "nextafter_", "conj_physical_"}


def test_every_breadth_inplace_row_has_a_recipe():
    breadth = set(_UNARY + _BINARY + _COMPARE + _INTEGER) | {"bitwise_not_", "cumsum_", "mvlgamma_", "addr_",
                                                               "renorm_", "put_", "index_reduce_"}
    assert breadth <= set(_inplace_rows())
    assert all(hasattr(ft.Tensor, n) for n in RECIPES)


def test_inplace_without_derivative_records_a_node_whose_backward_raises():
    for name in _NO_DERIVATIVE:
        errors = []
        for lib in (ft, torch):
            leaf = lib.tensor(UNIT + 1.0, requires_grad=True)
            with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
                getattr(leaf, name)()
            y = leaf * 1.0
            getattr(y, name)()
            errors.append(type(y.grad_fn).__name__)
            with pytest.raises(NotImplementedError) as raised:
                y.sum().backward()
            errors.append(str(raised.value).split(".")[0])
        assert errors[:2] == errors[2:], name


def _args(lib, args, dtype):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(lib.tensor(a, dtype=lib.int64 if a.dtype.kind == "i" else dtype))
        else:
            out.append(a)
    return out


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else np.asarray(t)


@pytest.mark.parametrize("name", sorted(RECIPES))
def test_inplace_row_equals_out_of_place_and_torch(name):
    x, args, differentiable = RECIPES[name]
    dt = "int64" if x.dtype.kind == "i" else "float64"
    fdt, tdt = getattr(ft, dt), getattr(torch, dt)
    a = ft.tensor(x, dtype=fdt)
    version = a._version
    out = getattr(a, name)(*_args(ft, args, fdt))
    assert out is a and a._version > version
    b = torch.tensor(x, dtype=tdt)
    getattr(b, name)(*_args(torch, args, tdt))
    np.testing.assert_allclose(_np(a), _np(b), rtol=1e-10, atol=1e-12, err_msg=name)
    plain = name[:-1] if not name.startswith("__") else None
    if plain and hasattr(ft.Tensor, plain) and plain not in ("put", "index_reduce"):
        ref = getattr(ft.tensor(x, dtype=fdt), plain)(*_args(ft, args, fdt))
        np.testing.assert_allclose(_np(a), _np(ref).astype(_np(a).dtype), rtol=1e-12, err_msg=name)
    if dt == "float64" and name not in GRAD_FN_DIFFERS:
        y, ty = ft.tensor(x, dtype=fdt, requires_grad=True) * 1.0, torch.tensor(x, dtype=tdt, requires_grad=True) * 1.0
        getattr(y, name)(*_args(ft, args, fdt))
        getattr(ty, name)(*_args(torch, args, tdt))
        assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__, name
    if not differentiable:
        return
    leaf = ft.tensor(x, dtype=fdt, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        getattr(leaf, name)(*_args(ft, args, fdt))
    y = leaf * 1.0
    getattr(y, name)(*_args(ft, args, fdt))
    (y * ft.tensor(OTHER)).sum().backward()
    tleaf = torch.tensor(x, dtype=tdt, requires_grad=True)
    ty = tleaf * 1.0
    getattr(ty, name)(*_args(torch, args, tdt))
    (ty * torch.tensor(OTHER)).sum().backward()
    np.testing.assert_allclose(_np(leaf.grad), _np(tleaf.grad), rtol=1e-8, atol=1e-10, err_msg=name)


def test_inplace_result_dtype_rules_are_torchs():
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
        ft.ones(3, dtype=ft.long).acos_()
    a = ft.tensor([1.0, 2.0])
    a.eq_(ft.tensor([1.0, 3.0]))
    assert a.dtype == ft.float32 and a.tolist() == [1.0, 0.0]
    with pytest.raises(RuntimeError, match="has dtype Float but the operation's result requires dtype Double"):
        ft.ones(2).float_power_(2)
    d = ft.tensor([2.0, 3.0], dtype=ft.float64).float_power_(2)
    assert d.tolist() == [4.0, 9.0]
    p = ft.tensor([0.5, 1.5]).polygamma_(1)
    np.testing.assert_allclose(p.numpy(), torch.tensor([0.5, 1.5]).polygamma_(1).numpy(), rtol=1e-6)


# methods whose torch function takes only the tensor: torch's method gives the same values
_NO_ARGS = ("digamma erfc erfinv i0 lgamma sgn signbit sinc rad2deg deg2rad positive ravel fliplr flipud msort "
            "isneginf isposinf isreal frexp aminmax corrcoef cov diagflat diag_embed resolve_neg is_neg is_signed "
            "is_inference get_device nanmean matrix_exp pinverse geqrf cholesky_inverse hardshrink").split()


@pytest.mark.parametrize("name", _NO_ARGS)
def test_methods_of_one_tensor_give_torchs_values(name):
    x = UNIT if name not in ("cholesky_inverse",) else np.tril(UNIT[:3, :3]) + np.eye(3)
    x = x[:3, :3] if name in ("matrix_exp", "cholesky_inverse") else x
    got = getattr(ft.tensor(x), name)()
    want = getattr(torch.tensor(x), name)()
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(_np(g), _np(w), rtol=1e-10, atol=1e-12, err_msg=name)


def test_methods_with_arguments_give_torchs_values():
    spd = UNIT[:3, :3] @ UNIT[:3, :3].T + np.eye(3)
    cases = [("kthvalue", UNIT, (2, 1)), ("mode", np.round(UNIT), (1,)), ("tile", UNIT, ((2, 1),)),
             ("take_along_dim", UNIT, (torch.tensor([[0], [1], [2]]), 1)), ("hsplit", UNIT, (2,)),
             ("vsplit", UNIT, ([1],)), ("split_with_sizes", UNIT, ([1, 3], 1)), ("renorm", UNIT, (1, 0, 0.5)),
             ("mvlgamma", UNIT + 1, (2,)), ("polygamma", UNIT, (2,)), ("fmax", UNIT, (OTHER,)),
             ("copysign", UNIT, (-OTHER,)), ("vdot", UNIT[0], (OTHER[0],)), ("matrix_power", UNIT[:3, :3], (3,)),
             ("cholesky", spd, ()), ("qr", spd, ()), ("svd", spd, ()), ("lu", spd, ()),
             ("triangular_solve", OTHER[:3, :2], (torch.tensor(np.triu(spd)),)),
             ("slice_scatter", UNIT, (torch.tensor(OTHER[:, :2]), 1, 0, 2)),
             ("select_scatter", UNIT, (torch.tensor(OTHER[0]), 0, 1)), ("sum_to_size", UNIT, (1, 4)),
             ("unfold", UNIT, (1, 2, 1)), ("unfold", UNIT, (0, 2, 2))]
    for name, x, args in cases:
        args = [torch.tensor(a) if isinstance(a, np.ndarray) else a for a in args]
        fargs = [ft.tensor(a.numpy()) if isinstance(a, torch.Tensor) else a for a in args]
        got = getattr(ft.tensor(x), name)(*fargs)
        want = getattr(torch.tensor(x), name)(*args)
        for g, w in zip(got if isinstance(got, (tuple, list)) else (got,),
                        want if isinstance(want, (tuple, list)) else (want,)):
            np.testing.assert_allclose(np.abs(_np(g)) if name in ("qr", "svd") else _np(g),
                                       np.abs(_np(w)) if name in ("qr", "svd") else _np(w),
                                       rtol=1e-9, atol=1e-11, err_msg=name)


def test_removed_methods_raise_naming_the_replacement():
    for name in ("eig", "lstsq", "solve", "symeig"):
        with pytest.raises(RuntimeError, match="removed"):
            getattr(ft.ones(2, 2), name)(ft.ones(2, 2))


def test_layout_queries_are_torchs():
    f, t = ft.zeros(3, 4, 5), torch.zeros(3, 4, 5)
    for view in (lambda z: z, lambda z: z.transpose(0, 2), lambda z: z[1:, ::2], lambda z: z[2], lambda z: z.permute(1, 2, 0)):
        assert view(f).stride() == view(t).stride()
        assert view(f).storage_offset() == view(t).storage_offset()
        assert view(f).dim_order() == view(t).dim_order()
        assert view(f).stride(-1) == view(t).stride(-1)
    assert (f.nbytes, f.itemsize, f.is_cpu, f.is_pinned(), f.dense_dim(), f.sparse_dim()) == \
        (t.nbytes, t.itemsize, t.is_cpu, t.is_pinned(), t.dense_dim(), t.sparse_dim())
    assert f.const_data_ptr() == f.data_ptr() and f.output_nr == 0 and f.name is None
    assert f.grad_dtype == ft.float32 and ft.zeros(2, dtype=ft.float64).grad_dtype == ft.float64
    with pytest.raises(RuntimeError, match="accelerator"):
        f.pin_memory()
    with pytest.raises(RuntimeError, match="reinforce"):
        f.reinforce(1.0)
    with pytest.raises(RuntimeError, match="no dimensions"):
        ft.tensor(1.0).stride(0)


def test_constructors_and_casters():
    x = ft.zeros(2, dtype=ft.float64)
    assert x.new(2, 3).shape == (2, 3) and x.new(2, 3).dtype == ft.float64
    assert x.new().shape == (0,) and x.new([1, 2]).tolist() == [1.0, 2.0] and x.new([1, 2]).dtype == ft.float64
    assert x.new(ft.Size([4])).shape == (4,)
    with pytest.raises(TypeError, match="got a Tensor"):
        x.new(ft.ones(2))
    s = x.new_empty_strided((2, 3), (3, 1))
    assert s.shape == (2, 3) and s.dtype == ft.float64
    assert ft.ones(2).cfloat().dtype == ft.complex64 and ft.ones(2).cdouble().dtype == ft.complex128


def test_python_fills_are_torchs():
    a, b = ft.tensor([1.0, 2.0, 3.0]), torch.tensor([1.0, 2.0, 3.0])
    a.apply_(lambda v: v * v + 1)
    b.apply_(lambda v: v * v + 1)
    assert a.tolist() == b.tolist()
    a.map_(ft.tensor([1.0, 0.0, 2.0]), lambda u, v: u - v)
    b.map_(torch.tensor([1.0, 0.0, 2.0]), lambda u, v: u - v)
    assert a.tolist() == b.tolist()
    a.map2_(ft.tensor(2.0), ft.tensor([1.0, 1.0, 3.0]), lambda u, v, w: u * v + w)
    b.map2_(torch.tensor(2.0), torch.tensor([1.0, 1.0, 3.0]), lambda u, v, w: u * v + w)
    assert a.tolist() == b.tolist()
    with pytest.raises(RuntimeError, match="Can't call apply_\\(\\) on Variable that requires grad"):
        ft.ones(2, requires_grad=True).apply_(lambda v: v)
    for shape, wrap in (((3, 3), False), ((7, 3), False), ((7, 3), True), ((3, 5), False), ((2, 2, 2), False)):
        f, t = ft.zeros(*shape), torch.zeros(*shape)
        assert f.fill_diagonal_(5.0, wrap).tolist() == t.fill_diagonal_(5.0, wrap).tolist(), (shape, wrap)
    leaf = ft.ones(3, 3, requires_grad=True)
    y = leaf * 2
    y.fill_diagonal_(0.0)
    y.sum().backward()
    tl = torch.ones(3, 3, requires_grad=True)
    ty = tl * 2
    ty.fill_diagonal_(0.0)
    ty.sum().backward()
    assert leaf.grad.tolist() == tl.grad.tolist()


def test_resize_is_torchs():
    f, t = ft.arange(6.0), torch.arange(6.0)
    f.resize_(2, 2)
    t.resize_(2, 2)
    assert f.tolist() == t.tolist()
    f.resize_as_(ft.zeros(4))
    assert f.tolist() == [0.0, 1.0, 2.0, 3.0]
    with pytest.raises(RuntimeError, match="cannot resize variables that require grad"):
        ft.ones(3, requires_grad=True).resize_(4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leaf = ft.arange(6.0, requires_grad=True)
        r = leaf.resize(2, 3)
        assert r.shape == (2, 3)
        (r * ft.arange(6.0).reshape(2, 3)).sum().backward()
        assert leaf.grad.tolist() == list(np.arange(6.0))
        with pytest.raises(RuntimeError, match="resize can only change the shape"):
            leaf.resize(2, 7)
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1 is 4 but size is 5"):
        ft.zeros(3, 4).unfold(1, 5, 1)


def test_inplace_views_change_the_shape_and_history_as_torch():
    for name, args in (("unsqueeze_", (0,)), ("squeeze_", ()), ("squeeze_", (1,)), ("t_", ()), ("transpose_", (0, 1)),
                       ("swapaxes_", (0, 1)), ("swapdims_", (1, 0))):
        x = UNIT[:, :1] if name == "squeeze_" else UNIT
        leaf, tleaf = ft.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
            getattr(leaf, name)(*args)
        y, ty = leaf * 1.0, tleaf * 1.0
        assert getattr(y, name)(*args) is y
        getattr(ty, name)(*args)
        assert tuple(y.shape) == tuple(ty.shape) and type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
        w = np.arange(float(np.prod(ty.shape))).reshape(tuple(ty.shape))
        (y * ft.tensor(w)).sum().backward()
        (ty * torch.tensor(w)).sum().backward()
        np.testing.assert_array_equal(leaf.grad.numpy(), tleaf.grad.numpy(), err_msg=name)


def test_post_accumulate_grad_hooks_are_torchs():
    import gc
    import weakref
    results = []
    for lib in (ft, torch):
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        seen = []
        handle = w.register_post_accumulate_grad_hook(lambda p: seen.append(p.grad.tolist()))
        gc.collect()  # the hook outlives collections while the leaf lives
        (w * 3).sum().backward()
        (w * w).sum().backward()
        lib.autograd.grad((w * 2).sum(), w)  # no accumulation: no hook
        handle.remove()
        (w * 3).sum().backward()
        v = lib.tensor([1.0, 2.0], requires_grad=True)

        def step(p, lib=lib):  # the optimizer-in-backward pattern
            with lib.no_grad():
                p.sub_(0.5 * p.grad)
            p.grad = None
        v.register_post_accumulate_grad_hook(step)
        (v * v).sum().backward()
        results.append((seen, v.tolist(), v.grad))
        for bad, message in ((w * 1, "non-leaf"), (lib.ones(2), "doesn't require gradient")):
            with pytest.raises(RuntimeError, match=message):
                bad.register_post_accumulate_grad_hook(print)
    assert results[0] == results[1]
    leaf = ft.ones(2, requires_grad=True)
    leaf.register_post_accumulate_grad_hook(lambda p: None)
    ref = weakref.ref(leaf)
    del leaf
    gc.collect()
    assert ref() is None


def test_as_subclass_and_sparse_methods_are_torchs():
    for lib in (ft, torch):
        class Marked(lib.Tensor):
            pass
        leaf = lib.ones(2, requires_grad=True)
        z = leaf.as_subclass(Marked)
        assert type(z) is Marked and z.requires_grad and not z.is_leaf
        assert type(z.grad_fn).__name__ == "AliasBackward0" and z.data_ptr() == leaf.data_ptr()
        (z * 3).sum().backward()
        assert leaf.grad.tolist() == [3.0, 3.0]
        with pytest.raises(TypeError, match="does not inherit from Tensor"):
            leaf.as_subclass(int)
        x = lib.arange(6.0).reshape(2, 3).requires_grad_()
        r = x.sparse_mask(lib.tensor([[1.0, 0, 2], [0, 3, 0]]).to_sparse())
        assert r.is_coalesced() and r.indices().tolist() == [[0, 0, 1], [0, 2, 1]]
        assert r.values().tolist() == [0.0, 2.0, 4.0]
        r.to_dense().sum().backward()
        assert x.grad.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
        with pytest.raises(NotImplementedError):
            x.sparse_mask(lib.ones(2, 3))
        for name, wants in (("indices", "sparse coordinate tensor"), ("values", "sparse tensor"),
                            ("coalesce", "sparse coordinate tensor"), ("is_coalesced", "sparse coordinate tensor")):
            with pytest.raises(RuntimeError, match=f"{name} expected {wants} layout but got Strided"):
                getattr(x, name)()


_R = np.random.default_rng(1)
_S = UNIT[:3, :3] @ UNIT[:3, :3].T + np.eye(3)


def _T(a):
    """An argument both libraries get as their own tensor."""
    return ("tensor", a)


# (method, self, args, kwargs): the rows of same-name torch functions, torch's method as reference
ARGUMENT_CASES = [
    ("stft", _R.normal(size=64), (16,), {"return_complex": True}), ("histogram", UNIT, (5,), {}),
    ("nonzero_static", np.array([0.0, 1, 0, 2]), (), {"size": 3}),
    ("index_reduce", UNIT, (0, _T(np.array([0, 2])), _T(OTHER[:2]), "amax"), {}),
    ("index_reduce", UNIT, (1, _T(np.array([0, 0, 3])), _T(OTHER[:, :3]), "mean"), {"include_self": False}),
    ("as_strided", UNIT, ((2, 2), (1, 2), 1), {}), ("as_strided_scatter", UNIT, (_T(OTHER[:2, :2]), (2, 2), (1, 2), 1), {}),
    ("diagonal_scatter", UNIT, (_T(OTHER[0, :3]),), {}), ("unsafe_split", UNIT, (2, 1), {}),
    ("unsafe_chunk", UNIT, (2, 1), {}), ("bitwise_left_shift", INTS, (_T(INTS2 % 3),), {}),
    ("igamma", UNIT, (_T(OTHER),), {}), ("igammac", UNIT, (_T(OTHER),), {}), ("nextafter", UNIT, (_T(OTHER),), {}),
    ("heaviside", UNIT - 0.5, (_T(OTHER),), {}), ("addr", UNIT, (_T(OTHER[:, 0]), _T(OTHER[0])), {"beta": 0.5, "alpha": 2}),
    ("get_device", UNIT, (), {}), ("is_same_size", UNIT, (_T(OTHER),), {}), ("narrow_copy", UNIT, (1, 1, 2), {}),
    ("aminmax", UNIT, (), {"dim": 1}), ("dsplit", _R.normal(size=(2, 2, 4)), (2,), {}), ("cov", UNIT, (), {"correction": 0}),
    ("put", UNIT, (_T(np.array([0, 3])), _T(np.array([9.0, 8.0]))), {"accumulate": True}), ("ldexp", UNIT, (_T(INTS),), {}),
    ("prelu", UNIT - 0.5, (_T(np.array([0.25])),), {}), ("hardshrink", UNIT - 0.5, (0.2,), {}),
    ("cholesky_solve", OTHER[:, :2], (_T(np.linalg.cholesky(_S)),), {}), ("take_along_dim", UNIT, (_T(np.argsort(UNIT, 1)),), {"dim": 1}),
    ("fmin", UNIT, (_T(OTHER),), {}), ("kthvalue", UNIT, (1, 0), {}), ("frexp", UNIT * 10, (), {}), ("ravel", UNIT.T, (), {}),
    ("slice_scatter", UNIT, (_T(OTHER[:1]),), {"dim": 0, "start": 2}), ("matrix_power", _S, (-1,), {}),
    ("triangular_solve", OTHER[:, :2], (_T(np.triu(_S)),), {"upper": True, "transpose": True}),
]


@pytest.mark.parametrize("case", ARGUMENT_CASES, ids=lambda c: c[0])
def test_same_name_function_rows_give_torchs_values(case):
    name, x, args, kwargs = case

    def run(lib):
        conv = [lib.tensor(a[1]) if isinstance(a, tuple) and a[:1] == ("tensor",) else a for a in args]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = getattr(lib.tensor(x), name)(*conv, **kwargs)
        return [_np(o) for o in out] if isinstance(out, (tuple, list)) else [_np(out)]
    got, want = run(ft), run(torch)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10, equal_nan=True, err_msg=name)


def test_bernoulli_method_draws_torchs_stream_and_as_strided_inplace_gives_torchs_values():
    draws = []
    for lib in (ft, torch):
        lib.manual_seed(3)
        x = lib.full((2, 5), 0.3)
        draws.append((x.bernoulli().tolist(), x.bernoulli(0.7).tolist()))
        leaf = lib.arange(6.0, requires_grad=True)
        y = leaf * 1.0
        y.as_strided_((2, 2), (1, 2), 1)
        (y * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        draws.append((y.tolist(), type(y.grad_fn).__name__, leaf.grad.tolist(), lib.zeros(3, 1).expand(3, 4).stride()))
    assert draws[:2] == draws[2:]
