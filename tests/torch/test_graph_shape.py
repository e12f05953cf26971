"""The class test of grad_fn graphs for the shape, indexing, scatter and copy ops
(fgrad/torch/_tensor/_ops_shape.py, _ops_index.py) and the in-place machinery (tensor.py):
each result's grad_fn (name) and next_functions (parent names, in operand order) equal real
PyTorch's (tests/torch/graphs.py).

Where fgrad cannot build PyTorch's graph, the case is an xfail(strict=True) naming why.
Multi-output ops (split, chunk, unbind, qr, ...) are one node with several outputs, as in
PyTorch: the outputs' grad_fn is that node and their output_nr its output numbers
(test_multi_output_*).
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch
from tests.torch.graphs import assert_same_graph, graph_of, leaf, assert_same_gradients

torch = pytest.importorskip("torch")

def _case(fn, args=None, reason=None, depth=1):
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(fn, args or X, depth, marks=marks)


X = lambda lib: (leaf(lib),)  # noqa: E731
XY = lambda lib: (leaf(lib), leaf(lib, seed=1))  # noqa: E731
X3 = lambda lib: (leaf(lib, (3, 3)),)  # noqa: E731
X234 = lambda lib: (leaf(lib, (2, 3, 4)),)  # noqa: E731


def _long(lib, values):
    return lib.tensor(np.array(values, np.int64))


SHAPE = {
    "reshape": _case(lambda lib, x: x.reshape(3, 2)),
    "reshape_same": _case(lambda lib, x: lib.reshape(x, (2, 3))),
    "reshape_copy": _case(lambda lib, x: x.t().reshape(-1)),  # UnsafeView over Clone
    "view": _case(lambda lib, x: x.view(-1)),
    "view_as": _case(lambda lib, x: x.view_as(x)),
    "flatten": _case(lambda lib, x: x.flatten()),
    "flatten_0d": _case(lambda lib, x: x[0, 0].flatten()),
    "flatten_one_dim": _case(lambda lib, x: x[0].flatten()),  # the input itself
    "unflatten": _case(lambda lib, x: x.unflatten(1, (3, 1))),
    "squeeze": _case(lambda lib, x: x[None].squeeze()),
    "squeeze_dim": _case(lambda lib, x: x[None].squeeze(0)),
    "squeeze_dims": _case(lambda lib, x: x[None].squeeze((0, 1))),
    "permute": _case(lambda lib, x: x.permute(1, 0)),
    "T": _case(lambda lib, x: x.T),
    "transpose": _case(lambda lib, x: x.transpose(0, 1)),
    "transpose_0d": _case(lambda lib, x: x[0, 0].transpose(0, -1)),
    "swapaxes": _case(lambda lib, x: lib.swapaxes(x, 0, 1)),
    "mT": _case(lambda lib, x: x.mT),
    "t": _case(lambda lib, x: x.t()),
    "t_1d": _case(lambda lib, x: x[0].t()),
    "expand": _case(lambda lib, x: x[:1].expand(4, 3)),
    "expand_same": _case(lambda lib, x: x.expand(2, 3)),
    "expand_as": _case(lambda lib, x, y: x[:1].expand_as(y), XY),
    "broadcast_to": _case(lambda lib, x: lib.broadcast_to(x, (2, 2, 3))),
    "repeat": _case(lambda lib, x: x.repeat(2, 1)),
    "cat": _case(lambda lib, x, y: lib.cat([x, y]), XY),
    "cat_dim": _case(lambda lib, x, y: lib.cat((x, y), dim=1), XY),
    "cat_one": _case(lambda lib, x: lib.cat([x])),
    "cat_constant": _case(lambda lib, x: lib.cat([x, lib.ones(2, 3)])),
    "cat_promoting": _case(lambda lib, x: lib.cat([x, lib.ones(2, 3, dtype=lib.float64)]), X),
    "stack": _case(lambda lib, x, y: lib.stack([x, y], 1), XY),
    "hstack": _case(lambda lib, x, y: lib.hstack([x, y]), XY),
    "hstack_1d": _case(lambda lib, x, y: lib.hstack([x[0], y[0]]), XY),
    "vstack": _case(lambda lib, x, y: lib.vstack([x, y]), XY),
    "vstack_1d": _case(lambda lib, x, y: lib.vstack([x[0], y[0]]), XY),
    "hstack_0d": _case(lambda lib, x: lib.hstack([x[0, 0], x[0, 1]])),
    "vstack_0d": _case(lambda lib, x: lib.vstack([x[0, 0], x[0, 1]])),
    "cat_legacy_empty": _case(lambda lib, x: lib.cat([x[0], lib.tensor([])]), X),
    "narrow": _case(lambda lib, x: x.narrow(1, 0, 2)),
    "narrow_tensor_start": _case(lambda lib, x: x.narrow(1, _long(lib, 1), 2)),
    "split": _case(lambda lib, x: x.split(1)),
    "split_sizes": _case(lambda lib, x: x.split([1, 2], 1)),
    "tensor_split": _case(lambda lib, x: x.tensor_split(2, 1)),
    "tensor_split_indices": _case(lambda lib, x: lib.tensor_split(x, [1, 2], 1)),
    "tensor_split_tensor": _case(lambda lib, x: x.tensor_split(_long(lib, [1]), 1)),
    "chunk": _case(lambda lib, x: x.chunk(2, 1)),
    "unbind": _case(lambda lib, x: x.unbind(1)),
    "diagonal": _case(lambda lib, x: x.diagonal()),
    "trace": _case(lambda lib, x: x.trace(), X3),
    "select": _case(lambda lib, x: x.select(1, 0)),
}

INDEX = {
    "int": _case(lambda lib, x: x[0]),
    "negative_int": _case(lambda lib, x: x[-1]),
    "slice": _case(lambda lib, x: x[1:]),
    "full_slice": _case(lambda lib, x: x[:]),
    "tail_slice": _case(lambda lib, x: x[:, 1:]),
    "step_slice": _case(lambda lib, x: x[:, ::2]),
    "two_ints": _case(lambda lib, x: x[0, 1]),
    "slice_then_int": _case(lambda lib, x: x[1:, 0]),
    "none": _case(lambda lib, x: x[None]),
    "none_int": _case(lambda lib, x: x[None, 0]),
    "ellipsis": _case(lambda lib, x: x[...]),
    "ellipsis_none": _case(lambda lib, x: x[..., None]),
    "int_ellipsis_int": _case(lambda lib, x: x[0, ..., 1], X234),
    "full_slices": _case(lambda lib, x: x[:, :]),
    "tensor_0d": _case(lambda lib, x: x[_long(lib, 1)]),
    "tensor": _case(lambda lib, x: x[_long(lib, [0, 1])]),
    "list": _case(lambda lib, x: x[[0, 1]]),
    "mask": _case(lambda lib, x: x[x > 1]),
    "int_and_list": _case(lambda lib, x: x[0, [0, 1]]),
    "int_slice_list": _case(lambda lib, x: x[0, :, [0, 1]], X234),  # (PyTorch's shape (3, 2), not NumPy's)
    "list_then_slice": _case(lambda lib, x: x[[1, 0], 1:]),
    "none_and_tensor": _case(lambda lib, x: x[None, _long(lib, [1, 0])]),
    "int_and_mask": _case(lambda lib, x: x[1, x[0] > 1], X234),
    "ellipsis_and_list": _case(lambda lib, x: x[..., [0, 1]], X234),
    "int_ellipsis_list": _case(lambda lib, x: x[0, ..., [0, 1]], X234),
    "bool_entry": _case(lambda lib, x: x[True]),
    "false_entry": _case(lambda lib, x: x[0, False]),
    "gather": _case(lambda lib, x: x.gather(1, _long(lib, [[0, 1, 0], [1, 0, 1]]))),
    "index_select": _case(lambda lib, x: x.index_select(1, _long(lib, [0, 2]))),
    "take": _case(lambda lib, x: x.take(_long(lib, [0, 4]))),
    "masked_fill": _case(lambda lib, x: x.masked_fill(x > 1, 0.0)),
    "masked_fill_tensor": _case(lambda lib, x, y: x.masked_fill(x > 1, y[0, 0]), XY),
    "masked_fill_constant_tensor": _case(lambda lib, x: x.masked_fill(x > 1, lib.tensor(1.0)), X),
    "masked_select": _case(lambda lib, x: x.masked_select(x > 1)),
    "sort": _case(lambda lib, x: x.sort()),
    "sort_descending": _case(lambda lib, x: lib.sort(x, 0, descending=True)),
    "argsort": _case(lambda lib, x: x.argsort()),
    "topk": _case(lambda lib, x: x.topk(2)),
    "sort_0d": _case(lambda lib, x: x[0, 0].sort()),
    "topk_0d": _case(lambda lib, x: x[0, 0].topk(1)),
}

SCATTER = {
    # (distinct positions: where an index repeats, PyTorch passes every src element a gradient)
    "scatter": _case(lambda lib, x, y: x.scatter(1, _long(lib, [[0, 2], [1, 0]]), y), XY),
    "scatter_value": _case(lambda lib, x: x.scatter(1, _long(lib, [[0], [1]]), 1.0)),
    "scatter_reduce_arg": _case(lambda lib, x, y: x.scatter(1, _long(lib, [[0], [1]]), y, reduce="add"), XY),
    "scatter_add": _case(lambda lib, x, y: x.scatter_add(1, _long(lib, [[0, 1, 0], [1, 0, 1]]), y), XY),
    "scatter_reduce": _case(lambda lib, x, y: x.scatter_reduce(1, _long(lib, [[0, 1, 0], [1, 0, 1]]), y, "sum"),
                            XY),
    "scatter_reduce_mean": _case(lambda lib, x, y: x.scatter_reduce(1, _long(lib, [[0, 1, 0], [1, 0, 1]]), y,
                                                                    "mean", include_self=False), XY),
    "index_add": _case(lambda lib, x, y: x.index_add(1, _long(lib, [0, 2]), y[:, :2], alpha=2), XY),
    "index_copy": _case(lambda lib, x, y: x.index_copy(1, _long(lib, [0, 2]), y[:, :2]), XY),
    "index_fill": _case(lambda lib, x: x.index_fill(1, _long(lib, [0, 2]), 1.0)),
    "index_fill_tensor": _case(lambda lib, x, y: x.index_fill(1, _long(lib, [0]), y[0, 0]), XY),
    "index_put": _case(lambda lib, x, y: x.index_put((_long(lib, [0, 1]),), y[0]), XY),
    "index_put_accumulate": _case(lambda lib, x, y: x.index_put((_long(lib, [0, 1]),), y[0], accumulate=True), XY),
    "masked_scatter": _case(lambda lib, x, y: x.masked_scatter(x > 1, y), XY),
    "repeat_interleave": _case(lambda lib, x: x.repeat_interleave(2)),
    "repeat_interleave_dim": _case(lambda lib, x: x.repeat_interleave(2, dim=1)),
    "repeat_interleave_tensor": _case(lambda lib, x: x.repeat_interleave(_long(lib, [1, 2]), dim=0)),
    "unique": _case(lambda lib, x: lib.unique(x)),
    "unique_dim": _case(lambda lib, x: lib.unique(x, dim=0)),
    "unique_consecutive": _case(lambda lib, x: lib.unique_consecutive(x)),
}

LINALG_COPY = {
    "matmul": _case(lambda lib, x, y: x @ y.t(), XY),
    "matmul_mv": _case(lambda lib, x, y: x @ y[0], XY),
    "matmul_dot": _case(lambda lib, x, y: x[0] @ y[0], XY),
    "matmul_vm": _case(lambda lib, x, y: x[0] @ y.t(), XY),
    "matmul_batched_matrix": _case(lambda lib, x, y: x[None].expand(2, 2, 3) @ y.t(), XY),
    "matmul_batched_vector": _case(lambda lib, x, y: x[None].expand(2, 2, 3) @ y[0], XY),
    "matmul_batched": _case(lambda lib, x, y: x[None] @ y.t()[None], XY),
    "matmul_4d": _case(lambda lib, x, y: x[None, None] @ y.t()[None, None], XY),
    "matmul_vector_batched": _case(lambda lib, x, y: x[0, :2] @ y[None].expand(2, 2, 3), XY, depth=5),
    "matmul_matrix_batched": _case(lambda lib, x, y: x[:, :2] @ y[None].expand(2, 2, 3), XY, depth=5),
    "mm": _case(lambda lib, x, y: x.mm(y.t()), XY),
    "mm_float64": _case(lambda lib, x, y: x.double().mm(y.double().t()), XY),
    "bmm": _case(lambda lib, x, y: x[None].bmm(y.t()[None]), XY),
    "mv": _case(lambda lib, x, y: x.mv(y[0]), XY),
    "dot": _case(lambda lib, x, y: x[0].dot(y[0]), XY),
    "outer": _case(lambda lib, x, y: lib.outer(x[0], y[0]), XY),
    "einsum": _case(lambda lib, x, y: lib.einsum("ij,kj->ik", x, y), XY, depth=8),
    "clone": _case(lambda lib, x: x.clone()),
    "contiguous": _case(lambda lib, x: x.t().contiguous()),
    "contiguous_already": _case(lambda lib, x: x.contiguous()),
    "to_dtype": _case(lambda lib, x: x.to(lib.float64)),
    "to_same_dtype": _case(lambda lib, x: x.to(lib.float32)),
    "double": _case(lambda lib, x: x.double()),
    "type_as": _case(lambda lib, x: x.type_as(lib.ones(1, dtype=lib.float64))),
    "type": _case(lambda lib, x: x.type(lib.float64)),
}


def _write(fn):
    """y = x * 2 written in place by `fn(lib, y, v)`: the graph behind y afterwards."""
    def run(lib, x, v):
        y = x * 2
        fn(lib, y, v)
        return y
    return run


def _view_then(write):
    """y = x * 2 and its view y[0], then `write(y, view, v)`: the graph behind the view (its
    grad_fn is re-derived from y's new history: AsStridedBackward0, as PyTorch's)."""
    def run(lib, x, v):
        y = x * 2
        view = y[0]
        write(y, view, v)
        return view
    return run


XV = lambda lib: (leaf(lib), leaf(lib, seed=1))  # noqa: E731

INPLACE = {
    "add_": _case(_write(lambda lib, y, v: y.add_(v)), XV),
    "setitem_int": _case(_write(lambda lib, y, v: y.__setitem__(0, v[1])), XV),
    "setitem_slice": _case(_write(lambda lib, y, v: y.__setitem__((slice(None), 1), v[:, 0])), XV),
    "setitem_tensor_index": _case(_write(lambda lib, y, v: y.__setitem__(_long(lib, [1, 0]), v)), XV),
    "setitem_mask": _case(_write(lambda lib, y, v: y.__setitem__(y > 2, v[0, 0])), XV),
    "setitem_constant": _case(_write(lambda lib, y, v: y.__setitem__(0, 1.0)), XV),
    "setitem_constant_tensor": _case(_write(lambda lib, y, v: y.__setitem__(0, v.detach()[1])), XV),
    "setitem_mask_constant": _case(_write(lambda lib, y, v: y.__setitem__(y > 2, 0.5)), XV),
    "index_add_": _case(_write(lambda lib, y, v: y.index_add_(1, _long(lib, [0, 2]), v[:, :2])), XV),
    "masked_fill_": _case(_write(lambda lib, y, v: y.masked_fill_(y > 2, 0.0)), XV),
    "scatter_": _case(_write(lambda lib, y, v: y.scatter_(1, _long(lib, [[0], [1]]), 0.0)), XV),
    # a write through a view: CopySlices wraps the op's node, its next_functions are the base's
    # old history and then the op's other operands' edges
    "view_mul_": _case(_write(lambda lib, y, v: y[0].mul_(v[1])), XV),
    "view_mul_number": _case(_write(lambda lib, y, v: y[0].mul_(2)), XV),
    "view_add_alpha": _case(_write(lambda lib, y, v: y[0].add_(v[1], alpha=2)), XV),
    "view_addcmul_": _case(_write(lambda lib, y, v: y[0].addcmul_(v[1], v[0])), XV),
    "view_slice_div_": _case(_write(lambda lib, y, v: y[:, 1:].div_(v[:, 1:])), XV),
    "view_sin_": _case(_write(lambda lib, y, v: y[:, 1].sin_()), XV),
    "view_zero_": _case(_write(lambda lib, y, v: y[0].zero_()), XV),
    "view_fill_": _case(_write(lambda lib, y, v: y[0].fill_(3.0)), XV),
    "view_copy_": _case(_write(lambda lib, y, v: y[0].copy_(v[1])), XV),
    "view_copy_constant": _case(_write(lambda lib, y, v: y[0].copy_(v[1].detach())), XV),
    "view_setitem": _case(_write(lambda lib, y, v: y[0].__setitem__(1, v[1, 1])), XV),
    "view_after_view_write": _case(_view_then(lambda y, view, v: view.mul_(v[1])), XV),
    "view_after_base_write": _case(_view_then(lambda y, view, v: y.mul_(v)), XV),
}


CASES = {**SHAPE, **INDEX, **SCATTER, **LINALG_COPY, **INPLACE}


@pytest.mark.parametrize("fn, make_args, depth", CASES.values(), ids=CASES)
def test_graph_like_pytorch(fn, make_args, depth) -> None:
    assert_same_graph(fn, make_args, depth)


def _float_results(out) -> list:
    if isinstance(out, (tuple, list)):
        return [r for o in out for r in _float_results(o)]
    return [out] if getattr(out, "requires_grad", False) and out.dtype.is_floating_point else []


def _gradients(lib, fn, make_args) -> list:
    args = make_args(lib)
    outs = _float_results(fn(lib, *args))
    if not outs:
        return []
    weights = [lib.tensor(np.linspace(0.5, 1.5, o.numel()).reshape(tuple(o.shape)), dtype=o.dtype) for o in outs]
    grads = lib.autograd.grad(outs, list(args), grad_outputs=weights, allow_unused=True)
    return [None if g is None else g.detach().numpy() for g in grads]


@pytest.mark.parametrize("fn, make_args, depth", [c.values for c in CASES.values()], ids=CASES)
def test_no_tensor_below_the_boundary_and_gradients_like_pytorch(fn, make_args, depth, monkeypatch) -> None:
    """No Tensor reaches a primitive (the eval trace refuses one), in
    the op or its backward pass; the gradients equal PyTorch's."""
    got = _gradients(ftorch, fn, make_args)
    try:
        want = _gradients(torch, fn, make_args)
    except (RuntimeError, NotImplementedError):  # PyTorch does not differentiate it (unique, scatter reduce=)
        return
    assert_same_gradients(got, want, rtol=1e-5, atol=1e-6)


# matmul with a batch on one side or both: PyTorch folds the batch into one mm/mv (when the
# smaller operand requires grad, or the larger folds without a copy) or expands both sides to
# one bmm; (left shape, right shape, left transposed in memory)
MATMUL_SHAPES = [((3,), (2, 3, 4), False), ((2, 3), (2, 3, 4), False), ((5, 2, 3), (3,), False),
                 ((5, 2, 3), (3, 4), False), ((5, 2, 3), (5, 3, 4), False), ((2, 1, 2, 3), (5, 3, 4), False),
                 ((3,), (2, 2, 3, 4), False), ((5, 2, 3), (3, 4), True), ((5, 2, 3), (3,), True),
                 ((0, 2, 3), (3, 4), False)]


@pytest.mark.parametrize("grads", [(True, True), (True, False), (False, True)], ids=["both", "left", "right"])
@pytest.mark.parametrize("left, right, transposed", MATMUL_SHAPES,
                         ids=[f"{a}@{b}{' t' if t else ''}" for a, b, t in MATMUL_SHAPES])
def test_batched_matmul_composes_like_pytorch(left, right, transposed, grads) -> None:
    """The whole graph of a batched matmul (every level) and its gradients are PyTorch's."""
    rng = np.random.default_rng(0)
    va = rng.standard_normal(left[::-1] if transposed else left)
    vb = rng.standard_normal(right)

    def run(lib):
        a, b = lib.tensor(va, requires_grad=grads[0]), lib.tensor(vb, requires_grad=grads[1])
        out = (a.permute(*range(a.ndim)[::-1]) if transposed else a) @ b
        g = lib.autograd.grad(out, [x for x in (a, b) if x.requires_grad], lib.ones_like(out))
        return graph_of(out, 8), out.detach().numpy(), [x.numpy() for x in g]
    (got_graph, got, got_grads), (want_graph, want, want_grads) = run(ftorch), run(torch)
    assert got_graph == want_graph
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert_same_gradients(got_grads, want_grads, rtol=1e-12, atol=1e-12)


# einsum as PyTorch composes it: (equation, operand shapes); three or more operands follow
# opt_einsum's path when it is installed (left to right otherwise, or when it is switched off)
EINSUM = [("ij,kj->ik", [(2, 3), (4, 3)]), ("ij,jk", [(2, 3), (3, 4)]), ("i,i->", [(3,), (3,)]),
          ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("ji", [(2, 3)]), ("i,j->ij", [(2,), (3,)]),
          ("kj,ij->ik", [(2, 3), (4, 3)]), ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
          ("...i,...i->...", [(2, 1, 3), (1, 4, 3)]), ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),
          ("i,jk->", [(2,), (3, 4)]), ("iij,jk->ik", [(3, 3, 4), (4, 2)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
          ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 5), (5, 2)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)])]


# (the opt_einsum switch only matters for three or more operands)
EINSUM_RUNS = [(e, s, True) for e, s in EINSUM] + [(e, s, False) for e, s in EINSUM if len(s) > 2]


@pytest.mark.parametrize("equation, shapes, opt", EINSUM_RUNS,
                         ids=[e + ("" if o else " opt_einsum off") for e, _, o in EINSUM_RUNS])
def test_einsum_composes_like_pytorch(equation, shapes, opt, monkeypatch) -> None:
    """einsum's whole graph (every level), values and gradients are PyTorch's, the first
    operand needing no gradient (its chain then records nothing) when there are several."""
    monkeypatch.setattr(torch.backends.opt_einsum, "enabled", opt)
    monkeypatch.setattr(ftorch.backends.opt_einsum, "enabled", opt)
    rng = np.random.default_rng(0)
    values = [rng.standard_normal(s) for s in shapes]

    def run(lib):
        ops = [lib.tensor(v, requires_grad=k > 0 or len(values) == 1) for k, v in enumerate(values)]
        out = lib.einsum(equation, *ops)
        g = lib.autograd.grad(out, [o for o in ops if o.requires_grad], lib.ones_like(out))
        return graph_of(out, 12), out.detach().numpy(), [x.numpy() for x in g]
    (got_graph, got, got_grads), (want_graph, want, want_grads) = run(ftorch), run(torch)
    assert got_graph == want_graph
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert_same_gradients(got_grads, want_grads, rtol=1e-12, atol=1e-12)


def test_einsum_sublist_form_and_errors() -> None:
    """The sublist form means its equation; a mismatched equation raises PyTorch's message."""
    a, b = np.arange(6.0).reshape(2, 3), np.arange(12.0).reshape(3, 4)
    got = ftorch.einsum(ftorch.tensor(a), [0, 1], ftorch.tensor(b), [1, 2], [0, 2])
    np.testing.assert_allclose(got.numpy(), a @ b)
    for eq, shapes, message in (("ij,jk->ik", [(2, 3), (5, 4)], "subscript j has size 5 for operand 1"),
                                ("ij->ii", [(2, 3)], "output subscript i appears more than once"),
                                ("ij->ijk", [(2, 3)], "output subscript k does not appear"),
                                ("ijk->i", [(2, 3)], r"the number of subscripts in the equation \(3\)")):
        for lib in (ftorch, torch):
            with pytest.raises(RuntimeError, match=message):
                lib.einsum(eq, *[lib.ones(*s) for s in shapes])


def test_multi_output_views_are_one_node_class() -> None:
    """split/chunk/unbind: every output's grad_fn is the op's class with the input as parent."""
    x = leaf(ftorch, (4, 3))
    for outs, name in ((x.split(2), "SplitBackward0"), (x.chunk(2), "SplitBackward0"),
                       (x.unbind(0), "UnbindBackward0"), (x.split([1, 3]), "SplitWithSizesBackward0")):
        assert {graph_of(o) for o in outs} == {(name, (("AccumulateGrad", 0),))}


MULTI = {
    "split": lambda lib, x: x.split(2),
    "split_sizes": lambda lib, x: x.split([1, 3]),
    "chunk": lambda lib, x: x.chunk(3, 1),
    "unsafe_chunk": lambda lib, x: x.unsafe_chunk(3, 1),
    "unbind": lambda lib, x: x.unbind(0),
    "qr": lambda lib, x: tuple(lib.linalg.qr(x)),
    "svd": lambda lib, x: tuple(lib.linalg.svd(x, full_matrices=False)),
    "aminmax": lambda lib, x: tuple(lib.aminmax(x, dim=0)),
    "max_dim": lambda lib, x: tuple(x.max(1)),  # (values and integer indices: one differentiable output)
}


def _multi_structure(lib, name):
    x = leaf(lib, (4, 3))
    outs = MULTI[name](lib, x)
    nodes = [o.grad_fn for o in outs]
    first = next(n for n in nodes if n is not None)
    return ([None if n is None else (n.name(), n is first) for n in nodes],
            [o.output_nr if o.requires_grad else None for o in outs],
            [graph_of(o * 2) if o.requires_grad else None for o in outs])


@pytest.mark.parametrize("name", list(MULTI))
def test_multi_output_node_identity(name) -> None:
    """One node for the op: every differentiable output's grad_fn is it, output_nr numbers the
    outputs, and a consumer's next_functions names (node, output number), as PyTorch."""
    assert _multi_structure(ftorch, name) == _multi_structure(torch, name)


def _multi_hooks_run(lib):
    """The node's hooks and a tensor hook, for a backward reaching one output, then both."""
    x = lib.tensor(np.arange(12.0).reshape(4, 3), requires_grad=True)
    a, b = x.split(2)
    seen = []

    def sums(gs):
        return [None if g is None else round(g.sum().item(), 6) for g in gs]
    a.grad_fn.register_prehook(lambda go: seen.append(("pre", sums(go))))
    a.grad_fn.register_hook(lambda gi, go: seen.append(("post", sums(gi), sums(go))))
    b.register_hook(lambda g: seen.append(("tensor", g.sum().item())))
    (b * 3).sum().backward(retain_graph=True)
    ((a * 2).sum() + (b * 3).sum()).backward(retain_graph=True)
    # the prehook may replace the gradients of the outputs (here: scale output 0's)
    a.grad_fn.register_prehook(lambda go: (None if go[0] is None else go[0] * 10, go[1]))
    ((a * 2).sum() + (b * 3).sum()).backward()
    return seen, x.grad.numpy().tolist()


def test_multi_output_node_runs_once_with_all_gradients() -> None:
    """The node runs once per backward pass, after all its outputs' gradients arrived: its hooks
    see one gradient per output (None for an output no gradient reached), as PyTorch's."""
    assert _multi_hooks_run(ftorch) == _multi_hooks_run(torch)


def test_multi_output_double_backward_and_edges() -> None:
    """create_graph through a multi-output node, and autograd.grad on one output's
    GradientEdge, as PyTorch."""
    def run(lib):
        x = lib.tensor(np.linspace(-1, 1, 12).reshape(4, 3), requires_grad=True)
        a, b = x.split(2)
        g, = lib.autograd.grad((a * a).sum() + (b * b * b).sum(), x, create_graph=True)
        gg, = lib.autograd.grad(g.sum(), x, retain_graph=True)
        edge = lib.autograd.graph.get_gradient_edge(b)
        ge, = lib.autograd.grad((b * 5 + a).sum(), edge)
        return gg.detach().numpy(), edge.output_nr, edge.node.name(), ge.numpy()
    got, want = run(ftorch), run(torch)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
    assert got[1:3] == want[1:3]
    np.testing.assert_allclose(got[3], want[3], rtol=1e-12)


def test_inplace_write_keeps_what_a_torch_op_read() -> None:
    """y = x * 1; y <- op(y) in place, where op's recorded subgraph reads y (a product): the
    write keeps a copy of y's old contents for the node, and the subgraph is recorded again
    on it, so the gradient is op's at the old y (2 y), not at the new contents."""
    from fgrad.torch._tensor._boundary import call
    from fgrad.torch._tensor.tensor import commit_inplace
    x = leaf(ftorch)
    y = x * 1
    old = y.detach().numpy().copy()
    commit_inplace(y, call("PowBackward0", lambda v: v * v, (y,)))
    np.testing.assert_allclose(y.detach().numpy(), old * old, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * old, rtol=1e-6)
    assert graph_of(y) == ("PowBackward0", (("MulBackward0", 0),))


def _write_after_views(lib):
    """Views of y (select, slice, unbind) feed exp; y is then written in place; the
    gradient and its derivative (create_graph) are taken after the write."""
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    y = x * x
    views = (y[0], y[:, 1], y.unbind(0)[1], y.split(1)[0])
    saved = [sorted(a for a in dir(v.grad_fn) if a.startswith("_saved_") and a in ("_saved_self", "_saved_result"))
             for v in views]
    out = sum(v.exp().sum() for v in views)
    with lib.no_grad():
        y.mul_(10)
    g, = lib.autograd.grad(out, x, create_graph=True)
    gg, = lib.autograd.grad(g.sum(), x)
    return saved, g.detach().numpy(), gg.numpy()


def test_indexing_views_save_no_input_value() -> None:
    """select/slice/unbind/split save sizes and indices, not their input (PyTorch's
    SelectBackward0 keeps _saved_dim, _saved_index, _saved_self_sym_sizes): writing into the
    input afterwards leaves their backward valid, also when it is recorded."""
    got, want = _write_after_views(ftorch), _write_after_views(torch)
    assert got[0] == want[0] == [[]] * 4
    np.testing.assert_allclose(got[1], want[1], rtol=1e-6)
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6)


def _view_write_second_order(lib):
    """Gradients and second derivatives through writes into views (CopySlices running the
    in-place op's own rule), with create_graph."""
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    v = lib.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), requires_grad=True)
    y = x * x
    y[0].mul_(v[1])
    y[:, 2].sin_()
    y[1, :2].pow_(v[0, :2])
    w = lib.tensor(np.arange(6.0).reshape(2, 3))
    gx, gv = lib.autograd.grad((y * w).sum(), (x, v), create_graph=True)
    ggx, ggv = lib.autograd.grad((gx * gx * gx).sum() + (gv * gv).sum(), (x, v))
    return [t.detach().numpy() for t in (gx, gv, ggx, ggv)]


def test_view_writes_second_order_like_pytorch() -> None:
    for got, want in zip(_view_write_second_order(ftorch), _view_write_second_order(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-9)


def test_view_write_to_jaxpr() -> None:
    """to_jaxpr through CopySlices reruns the write (the op's node is inside CopySlices)."""
    x = ftorch.tensor(np.ones((2, 3)), requires_grad=True)
    v = ftorch.tensor(np.full((2, 3), 2.0), requires_grad=True)
    y = x * 1
    y[0].mul_(v[1])
    y[1].zero_()
    closed = ftorch.autograd.graph.to_jaxpr(y.sum(), [x, v])
    out, = closed(np.full((2, 3), 3.0), np.full((2, 3), 0.5))
    assert float(out) == 3 * 3.0 * 0.5


def test_view_write_frees_the_op_node_after_backward() -> None:
    """The in-place op's node inside CopySlices (and what it saved) goes with CopySlices'
    saved values at a backward pass without retain_graph; a second pass then raises."""
    import weakref
    x = leaf(ftorch)
    v = leaf(ftorch, seed=1)
    y = x * 1
    y[0].mul_(v[1])
    op = weakref.ref(y.grad_fn.residuals[0])
    y.sum().backward()
    assert op() is None
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()
