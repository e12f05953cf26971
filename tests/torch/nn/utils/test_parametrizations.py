"""torch.nn.utils.parametrizations (orthogonal, spectral_norm, weight_norm) against PyTorch
2.13: values, gradients through the originals, the random power-iteration vectors, state_dict
keys, grad_fn names, assignment and errors."""
import numpy as np
import pytest

import fgrad.torch as ft
import fgrad.torch.nn.utils.parametrizations as fPz

torch = pytest.importorskip("torch")
import torch.nn.utils.parametrizations as tPz  # noqa: E402


def _np(t):
    return t.detach().numpy()


def _both(build):
    out = []
    for lib, Pz in ((ft, fPz), (torch, tPz)):
        lib.manual_seed(0)
        out.append(build(lib, Pz))
    return out


def _agree(f, t, rtol=1e-5, atol=1e-6):
    for a, b in zip(f, t):
        if isinstance(a, np.ndarray):
            assert a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
        else:
            assert a == b


@pytest.mark.parametrize("omap", ["matrix_exp", "cayley", "householder", None])
@pytest.mark.parametrize("shape", [(4, 4), (3, 5), (5, 3)])
def test_orthogonal(omap, shape):
    def build(lib, Pz):
        lin = lib.nn.Linear(shape[1], shape[0])
        Pz.orthogonal(lin, orthogonal_map=omap)
        w = lin.weight
        w.pow(3).sum().backward()
        gram = w @ w.T if shape[0] <= shape[1] else w.T @ w
        lin.weight = lib.eye(*shape) * -1.0 if omap != "householder" else lib.eye(*shape)
        return (_np(w), _np(lin.parametrizations.weight.original.grad), _np(gram), _np(lin.weight),
                list(lin.state_dict()))
    f, t = _both(build)
    _agree(f, t, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(f[2], np.eye(min(shape)), atol=1e-5)


def test_orthogonal_without_trivialization():
    def build(lib, Pz):
        lin = lib.nn.Linear(3, 5)
        Pz.orthogonal(lin, orthogonal_map="householder", use_trivialization=False)
        w = _np(lin.weight).copy()
        other = lib.nn.Linear(3, 3)
        Pz.orthogonal(other, orthogonal_map="cayley", use_trivialization=False)
        with pytest.raises(NotImplementedError):
            other.weight = lib.eye(3)
        return w, list(lin.state_dict())
    _agree(*_both(build), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dim", [None, 0, 1])
def test_spectral_norm(dim):
    def build(lib, Pz):
        mods = [lib.nn.Linear(4, 3), lib.nn.Conv2d(2, 3, 2), lib.nn.ConvTranspose2d(2, 3, 2)]
        out = []
        for m in mods:
            Pz.spectral_norm(m, dim=dim, n_power_iterations=2)
            for _ in range(3):
                m(lib.ones(1, 4) if isinstance(m, lib.nn.Linear) else lib.ones(1, 2, 3, 3))
            m.eval()
            w = m.weight
            w.sum().backward()
            out += [_np(w), _np(m.parametrizations.weight[0]._u), _np(m.parametrizations.weight.original.grad),
                    list(m.state_dict())]
        return out
    _agree(*_both(build), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm(dim):
    def build(lib, Pz):
        c = lib.nn.Conv2d(2, 3, 2)
        Pz.weight_norm(c, dim=dim)
        c.weight.pow(2).sum().backward()
        with lib.no_grad():
            c.parametrizations.weight.original0.mul_(2)
        return (_np(c.weight), _np(c.parametrizations.weight.original0),
                _np(c.parametrizations.weight.original1.grad), c.weight.grad_fn.name(), list(c.state_dict()),
                repr(c))
    _agree(*_both(build))


def test_errors_match_torch():
    def errors(lib, Pz):
        got = []
        for call in (lambda: Pz.orthogonal(lib.nn.Linear(2, 2), "bias"),
                     lambda: Pz.orthogonal(lib.nn.Linear(2, 2), "nope"),
                     lambda: Pz.orthogonal(lib.nn.Linear(2, 2), orthogonal_map="qr"),
                     lambda: Pz.spectral_norm(lib.nn.Linear(2, 2), "nope"),
                     lambda: Pz.spectral_norm(lib.nn.Linear(2, 2), n_power_iterations=0)):
            with pytest.raises(ValueError) as e:
                call()
            got.append(str(e.value).split("\n")[0].split("'")[0])
        with pytest.raises(IndexError):
            Pz.spectral_norm(lib.nn.Linear(2, 2), dim=3)
        return got
    f, t = _both(errors)
    assert f == t
