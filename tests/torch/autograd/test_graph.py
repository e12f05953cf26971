"""torch.autograd.graph on fgrad.torch (fgrad/torch/_tensor/graph.py) against real PyTorch:
saved-tensor hooks (pack/unpack calls per op, the saved-tensors tutorial's cells, hooks whose
unpacked values differ), grad_fn as a Node (metadata, pre and post hooks), gradient edges,
version bumps, hooks over several tensors and mutation of saved tensors."""
from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest

import fgrad.torch as ftorch

torch = pytest.importorskip("torch")

A = np.array([0.5, -1.5, 2.0, 0.25])
B = np.array([1.5, 0.5, -0.75, 2.0])

OPS = {
    "mul": lambda a, b: a * b,
    "add": lambda a, b: a + b,
    "sin": lambda a, b: a.sin(),
    "exp": lambda a, b: a.exp(),
    "pow": lambda a, b: a.pow(2),
    "sum": lambda a, b: a.sum(),
    "matmul": lambda a, b: a @ b,
    "relu": lambda a, b: a.relu(),
    "tanh": lambda a, b: a.tanh(),
    "sigmoid": lambda a, b: a.sigmoid(),
    "div": lambda a, b: a / b,
    "chain": lambda a, b: (a * b).sin().sum(),
    # a product keeps an operand only for the other operands' gradients
    "mul_const": lambda a, b: a * b.detach(),
    "matmul_const": lambda a, b: b.detach() @ a,
    "linear_const_input": lambda a, b: b.detach()[None] @ a[:, None] * 1.0,
}


def _hooked(L, op, unpack_scale=1.0):
    """(packs, unpacks, gradients of a and b) with logging hooks around OPS[op]."""
    log = []

    def pack(x):
        log.append("pack")
        return x

    def unpack(x):
        log.append("unpack")
        return x * unpack_scale if unpack_scale != 1.0 else x
    a = L.tensor(A, requires_grad=True)
    b = L.tensor(B, requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(pack, unpack):
        y = OPS[op](a, b)
    packs = len(log)
    y.sum().backward()
    grads = [None if t.grad is None else t.grad.numpy() for t in (a, b)]
    return packs, len(log) - packs, grads


@pytest.mark.parametrize("op", OPS)
def test_pack_and_unpack_calls_per_op_match_torch(op):
    ours, theirs = _hooked(ftorch, op), _hooked(torch, op)
    assert ours[:2] == theirs[:2]
    for g, h in zip(ours[2], theirs[2]):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-12)


@pytest.mark.parametrize("op", ["mul", "sin", "exp", "chain"])  # (div: fgrad keeps other and the result)
def test_backward_reads_the_unpacked_values(op):
    ours, theirs = _hooked(ftorch, op, 3.0), _hooked(torch, op, 3.0)
    for g, h in zip(ours[2], theirs[2]):
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-12)


def test_unpacked_values_reach_a_torch_op_of_several_primitives():
    # softplus is one boundary op recorded as several primitives: backward re-records it on the
    # unpacked input (2 * x here)
    res = {}
    for L in (torch, ftorch):
        x = L.tensor(A, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t * 2):
            y = L.nn.functional.softplus(x, beta=1.0, threshold=20.0)
        y.sum().backward()
        res[L] = x.grad.numpy()
    np.testing.assert_allclose(res[ftorch], 1 / (1 + np.exp(-2 * A)), rtol=1e-12)
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)


def test_saved_tensors_tutorial_cells():
    for L in (torch, ftorch):
        x = L.randn(5, requires_grad=True)
        y = x.pow(2)
        assert x.equal(y.grad_fn._saved_self)
        assert x is y.grad_fn._saved_self
        y = x.exp()
        assert y.equal(y.grad_fn._saved_result)
        assert y is not y.grad_fn._saved_result
        # hooks on one saved tensor
        log = []
        a = L.ones(5, requires_grad=True)
        b = L.ones(5, requires_grad=True) * 2
        y = a * b
        y.grad_fn._raw_saved_self.register_hooks(lambda t: log.append(("pack", t.sum().item())) or t,
                                                 lambda t: log.append(("unpack", t.sum().item())) or t)
        with pytest.raises(RuntimeError):
            y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: t)
        y.sum().backward()
        assert log == [("pack", 5.0), ("unpack", 5.0)], L
        assert a.grad.tolist() == [2.0] * 5
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            y.grad_fn._saved_self
        with pytest.raises(AttributeError):
            x.exp().grad_fn._saved_other


def test_saving_on_disk_as_the_tutorial(tmp_path):
    # the tutorial's pack hook writes each saved tensor to a file, the unpack hook reads it back
    res = {}
    for L in (torch, ftorch):
        paths = []

        def pack(t):
            path = tmp_path / f"{L.__name__}-{len(paths)}.pt"
            L.save(t.detach(), path)
            paths.append(path)
            return path

        def unpack(path):
            return L.load(path)
        x = L.tensor(A, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = (x * x).exp().sum()
        y.backward()
        res[L] = (len(paths), x.grad.numpy())
    assert res[ftorch][0] == res[torch][0]
    np.testing.assert_allclose(res[ftorch][1], res[torch][1], rtol=1e-12)


def test_save_on_cpu_and_disable():
    x = ftorch.tensor(A, requires_grad=True)
    with ftorch.autograd.graph.save_on_cpu(pin_memory=False):
        y = (x.sin() * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.cos(A) * A + np.sin(A), rtol=1e-12)
    for L in (torch, ftorch):
        graph = L.autograd.graph
        with graph.disable_saved_tensors_hooks("no hooks in this region"):
            with pytest.raises(RuntimeError, match="no hooks in this region"):
                with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # (hooks in force: disabling fails)
            with pytest.raises(RuntimeError, match="no hooks here either"):
                with graph.disable_saved_tensors_hooks("no hooks here either"):
                    pass

        @graph.disable_saved_tensors_hooks("not in this function")
        def uses_hooks():
            with graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        with pytest.raises(RuntimeError, match="not in this function"):
            uses_hooks()
        with graph.saved_tensors_hooks(lambda t: t, lambda t: t):  # (enabled again after the call)
            pass


def test_hooks_must_be_callables():
    for L in (torch, ftorch):
        with pytest.raises(TypeError):
            with L.autograd.graph.saved_tensors_hooks(1, lambda t: t):
                pass


def test_unpack_hook_must_return_a_tensor():
    msgs = {}
    for L in (torch, ftorch):
        x = L.tensor(A, requires_grad=True)
        with L.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 1):
            y = x * x
        with pytest.raises(TypeError) as info:
            y.sum().backward()
        msgs[L] = str(info.value).splitlines()[0]
    assert msgs[ftorch] == msgs[torch]


def _node_hooks(L):
    x = L.tensor(A, requires_grad=True)
    y = x * 2
    z = y.sin()
    node = z.grad_fn
    assert isinstance(node, L.autograd.graph.Node) and isinstance(x.exp().grad_fn, L.autograd.graph.Node)
    assert node.name() == "SinBackward0"
    node.metadata["tag"] = 7
    assert z.grad_fn.metadata == {"tag": 7}
    order = []
    node.register_prehook(lambda go: order.append(("pre", go[0].tolist())) or (go[0] * 3,))
    handle = node.register_hook(lambda gi, go: order.append(("post", gi[0].tolist(), go[0].tolist())))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1,) + tuple(gi[1:]))
    z.sum().backward(retain_graph=True)
    first = x.grad.numpy().copy()
    handle.remove()
    x.grad = None
    z.sum().backward()
    return order, first, x.grad.numpy()


def test_node_metadata_and_hooks_match_torch():
    ours, theirs = _node_hooks(ftorch), _node_hooks(torch)
    assert [o[0] for o in ours[0]] == [o[0] for o in theirs[0]] == ["pre", "post", "pre"]
    for o, t in zip(ours[0], theirs[0]):
        for u, v in zip(o[1:], t[1:]):
            np.testing.assert_allclose(u, v, rtol=1e-12)
    for o, t in zip(ours[1:], theirs[1:]):
        np.testing.assert_allclose(o, t, rtol=1e-12)


def test_gradient_edges_and_version_bumps():
    res = {}
    for L in (torch, ftorch):
        g = L.autograd.graph
        x = L.tensor(A, requires_grad=True)
        h = x.exp()
        edge = g.get_gradient_edge(h)
        assert edge.node is h.grad_fn and edge.output_nr == 0
        out = (h * h).sum()
        (gh,) = L.autograd.grad(out, (edge,), retain_graph=True)
        with pytest.raises(RuntimeError):
            g.get_gradient_edge(L.tensor(A))
        y = x * 1
        w = y.sin()
        g.increment_version(y)
        assert y._version == 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            w.sum().backward()
        res[L] = gh.numpy()
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)


def _multi(L, mode):
    calls = []
    a = L.tensor(A, requires_grad=True)
    b = L.tensor(B, requires_grad=True)
    c = L.tensor(B, requires_grad=True)
    handle = L.autograd.graph.register_multi_grad_hook(
        (a, b, c), lambda g: calls.append(g if mode == "any" else [None if t is None else t.sum().item() for t in g]),
        mode=mode)
    (a * b).sum().backward(retain_graph=True)
    (a.exp()).sum().backward()
    handle.remove()
    (b * 3).sum().backward()
    if mode == "any":
        return [c.sum().item() for c in calls]
    return calls


@pytest.mark.parametrize("mode", ["all", "any"])
def test_register_multi_grad_hook_matches_torch(mode):
    ours, theirs = _multi(ftorch, mode), _multi(torch, mode)
    assert len(ours) == len(theirs) == 2
    if mode == "all":
        for o, t in zip(ours, theirs):
            assert [v is None for v in o] == [v is None for v in t]
            np.testing.assert_allclose([v for v in o if v is not None], [v for v in t if v is not None])
    else:
        # (which tensor's gradient comes first is the engine's order; both are a's or b's)
        assert all(any(np.isclose(v, w) for w in (B.sum(), A.sum(), np.exp(A).sum())) for v in ours)
    with pytest.raises(ValueError):
        ftorch.autograd.graph.register_multi_grad_hook([], lambda g: None, mode="some")


# (torch's side in the slow step: its first use imports its dispatch-mode machinery, ~2 s)
@pytest.mark.parametrize("libs", [pytest.param((torch, ftorch), marks=pytest.mark.slow), (ftorch,)],
                         ids=["as_torch", "fgrad"])
def test_allow_mutation_on_saved_tensors(libs):
    res = {torch: 2 * A}
    for L in libs:
        with L.autograd.graph.allow_mutation_on_saved_tensors():
            a = L.tensor(A, requires_grad=True)
            b = a.clone()
            out = (b ** 2).sum()
            b.sin_()
            out.backward()
        res[L] = a.grad.numpy()
        # outside the context the same mutation is refused at backward
        a = L.tensor(A, requires_grad=True)
        b = a.clone()
        out = (b ** 2).sum()
        b.sin_()
        with pytest.raises(RuntimeError, match="inplace"):
            out.backward()
    np.testing.assert_allclose(res[ftorch], 2 * A, rtol=1e-12)
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)


def test_grad_is_grads_batched():
    res = {}
    for L in (torch, ftorch):
        x = L.tensor(A, requires_grad=True)
        y = x.sin() * x
        eye = L.eye(4, dtype=L.float64)
        (jac,) = L.autograd.grad(y, x, eye, is_grads_batched=True)
        res[L] = jac.numpy()
    np.testing.assert_allclose(res[ftorch], res[torch], rtol=1e-12)
    np.testing.assert_allclose(res[ftorch], np.diag(np.cos(A) * A + np.sin(A)), rtol=1e-12)


def test_accumulate_grad_node_hooks():
    logs = {}
    for L in (torch, ftorch):
        log = []
        x = L.tensor(A, requires_grad=True)
        y = (x * 3).sum()
        acc = y.grad_fn.next_functions[0][0].next_functions[0][0]
        assert acc.name() == "torch::autograd::AccumulateGrad"
        acc.register_prehook(lambda go: log.append(("pre", go[0].tolist(), x.grad)))
        acc.register_hook(lambda gi, go: log.append(("post", gi, go[0].tolist(), x.grad.tolist())))
        y.backward()
        logs[L] = log
    assert logs[ftorch] == logs[torch]


def test_a_graph_whose_hooks_return_the_saved_tensors_is_freed():
    x = ftorch.tensor(A, requires_grad=True)
    with ftorch.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x.exp().tanh()
    node = weakref.ref(y.grad_fn)
    del y
    gc.collect()
    assert node() is None


def _function_hooks(L):
    class Scale(L.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return x * w

        @staticmethod
        def backward(ctx, g):
            (w,) = ctx.saved_tensors
            return g * w, None
    log = []
    x = L.tensor(A, requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(lambda t: log.append(("pack", t.tolist())) or t,
                                              lambda t: log.append(("unpack", t.tolist())) or t * 2):
        y = Scale.apply(x, L.tensor(B))
    y.sum().backward()
    return log, x.grad.numpy()


def test_an_autograd_function_packs_what_save_for_backward_got():
    ours, theirs = _function_hooks(ftorch), _function_hooks(torch)
    assert ours[0] == theirs[0] == [("pack", B.tolist()), ("unpack", B.tolist())]
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-12)
    np.testing.assert_allclose(ours[1], 2 * B, rtol=1e-12)


# each operand a distinct constant, so the packed values name the operands
PACK_ORDER_OPS = {
    "mul": lambda a, b, c: a * b,
    "mul_swapped": lambda a, b, c: b * a,
    "matmul": lambda a, b, c: a @ b,
    "mm": lambda a, b, c: a.mm(b),
    "bmm": lambda a, b, c: a[None].bmm(b[None]),
    "linear": lambda a, b, c: a.new_tensor(0.0) + a @ b.t(),
    "pow_tensor": lambda a, b, c: a ** b,
    "atan2": lambda a, b, c: a.atan2(b),
    "maximum": lambda a, b, c: a.maximum(b),
    "xlogy": lambda a, b, c: a.xlogy(b),
    "lerp": lambda a, b, c: a.lerp(b, c),
    "exp": lambda a, b, c: a.exp(),
}


def _pack_order(L, op):
    log = []
    a = L.full((2, 2), 3.0, requires_grad=True)
    b = L.full((2, 2), 5.0, requires_grad=True)
    c = L.full((2, 2), 0.25, requires_grad=True)
    with L.autograd.graph.saved_tensors_hooks(lambda t: log.append(round(float(t.detach().numpy().flat[0]), 4)) or t,
                                              lambda t: t):
        PACK_ORDER_OPS[op](a, b, c)
    return log


@pytest.mark.parametrize("op", PACK_ORDER_OPS)
def test_pack_hooks_run_in_torch_order(op):
    # PyTorch packs a node's inputs sorted by argument name (mul: other, self; mm: mat2, self;
    # lerp: end, self, weight), then its result
    assert _pack_order(ftorch, op) == _pack_order(torch, op)


def _saved_histories(L, hooked):
    a = L.tensor(A, requires_grad=True)
    b = L.tensor(B, requires_grad=True) * 2
    c = L.tensor(B)
    ctx = L.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t) if hooked else None
    if ctx is not None:
        ctx.__enter__()
    y, z, w = a * b, a.exp(), b * c
    if ctx is not None:
        ctx.__exit__(None, None, None)
    saved = [y.grad_fn._saved_self, y.grad_fn._saved_other, z.grad_fn._saved_result, w.grad_fn._saved_other]
    out = [(t.requires_grad, t.is_leaf, type(t.grad_fn).__name__ if t.grad_fn is not None else None) for t in saved]
    (saved[0] * 3).sum().backward()
    return out, a.grad.numpy(), saved[0].grad, saved[0] is a


@pytest.mark.parametrize("hooked", [False, True])
def test_saved_values_keep_the_history_of_what_was_saved(hooked):
    # a leaf input's gradient lands in that leaf (through hooks: a new Tensor sharing its
    # AccumulateGrad), a non-leaf input keeps its grad_fn, the result gets the node itself
    ours, theirs = _saved_histories(ftorch, hooked), _saved_histories(torch, hooked)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])
    assert (ours[2] is None) == (theirs[2] is None)
    assert ours[3] == theirs[3]


def test_backward_inputs_non_leaf_that_retains_grad_accumulates_once() -> None:
    """backward(inputs=[..., a]) with a non-leaf `a` that also retains its grad: a.grad gets
    the gradient once, as PyTorch's (the retain_grad hook and the inputs are one target)."""
    def run(lib):
        x = lib.tensor(np.ones(3), requires_grad=True)
        a = x * 2
        a.retain_grad()
        first, second = a.split([1, 2])
        second.retain_grad()
        ((a * 3).sum() + (second * 5).sum()).backward(inputs=[x, a, second], retain_graph=True)
        return a.grad.numpy().tolist(), second.grad.numpy().tolist(), x.grad.numpy().tolist()
    assert run(ftorch) == run(torch)


def _inplace_under_saved_hooks(lib):
    x = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
    v = lib.tensor(np.linspace(0.5, 2, 6).reshape(2, 3), requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        y = x * 1
        y.mul_(v)          # mul_ reads self's old contents for v's gradient
        z = x * 1
        z[0].mul_(v[1])    # the same through a view (CopySlices)
        z[1].sin_()
    (y.sum() + z.sum()).backward()
    return x.grad.numpy(), v.grad.numpy()


def test_inplace_op_under_saved_tensor_hooks_reads_old_contents() -> None:
    """An in-place op inside saved_tensors_hooks: its backward reads self as it was before the
    write (PyTorch's original_self), not the overwritten tensor."""
    for got, want in zip(_inplace_under_saved_hooks(ftorch), _inplace_under_saved_hooks(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-12)


def _function_two_outputs(lib):
    class Two(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * 2, x * x

        @staticmethod
        def backward(ctx, ga, gb):
            x, = ctx.saved_tensors
            return (0 if ga is None else ga * 2) + (0 if gb is None else gb * 2 * x)
    x = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
    a, b = Two.apply(x)
    node = a.grad_fn
    (b * 3).sum().backward()
    return (node.name(), node is b.grad_fn, a.output_nr, b.output_nr,
            [(n.name() if n else None, k) for n, k in node.next_functions], x.grad.numpy().tolist())


def test_function_with_two_outputs_is_one_node() -> None:
    """An autograd.Function returning two Tensors: one node of the Function's name whose
    outputs are 0 and 1 and whose parents are its inputs' nodes, as PyTorch's."""
    assert _function_two_outputs(ftorch) == _function_two_outputs(torch)


def _function_dirty_two_outputs(lib):
    class Dirty(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            x.mul_(2)
            return x, y * 1

        @staticmethod
        def backward(ctx, gx, gy):
            return gx * 2, gy
    x = lib.tensor(np.linspace(-1, 1, 3), requires_grad=True)
    z = lib.ones(3, requires_grad=True)
    y = x * 1
    p, q = Dirty.apply(y, z * 1)
    (p.sum() + q.sum()).backward()
    return p is y, x.grad.numpy().tolist(), z.grad.numpy().tolist()


def test_function_marking_an_input_dirty_backward_runs() -> None:
    """mark_dirty: the input written in place is not a saved value of the Function's node
    (its backward reads ctx.saved_tensors), so backward runs, as in PyTorch (it raised the
    in-place version error)."""
    assert _function_dirty_two_outputs(ftorch) == _function_dirty_two_outputs(torch)
