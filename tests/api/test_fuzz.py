"""Fuzzing: malformed inputs to every public function must raise one of fgrad's
documented exceptions (TypeError, ValueError, IndexError, or an fgrad error class),
raised from fgrad's own checks, never a crash deep inside NumPy; and fgrad keeps
working afterwards."""
import inspect
import traceback

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp

ALLOWED = (TypeError, ValueError, IndexError, NotImplementedError, fgrad.core.errors.FgradError)


_SKIP = {"asarray", "array", "shape", "ndim", "size", "dtype", "pi", "e", "inf", "nan",
         "newaxis", "euler_gamma"}


def _public_numpy_functions():
    names = []
    for name in sorted(dir(fnp)):
        obj = getattr(fnp, name)
        if name.startswith("_") or name in _SKIP or not callable(obj) or isinstance(obj, type):
            continue
        if inspect.ismodule(obj):
            continue
        names.append(name)
    return names


FUNCS = _public_numpy_functions()

_BAD_LIST = [
    "abc", b"bytes", object(), [[1.0, 2.0], [3.0]], [1, "a"], {"a": 1}, None, 1 + 2j,
    [[[]]], onp.array(["x", "y"]), onp.array([object()]), onp.ones((1,) * 33), lambda x: x,
    float("nan"), (1.0, (2.0, 3.0)), onp.ones((2, 3)), onp.ones(0), 10 ** 30,
]




def _raised_in_numpy(exc) -> bool:
    """True when the innermost frame is NumPy's and no fgrad frame chose to raise."""
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and "/numpy/" in frames[-1].filename and "fgrad" not in frames[-1].filename \
        and not isinstance(exc, fgrad.core.errors.FgradError)


def _call(fn, args):
    try:
        fn(*args)
    except ALLOWED as e:
        assert not _raised_in_numpy(e), f"{fn.__name__}{tuple(map(type, args))}: NumPy error escaped: {e!r}"
    except RecursionError:
        pytest.fail(f"{fn.__name__}: RecursionError on malformed input")
    except Exception as e:  # noqa: BLE001 - any other type is the failure we look for
        pytest.fail(f"{fn.__name__}{tuple(type(a).__name__ for a in args)} raised "
                    f"{type(e).__name__}: {e}")


@pytest.mark.parametrize("name", FUNCS)
def test_numpy_namespace_rejects_malformed_input(name):
    """Every malformed value, beside every good value, in every argument position."""
    fn = getattr(fnp, name)
    for good in (onp.ones(3), 2.0, onp.ones((2, 3))):
        for pos in range(3):
            for bad in _BAD_LIST:
                args = [good, good, good][: pos + 1]
                args[pos] = bad
                with onp.errstate(all="ignore"):
                    _call(fn, args)
    onp.testing.assert_allclose(fgrad.grad(lambda x: fnp.sum(fnp.sin(x)))(onp.zeros(2)), [1.0, 1.0])


TRANSFORMS = [
    lambda bad: fgrad.grad(lambda x: x * 2.0)(bad),
    lambda bad: fgrad.grad(lambda x: x, argnums=bad)(1.0),
    lambda bad: fgrad.vjp(lambda x: x * 2.0, bad),
    lambda bad: fgrad.vjp(lambda x: x * 2.0, onp.ones(3))[1](bad),
    lambda bad: fgrad.jvp(lambda x: x * 2.0, (onp.ones(3),), (bad,)),
    lambda bad: fgrad.jvp(lambda x: x * 2.0, bad, (1.0,)),
    lambda bad: fgrad.jacrev(lambda x: x * 2.0)(bad),
    lambda bad: fgrad.jacfwd(lambda x: x * 2.0)(bad),
    lambda bad: fgrad.hessian(lambda x: fnp.sum(x * x))(bad),
    lambda bad: fgrad.make_jaxpr(lambda x: x + 1.0)(bad),
    lambda bad: fgrad.jit(lambda x: x + 1.0)(bad),
    lambda bad: fgrad.vmap(lambda x: x + 1.0)(bad),
    lambda bad: fgrad.vmap(lambda x: x + 1.0, in_axes=bad)(onp.ones(3)),
    lambda bad: fgrad.linearize(lambda x: x * 2.0, bad),
    lambda bad: fgrad.tree_util.tree_map(lambda a, b: a, {"a": 1}, bad),
    lambda bad: fgrad.tree_util.tree_unflatten(fgrad.tree_util.tree_structure((1, 2)), bad),
    lambda bad: fgrad.grad(lambda x: bad)(1.0),
]


@pytest.mark.parametrize("k", range(len(TRANSFORMS)))
def test_transforms_reject_malformed_input(k):
    for bad in _BAD_LIST:
        with onp.errstate(all="ignore"):
            _call(TRANSFORMS[k], (bad,))
    assert fgrad.grad(lambda x: x * x)(3.0) == 6.0


# --- the Tensor facade ---------------------------------------------------------------------

FACADE_ALLOWED = ALLOWED + (RuntimeError,)  # PyTorch's type for shape/device/autograd errors


def _facade_functions():
    from fgrad.torch._tensor import FUNCTIONS
    return sorted(set(FUNCTIONS))


@pytest.mark.parametrize("name", _facade_functions())
def test_facade_functions_reject_malformed_input(name):
    """Every malformed value in every argument position, exhaustively (deterministic)."""
    fn = getattr(fgrad.torch, name)
    for pos in range(3):
        for bad in _BAD_LIST:
            good = fgrad.torch.ones(2, 3, requires_grad=True)
            args = [good, good, good][: pos + 1]
            args[pos] = bad
            try:
                with onp.errstate(all="ignore"):
                    fn(*args)
            except FACADE_ALLOWED as e:
                assert not _raised_in_numpy(e), f"fgrad.{name}: NumPy error escaped: {e!r}"
            except Exception as e:  # noqa: BLE001
                pytest.fail(f"fgrad.{name}{tuple(type(a).__name__ for a in args)} raised "
                            f"{type(e).__name__}: {e}")
    x = fgrad.torch.tensor([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


# --- generated malformed values (hypothesis) --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_scalars = st.one_of(st.integers(-10 ** 30, 10 ** 30), st.floats(allow_nan=True), st.text(max_size=3),
                     st.none(), st.complex_numbers(max_magnitude=1e3), st.booleans())
MALFORMED = st.one_of(
    st.recursive(_scalars, lambda inner: st.lists(inner, max_size=3) | st.tuples(inner, inner)
                 | st.dictionaries(st.text(max_size=2), inner, max_size=2), max_leaves=8),
    st.integers(0, 40).map(lambda r: onp.ones((1,) * r)),
    st.sampled_from(["<U3", "O", "V8", "M8[s]"]).map(lambda dt: onp.zeros(2, dtype=dt)),
)


@settings(max_examples=int(__import__('os').environ.get('FGRAD_FUZZ_EXAMPLES', '150')), deadline=None, suppress_health_check=list(HealthCheck))
@given(bad=MALFORMED, name=st.sampled_from(FUNCS), pos=st.integers(0, 2))
def test_generated_malformed_values(bad, name, pos):
    args = [onp.ones((2, 3))] * (pos + 1)
    args[pos] = bad
    with onp.errstate(all="ignore"):
        _call(getattr(fnp, name), args)
        _call(lambda b: fgrad.grad(lambda x: fnp.sum(x * 2.0))(b), (bad,))
        _call(lambda b: fgrad.jvp(fnp.sin, (onp.ones(2),), (b,)), (bad,))
    assert fgrad.grad(lambda x: x * x)(3.0) == 6.0
