"""grad's one-argument path (api._grad_one: an int argnums and a float NumPy array, Python
float or RecordTracer argument) against the general path, which argnums=(i,) takes: the same
values, dtypes, boxing and errors, at every order; and the cheap floating-point error
silencing of quiet impls (core.primitive.ignore_fp_errors)."""
from __future__ import annotations

import threading
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.primitive import ignore_fp_errors, quiet_impl, restore_fp_errors
from fgrad.ops import elementwise as ew


def _general(f, i=0, has_aux=False):
    """value_and_grad through the general path (a tuple argnums), unpacked as the fast one."""
    vg = fgrad.value_and_grad(f, argnums=(i,), has_aux=has_aux)

    def run(*args, **kwargs):
        value, g = vg(*args, **kwargs)
        return value, g[0]
    return run


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    assert type(a) is type(b), (type(a), type(b))
    if isinstance(a, (onp.ndarray, onp.generic)):
        assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
        onp.testing.assert_array_equal(a, b)
    else:
        assert a == b


X64 = onp.linspace(-1.0, 1.5, 5)
CASES = {
    "float64 array": (lambda x: np.sum(np.sin(x) * x), (X64,)),
    "float32 array": (lambda x: np.sum(np.tanh(x) ** 2), (X64.astype(onp.float32),)),
    "float16 array": (lambda x: np.sum(x * x), (X64.astype(onp.float16),)),
    "0-d array": (lambda x: np.exp(-x * x) * np.sin(x), (onp.asarray(0.7),)),
    "python float (weak)": (lambda x: np.sum(x * onp.ones(3, onp.float32)), (2.0,)),
    "python float": (lambda x: np.cos(x) * x, (0.3,)),
    "complex input, real output": (lambda z: np.abs(z * z + 1.0), (onp.asarray(1.0 + 2.0j),)),
    "output does not depend on x": (lambda x: np.sum(onp.ones(2)), (X64,)),
    "constant python output": (lambda x: 3.0, (X64,)),
    "identity": (lambda x: x, (onp.asarray(1.5),)),
    "x used twice and a branch": (lambda x: np.sum(x * x) if np.sum(x) > 0 else np.sum(x), (X64,)),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_one_argument_path_equals_general_path(case):
    f, args = CASES[case]
    _same(fgrad.value_and_grad(f)(*args), _general(f)(*args))
    _same(fgrad.grad(f)(*args), _general(f)(*args)[1])


def test_argnums_negative_positional_and_keywords():
    def f(a, b, c, *, scale):
        return np.sum(a * b * c) * scale
    a, b, c = onp.arange(3.0), onp.linspace(0, 1, 3), 2.5
    for i in (0, 1, 2, -1, -3):
        _same(fgrad.value_and_grad(f, argnums=i)(a, b, c, scale=3.0),
              _general(f, i % 3)(a, b, c, scale=3.0))


def test_has_aux_value_and_aux_match_and_aux_is_not_traced():
    def f(x):
        y = np.sum(np.sin(x))
        return y, {"y": y, "x2": x * 2.0, "n": 3}
    (v, aux), g = fgrad.value_and_grad(f, has_aux=True)(X64)
    (v2, aux2), g2 = _general(f, has_aux=True)(X64)
    _same(v, v2)
    _same(g, g2)
    assert aux.keys() == aux2.keys() and aux["n"] == 3
    for k in ("y", "x2"):
        assert type(aux[k]) is onp.ndarray
        _same(aux[k], aux2[k])
    g3, aux3 = fgrad.grad(f, has_aux=True)(X64)
    _same(g3, g)


@pytest.mark.parametrize("x", [onp.asarray(0.7), 0.7], ids=["array", "python float"])
def test_nested_grads_equal_the_general_path_and_the_closed_form(x):
    def f(v):
        return np.sin(v) * np.exp(-v ** 2)
    fast = f
    slow = f
    for _ in range(4):
        fast = fgrad.grad(fast)
        slow = (lambda h: (lambda *a: fgrad.grad(h, argnums=(0,))(*a)[0]))(slow)
    got, want = fast(x), slow(x)
    _same(got, want)
    # PyTorch's 4th derivative (create_graph at every order)
    torch = pytest.importorskip("torch")
    t = torch.tensor(0.7, dtype=torch.float64, requires_grad=True)
    y = torch.sin(t) * torch.exp(-t ** 2)
    for _ in range(4):
        (y,) = torch.autograd.grad(y, t, create_graph=True)
    d4 = y.item()
    onp.testing.assert_allclose(got, d4, rtol=1e-12)


@pytest.mark.parametrize("f, x, match", [
    (lambda x: x * 2.0, X64, "real scalar float"),
    (lambda x: (np.sum(x), np.sum(x)), X64, "real scalar float"),
    (lambda x: np.sum(x) * (1.0 + 1.0j), X64, "needs real outputs"),
    (lambda x: np.sum(x), onp.arange(3), "floating-point inputs"),
], ids=["vector output", "tuple output", "complex output", "integer input"])
def test_errors_are_the_general_paths(f, x, match):
    with pytest.raises(Exception, match=match) as fast:
        fgrad.grad(f)(x)
    with pytest.raises(Exception) as slow:
        fgrad.grad(f, argnums=(0,))(x)
    # (str() adds the user's line, which differs: the message itself is args[0])
    assert type(fast.value) is type(slow.value) and fast.value.args[0] == slow.value.args[0]


def test_tensor_output_is_refused_on_both_paths():
    # fgrad's transforms compute on arrays: a function returning a (closed-over) Tensor gets the
    # same TypeError, naming the facade's door, on the fast path and the general one
    t = fgrad.torch.tensor(2.0, dtype=fgrad.torch.float64)

    def f(x):
        return t
    for run in (fgrad.grad(f), fgrad.value_and_grad(f), _general(f)):
        with pytest.raises(TypeError, match=r"fgrad\.grad got a fgrad\.torch\.Tensor: use fgrad\.torch\.func\.grad"):
            run(X64)


def test_grad_of_grad_under_vmap_and_jit_agree_with_eager():
    f = fgrad.grad(fgrad.grad(lambda v: np.sin(v) * v))
    xs = onp.linspace(-1, 1, 4)
    eager = onp.array([f(x) for x in xs])
    onp.testing.assert_allclose(fgrad.vmap(f)(xs), eager, rtol=1e-13)
    onp.testing.assert_allclose(onp.array([fgrad.jit(f)(x) for x in xs]), eager, rtol=1e-13)


# --- ignore_fp_errors ---------------------------------------------------------------------------

def test_quiet_impls_silence_only_their_own_computation():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        onp.testing.assert_array_equal(ew.div(onp.array([1.0, 0.0]), onp.array([0.0, 0.0])),
                                       onp.array([onp.inf, onp.nan]))
        out = ew.tanh_grad_p.bind(onp.array([onp.inf, 1e300]), onp.array([1.0, -1e300]))
        assert onp.isnan(out[0]) and out[1] == -onp.inf
        with pytest.raises(RuntimeWarning):  # and NumPy warns again afterwards
            onp.array([1e308]) * 10.0
    before = onp.geterr()
    with pytest.raises(ZeroDivisionError):
        # an exception inside a quiet impl leaves the error state as it was
        quiet_impl(lambda xp, x: 1 / 0)(onp.ones(1), xp=onp)
    assert onp.geterr() == before


def test_ignore_fp_errors_nests_and_is_per_thread():
    outer = ignore_fp_errors()
    try:
        inner = ignore_fp_errors()
        restore_fp_errors(inner)
        assert onp.geterr()["over"] == "ignore"
        seen = {}
        th = threading.Thread(target=lambda: seen.update(onp.geterr()))
        th.start()
        th.join()
        assert seen["over"] == "warn"  # another thread keeps its own state
    finally:
        restore_fp_errors(outer)
    assert onp.geterr()["over"] == "warn"
