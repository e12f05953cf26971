"""The dtypes beyond NumPy's core set, against torch 2.13: bfloat16, complex32 (chalf), the
float8 formats (through ml_dtypes) and uint16/32/64. Their attributes, torch.promote_types over
every pair (errors included), conversions into and out of them value for value (PyTorch's
saturation of float8_e4m3fn and its sign rule for float8_e8m0fnu), creation, Tensor.bfloat16 /
Tensor.chalf, torch.BFloat16Tensor and printing."""
from __future__ import annotations

import io
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

NEW = ("bfloat16", "complex32", "chalf", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
       "float8_e8m0fnu", "uint16", "uint32", "uint64")
ALL = NEW + ("float16", "float32", "float64", "complex64", "complex128", "uint8", "int8", "int16", "int32",
             "int64", "bool")
FLOAT8 = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu")
VALUES = [1.5, 2.7, -3.14159, 1e5, 500.0, -0.0, 0.0, 1e-9, 449.0, 465.0, 481.0, 1e30, -1e30, 0.75, 6.0,
          float("inf"), float("-inf"), float("nan"), 1e-40, 3.0e38]


@pytest.mark.parametrize("name", NEW)
def test_attributes(name):
    f, t = getattr(ftorch, name), getattr(torch, name)
    assert repr(f) == repr(t)
    assert (f.is_floating_point, f.is_complex, f.is_signed, f.itemsize) == \
        (t.is_floating_point, t.is_complex, t.is_signed, t.itemsize)
    assert pickle.loads(pickle.dumps(f)) is f
    assert ftorch.zeros(2, 3, dtype=f).dtype is f
    assert ftorch.empty(4, dtype=f).shape == (4,)


def test_aliases():
    assert ftorch.chalf is ftorch.complex32
    assert ftorch.bfloat16 != ftorch.float16 and ftorch.float8_e5m2 != ftorch.float8_e4m3fn


def test_promote_types_every_pair():
    for a in ALL:
        for b in ALL:
            try:
                want = repr(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            except RuntimeError:
                with pytest.raises(RuntimeError, match="not supported"):
                    ftorch.promote_types(getattr(ftorch, a), getattr(ftorch, b))
                continue
            assert repr(ftorch.promote_types(getattr(ftorch, a), getattr(ftorch, b))) == want, (a, b)


@pytest.mark.parametrize("source", ["float32", "float64"])
@pytest.mark.parametrize("name", ("bfloat16",) + FLOAT8)
def test_float_conversions_value_for_value(name, source):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (the float32 source overflows to inf, in both)
        x = np.array(VALUES, dtype=source)
    f = ftorch.tensor(x).to(getattr(ftorch, name))
    t = torch.tensor(x).to(getattr(torch, name))
    assert f.dtype is getattr(ftorch, name)
    np.testing.assert_array_equal(f.to(ftorch.float64).numpy(), t.to(torch.float64).numpy())
    fv, tv = f.double().numpy(), t.double().numpy()
    real = ~np.isnan(tv)  # (a NaN's sign bit is not part of PyTorch's contract)
    np.testing.assert_array_equal(np.signbit(fv[real]), np.signbit(tv[real]))


@pytest.mark.parametrize("name", ["uint16", "uint32", "uint64"])
def test_unsigned_conversions(name):
    ints = np.array([0, 1, 255, 256, 65535, 70000, 2 ** 31 + 5], dtype=np.int64)
    floats = np.array([0.0, 1.5, 2.9, 300.0, 65535.0], dtype=np.float32)
    for x in (ints, floats):
        f = ftorch.tensor(x).to(getattr(ftorch, name))
        t = torch.tensor(x).to(getattr(torch, name))
        assert f.tolist() == t.tolist()
        assert f.to(ftorch.int64).tolist() == t.to(torch.int64).tolist()
    data = [1, 2, 40000]
    assert ftorch.tensor(data, dtype=getattr(ftorch, name)).tolist() == torch.tensor(data, dtype=getattr(torch, name)).tolist()


def test_complex32():
    x = np.array([1 + 2j, 3.5 - 1j, 1e5 + 0.1j], dtype=np.complex64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch: "ComplexHalf support is experimental"
        t = torch.tensor(x).to(torch.complex32)
        tc = torch.tensor(x).chalf()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # (1e5 overflows complex32's halves to inf, in both)
        f = ftorch.tensor(x).to(ftorch.complex32)
    np.testing.assert_array_equal(f.to(ftorch.complex64).numpy(), t.to(torch.complex64).numpy())
    assert f.is_complex() and not f.is_floating_point()
    assert ftorch.tensor(x).chalf().dtype is ftorch.complex32 and tc.dtype is torch.complex32


def test_methods_legacy_type_and_printing():
    x = np.array([1.5, 2.7, -3.25], dtype=np.float32)
    f, t = ftorch.tensor(x), torch.tensor(x)
    fb, tb = f.bfloat16(), t.bfloat16()
    assert fb.dtype is ftorch.bfloat16 and fb.is_floating_point() and ftorch.is_floating_point(fb)
    assert fb.bfloat16() is fb and tb.bfloat16() is tb
    np.testing.assert_array_equal(fb.float().numpy(), tb.float().numpy())
    assert fb.element_size() == tb.element_size() == 2
    assert isinstance(fb, ftorch.BFloat16Tensor) and not isinstance(f, ftorch.BFloat16Tensor)
    assert fb.type() == tb.type() == "torch.BFloat16Tensor"
    assert ftorch.BFloat16Tensor([1, 2]).dtype is ftorch.bfloat16
    assert repr(fb) == repr(tb)
    for name in FLOAT8:
        assert repr(f.to(getattr(ftorch, name))) == repr(t.to(getattr(torch, name)))


def test_arithmetic_on_storage_formats_is_refused_clearly():
    """float8 dtypes are storage formats (PyTorch computes nothing on them): an op on one says to
    convert it; bfloat16 computes as PyTorch's CPU does (tests/torch/test_bfloat16_arithmetic.py)."""
    fb = ftorch.ones(3).bfloat16()
    assert (fb + fb).dtype == ftorch.bfloat16
    f8 = ftorch.ones(3).to(ftorch.float8_e4m3fn)
    with pytest.raises(RuntimeError, match=r"Float8_e4m3fn.*\.float\(\)"):
        f8 + f8
    with pytest.raises(RuntimeError, match="floating point"):
        ftorch.ones(2, dtype=ftorch.uint16).requires_grad_()


def test_assert_close_tolerances():
    """torch.testing.assert_close's default tolerances for bfloat16 and complex32 (torch's)."""
    cases = [("bfloat16", [1.0, 2.0], [1.01, 2.0]), ("bfloat16", [1.0, 2.0], [1.05, 2.0]),
             ("complex32", [1.0, 2.0], [1.0005, 2.0]), ("complex32", [1.0, 2.0], [1.01, 2.0]),
             ("float8_e4m3fn", [1.0, 2.0], [1.0, 2.0]), ("float8_e4m3fn", [1.0, 2.0], [1.2, 2.0])]
    for name, x, y in cases:
        outcome = []
        for lib in (ftorch, torch):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # (torch: ComplexHalf is experimental)
                a = lib.tensor(x).to(getattr(lib, name))
                b = lib.tensor(y).to(getattr(lib, name))
            try:
                lib.testing.assert_close(a, b)
                outcome.append(True)
            except AssertionError:
                outcome.append(False)
        assert outcome[0] == outcome[1], (name, x, y, outcome)


def test_module_bfloat16_and_its_checkpoint():
    """Module.bfloat16 casts floating parameters and buffers (not integer ones), and the bfloat16
    state dict loads into torch's bfloat16 model with the same values."""
    f, t = ftorch.nn.BatchNorm1d(3), torch.nn.BatchNorm1d(3)
    with ftorch.no_grad():
        f.weight.copy_(ftorch.tensor([0.1, 0.2, 0.3]))
    assert f.bfloat16() is f and t.bfloat16() is t
    for name, value in f.state_dict().items():
        assert repr(value.dtype) == repr(t.state_dict()[name].dtype), name
    buf = io.BytesIO()
    ftorch.save(f.state_dict(), buf)
    t.load_state_dict(torch.load(io.BytesIO(buf.getvalue())))
    np.testing.assert_array_equal(t.weight.float().detach().numpy(), f.weight.float().detach().numpy())


@pytest.mark.slow  # (a fresh interpreter importing fgrad.torch)
def test_import_does_not_load_ml_dtypes():
    """ml_dtypes' import takes about a second: `import fgrad.torch` defers it to the first use of
    one of its dtypes (its NumPy dtype, an array of it, a checkpoint holding it)."""
    code = ("import sys, fgrad.torch as t; t.zeros(2) + 1; repr(t.bfloat16); t.bfloat16.is_floating_point; "
            "t.get_autocast_dtype('cpu'); print('ml_dtypes' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["False"], out.stderr[-2000:]
