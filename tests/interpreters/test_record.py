"""The one recorder (interpreters/record.py) and recorded graphs as typed Jaxprs.

fgrad.vjp's RecordTrace and the Tensor facade build their nodes with the same function,
`record_primitive`; `graph_to_jaxpr` turns either graph into a ClosedJaxpr
(`vjp_fn.forward_jaxpr()`, `fgrad.torch.autograd.graph.to_jaxpr(tensor)`).
"""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.torch as torch
import fgrad.torch.autograd.graph
import fgrad.numpy as fnp
from fgrad.core import trace as trace_mod
from fgrad.core.avals import ShapedArray
from fgrad.core.ir import typecheck_jaxpr
from fgrad.core.trace import EVAL_TRACE, _state
from fgrad.interpreters import record
from fgrad.interpreters.backward import Leaf, Node, Unsaved, backward_pass


def _check(closed, args, want):
    typecheck_jaxpr(closed)
    got = closed(*args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


# --- fgrad.vjp's recording -------------------------------------------------------------------

def test_vjp_forward_jaxpr_prints_and_replays():
    def f(x, w):
        return fnp.sum(fnp.tanh(x @ w) ** 2)

    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    out, vjp_fn = fgrad.vjp(f, x, w)
    closed = vjp_fn.forward_jaxpr()
    text = str(closed)
    assert text.startswith("{ lambda ; a:f64[3,4] b:f64[4,2]. let")
    assert "tanh" in text and "integer_pow[y=2]" in text and "reduce_sum" in text
    _check(closed, (x, w), [out])
    x2 = rng.standard_normal((3, 4))  # no value-dependent branch: a function of the inputs
    _check(closed, (x2, w), [f(x2, w)])
    # the same equations make_jaxpr stages
    assert [e.primitive for e in closed.eqns] == [e.primitive for e in fgrad.make_jaxpr(f)(x, w).eqns]


def test_vjp_forward_jaxpr_pytrees_constants_and_integer_inputs():
    def f(d, k):
        y = d["x"][k] * 3.0
        return {"y": y, "c": np.ones(2), "k": k}

    x, k = np.arange(4.0), np.array([1, 3])
    out, vjp_fn = fgrad.vjp(f, {"x": x}, k)
    closed = vjp_fn.forward_jaxpr()  # flat inputs (x, k), flat outputs (c, k, y)
    assert len(closed.jaxpr.invars) == 2 and len(closed.jaxpr.outvars) == 3
    _check(closed, (x, k), [np.ones(2), k, x[k] * 3.0])
    assert closed.jaxpr.outvars[1] is closed.jaxpr.invars[1]  # the integer input itself


def test_graph_after_freeing_raises():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        fgrad.torch.autograd.graph.to_jaxpr(y)


# --- the facade's graph ----------------------------------------------------------------------

def test_tensor_graph_to_jaxpr_mlp():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    x = torch.randn(4, 6)
    target = torch.tensor([0, 2, 1, 1])
    loss = torch.nn.functional.cross_entropy(net(x), target)
    closed = fgrad.torch.autograd.graph.to_jaxpr(loss)
    # default inputs: the leaves that require grad, in the graph's topological order (a
    # node's leaf parents after its other parents): layer by layer, each weight (under its
    # TBackward0) before its bias
    params = [net[0].weight, net[0].bias, net[2].weight, net[2].bias]
    assert [a.shape for a in closed.in_avals] == [tuple(p.shape) for p in params]
    assert "addmm" in str(closed) and "tanh" in str(closed)
    _check(closed, [p.detach().numpy() for p in params], [loss.detach().numpy()])
    # x as an input too (it does not require grad: the ops that read it read the input)
    closed = fgrad.torch.autograd.graph.to_jaxpr([loss], [x] + params)
    x2 = torch.randn(4, 6)
    with torch.no_grad():
        want = torch.nn.functional.cross_entropy(net(x2), target)
    _check(closed, [x2.numpy()] + [p.detach().numpy() for p in params], [want.numpy()])
    loss.backward()  # the graph is still usable for its own purpose


def test_tensor_graph_cut_at_a_non_leaf_and_named_nodes():
    a = torch.tensor([0.5, 1.5], requires_grad=True)
    h = a.exp()
    y = (h * h).sum()
    assert type(y.grad_fn).__name__ == "SumBackward0"  # names unchanged by the shared recorder
    assert isinstance(y.grad_fn, Node)
    closed = fgrad.torch.autograd.graph.to_jaxpr(y, h)
    assert "exp" not in str(closed) and not closed.consts  # nothing above the cut
    _check(closed, [np.array([1.0, 2.0], np.float32)], [np.float32(5.0)])
    y.backward()  # frees the saved values of the whole graph, also above the cut
    with pytest.raises(RuntimeError, match="second time"):
        fgrad.torch.autograd.graph.to_jaxpr(y, h)


def test_tensor_graph_inplace_constant_raises():
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    c = torch.tensor([3.0, 4.0])
    y = x * c
    c.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fgrad.torch.autograd.graph.to_jaxpr(y)
    closed = fgrad.torch.autograd.graph.to_jaxpr(y, [x, c])  # c as an input: nothing stale is read
    _check(closed, [np.ones(2, np.float32), np.full(2, 2.0, np.float32)], [np.full(2, 2.0)])


def test_custom_function_graph_replays():
    class Square(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 2 * x * g

    x = torch.tensor([1.0, 3.0], requires_grad=True)
    y = Square.apply(x).sum()
    closed = fgrad.torch.autograd.graph.to_jaxpr(y)
    _check(closed, [np.array([2.0, 2.0], np.float32)], [np.float32(8.0)])


# --- the recorder's policy, shared -------------------------------------------------------------

def test_record_primitive_policy():
    from fgrad.ops.elementwise import gt_p, mul_p
    x = np.ones(2)
    leaf = Leaf()
    out, node = record.record_primitive(EVAL_TRACE, mul_p, [x, x], {}, (leaf, None))
    assert type(node) is Node and node.parents == (leaf, None) and node.primals == (x, x)
    # mul's rule reads its inputs, not its output: only the output's shape and dtype are kept
    assert type(node.out) is Unsaved and node.out == ShapedArray(out.shape, out.dtype)
    assert record.record_primitive(EVAL_TRACE, gt_p, [x, x], {}, (leaf, None))[1] is None  # nondiff
    z = np.ones(2, np.complex128)  # complex outputs are recorded (JAX's convention)
    assert record.record_primitive(EVAL_TRACE, mul_p, [z, z], {}, (leaf, None))[1] is not None
    assert record.record_primitive(EVAL_TRACE, mul_p, [z.astype(np.int64)] * 2, {}, (leaf, None))[1] is None


def test_nodes_keep_only_what_their_rule_reads():
    from fgrad.ops.elementwise import add_p, mul_p, sin_p, tanh_p
    x = np.full(3, 0.5)
    leaf = Leaf()
    h, mul_node = record.record_primitive(EVAL_TRACE, mul_p, [x, x], {}, (leaf, leaf))
    t, tanh_node = record.record_primitive(EVAL_TRACE, tanh_p, [h], {}, (mul_node,))
    assert tanh_node.out is t and type(tanh_node.primals[0]) is Unsaved  # tanh' reads tanh
    s, sin_node = record.record_primitive(EVAL_TRACE, sin_p, [h], {}, (mul_node,))
    assert sin_node.primals[0] is h and type(sin_node.out) is Unsaved    # sin' reads the input
    _, add_node = record.record_primitive(EVAL_TRACE, add_p, [t, s], {}, (tanh_node, sin_node))
    assert all(type(v) is Unsaved for v in (*add_node.primals, add_node.out))
    # a leaf's or a constant's value is kept whatever the rule reads: graph_to_jaxpr replays it
    _, add_leaf = record.record_primitive(EVAL_TRACE, add_p, [x, h], {}, (leaf, None))
    assert add_leaf.primals == (x, h)
    # and the rules run on the stand-ins: d/dh sum(tanh(h) + sin(h))
    ct = np.ones(3)
    cts = backward_pass([(add_node, ct)], add=np.add, capture=(mul_node,))
    np.testing.assert_allclose(cts[id(mul_node)], 1 - np.tanh(h) ** 2 + np.cos(h))
    with pytest.raises(fgrad.core.errors.FgradRuntimeError, match="internal error"):
        np.asarray(add_node.out)  # a stand-in has no contents


# --- the trace plumbing -----------------------------------------------------------------------

def test_trace_run_restores_the_current_trace():
    def boom():
        assert _state.trace is EVAL_TRACE
        raise ValueError("x")

    with trace_mod.new_trace(record.RecordTrace) as t:
        with pytest.raises(ValueError):
            t.parent.run(boom)
        assert _state.trace is t
    assert _state.trace is EVAL_TRACE


def test_dead_helpers_are_gone():
    for name in ("set_trace", "current_trace", "bind_under"):
        assert not hasattr(trace_mod, name), name
