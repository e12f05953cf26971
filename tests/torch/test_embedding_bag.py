"""F.embedding_bag / nn.EmbeddingBag against PyTorch over every option: mode sum, mean and max;
1-D input with offsets (with and without include_last_offset, with empty bags) and 2-D input;
padding_idx (left out of its bag: of the sum, of the mean's count, of the maximum); and
per_sample_weights (mode sum). Values and the gradients of weight (and of per_sample_weights),
on weights with ties, where max's gradient must go to the row PyTorch picks (the first); then
check_grads to order 2 in both modes on plain arrays, and eager against jit."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import fgrad
from fgrad.test_util import check_grads

torch = pytest.importorskip("torch")
F_F, T_F = fgrad.torch.nn.functional, torch.nn.functional

N, D = 7, 3


def _weight(ties: bool) -> np.ndarray:
    w = np.random.default_rng(0).normal(size=(N, D))
    if ties:  # rows 1, 3 and 5 equal, row 2 equal to row 1 in column 0: ties inside bags
        w[3] = w[5] = w[1]
        w[2, 0] = w[1, 0]
    return w


# (input, offsets, include_last_offset): bags with repeats, an empty bag, a bag at the end
INPUTS = {
    "offsets": (np.array([1, 2, 3, 4, 5, 3, 1, 6, 0, 2]), np.array([0, 3, 3, 6]), False),
    "last_offset": (np.array([1, 2, 3, 4, 5, 3, 1, 6, 0, 2]), np.array([0, 3, 3, 6, 10]), True),
    "empty_tail": (np.array([5, 3, 1, 2]), np.array([0, 2, 4]), False),
    "2d": (np.array([[1, 3, 5], [2, 1, 0], [6, 6, 4]]), None, False),
}
CONFIGS = [(name, mode, pad, psw) for name, mode, pad, psw in
           itertools.product(INPUTS, ("sum", "mean", "max"), (None, 3, -4), (False, True))
           if not (psw and mode != "sum")]


def _run(lib, name, mode, pad, psw, ties, dtype):
    idx, off, last = INPUTS[name]
    F = F_F if lib is fgrad.torch else T_F
    w = lib.tensor(_weight(ties), dtype=dtype, requires_grad=True)
    weights = None
    if psw:
        weights = lib.tensor(np.linspace(-1.5, 2.0, idx.size).reshape(idx.shape), dtype=dtype,
                             requires_grad=True)
    y = F.embedding_bag(lib.tensor(idx), w, None if off is None else lib.tensor(off), mode=mode,
                        per_sample_weights=weights, include_last_offset=last, padding_idx=pad)
    ct = np.arange(1, 1 + int(np.prod(tuple(y.shape)))).reshape(tuple(y.shape)) / 7.0
    (y * lib.tensor(ct, dtype=dtype)).sum().backward()
    out = [y.detach().numpy(), w.grad.numpy()]
    if psw:
        out.append(weights.grad.numpy())
    return out


@pytest.mark.parametrize("ties", [False, True], ids=["distinct", "ties"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(str(v) for v in c))
def test_matches_torch(config, dtype, ties):
    got = _run(fgrad.torch, *config, ties, getattr(fgrad.torch, dtype))
    want = _run(torch, *config, ties, getattr(torch, dtype))
    tol = 1e-6 if dtype == "float32" else 1e-12
    for g, w in zip(got, want, strict=True):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_max_gradient_goes_to_the_first_tied_row():
    """A bag whose maximum is reached by several rows: PyTorch's CPU kernel (and fgrad) give
    the whole gradient to the first of them, not a share to each."""
    w = np.zeros((3, 2))
    w[0] = w[1] = [1.0, 5.0]
    for idx, want0 in (([0, 1, 0, 2], 2.0), ([1, 0, 0, 2], 1.0)):
        t = fgrad.torch.tensor(w, requires_grad=True)
        F_F.embedding_bag(fgrad.torch.tensor(idx), t, fgrad.torch.tensor([0, 2]), mode="max").sum().backward()
        np.testing.assert_array_equal(t.grad.numpy()[:, 0], [want0, 2.0 - want0, 0.0])


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
@pytest.mark.parametrize("name", ["offsets", "2d"])
def test_check_grads_order_2(name, mode):
    idx, off, last = INPUTS[name]
    w = _weight(False)
    check_grads(lambda v: F_F.embedding_bag(idx, v, off, mode=mode, include_last_offset=last, padding_idx=3),
                (w,), order=2, modes=("fwd", "rev"))
    if mode == "sum":
        psw = np.linspace(-1.5, 2.0, idx.size).reshape(idx.shape)
        check_grads(lambda v, p: F_F.embedding_bag(idx, v, off, mode=mode, per_sample_weights=p,
                                                  include_last_offset=last),
                    (w, psw), order=2, modes=("fwd", "rev"))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_jit_and_vmap_agree_with_eager(mode):
    idx, off, _ = INPUTS["offsets"]
    w = _weight(True)

    def f(v):
        return F_F.embedding_bag(idx, v, off, mode=mode, padding_idx=4)
    eager = np.asarray(f(w))
    np.testing.assert_allclose(np.asarray(fgrad.jit(f)(w)), eager, rtol=1e-13)
    np.testing.assert_allclose(np.asarray(fgrad.grad(lambda v: fgrad.numpy.sum(f(v) ** 2))(w)),
                               np.asarray(fgrad.jit(fgrad.grad(lambda v: fgrad.numpy.sum(f(v) ** 2)))(w)),
                               rtol=1e-13)
    stacked = np.stack([w, 2 * w])
    np.testing.assert_allclose(np.asarray(fgrad.vmap(f)(stacked)), np.stack([eager, np.asarray(f(2 * w))]),
                               rtol=1e-13)


def test_module_matches_torch():
    tm = torch.nn.EmbeddingBag(N, D, mode="max", padding_idx=2)
    fm = fgrad.torch.nn.EmbeddingBag(N, D, mode="max", padding_idx=2)
    fm.load_state_dict({k: fgrad.torch.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    idx, off, _ = INPUTS["offsets"]
    np.testing.assert_allclose(fm(fgrad.torch.tensor(idx), fgrad.torch.tensor(off)).detach().numpy(),
                               tm(torch.tensor(idx), torch.tensor(off)).detach().numpy(), rtol=1e-6)
