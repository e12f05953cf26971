"""torch.memory_format and its four formats: Tensor.contiguous / is_contiguous / clone with a
memory_format give torch 2.13's strides, values, grad_fn and errors; torch.layout; and
nn.utils.convert_conv2d/3d_weight_memory_format rewrite conv weights as torch's do."""
from __future__ import annotations

import pickle

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")


def _pair(shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    return ftorch.tensor(x), torch.tensor(x)


def test_format_objects_as_torch():
    for name in FORMATS:
        f, t = getattr(ftorch, name), getattr(torch, name)
        assert repr(f) == repr(t)
        assert isinstance(f, ftorch.memory_format)
        assert pickle.loads(pickle.dumps(f)) is f
    assert ftorch.legacy_contiguous_format is ftorch.contiguous_format
    assert repr(ftorch.legacy_contiguous_format) == repr(torch.legacy_contiguous_format)
    with pytest.raises(TypeError):
        ftorch.memory_format()
    assert isinstance(ftorch.strided, ftorch.layout) and isinstance(ftorch.sparse_coo, ftorch.layout)
    assert ftorch.randn(2).layout is ftorch.strided
    assert repr(ftorch.strided) == repr(torch.strided)


@pytest.mark.parametrize("shape", [(2, 3, 4, 5), (2, 3, 4, 5, 6), (2, 1, 1, 1), (1, 3, 1, 5), (2, 3)])
def test_contiguous_and_is_contiguous(shape):
    f, t = _pair(shape)
    for name in FORMATS:
        ff, tf = getattr(ftorch, name), getattr(torch, name)
        try:
            tr = t.contiguous(memory_format=tf)
        except RuntimeError:
            with pytest.raises(RuntimeError, match="required rank"):
                f.contiguous(memory_format=ff)
            continue
        fr = f.contiguous(memory_format=ff)
        assert fr.stride() == tr.stride(), name
        np.testing.assert_array_equal(fr.numpy(), tr.numpy())
        assert (fr is f) == (tr is t)
        for probe in FORMATS:
            assert fr.is_contiguous(memory_format=getattr(ftorch, probe)) == \
                tr.is_contiguous(memory_format=getattr(torch, probe)), (name, probe)
        assert fr.is_contiguous() == tr.is_contiguous()
        # later ops keep the layout as torch's do
        assert fr.clone().stride() == tr.clone().stride()
        for probe in FORMATS[:3]:
            assert (fr * 2).is_contiguous(memory_format=getattr(ftorch, probe)) == \
                tr.mul(2).is_contiguous(memory_format=getattr(torch, probe))


def test_clone_memory_format_and_gradient():
    f, t = _pair((2, 3, 4, 5), 1)
    f.requires_grad_(), t.requires_grad_()
    fr = f.contiguous(memory_format=ftorch.channels_last)
    tr = t.contiguous(memory_format=torch.channels_last)
    assert type(fr.grad_fn).__name__ == type(tr.grad_fn).__name__ == "CloneBackward0"
    w = np.arange(120, dtype=np.float32).reshape(2, 3, 4, 5)
    (fr * ftorch.tensor(w)).sum().backward()
    (tr * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(f.grad.numpy(), t.grad.numpy())
    back_f = fr.clone(memory_format=ftorch.contiguous_format)
    back_t = tr.clone(memory_format=torch.contiguous_format)
    assert back_f.stride() == back_t.stride()
    assert fr.clone().stride() == tr.clone().stride()  # preserve_format: channels_last kept


def test_bad_memory_format():
    f, t = _pair((2, 3))
    for fn in ("contiguous", "is_contiguous"):
        with pytest.raises(TypeError):
            getattr(t, fn)(memory_format="channels_last")
        with pytest.raises(TypeError, match="torch.memory_format"):
            getattr(f, fn)(memory_format="channels_last")
    with pytest.raises(RuntimeError):
        t.clone(memory_format=torch.channels_last)
    with pytest.raises(RuntimeError, match="required rank 4"):
        f.clone(memory_format=ftorch.channels_last)


def _models(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.ReLU(), lib.nn.ConvTranspose2d(4, 2, 3),
                             lib.nn.Flatten(), lib.nn.Linear(2 * 8 * 8, 1))


def test_convert_conv2d_weight_memory_format():
    out = {}
    for lib in (ftorch, torch):
        m = _models(lib)
        weight = m[0].weight
        assert lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last) is m
        assert m[0].weight is weight  # the same Parameter, new storage
        out[lib] = [m[0].weight.stride(), m[2].weight.stride(), m[4].weight.stride()]
        x = lib.ones(1, 3, 8, 8)
        m(x).sum().backward()
        out[lib].append(tuple(m[0].weight.grad.shape))
    assert out[ftorch] == out[torch]


def test_convert_conv3d_weight_memory_format():
    strides = []
    for lib in (ftorch, torch):
        m = lib.nn.Sequential(lib.nn.Conv3d(2, 3, 2), lib.nn.Conv2d(3, 3, 1))
        lib.nn.utils.convert_conv3d_weight_memory_format(m, lib.channels_last_3d)
        strides.append((m[0].weight.stride(), m[1].weight.stride()))
        with pytest.raises(RuntimeError):  # a 4-d weight in a 5-d format
            lib.nn.utils.convert_conv2d_weight_memory_format(m, lib.channels_last_3d)
    assert strides[0] == strides[1]
    with pytest.raises(TypeError, match="memory_format"):
        ftorch.nn.utils.convert_conv2d_weight_memory_format(ftorch.nn.Conv2d(1, 1, 1), 3)
    with pytest.raises(TypeError, match="Module"):
        ftorch.nn.utils.convert_conv2d_weight_memory_format(5, ftorch.channels_last)


def test_to_and_like_functions():
    f, t = _pair((2, 3, 4, 5), 2)
    fl, tl = f.to(memory_format=ftorch.channels_last), t.to(memory_format=torch.channels_last)
    assert fl.stride() == tl.stride() and (fl is f) == (tl is t)
    assert (fl.to(memory_format=ftorch.channels_last) is fl) and (tl.to(memory_format=torch.channels_last) is tl)
    assert fl.to(ftorch.float64).stride() == tl.to(torch.float64).stride()
    assert fl.to(ftorch.float64, memory_format=ftorch.contiguous_format).stride() == \
        tl.to(torch.float64, memory_format=torch.contiguous_format).stride()
    for name in ("zeros_like", "ones_like", "empty_like"):
        for fmt in (None, "contiguous_format", "channels_last", "preserve_format"):
            kw_f = {} if fmt is None else {"memory_format": getattr(ftorch, fmt)}
            kw_t = {} if fmt is None else {"memory_format": getattr(torch, fmt)}
            for fsrc, tsrc in ((fl, tl), (f, t)):
                assert getattr(ftorch, name)(fsrc, **kw_f).stride() == getattr(torch, name)(tsrc, **kw_t).stride(), \
                    (name, fmt)
    np.testing.assert_array_equal(ftorch.ones_like(fl).numpy(), np.ones((2, 3, 4, 5), np.float32))
    f2, t2 = _pair((2, 3))
    for lib, x in ((ftorch, f2), (torch, t2)):
        with pytest.raises(RuntimeError, match="required rank 4"):
            x.to(memory_format=lib.channels_last)
        with pytest.raises(TypeError):
            x.to(memory_format="channels_last")
    with pytest.raises(TypeError, match="memory_format"):
        ftorch.zeros_like(f2, memory_format="channels_last")


PRESERVE_CASES = {
    "transposed": lambda lib: lib.ones(3, 4).t(),
    "permuted": lambda lib: lib.ones(2, 3, 4).permute(2, 0, 1),
    "channels_last with size-1 dims": lambda lib: lib.ones(1, 3, 1, 5).contiguous(memory_format=lib.channels_last),
    "sliced": lambda lib: lib.ones(4, 6)[:, ::2],
    "sliced and transposed": lambda lib: lib.ones(4, 6)[:, ::2].t(),
    "expanded": lambda lib: lib.ones(3, 1).expand(3, 4),
}


@pytest.mark.parametrize("name", list(PRESERVE_CASES))
def test_preserve_format_strides(name):
    """clone and the *_like functions lay a copy out as torch's preserve_format does: a dense
    input's strides exactly, a strided one's order of strides made dense."""
    got = {}
    for lib in (ftorch, torch):
        x = PRESERVE_CASES[name](lib)
        got[lib.__name__] = (x.clone().stride(), x.detach().requires_grad_().clone().stride(),
                             lib.zeros_like(x).stride(), lib.empty_like(x, dtype=lib.float64).stride())
    assert got["fgrad.torch"] == got["torch"]


def test_module_to_memory_format():
    """Module.to(memory_format=) lays out the 4-d and 5-d parameters and buffers (torch's rule),
    with or without a dtype; a bfloat16 model converts back to float32."""
    got = {}
    for lib in (ftorch, torch):
        lib.manual_seed(0)
        m = lib.nn.Sequential(lib.nn.Conv2d(3, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.Flatten(), lib.nn.Linear(4, 2))
        assert m.to(memory_format=lib.channels_last) is m
        strides = [p.stride() for p in m.parameters()]
        m.to(lib.float64, memory_format=lib.contiguous_format)
        back = [(p.stride(), repr(p.dtype)) for p in m.parameters()]
        m.bfloat16().float()
        dtypes = [repr(p.dtype) for p in m.parameters()] + [repr(b.dtype) for b in m.buffers()]
        with pytest.raises(RuntimeError):  # a 5-d weight in a 4-d format
            lib.nn.Conv3d(1, 1, 1).to(memory_format=lib.channels_last)
        got[lib.__name__] = (strides, back, dtypes)
    assert got["fgrad.torch"] == got["torch"]
