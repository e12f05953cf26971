"""PyTorch's view semantics, table-driven: each view op shares storage and the version
counter with its base, in-place writes through the view show in the base and the other way
round, and both are recorded for autograd (CopySlices on the base, the view's grad_fn
re-derived from it). Every case runs under fgrad and under real PyTorch and must agree:
values, gradients, grad_fn names and errors."""
import numpy as np
import pytest

import fgrad

torch = pytest.importorskip("torch")

# name -> the view of a (2, 3, 4) tensor
VIEWS = {
    "view": lambda t: t.view(6, 4),
    "view_flat": lambda t: t.view(-1),
    "reshape_viewable": lambda t: t.reshape(3, 8),
    "transpose": lambda t: t.transpose(0, 2),
    "permute": lambda t: t.permute(2, 0, 1),
    "narrow": lambda t: t.narrow(2, 1, 2),
    "select": lambda t: t.select(1, 2),
    "int_index": lambda t: t[1],
    "slice_step": lambda t: t[:, ::2, 1:],
    "ellipsis_none": lambda t: t[..., None, 0],
    "diagonal": lambda t: t.diagonal(0, 1, 2),
    "squeeze_unsqueeze": lambda t: t.unsqueeze(1).squeeze(1),
    "flatten_view": lambda t: t.flatten(1),
    "unflatten": lambda t: t.unflatten(2, (2, 2)),
    "movedim": lambda t: t.movedim(0, -1),
    "t_of_slice": lambda t: t[0].t(),
    "unbind": lambda t: t.unbind(0)[1],
    "split": lambda t: t.split(2, dim=2)[1],
    "chunk": lambda t: t.chunk(3, dim=1)[2],
    "view_of_view": lambda t: t.transpose(0, 1)[1:].narrow(2, 0, 3),
}


def _both(fn):
    """fn(lib) under fgrad and torch: (result, result) or the exception types."""
    out = []
    for lib in (fgrad.torch, torch):
        try:
            out.append(fn(lib))
        except Exception as e:  # noqa: BLE001 - the error itself is compared
            out.append(type(e).__name__ if not isinstance(e, RuntimeError) else "RuntimeError")
    return out


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else x


def _close(a, b):
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
        return
    assert len(a) == len(b)
    for x, y in zip(a, b):
        if isinstance(x, str) or isinstance(y, str):
            assert x == y
        else:
            np.testing.assert_allclose(_np(x), _np(y), rtol=1e-6, atol=1e-6)


BASE = np.arange(24, dtype=np.float32).reshape(2, 3, 4) / 10


@pytest.mark.parametrize("name", VIEWS)
def test_write_through_view_and_base(name):
    view = VIEWS[name]

    def run(lib):
        base = lib.tensor(BASE.copy())
        v = view(base)
        v.mul_(2)
        seen_in_base = base.clone()
        base.add_(1)
        return seen_in_base, v, base._version == v._version
    got, want = _both(run)
    _close(got, want)


@pytest.mark.parametrize("name", VIEWS)
def test_inplace_through_view_is_differentiated(name):
    view = VIEWS[name]

    def run(lib):
        w = lib.tensor(BASE.copy(), requires_grad=True)
        c = lib.tensor(0.5, requires_grad=True)
        y = w * 1.5
        v = view(y)
        v.mul_(c)
        weights = lib.tensor(np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 3, 4))
        loss = (y * weights).sum() + (v * v).sum()
        loss.backward()
        return y, v, w.grad, c.grad, y.grad_fn.name(), v.grad_fn.name()
    got, want = _both(run)
    _close(got, want)


@pytest.mark.parametrize("name", VIEWS)
def test_base_modified_after_view_was_taken(name):
    view = VIEWS[name]

    def run(lib):
        w = lib.tensor(BASE.copy(), requires_grad=True)
        y = w * 1.0
        v = view(y)
        y.mul_(w)
        (v * 3).sum().backward()
        return v, w.grad, v.grad_fn.name()
    got, want = _both(run)
    _close(got, want)


@pytest.mark.parametrize("name", VIEWS)
def test_view_of_leaf_requiring_grad_refuses_inplace(name):
    def run(lib):
        w = lib.tensor(BASE.copy(), requires_grad=True)
        VIEWS[name](w).add_(1)
        return (w,)
    got, want = _both(run)
    assert got == want == "RuntimeError"


CASES_ERRORS = {
    "view_non_contiguous": lambda lib: lib.tensor(BASE).transpose(1, 2).view(-1),
    "expand_inplace": lambda lib: lib.zeros(3).expand(2, 3).add_(1),
    "overwritten_saved_value": lambda lib: _overwrite_saved(lib),
}


def _overwrite_saved(lib):
    w = lib.tensor(BASE.copy(), requires_grad=True)
    y = w.exp()  # saves its result
    y[0].mul_(2)
    y.sum().backward()
    return (w.grad,)


@pytest.mark.parametrize("name", CASES_ERRORS)
def test_errors_as_pytorch(name):
    got, want = _both(CASES_ERRORS[name])
    assert got == want


def test_contiguity_is_honest():
    for lib in (fgrad.torch, torch):
        x = lib.tensor(BASE)
        assert x.is_contiguous() and not x.transpose(0, 1).is_contiguous()
        c = x.transpose(0, 1).contiguous()
        assert c.is_contiguous() and c.view(-1).shape == (24,)
        assert x.contiguous() is x


def test_detach_shares_storage_but_not_history():
    for lib in (fgrad.torch, torch):
        w = lib.tensor(BASE.copy(), requires_grad=True)
        y = w * 2
        d = y.detach()
        d.zero_()
        assert float(y.detach().sum()) == 0.0 and d.grad_fn is None
