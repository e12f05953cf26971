"""fgrad.torch.fx against torch.fx: the graphs traced from the same module written for each
library (node ops, targets by name, argument structure), generated code, GraphModule outputs,
Interpreter/Transformer, graph editing, replace_pattern, ShapeProp, and the capture's release."""
from __future__ import annotations

import math
import operator

import numpy as np
import pytest

import fgrad.torch as ftorch
import fgrad.torch.fx as ffx
from fgrad.torch import cat as _cat  # (names bound outside the namespaces, for one test)
from fgrad.torch.fx.passes.shape_prop import ShapeProp
from fgrad.torch.nn.functional import softmax as _softmax

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402


def _shape(g):
    """Each node as (op, target name, args/kwargs with nodes as their position)."""
    nodes = list(g.nodes)
    pos = {n: i for i, n in enumerate(nodes)}

    def arg(a):
        if isinstance(a, (tfx.Node, ffx.Node)):
            return ("node", pos[a])
        if isinstance(a, (tuple, list)):
            return ("list" if isinstance(a, list) else "tuple", tuple(arg(e) for e in a))
        if isinstance(a, dict):
            return ("dict", tuple((k, arg(v)) for k, v in a.items()))
        if isinstance(a, (torch.dtype, ftorch.dtype)):
            return ("dtype", str(a))
        return a

    def name(t):
        return t if isinstance(t, str) else t.__name__
    return [(n.op, name(n.target), arg(n.args), arg(n.kwargs)) for n in nodes]


def _models(T):
    F = T.nn.functional

    class MLP(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = T.nn.Linear(4, 8)
            self.act = T.nn.ReLU()
            self.fc2 = T.nn.Linear(8, 3)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class CNN(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = T.nn.Conv2d(1, 4, 3, padding=1)
            self.pool = T.nn.MaxPool2d(2)
            self.head = T.nn.Sequential(T.nn.Linear(4 * 4 * 4, 10), T.nn.Tanh())

        def forward(self, x):
            x = self.pool(F.relu(self.conv(x)))
            x = F.dropout(T.flatten(x, 1), 0.1, training=self.training)
            return F.log_softmax(F.sigmoid(self.head(x)), dim=1), F.max_pool2d(x.view(2, 4, 4, 4), 2)

    class Funcs(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = T.nn.Parameter(T.ones(5))
            self.register_buffer("b", T.zeros(5))

        def forward(self, x, y, scale=2.0):
            a = x * self.w + self.b
            z = T.cat([a.exp(), T.sigmoid(y)], dim=0).view(2, -1)
            s = z.sum(dim=1, keepdim=True) / scale - a.shape[0]
            return T.relu(-s).transpose(0, 1)[0], z.float()

    return MLP(), CNN().eval(), Funcs()


def _inputs(T):
    g = np.random.default_rng(0)
    return [(T.tensor(g.standard_normal((2, 4)).astype(np.float32)),),
            (T.tensor(g.standard_normal((2, 1, 8, 8)).astype(np.float32)),),
            (T.tensor(g.standard_normal(5).astype(np.float32)), T.tensor(g.standard_normal(5).astype(np.float32)))]


@pytest.mark.parametrize("k", [0, 1, 2], ids=["mlp", "cnn", "funcs"])
def test_graph_matches_torch_fx(k):
    tm, fm = _models(torch)[k], _models(ftorch)[k]
    tg, fg = tfx.symbolic_trace(tm), ffx.symbolic_trace(fm)
    assert _shape(fg.graph) == _shape(tg.graph)
    assert [n.name for n in fg.graph.nodes] == [n.name for n in tg.graph.nodes]
    assert str(fg.graph) == str(tg.graph)
    assert fg.code == tg.code
    assert str(fg) == str(tg)
    args = _inputs(ftorch)[k]
    out, ref = fg(*args), fm(*args)
    for o, r in zip(out if isinstance(out, tuple) else (out,), ref if isinstance(ref, tuple) else (ref,)):
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())
    assert type(fg).__name__ == type(fm).__name__


def test_code_and_printout_match_torch_fx():
    """Generated forward and print(graph), character for character, where the graph has no
    torch.nn.functional call (whose keyword defaults torch's Python wrappers add)."""
    tm, fm = _models(torch)[0], _models(ftorch)[0]
    tg, fg = tfx.symbolic_trace(tm), ffx.symbolic_trace(fm)
    assert fg.code == tg.code
    assert str(fg.graph) == str(tg.graph)

    def f(x, y):
        return torch.relu(x) + y[0] * 2, x.shape
    tg = tfx.symbolic_trace(f)
    real = f.__globals__["torch"]
    f.__globals__["torch"] = ftorch  # the same function body, on fgrad.torch
    try:
        fg = ffx.symbolic_trace(f)
    finally:
        f.__globals__["torch"] = real
    assert fg.code == tg.code
    assert str(fg.graph) == str(tg.graph)
    # (torch's print_readable, as a literal: the first call of torch's costs a second)
    assert fg.print_readable(print_output=False) == (
        "class f(torch.nn.Module):\n    def forward(self, x, y):\n"
        "        # No stacktrace found for following nodes\n        relu = torch.relu(x)\n"
        "        getitem = y[0];  y = None\n        mul = getitem * 2;  getitem = None\n"
        "        add = relu + mul;  relu = mul = None\n        getattr_1 = x.shape;  x = None\n"
        "        return (add, getattr_1)\n")


def _lowp(x):
    return x.float().sigmoid() * 2


ffx.wrap("_lowp")
ffx.wrap("len")  # a builtin: shadowed in this module's globals only while tracing


def test_wrap_records_one_call():
    class M(ftorch.nn.Module):
        def forward(self, x):
            return _lowp(x) + 1
    gm = ffx.symbolic_trace(M())
    calls = [n for n in gm.graph.nodes if n.op == "call_function"]
    assert [c.target for c in calls] == [_lowp, operator.add]
    assert 'torch.fx._symbolic_trace.wrap("tests_torch_fx_test_fx__lowp")' in gm.code
    x = ftorch.randn(3)
    np.testing.assert_array_equal(gm(x).numpy(), (_lowp(x) + 1).numpy())
    # outside a trace the name is the plain function again
    assert globals()["_lowp"] is _lowp and _lowp.__name__ == "_lowp" and "len" not in globals()

    class L(ftorch.nn.Module):
        def forward(self, x):
            return x * len(x)
    gm = ffx.symbolic_trace(L())
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == [len, operator.mul]
    assert gm.code.startswith('\ntorch.fx._symbolic_trace.wrap("len")\n\ndef forward(self, x):\n')
    np.testing.assert_array_equal(gm(ftorch.ones(3)).numpy(), [3.0, 3.0, 3.0])


def test_interpreter_and_transformer():
    fm = _models(ftorch)[2]
    gm = ffx.symbolic_trace(fm)
    x, y = _inputs(ftorch)[2]
    ref = gm(x, y)
    seen = []

    class Count(ffx.Interpreter):
        def call_function(self, target, args, kwargs):
            seen.append(target)
            return super().call_function(target, args, kwargs)
    out = Count(gm).run(x, y)
    np.testing.assert_array_equal(out[0].detach().numpy(), ref[0].detach().numpy())
    assert operator.mul in seen and ftorch.cat in seen

    class ReluToSigmoid(ffx.Transformer):
        def call_function(self, target, args, kwargs):
            if target == ftorch.relu:  # (while Proxies live, ftorch.relu is a stand-in equal to it)
                target = ftorch.sigmoid
            return super().call_function(target, args, kwargs)
    same = ffx.Transformer(gm).transform()
    np.testing.assert_array_equal(same(x, y)[0].detach().numpy(), ref[0].detach().numpy())
    assert _shape(same.graph) == _shape(gm.graph)
    swapped = ReluToSigmoid(gm).transform()
    # (the stand-in the Transformer met became the function itself in the new graph)
    assert sum(n.target is ftorch.sigmoid for n in swapped.graph.nodes) == 2
    assert "sigmoid_1 = torch.sigmoid(neg)" in swapped.code
    a = x * fm.w + fm.b
    z = ftorch.cat([a.exp(), ftorch.sigmoid(y)], dim=0).view(2, -1)
    s = z.sum(dim=1, keepdim=True) / 2.0 - 5
    np.testing.assert_allclose(swapped(x, y)[0].detach().numpy(),
                               ftorch.sigmoid(-s).transpose(0, 1)[0].detach().numpy())


def test_replace_pattern_matches_torch():
    def build(T, replace_pattern, trace):
        class M(T.nn.Module):
            def forward(self, x, w1, w2):
                m1 = T.cat([T.neg(w1), w2]).sum()
                m2 = T.cat([T.neg(w1), w2]).sum()
                return x + T.max(m1) + T.max(m2)

        def pattern(a1, a2):
            return T.cat([T.neg(a1), a2]).sum()

        def replacement(w1, w2):
            return T.stack([w1, w2])
        gm = trace(M())
        matches = replace_pattern(gm, pattern, replacement)
        return gm, matches
    tg, tmatches = build(torch, tfx.replace_pattern, tfx.symbolic_trace)
    fg, fmatches = build(ftorch, ffx.replace_pattern, ffx.symbolic_trace)
    assert len(fmatches) == len(tmatches) == 2
    assert fg.code == tg.code
    x = ftorch.ones(3)
    np.testing.assert_array_equal(fg(x, x, x).numpy(), tg(*[torch.ones(3)] * 3).numpy())


def test_graph_editing():
    gm = ffx.symbolic_trace(lambda_free)
    g = gm.graph
    add = next(n for n in g.nodes if n.target is operator.add)
    with pytest.raises(RuntimeError, match="still had 1 users"):
        g.erase_node(add)
    with g.inserting_after(add):
        new = g.call_function(ftorch.bitwise_and, add.args)
    add.replace_all_uses_with(new)
    g.erase_node(add)
    g.lint()
    gm.recompile()
    a, b = ftorch.tensor([3, 5]), ftorch.tensor([6, 3])
    np.testing.assert_array_equal(gm(a, b).numpy(), [2, 1])
    assert "bitwise_and = torch.bitwise_and(x, y)" in gm.code
    dead = g.call_function(ftorch.neg, (next(iter(g.nodes)),))
    g.output_node = None
    out = next(n for n in g.nodes if n.op == "output")
    out.prepend(dead)
    assert g.eliminate_dead_code() and dead not in list(g.nodes)
    # a use before its definition
    first = next(iter(g.nodes))
    late = list(g.nodes)[-2]
    first.prepend(late)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()


def lambda_free(x, y):
    return (x + y) * 1


def test_proxy_errors_and_hand_built_graph():
    g = ffx.Graph()
    x = ffx.Proxy(g.placeholder("x"))
    y = ffx.Proxy(g.placeholder("y"))
    with pytest.raises(ffx.proxy.TraceError, match="cannot be iterated"):
        list(x)
    with pytest.raises(ffx.proxy.TraceError, match="control flow"):
        bool(x > 0)
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        len(x)
    c = ftorch.neg(ftorch.tanh(ftorch.cat([x, y])))
    g.output(c.node)
    gm = ffx.GraphModule(ftorch.nn.Module(), g)
    a = ftorch.tensor([0.5, -1.0])
    np.testing.assert_allclose(gm(a, a).numpy(), -np.tanh([0.5, -1.0, 0.5, -1.0]), rtol=1e-6)


def test_capture_released():
    orig = ftorch.relu
    ffx.symbolic_trace(_models(ftorch)[0])
    assert ftorch.relu is orig and ftorch.nn.functional.relu.__module__ != "fgrad.torch.fx._capture"
    g = ffx.Graph()
    p = ffx.Proxy(g.placeholder("x"))
    assert ftorch.relu is not orig and ftorch.relu == orig and hash(ftorch.relu) == hash(orig)
    assert ftorch.relu(p).node.target is orig
    del p
    assert ftorch.relu is orig


def test_shape_prop_and_custom_tracer():
    fm = _models(ftorch)[1]
    gm = ffx.symbolic_trace(fm)
    ShapeProp(gm).propagate(*_inputs(ftorch)[1])
    metas = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert tuple(metas["conv"].shape) == (2, 4, 8, 8) and tuple(metas["dropout"].shape) == (2, 64)
    assert metas["head_1"].dtype == ftorch.float32 and metas["log_softmax"].stride == (10, 1)

    class Lower(ffx.Tracer):
        def is_leaf_module(self, m, qualname):
            return not isinstance(m, ftorch.nn.ReLU) and super().is_leaf_module(m, qualname)
    g = Lower().trace(_models(ftorch)[0])
    assert [n.op for n in g.nodes] == ["placeholder", "call_module", "call_function", "call_module", "output"]


def test_tensor_constants_and_module_paths():
    """Tensor attributes meeting a Proxy (torch.fx's call_method/get_attr records), and a
    tracer that notes each node's module path (pytorch/examples fx/module_tracer.py)."""
    def build(T):
        class Block(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = T.nn.Linear(2, 2)
                self.c = T.tensor([2.0, 3.0])

            def forward(self, x):
                return self.c * self.lin(x) - x, self.c // x, T.tensor([1.0, 1.0]) @ x

        class Net(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.block = Block()

            def forward(self, x):
                return self.block(x)
        return Net()

    def module_paths(fx_mod, T, net):
        class PathTracer(fx_mod.Tracer):
            current = ""
            origin: dict = {}

            def call_module(self, m, forward, args, kwargs):
                old = self.current
                try:
                    self.current = self.path_of_module(m)
                    return super().call_module(m, forward, args, kwargs)
                finally:
                    self.current = old

            def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None):
                proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr)
                self.origin[proxy.node] = self.current
                return proxy
        tracer = PathTracer()
        g = tracer.trace(net)
        return g, [(n.name, tracer.origin.get(n)) for n in g.nodes]
    tg, tpaths = module_paths(tfx, torch, build(torch))
    net = build(ftorch)
    fg, fpaths = module_paths(ffx, ftorch, net)
    assert fpaths == tpaths
    assert _shape(fg) == _shape(tg)
    gm = ffx.GraphModule(net, fg)
    x = ftorch.tensor([1.5, 2.0])
    for o, r in zip(gm(x), net(x)):
        np.testing.assert_array_equal(o.detach().numpy(), r.detach().numpy())


def test_copy_and_submodule_edits():
    import copy
    fm = _models(ftorch)[0]
    gm = ffx.symbolic_trace(fm)
    x = _inputs(ftorch)[0][0]
    ref = gm(x).detach().numpy()
    gm2 = copy.deepcopy(gm)
    assert gm2.code == gm.code and gm2.fc1 is not gm.fc1
    np.testing.assert_array_equal(gm2(x).detach().numpy(), ref)
    # swap the activation for a new submodule at a nested path
    act = next(n for n in gm2.graph.nodes if n.target == "act")
    assert gm2.add_submodule("extra.gelu", ftorch.nn.GELU())
    act.target = "extra.gelu"
    gm2.recompile()
    gm2.delete_all_unused_submodules()
    assert not hasattr(gm2, "act") and hasattr(gm2.extra, "gelu")
    h = ftorch.nn.functional.gelu(fm.fc1(x))
    np.testing.assert_allclose(gm2(x).detach().numpy(), fm.fc2(h).detach().numpy(), rtol=1e-6)
    np.testing.assert_array_equal(gm(x).detach().numpy(), ref)  # the original is untouched
    assert 'extra_gelu = self.extra.gelu(fc1)' not in gm2.code and "self.extra.gelu(fc1)" in gm2.code


def test_concrete_args_guarded_as_torch_fx():
    def f(x, flag, none):
        return x * 2 if flag else x
    tg = tfx.symbolic_trace(f, concrete_args={"flag": True, "none": None})
    fg = ffx.symbolic_trace(f, concrete_args={"flag": True, "none": None})
    assert _shape(fg.graph) == _shape(tg.graph)
    x = ftorch.ones(2)
    np.testing.assert_array_equal(fg(x, True, None).numpy(), [2.0, 2.0])
    with pytest.raises(AssertionError, match="flag has been specialized to have value True"):
        fg(x, False, None)
    with pytest.raises(AssertionError, match="none has been specialized to have value None"):
        fg(x, True, 1)


def test_reachable_from_plain_import():
    assert ftorch.fx is ffx and ffx.proxy.GraphAppendingTracer is not None
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        ftorch.no_such_name


def test_buffers_and_parameters_read_as_torch_fx():
    """A parameter is one get_attr node per trace; a buffer one per use (torch.fx's rule)."""
    def mk(T):
        class M(T.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("b", T.ones(2))
                self.w = T.nn.Parameter(T.ones(2))

            def forward(self, x):
                return (x + self.b) * self.b + self.w * self.w
        return M()
    assert ffx.symbolic_trace(mk(ftorch)).code == tfx.symbolic_trace(mk(torch)).code


def test_function_calls_code_matches_torch_fx():
    def make(T):
        F = T.nn.functional

        def f(x, y):
            a = T.arctan(x) + T.clamp(y, min=0.0)
            b = T.stack([a, y], 1).sum(dim=0, keepdim=True)
            return F.softmax(b, dim=1), T.where(x > 0, x, y), F.elu(a, 0.5), T.matmul(a, y)
        return f
    tg, fg = tfx.symbolic_trace(make(torch)), ffx.symbolic_trace(make(ftorch))
    assert fg.code == tg.code
    x, y = ftorch.tensor([0.5, -1.0]), ftorch.tensor([2.0, 3.0])
    for o, r in zip(fg(x, y), make(ftorch)(x, y)):
        np.testing.assert_array_equal(o.numpy(), r.numpy())


def test_math_autowrapped_as_torch_fx():
    def make(T):
        def f(x):
            return x / math.sqrt(x.shape[-1]) + math.sqrt(4) + T.tanh(x).size(0)
        return f
    tg, fg = tfx.symbolic_trace(make(torch)), ffx.symbolic_trace(make(ftorch))
    assert fg.code == tg.code and str(fg.graph) == str(tg.graph)
    assert math.sqrt(4.0) == 2.0 and type(math.sqrt).__name__ == "builtin_function_or_method"
    np.testing.assert_allclose(fg(ftorch.ones(4)).numpy(), [6.5] * 4)


def test_replace_pattern_skips_matches_used_outside():
    """A match whose inner value is read elsewhere is left alone (torch.fx's rule)."""
    def build(T, fx):
        class M(T.nn.Module):
            def forward(self, x, y):
                a = x.relu() * 2
                return a.sum() + (y.relu() * 2).sum() + a.mean()

        def pattern(x):
            return (x.relu() * 2).sum()

        def replacement(x):
            return x.sigmoid().sum()
        gm = fx.symbolic_trace(M())
        return gm, fx.replace_pattern(gm, pattern, replacement)
    tg, tm = build(torch, tfx)
    fg, fm = build(ftorch, ffx)
    assert len(fm) == len(tm) == 1
    assert fg.code == tg.code
    fg.graph.lint()


def test_errors_name_the_problem():
    class Star(ftorch.nn.Module):
        def forward(self, *xs):
            return xs[0]
    with pytest.raises(NotImplementedError, match=r"\*args/\*\*kwargs parameters \(xs\)"):
        ffx.symbolic_trace(Star())

    class Branch(ftorch.nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x
    with pytest.raises(ffx.proxy.TraceError, match="control flow"):
        ffx.symbolic_trace(Branch())
    assert ftorch.relu.__class__.__name__ == "function"  # the failed trace let go of the capture

    def inner():
        ffx.wrap("len")
    with pytest.raises(NotImplementedError, match="top level of a module"):
        inner()
    g = ffx.Graph()
    x = g.placeholder("x")
    g.output(g.call_module("lin", (x,)))
    with pytest.raises(RuntimeError, match="referenced target lin but that target was not provided"):
        ffx.GraphModule({}, g)
    gm = ffx.GraphModule({"lin": ftorch.nn.Identity()}, g)
    with pytest.raises(RuntimeError, match="Expected positional argument for parameter x"):
        ffx.Interpreter(gm).run()
    with pytest.raises(ValueError, match="Node op must be one of"):
        g.create_node("call", "lin")


def test_print_tabular(capsys):
    class Lower(ffx.Tracer):
        def is_leaf_module(self, m, qualname):
            return False
    Lower().trace(_models(ftorch)[0]).print_tabular()
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["opcode", "name", "target", "args", "kwargs"]
    assert set(lines[1].replace(" ", "")) == {"-"}
    assert lines[2].split() == ["placeholder", "x", "x", "()", "{}"]
    assert lines[4].startswith("get_attr ") and lines[4].split()[1:3] == ["fc1_bias", "fc1.bias"]
    relu = next(line for line in lines if line.startswith("call_function") and " relu " in line)
    assert "<function relu at " in relu and " (linear,) " in relu and relu.endswith("{'inplace': False}")
    assert lines[-1].split() == ["output", "output", "output", "(linear_1,)", "{}"]


def test_names_bound_from_torch_are_recorded():
    class M(ftorch.nn.Module):
        def forward(self, x):
            return _softmax(_cat([x, x]), dim=0)
    gm = ffx.symbolic_trace(M())
    assert "cat = torch.cat([x, x]);  x = None" in gm.code
    assert "softmax = torch.nn.functional.softmax(cat, dim = 0, _stacklevel = 3, dtype = None)" in gm.code
    assert _cat is ftorch.cat and type(_softmax).__name__ == "function"  # put back after the trace


def test_shape_prop_matches_torch():
    from torch.fx.passes.shape_prop import ShapeProp as TShapeProp
    tm, fm = _models(torch)[1], _models(ftorch)[1]
    tg, fg = tfx.symbolic_trace(tm), ffx.symbolic_trace(fm)
    TShapeProp(tg).propagate(torch.randn(2, 1, 8, 8))
    ShapeProp(fg).propagate(ftorch.randn(2, 1, 8, 8))

    def metas(g):
        out = {}
        for n in g.graph.nodes:
            m = n.meta.get("tensor_meta")
            if m is not None:
                out[n.name] = [(tuple(t.shape), str(t.dtype).split(".")[-1], tuple(t.stride))
                               for t in (m if isinstance(m, tuple) and not hasattr(m, "shape") else (m,))]
        return out
    assert metas(fg) == metas(tg)
