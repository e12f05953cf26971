"""torch.nn.utils.parametrize against PyTorch 2.13: registering, chaining, assigning through
right_inverse, caching, removing, the injected class, printing, state_dict keys, gradients and
errors."""
import copy

import numpy as np
import pytest

import fgrad.torch as ft
import fgrad.torch.nn.utils.parametrize as fP

torch = pytest.importorskip("torch")
import torch.nn.utils.parametrize as tP  # noqa: E402


def _np(t):
    return t.detach().numpy()


def _both(build):
    out = []
    for lib, P in ((ft, fP), (torch, tP)):
        lib.manual_seed(0)
        out.append(build(lib, P))
    return out


def _modules(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).transpose(-1, -2)

    class Skew(lib.nn.Module):
        def forward(self, X):
            A = X.triu(1)
            return A - A.transpose(-1, -2)

        def right_inverse(self, A):
            return A.triu(1)

    class Cayley(lib.nn.Module):
        def __init__(self, n):
            super().__init__()
            self.register_buffer("Id", lib.eye(n))

        def forward(self, X):
            return lib.linalg.solve(self.Id - X, self.Id + X)

        def right_inverse(self, A):
            return lib.linalg.solve(A + self.Id, self.Id - A)

    class Split(lib.nn.Module):  # two originals
        def forward(self, a, b):
            return a + b

        def right_inverse(self, w):
            return w * 0.25, w * 0.75
    return Symmetric, Skew, Cayley, Split


def test_register_read_backward_print():
    def build(lib, P):
        Symmetric, Skew, Cayley, _ = _modules(lib)
        layer = lib.nn.Linear(3, 3)
        P.register_parametrization(layer, "weight", Symmetric())
        out = layer(lib.arange(6.0).reshape(2, 3))
        out.sum().backward()
        orth = lib.nn.Linear(3, 3)
        P.register_parametrization(orth, "weight", Skew())
        P.register_parametrization(orth, "weight", Cayley(3))
        return (_np(layer.weight), _np(layer.parametrizations.weight.original.grad), type(layer).__name__,
                repr(layer), [n for n, _ in layer.named_parameters()], list(layer.state_dict()),
                P.is_parametrized(layer), P.is_parametrized(layer, "bias"), P.type_before_parametrizations(layer).__name__,
                _np(orth.weight), repr(orth), type(layer.weight).__name__,
                type(layer.parametrizations.weight.original).__name__)
    f, t = _both(build)
    for a, b in zip(f, t):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b


def test_assignment_goes_through_right_inverse():
    def build(lib, P):
        _, Skew, Cayley, Split = _modules(lib)
        layer = lib.nn.Linear(3, 3)
        P.register_parametrization(layer, "weight", Skew())
        P.register_parametrization(layer, "weight", Cayley(3))
        X = lib.tensor([[0.0, 0.6, 0.8], [-0.6, 0.64, -0.48], [-0.8, -0.48, 0.36]]).T
        layer.weight = X
        two = lib.nn.Linear(2, 2)
        P.register_parametrization(two, "weight", Split())
        w_before = _np(two.weight).copy()
        two.weight = lib.ones(2, 2)
        return (_np(layer.weight), _np(layer.parametrizations.weight.original), w_before, _np(two.weight),
                _np(two.parametrizations.weight.original0), [n for n, _ in two.named_parameters()])
    f, t = _both(build)
    for a, b in zip(f, t):
        if isinstance(a, np.ndarray):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
        else:
            assert a == b


def test_cached_computes_once():
    def build(lib, P):
        calls = []

        class Noisy(lib.nn.Module):
            def forward(self, X):
                calls.append(1)
                return X
        layer = lib.nn.Linear(2, 2)
        P.register_parametrization(layer, "weight", Noisy())
        n0 = len(calls)
        layer.weight + layer.weight
        n1 = len(calls)
        with P.cached():
            with P.cached():
                a = layer.weight
            same = layer.weight is a
        n2 = len(calls)
        return n1 - n0, n2 - n1, same
    f, t = _both(build)
    assert f == t == (2, 1, True)


@pytest.mark.parametrize("leave", [True, False])
def test_remove_parametrizations(leave):
    def build(lib, P):
        _, Skew, _, Split = _modules(lib)
        layer = lib.nn.Linear(3, 3)
        P.register_parametrization(layer, "weight", Skew())
        original = layer.parametrizations.weight.original
        P.remove_parametrizations(layer, "weight", leave_parametrized=leave)
        two = lib.nn.Linear(2, 2)
        P.register_parametrization(two, "weight", Split())
        P.register_parametrization(two, "bias", Split())
        P.remove_parametrizations(two, "weight")
        return (_np(layer.weight), layer.weight is original, type(layer).__name__, repr(layer),
                [n for n, _ in layer.named_parameters()], type(two).__name__, [n for n, _ in two.named_parameters()],
                hasattr(layer, "parametrizations"))
    f, t = _both(build)
    np.testing.assert_allclose(f[0], t[0], rtol=1e-6)
    assert f[1:] == t[1:]


def test_deepcopy_and_state_dict_roundtrip():
    _, Skew, _, _ = _modules(ft)
    layer = ft.nn.Linear(3, 3)
    fP.register_parametrization(layer, "weight", Skew())
    twin = copy.deepcopy(layer)
    assert type(twin).__name__ == "ParametrizedLinear"
    np.testing.assert_array_equal(_np(twin.weight), _np(layer.weight))
    assert twin.parametrizations.weight.original is not layer.parametrizations.weight.original
    other = ft.nn.Linear(3, 3)
    fP.register_parametrization(other, "weight", Skew())
    other.load_state_dict(layer.state_dict())
    np.testing.assert_array_equal(_np(other.weight), _np(layer.weight))


def test_errors_match_torch():
    def errors(lib, P):
        Symmetric, _, _, _ = _modules(lib)

        class Shrink(lib.nn.Module):
            def forward(self, X):
                return X[:1]

        class ToDouble(lib.nn.Module):
            def forward(self, X):
                return X.double()
        got = []
        for call in (lambda: P.register_parametrization(lib.nn.Linear(2, 2), "nope", Symmetric()),
                     lambda: P.register_parametrization(lib.nn.Linear(2, 2), "weight", Shrink()),
                     lambda: P.register_parametrization(lib.nn.Linear(2, 2), "weight", ToDouble()),
                     lambda: P.remove_parametrizations(lib.nn.Linear(2, 2), "weight")):
            with pytest.raises(ValueError) as e:
                call()
            got.append(str(e.value).split("\n")[0].split("'")[0])
        layer = lib.nn.Linear(2, 2)
        P.register_parametrization(layer, "weight", Symmetric())
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            layer.weight = lib.zeros(2, 2)
        P.register_parametrization(layer, "weight", Shrink(), unsafe=True)  # unsafe: no check
        return got
    f, t = _both(errors)
    assert f == t


def test_transfer_parametrizations_and_params():
    def build(lib, P):
        _, Skew, _, Split = _modules(lib)
        a = lib.nn.Linear(3, 3)
        P.register_parametrization(a, "weight", Skew())
        P.register_parametrization(a, "bias", Split())
        b = lib.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(a, b)
        c = lib.nn.Linear(3, 3)
        P.transfer_parametrizations_and_params(a, c, "weight")
        return (_np(b.weight), _np(b.bias), [n for n, _ in b.named_parameters()], _np(c.weight),
                [n for n, _ in c.named_parameters()], b.parametrizations.weight[0] is a.parametrizations.weight[0])
    f, t = _both(build)
    for x, y in zip(f, t):
        if isinstance(x, np.ndarray):
            np.testing.assert_allclose(x, y, rtol=1e-6)
        else:
            assert x == y
