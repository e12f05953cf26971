"""Sparse COO tensors (fgrad.torch.sparse_coo_tensor, Tensor.to_sparse, fgrad.torch.sparse) against
PyTorch: structure (indices, values, size, coalescing), to_dense, and the sparse @ dense
product with its gradients in the values and in the dense operand (float32 and float64);
second order against the same product computed densely; PyTorch's error types."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
from tests.torch.test_tensor_ops import R, _raises_like_torch, check

torch = pytest.importorskip("torch")

# a 4 x 3 pattern with a repeated position ((1, 2) twice) and an empty row
IDX = np.array([[0, 1, 1, 3, 1, 0], [2, 0, 2, 1, 2, 0]])


def coo(L, values, size=(4, 3), idx=IDX):
    if size is None:
        return L.sparse_coo_tensor(L.tensor(idx), values)
    return L.sparse_coo_tensor(L.tensor(idx), values, size)


def test_structure_and_coalesce():
    def fn(L, v):
        s = coo(L, v)
        c = s.coalesce()
        assert s.is_sparse and s.layout == L.sparse_coo and not s.is_coalesced() and c.is_coalesced()
        assert (s.sparse_dim(), s.dense_dim(), s._nnz(), c._nnz()) == (2, 0, 6, 5)
        assert tuple(s.shape) == (4, 3) and s.size(0) == 4
        return s._indices(), s._values(), c.indices(), c.values(), s.to_dense(), c.to_dense()
    check(fn, R(6))
    check(lambda L, v: coo(L, v, size=None).to_dense(), R(6))  # the size inferred from the indices


def test_hybrid_values_and_sum():
    idx = np.array([[0, 2, 0], [1, 1, 1]])
    check(lambda L, v: coo(L, v, (3, 2, 2), idx).coalesce().to_dense(), R(3, 2))
    check(lambda L, v: (L.sparse.sum(coo(L, v)), L.sparse.sum(coo(L, v), 1).to_dense(),
                        L.sparse.sum(coo(L, v), (0, 1))), R(6))


def test_to_sparse():
    x = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])

    def fn(L, x):
        s = (x * 2.0).to_sparse()
        assert s.is_coalesced() and not x.is_sparse
        return s.indices(), s.values(), s.to_dense()
    check(fn, x)
    check(lambda L, x: x.to_sparse(1).to_dense(), np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 3.0]]))
    check(lambda L, x: x.to_dense(), x)  # a dense tensor is its own dense form


@pytest.mark.parametrize("form", ["sparse.mm", "@", "mm", "matmul", "method"])
def test_sparse_dense_product(form):
    def fn(L, v, d):
        s = coo(L, v)
        if form == "sparse.mm":
            return L.sparse.mm(s, d)
        if form == "@":
            return s @ d
        if form == "method":
            return s.mm(d)
        return getattr(L, form)(s, d)
    # PyTorch cannot differentiate its sparse product's backward: first order here, second below
    check(fn, R(6), R(3, 2, seed=1), order=1)
    if form in ("@", "matmul"):  # (PyTorch's mm forms take matrices only; fgrad's also vectors)
        check(fn, R(6), R(3, seed=1), order=1)


def test_dense_times_sparse():
    check(lambda L, v, d: d @ coo(L, v), R(6), R(2, 4, seed=1), order=1)
    check(lambda L, v, d: L.mm(d, coo(L, v)), R(6), R(2, 4, seed=1), order=1)


def test_coalesced_product_and_scaling():
    check(lambda L, v, d: L.sparse.mm(coo(L, v).coalesce() * 0.5, d), R(6), R(3, 4, seed=1), order=1)
    check(lambda L, m, v, d: L.sparse.addmm(m, coo(L, v), d, beta=0.5, alpha=2.0), R(4, 2, seed=2), R(6),
          R(3, 2, seed=1), order=1)
    check(lambda L, v, d: coo(L, v).t() @ d, R(6), R(4, 2, seed=1), order=1)


@pytest.mark.parametrize("dtype", [fgrad.torch.float32, fgrad.torch.float64])
def test_second_order_matches_the_dense_product(dtype):
    """d2/dv dd of a loss through sparse @ dense equals the dense computation's."""
    rng = np.random.default_rng(3)
    v0, d0, w = rng.uniform(-1, 1, 6), rng.uniform(-1, 1, (3, 2)), rng.uniform(0.5, 1.5, (4, 2))

    def grads(dense_path):
        v = fgrad.torch.tensor(v0, dtype=dtype, requires_grad=True)
        d = fgrad.torch.tensor(d0, dtype=dtype, requires_grad=True)
        s = coo(fgrad.torch, v)
        y = (s.to_dense() @ d) if dense_path else (s @ d)
        loss = ((y * y) * fgrad.torch.tensor(w, dtype=dtype)).sum()
        gv, gd = fgrad.torch.autograd.grad(loss, (v, d), create_graph=True)
        h = fgrad.torch.autograd.grad((gv * gv).sum() + (gd ** 3).sum(), (v, d))
        return [g.detach().numpy() for g in (gv, gd, *h)]

    tol = 1e-5 if dtype == fgrad.torch.float32 else 1e-12
    for a, b in zip(grads(False), grads(True)):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


def test_leaf_sparse_tensor_gets_a_sparse_grad():
    vals = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    d0 = R(3, 2, seed=1)
    s = fgrad.torch.sparse_coo_tensor(fgrad.torch.tensor(IDX), fgrad.torch.tensor(vals), (4, 3), requires_grad=True)
    assert s.is_leaf and s.requires_grad and s.grad is None
    fgrad.torch.sparse.mm(s, fgrad.torch.tensor(d0)).sum().backward()
    ts = torch.sparse_coo_tensor(torch.tensor(IDX), torch.tensor(vals), (4, 3), requires_grad=True)
    torch.sparse.mm(ts, torch.tensor(d0)).sum().backward()
    want = ts.grad.to_dense() if ts.grad.is_sparse else ts.grad
    assert s.grad.is_sparse and s.grad.shape == (4, 3)
    # the gradient of each stored value: PyTorch's at its position
    np.testing.assert_allclose(s.grad._values().numpy(), want.numpy()[IDX[0], IDX[1]])


def test_gcn_layer_training_step():
    """A graph convolution, relu(A_hat @ X @ W), its loss and the gradients of W and X."""
    n = 6
    edges = np.array([[0, 1, 1, 2, 2, 3, 4, 5, 0, 3], [1, 0, 2, 1, 3, 2, 5, 4, 0, 3]])
    deg = np.bincount(edges[0], minlength=n).astype(np.float64)
    weights = 1.0 / np.sqrt(deg[edges[0]] * deg[edges[1]])

    def fn(L, x, w):
        a = L.sparse_coo_tensor(L.tensor(edges), L.tensor(weights, dtype=x.dtype), (n, n))
        return L.relu(L.sparse.mm(a, x @ w)).pow(2).mean()
    check(fn, R(n, 4), R(4, 3, seed=1), order=1)


@pytest.mark.parametrize("fn", [
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.ones(6), (2, 3), check_invariants=True),  # index beyond
    lambda L: L.sparse_coo_tensor(L.tensor(IDX), L.ones(5), (4, 3)),          # nnz mismatch
    lambda L: L.sparse_coo_tensor(L.tensor(IDX[0]), L.ones(6), (4,)),         # 1-D indices
    lambda L: L.sparse.mm(coo(L, L.ones(6)), L.ones(3, 2, dtype=L.float64)),  # dtypes differ
    lambda L: L.sparse.mm(coo(L, L.ones(6)), L.ones(2, 2)),                   # shapes
    lambda L: coo(L, L.ones(6)).indices(),                                    # uncoalesced
    lambda L: coo(L, L.ones(6)).values(),
])
def test_errors_have_pytorchs_types(fn):
    _raises_like_torch(fn)
