"""One array API, two dialects: fgrad.numpy's argument normalisation, promotion, broadcasting,
shape arithmetic and validation take a policy (fgrad/numpy/_policy.py). NUMPY is fgrad.numpy's
own; TORCH (fgrad/torch/_tensor/_policy.py) is the Tensor facade's, which maps PyTorch's names onto fgrad.numpy with it."""
import numpy as np
import pytest

import fgrad
import fgrad.torch as torch
import fgrad.numpy as fnp
from fgrad.core.errors import ShapeError
from fgrad.numpy._policy import NUMPY
from fgrad.torch._tensor._policy import TORCH
from fgrad.numpy._shape import resolve_shape
from fgrad.numpy._util import broadcast_shapes, normalize_axes, normalize_axis, shape_arg

I64, I32, I8, U8 = np.dtype(np.int64), np.dtype(np.int32), np.dtype(np.int8), np.dtype(np.uint8)
F16, F32, F64, B = np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64), np.dtype(bool)


# --- promotion ------------------------------------------------------------------------------------

@pytest.mark.parametrize("args, numpy_dt, torch_dt", [
    ((np.ones(2, I64), 2.5), F64, F32),                 # a Python float: float64 vs the default float
    ((np.ones(2, I32), 7), I32, I32),                   # a Python int is weak in both
    ((np.ones(2, U8), np.ones(2, I8)), np.dtype(np.int16), np.dtype(np.int16)),
    ((np.ones(2, I64), np.ones(2, F16)), F64, F16),     # across categories PyTorch keeps the float
    ((np.ones(2, F32), np.ones((), F64)), F64, F32),    # a 0-d tensor ranks below dimensioned ones
    ((np.ones(2, I32), np.ones((), F64)), F64, F64),    # ... unless its category is higher
    ((np.ones(2, B), 1), I64, I64),
    ((np.ones(2, I64), 1j), np.dtype(np.complex128), np.dtype(np.complex64)),  # the default complex
])
def test_result_dtype_numpy_and_pytorch(args, numpy_dt, torch_dt):
    assert NUMPY.result_dtype(*args) == numpy_dt
    assert TORCH.result_dtype(*args) == torch_dt


def test_float_and_accumulation_dtypes():
    assert NUMPY.float_dtype(I32) == F64 and TORCH.float_dtype(I32) == F32
    assert NUMPY.float_dtype(F16) == F16 == TORCH.float_dtype(F16)
    assert NUMPY.accumulate_dtype(U8) == np.dtype(np.uint64) and TORCH.accumulate_dtype(U8) == I64
    assert NUMPY.accumulate_dtype(B) == I64 == TORCH.accumulate_dtype(I32)
    assert NUMPY.reduction_float_dtype("mean", I32) == F64
    with pytest.raises(RuntimeError, match="mean\\(\\): could not infer output dtype"):
        TORCH.reduction_float_dtype("mean", I32)


def test_default_dtype_is_the_policys():
    try:
        torch.set_default_dtype(torch.float64)
        assert TORCH.float_dtype(I64) == F64 and TORCH.scalar_dtype(1.5) == F64
        assert (torch.tensor([1, 2]) / 2).dtype == torch.float64 and torch.tensor(1j).dtype == torch.complex128
    finally:
        torch.set_default_dtype(torch.float32)
    assert (torch.tensor([1, 2]) / 2).dtype == torch.float32


def test_one_function_two_dialects():
    """The same fgrad.numpy function, with NumPy's and with PyTorch's policy."""
    ints = np.array([1, 2, 3])
    assert fnp.true_divide(ints, 2).dtype == F64
    assert fnp.true_divide(ints, 2, policy=TORCH).dtype == F32
    assert fnp.exp(ints, policy=TORCH).dtype == F32 and fnp.exp(ints).dtype == F64
    assert fnp.sum(ints.astype(U8)).dtype == np.uint64 and fnp.sum(ints.astype(U8), policy=TORCH).dtype == I64
    assert fnp.where(ints > 1, ints, 0.5, policy=TORCH).dtype == F32
    assert fnp.add(np.ones(2, I64), np.ones((), F64), policy=TORCH).dtype == F64
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        fnp.mean(ints, policy=TORCH)
    np.testing.assert_allclose(fnp.mean(ints), 2.0)


# --- error wording --------------------------------------------------------------------------------

def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), e.args[0] if e.args else str(e)  # the message, less fgrad's '  at <user line>'
    raise AssertionError("no error raised")


@pytest.mark.parametrize("call, numpy_error, torch_error", [
    (lambda p: broadcast_shapes("add", (2, 3), (4, 3), policy=p),
     (ShapeError, "add: shapes (2, 3) and (4, 3) cannot be broadcast together"),
     (RuntimeError, "The size of tensor a (2) must match the size of tensor b (4) at non-singleton dimension 0")),
    (lambda p: normalize_axis(2, 2, "sum", policy=p),
     (ShapeError, "sum: axis 2 is out of bounds for an array of 2 dimensions"),
     (IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got 2)")),
    (lambda p: normalize_axes((0, -2), 2, "sum", policy=p),
     (ShapeError, "sum: repeated axis in (0, -2)"), (RuntimeError, "dim 0 appears multiple times in the list of dims")),
    (lambda p: resolve_shape((4,), (2, 3), "view", policy=p),
     (ShapeError, "view: cannot reshape an array of 6 elements into shape (4,)"),
     (RuntimeError, "shape '[4]' is invalid for input of size 6")),
    (lambda p: shape_arg((2, -1), "zeros", policy=p),
     (ShapeError, "zeros: negative dimension -1 in shape (2, -1)"),
     (RuntimeError, "Trying to create tensor with negative dimension -1: [2, -1]")),
    (lambda p: fnp.concatenate([np.ones((2, 3)), np.ones((4, 2))], policy=p),
     (ShapeError, "concatenate: all the input array dimensions except for the concatenation axis 0 must match"),
     (RuntimeError, "Sizes of tensors must match except in dimension 0. Expected size 3 but got size 2 for tensor "
                    "number 1 in the list")),
    (lambda p: fnp.stack([np.ones(2), np.ones(3)], policy=p),
     (ShapeError, "stack: all input arrays must have the same shape"),
     (RuntimeError, "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1")),
    (lambda p: fnp.matmul(np.ones((2, 3)), np.ones((4, 3)), policy=p),
     (ShapeError, "matmul: shapes (2, 3) and (4, 3) do not align"),
     (RuntimeError, "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x3)")),
    (lambda p: fnp.transpose(np.ones((2, 3)), (0, 0), policy=p),
     (ShapeError, "transpose: axes (0, 0) are not a permutation of 2 dimensions"),
     (RuntimeError, "permute(): duplicate dims are not allowed")),
    (lambda p: fnp.subtract(np.array([True]), np.array([False]), policy=p),
     (TypeError, "subtract: numpy boolean subtract, the `-` operator, is not supported"),
     (RuntimeError, "Subtraction, the `-` operator, with a bool tensor is not supported")),
    (lambda p: fnp.negative(np.array([True]), policy=p),
     (TypeError, "the numpy boolean negative, the `-` operator, is not supported"),
     (RuntimeError, "Negation, the `-` operator, on a bool tensor is not supported")),
    (lambda p: fnp.power(np.array([2]), -1, policy=p),
     (ValueError, "power: integers to negative integer powers are not allowed"),
     (RuntimeError, "Integers to negative integer powers are not allowed.")),
    (lambda p: fnp.max(np.zeros((0, 2)), axis=0, policy=p),
     (ValueError, "max: zero-size array to reduction operation"),
     (IndexError, "max(): Expected reduction dim 0 to have non-zero size.")),
    (lambda p: fnp.broadcast_to(np.ones((3, 2)), (3, 4), policy=p),
     (ShapeError, "broadcast_to: cannot broadcast an array of shape (3, 2) to shape (3, 4)"),
     (RuntimeError, "The expanded size of the tensor (4) must match the existing size (2) at non-singleton dimension 1")),
])
def test_error_wording_numpy_and_pytorch(call, numpy_error, torch_error):
    for policy, (exc, message) in ((NUMPY, numpy_error), (TORCH, torch_error)):
        got_type, got_message = _error(lambda: call(policy))
        assert issubclass(got_type, exc), (policy.name, got_type, got_message)
        assert message in got_message, (policy.name, got_message)


def test_numpy_dialect_raises_from_fgrad_not_numpy():
    """Boolean subtraction used to fail inside NumPy's ufunc; the policy's check names the function."""
    with pytest.raises(TypeError) as e:
        fnp.subtract(np.array([True]), True)
    assert e.traceback[-1].path.name == "_policy.py"
    assert fnp.subtract(np.array([True]), 1).dtype == I64  # True - 1 is an int in NumPy ...
    with pytest.raises(RuntimeError, match="Subtraction"):
        torch.tensor([True]) - 1                           # ... and refused by PyTorch


# --- the facade is fgrad.numpy in PyTorch's dialect -----------------------------------------------

def test_facade_errors_come_from_the_policy():
    x = torch.ones(2, 3)
    for call, expected in [(lambda: x + torch.ones(4, 3), TORCH.broadcast_error("add", [(2, 3), (4, 3)], 0, 2, 4)),
                           (lambda: x.sum(2), TORCH.axis_error("sum", "axis", 2, 2)),
                           (lambda: x.view(4), TORCH.reshape_error("view", (4,), (2, 3), 6, 4)),
                           (lambda: x.permute(1, 1), TORCH.permutation_error("transpose", (1, 1), 2, (2, 3))),
                           (lambda: torch.cat([x, torch.ones(3, 2)]),
                            TORCH.concatenate_error("cat", [(2, 3), (3, 2)], 0, 1, 1))]:
        assert _error(call) == (type(expected), expected.args[0])


@pytest.mark.parametrize("name, numpy_name", [
    ("add", "add"), ("mul", "multiply"), ("sub", "subtract"), ("div", "true_divide"), ("pow", "power"),
    ("maximum", "maximum"), ("atan2", "arctan2"), ("logaddexp", "logaddexp"), ("remainder", "remainder"),
    ("fmod", "fmod"), ("floor_divide", "floor_divide"), ("lt", "less"), ("eq", "equal"),
])
def test_facade_binary_ops_equal_numpy_on_float_arrays(name, numpy_name):
    """Where the two dialects promote alike (float64 arrays), the facade is fgrad.numpy."""
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (4,))
    got = getattr(torch, name)(torch.tensor(a), torch.tensor(b))
    want = getattr(fnp, numpy_name)(a, b)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.numpy(), want)


def test_facade_reductions_and_shapes_equal_numpy():
    a = np.arange(24.0).reshape(2, 3, 4) - 7.5
    t = torch.tensor(a)
    pairs = [(t.sum((0, 2)), fnp.sum(a, axis=(0, 2))), (t.mean(1, keepdim=True), fnp.mean(a, 1, keepdims=True)),
             (t.var(2), fnp.var(a, 2, ddof=1)), (t.std(), fnp.std(a, ddof=1)), (t.prod(1), fnp.prod(a, 1)),
             (t.amax((0, 1)), fnp.max(a, (0, 1))), (t.argmin(2), fnp.argmin(a, 2)), (t.cumsum(1), fnp.cumsum(a, 1)),
             (t.permute(2, 0, 1), fnp.transpose(a, (2, 0, 1))), (t.unsqueeze(1), fnp.expand_dims(a, 1)),
             (t.flip(0), fnp.flip(a, 0)), (t.roll(1, 2), fnp.roll(a, 1, 2)), (t.view(-1, 4), fnp.reshape(a, (-1, 4))),
             (torch.cat([t, t], 2), fnp.concatenate([a, a], 2)), (torch.stack([t, t], 1), fnp.stack([a, a], 1)),
             (t.repeat(1, 2, 1), fnp.tile(a, (1, 2, 1))), (t.movedim(0, 2), fnp.moveaxis(a, 0, 2))]
    for got, want in pairs:
        assert tuple(got.shape) == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)


def test_std_at_zero_spread_has_one_convention():
    """fgrad.numpy.std's gradient at zero spread is 0 (the norm's convention, as PyTorch); the
    facade's std is the same function."""
    x = torch.ones(3, requires_grad=True)
    x.std().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    np.testing.assert_array_equal(fgrad.grad(lambda v: fnp.std(v, ddof=1))(np.ones(3)), [0.0, 0.0, 0.0])


def test_relu_is_one_primitive():
    """torch.relu, Tensor.relu and nn.functional.relu bind the relu primitive (NaN propagates)."""
    x = torch.tensor([-1.0, 0.0, float("nan"), 2.0], requires_grad=True)
    for y in (torch.relu(x), x.relu(), torch.nn.functional.relu(x)):
        assert y.grad_fn.name() == "ReluBackward0" and y.grad_fn.prim.name == "relu"
        assert np.isnan(y.detach().numpy()[2]) and y.detach().numpy()[[0, 1, 3]].tolist() == [0.0, 0.0, 2.0]


def test_facade_on_traced_values_uses_the_same_policy():
    """Inside torch.func.grad the facade's tensors hold tracers; PyTorch's promotion still applies."""
    scale = torch.tensor([1, 2, 3]) / 2  # int / int -> float32

    def f(x):
        return (x * scale).sum()
    np.testing.assert_allclose(fgrad.torch.func.grad(f)(torch.ones(3)).numpy(), [0.5, 1.0, 1.5])
    assert fgrad.torch.func.grad(lambda x: (x.sum(0) / 2).sum())(torch.ones(2, 2)).dtype == torch.float32


def test_no_dimension_limit_of_its_own():
    """Broadcasting checks are fgrad.numpy's (NumPy 2's 64 dimensions), not a 32-dim copy."""
    a = torch.ones(*([1] * 40))
    assert torch.allclose(a, a) and torch.isclose(a, a).shape == a.shape
    assert torch.broadcast_shapes((1,) * 40, (3,)) == (1,) * 39 + (3,)


def test_integers_convert_straight_to_the_float_dtype():
    """A division (or float function) of integers converts each operand to the float dtype,
    not through their common integer dtype, which PyTorch's categories may not hold them in."""
    a, b = torch.tensor(-3, dtype=torch.int32), torch.tensor([3, 255], dtype=torch.uint8)
    assert (a / b).tolist() == pytest.approx([-1.0, -3 / 255]) and (a / b).dtype == torch.float32
    assert (b / -1).tolist() == [-3.0, -255.0]
    assert torch.logical_and(b, -1).tolist() == [True, True]  # truth values, whatever the dtypes
    np.testing.assert_allclose(fnp.true_divide(np.array(-3, np.int32), np.array([3], np.uint8)), [-1.0])
