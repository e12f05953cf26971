"""Graph parity with torch.fx on more module shapes: control flow on module attributes,
concrete_args on a Module, `wrap`ped functions, leaf modules chosen by a Tracer, containers
iterated in forward, keyword calls and method chains. Each module is written once for both
libraries; the traced graphs must agree node by node (op, target, args, kwargs), in node
names, and in generated code."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch
import fgrad.torch.fx as ffx

from .test_fx import _shape

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402


def _scaled_sum(x, k):
    """A function fx records as one call (wrapped below for each library)."""
    return (x * k).sum(dim=-1) if k > 0 else x.sum(dim=-1)


ffx.wrap("_scaled_sum")
tfx.wrap("_scaled_sum")


def _modules(T):
    F = T.nn.functional

    class Switch(T.nn.Module):
        """Python control flow on attributes: resolved at trace time, one branch recorded."""
        def __init__(self, residual, act):
            super().__init__()
            self.residual, self.act = residual, act
            self.lin = T.nn.Linear(4, 4)

        def forward(self, x):
            y = self.lin(x)
            if self.act == "gelu":
                y = F.gelu(y)
            elif self.act == "tanh":
                y = T.tanh(y)
            if self.residual:
                y = y + x
            return F.dropout(y, p=0.5, training=self.training)

    class Flagged(T.nn.Module):
        """A forward parameter that is a Python flag: traced with concrete_args."""
        def __init__(self):
            super().__init__()
            self.a, self.b = T.nn.Linear(3, 3), T.nn.Linear(3, 3)

        def forward(self, x, use_b=False, scale=None):
            y = self.b(x) if use_b else self.a(x)
            return y * scale if scale is not None else y

    class Wrapped(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 2)

        def forward(self, x):
            return _scaled_sum(self.lin(x), 3) + _scaled_sum(x, 0).unsqueeze(-1)

    class Block(T.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = T.nn.Conv2d(2, 2, 3, padding=1)
            self.norm = T.nn.BatchNorm2d(2)

        def forward(self, x):
            return F.relu(self.norm(self.conv(x))) + x

    class Net(T.nn.Module):
        """Containers iterated in forward, custom blocks (leaves for one tracer), keyword calls."""
        def __init__(self):
            super().__init__()
            self.blocks = T.nn.ModuleList([Block(), Block()])
            self.heads = T.nn.ModuleDict({"a": T.nn.Linear(2, 3), "b": T.nn.Linear(2, 3)})

        def forward(self, x):
            for blk in self.blocks:
                x = blk(x)
            h = x.mean(dim=(2, 3))
            outs = [head(h) for head in self.heads.values()]
            return T.stack(outs, dim=0).softmax(dim=-1).permute(1, 0, 2).reshape(h.shape[0], -1)

    return Switch, Flagged, Wrapped, Block, Net


CASES = [
    ("switch_gelu_residual", lambda m: m[0](True, "gelu").train(), {}),
    ("switch_tanh_eval", lambda m: m[0](False, "tanh").eval(), {}),
    ("switch_plain", lambda m: m[0](False, "none"), {}),
    ("flagged_b", lambda m: m[1](), {"use_b": True}),
    ("flagged_a_scale_none", lambda m: m[1](), {"use_b": False, "scale": None}),
    ("wrapped", lambda m: m[2](), None),
    ("net", lambda m: m[4]().eval(), None),
]


@pytest.mark.parametrize("name, build, concrete", CASES, ids=[c[0] for c in CASES])
def test_graphs_match_torch_fx(name, build, concrete):
    tm, fm = build(_modules(torch)), build(_modules(ftorch))
    fm.load_state_dict({k: ftorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    tg = tfx.symbolic_trace(tm, concrete_args=concrete)
    fg = ffx.symbolic_trace(fm, concrete_args=concrete)
    assert _shape(fg.graph) == _shape(tg.graph)
    assert [n.name for n in fg.graph.nodes] == [n.name for n in tg.graph.nodes]
    # the documented differences (fgrad.torch.fx's package doc): F.gelu and F.linear are Python
    # functions printed under their module, and a guard calls fx's own _assert
    assert fg.code == tg.code.replace("torch._C._nn.", "torch.nn.functional.").replace(
        "torch._assert(", "torch.fx._symbolic_trace._assert(")


def test_concrete_args_keep_defaults_in_code():
    def f(x, flag, n=None, k=3):
        return x if flag else x * 2
    concrete = {"flag": True, "n": None, "k": 3}
    tg, fg = tfx.symbolic_trace(f, concrete_args=concrete), ffx.symbolic_trace(f, concrete_args=concrete)
    assert _shape(fg.graph) == _shape(tg.graph)
    assert "def forward(self, x, flag_1, n_1 = None, k_1 = 3):" in fg.code
    assert fg(ftorch.ones(2), True).tolist() == [1.0, 1.0]


def _leaf_tracer(lib, leaf_cls_name):
    class LeafTracer(lib.fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return type(m).__name__ == leaf_cls_name or super().is_leaf_module(m, qualname)
    return LeafTracer


@pytest.mark.parametrize("leaf", ["Block", "Linear"])
def test_leaf_modules_chosen_by_a_tracer_match_torch_fx(leaf):
    # a custom Block as a leaf: one call_module per block; Linear not a leaf: its functional
    # body (get_attr of weight and bias, F.linear) is traced inline
    Net = _modules(torch)[4], _modules(ftorch)[4]
    tm, fm = Net[0]().eval(), Net[1]().eval()

    class TLeaf(_leaf_tracer(torch, leaf)):
        pass

    class FLeaf(_leaf_tracer(ftorch, leaf)):
        pass
    if leaf == "Linear":  # Linear is a leaf by default: make it not one
        TLeaf.is_leaf_module = lambda self, m, q: type(m).__name__ not in ("Linear",) and \
            tfx.Tracer.is_leaf_module(self, m, q)
        FLeaf.is_leaf_module = lambda self, m, q: type(m).__name__ not in ("Linear",) and \
            ffx.Tracer.is_leaf_module(self, m, q)
    tg, fg = TLeaf().trace(tm), FLeaf().trace(fm)
    assert _shape(fg) == _shape(tg)  # (str differs: F.linear prints as torch._C._nn.linear there)
    ops = [n.op for n in fg.nodes]
    if leaf == "Block":
        assert [n.target for n in fg.nodes if n.op == "call_module"][:2] == ["blocks.0", "blocks.1"]
    else:
        assert "get_attr" in ops


def test_wrapped_function_runs_and_matches_torch():
    tm, fm = _modules(torch)[2](), _modules(ftorch)[2]()
    fm.load_state_dict({k: ftorch.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    fg = ffx.symbolic_trace(fm)
    calls = [n for n in fg.graph.nodes if n.op == "call_function" and n.target is _scaled_sum]
    assert [n.args[1] for n in calls] == [3, 0]
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(fg(ftorch.tensor(x)).detach().numpy(), tm(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)


def test_graph_module_converts_to_fgrads_ir():
    # beyond torch.fx: the program fgrad.torch.compile runs, parameters and buffers as inputs
    ftorch.manual_seed(0)
    m = ftorch.nn.Sequential(ftorch.nn.Linear(3, 4), ftorch.nn.BatchNorm1d(4), ftorch.nn.ReLU()).eval()
    gm = ffx.symbolic_trace(m)
    x = ftorch.randn(5, 3)
    closed = gm.to_jaxpr(x)
    names = sorted(k for k, _ in m.named_parameters()) + sorted(k for k, _ in m.named_buffers())
    assert len(closed.jaxpr.invars) == len(names) + 1
    assert [str(v.aval.shape) for v in closed.jaxpr.invars] == [
        str(tuple(dict([*m.named_parameters(), *m.named_buffers()])[k].shape)) for k in names] + ["(5, 3)"]
    assert [e.primitive.name for e in closed.jaxpr.eqns][-1] == "relu"
    values = [dict([*m.named_parameters(), *m.named_buffers()])[k].detach().numpy() for k in names]
    (out,) = closed(*values, x.numpy())
    np.testing.assert_array_equal(np.asarray(out), gm(x).detach().numpy())
