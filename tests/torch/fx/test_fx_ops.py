"""torch.fx graphs whose call_function targets are torch.ops ops (aten overloads and packets,
torch.ops.profiler's range ops) against torch.fx: the same nodes (op, target, args, kwargs), node
names and generated code; the graphs run to torch's values, through GraphModule, Interpreter
and Transformer; a Tracer that overrides `create_proxy`-based recording (pytorch/examples'
profiling tracer) records the same nodes."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad.torch as ftorch
import fgrad.torch.fx as ffx

from .test_fx import _shape

torch = pytest.importorskip("torch")
import torch.fx as tfx  # noqa: E402


def _modules(T):
    aten = T.ops.aten

    class Overloads(T.nn.Module):
        """Overloads by name, a packet, keyword arguments and list arguments."""
        def forward(self, x, y):
            a = aten.add.Tensor(x, y, alpha=2)
            b = aten.relu(a)
            c = aten.mm.default(b, aten.t.default(y))
            d = aten.sum.dim_IntList(c, [1], True)
            e = aten.mul.Scalar(d, 0.5)
            return aten.cat.default([e, aten.neg.default(e)], 1)

    class Mixed(T.nn.Module):
        """aten ops beside torch functions, methods and a submodule."""
        def __init__(self):
            super().__init__()
            self.lin = T.nn.Linear(4, 3)

        def forward(self, x):
            h = self.lin(x)
            h = aten._softmax.default(h, -1, False)
            h = T.tanh(h).permute(1, 0)
            h = aten.transpose.int(h, 0, 1)
            return aten.view.default(aten.clone.default(h), [-1])

    class InPlace(T.nn.Module):
        """In-place overloads and a get_attr constant as an argument."""
        def __init__(self):
            super().__init__()
            self.register_buffer("shift", T.ones(4))

        def forward(self, x):
            y = aten.clone.default(x)
            aten.add_.Tensor(y, self.shift)
            return aten.maximum.default(y, aten.neg.default(x))

    return {"overloads": (Overloads, 2), "mixed": (Mixed, 1), "in_place": (InPlace, 1)}


_X = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)


def _build(lib, name):
    cls, n_in = _modules(lib)[name]
    lib.manual_seed(0)
    return cls(), [lib.tensor(_X) for _ in range(n_in)]


@pytest.mark.parametrize("name", ["overloads", "mixed", "in_place"])
def test_aten_targets_match_torch_fx(name):
    fm, fx_in = _build(ftorch, name)
    tm, tx_in = _build(torch, name)
    fg, tg = ffx.symbolic_trace(fm), tfx.symbolic_trace(tm)
    assert _shape(fg.graph) == _shape(tg.graph)
    ops = (ftorch.ops.OpOverload, ftorch.ops.OpOverloadPacket, torch._ops.OpOverload, torch._ops.OpOverloadPacket)
    assert [str(n.target) for n in fg.graph.nodes if isinstance(n.target, ops)] == [
        str(n.target) for n in tg.graph.nodes if isinstance(n.target, ops)]
    assert [n.name for n in fg.graph.nodes] == [n.name for n in tg.graph.nodes]
    assert fg.code == tg.code.replace("torch._C._nn.", "torch.nn.functional.")
    assert str(fg.graph) == str(tg.graph).replace("torch._C._nn.", "torch.nn.functional.")
    if name == "mixed":  # (the Linear's weights: the same seed draws other numbers in each library)
        fm.lin.weight.data = ftorch.tensor(tm.lin.weight.detach().numpy())
        fm.lin.bias.data = ftorch.tensor(tm.lin.bias.detach().numpy())
        fg = ffx.symbolic_trace(fm)
    ref = tg(*tx_in).detach().numpy()
    for out in (fg(*fx_in), ffx.Interpreter(fg).run(*fx_in), ffx.Transformer(fg).transform()(*fx_in)):
        np.testing.assert_allclose(out.detach().numpy(), ref, rtol=1e-5, atol=1e-6)


def test_aten_target_identity_survives_graph_edits():
    g = ffx.symbolic_trace(_build(ftorch, "overloads")[0])
    adds = [n for n in g.graph.nodes if n.target is ftorch.ops.aten.add.Tensor]
    assert len(adds) == 1
    with g.graph.inserting_after(adds[0]):
        new = g.graph.call_function(ftorch.ops.aten.sub.Tensor, adds[0].args, adds[0].kwargs)
    adds[0].replace_all_uses_with(new)
    g.graph.erase_node(adds[0])
    g.recompile()
    assert "torch.ops.aten.sub.Tensor(x, y, alpha = 2)" in g.code
    x = ftorch.tensor(_X)
    expected = ftorch.relu(x - 2 * x)
    out = g(x, x)
    assert out.shape == (3, 2)
    np.testing.assert_allclose(out[:, :1].numpy(), ((expected @ x.t()).sum(1, keepdim=True) * 0.5).numpy(), rtol=1e-6)


def _profiler_tracer(lib):
    """pytorch/examples' fx/profiling_tracer.py's Tracer: record_function blocks become
    torch.ops.profiler enter/exit nodes."""
    class ProfilerTracer(lib.fx.Tracer):
        def trace(self, root, concrete_args=None):
            rf = lib.autograd.profiler.record_function
            orig_enter, orig_exit = rf.__enter__, rf.__exit__

            def enter(_self):
                handle = self.create_proxy(kind="call_function", target=lib.ops.profiler._record_function_enter,
                                           args=(_self.name,), kwargs={})
                _self._fx_profiler_ctx = handle
                return handle

            def exit_(_self, *exc):
                lib.ops.profiler._record_function_exit(_self._fx_profiler_ctx)
                _self._fx_profiler_ctx = None

            rf.__enter__, rf.__exit__ = enter, exit_
            try:
                return super().trace(root, concrete_args)
            finally:
                rf.__enter__, rf.__exit__ = orig_enter, orig_exit
    return ProfilerTracer


def _ranged(lib):
    class Ranged(lib.nn.Module):
        def forward(self, x):
            with lib.profiler.record_function("block"):
                y = lib.relu(x)
            return y * 2
    return Ranged()


def test_profiler_tracer_records_range_nodes_as_torch_fx_does():
    fgr = _profiler_tracer(ftorch)().trace(_ranged(ftorch))
    tgr = _profiler_tracer(torch)().trace(_ranged(torch))
    assert _shape(fgr) == _shape(tgr)
    assert str(fgr) == str(tgr)
    fgm = ffx.GraphModule(ffx.symbolic_trace(_ranged(ftorch)), fgr)
    tgm = tfx.GraphModule(tfx.symbolic_trace(_ranged(torch)), tgr)
    assert fgm.code == tgm.code
    x = ftorch.tensor(_X)
    with ftorch.autograd.profiler.profile() as prof:
        out = fgm(x)
    np.testing.assert_allclose(out.numpy(), np.maximum(_X, 0) * 2)
    block = next(e for e in prof.events() if e.name == "block")
    assert [c.name for c in block.cpu_children] == ["aten::empty", "aten::relu"]
    assert [e.key for e in prof.key_averages()] == ["block", "aten::empty", "aten::relu", "aten::mul"]


def test_dead_code_elimination_keeps_torchs_impure_ops():
    # PyTorch's rule: ops that mutate an argument or draw random numbers, and the profiler's
    # range ops, stay although nothing reads them
    import torch._library.utils as tlu
    from fgrad.torch.ops import ATEN, PROFILER
    for ns, table in (("aten", ATEN), ("profiler", PROFILER)):
        for op, (overloads, _) in table.items():
            fp, tp = getattr(getattr(ftorch.ops, ns), op), getattr(getattr(torch.ops, ns), op)
            assert fp._fx_impure == tlu.is_impure(tp), (ns, op)
            for ov in overloads:
                assert getattr(fp, ov)._fx_impure == tlu.is_impure(getattr(tp, ov)), (ns, op, ov)

    def build(lib, fx):
        g = fx.Graph()
        x = g.placeholder("x")
        g.call_function(lib.ops.aten.add_.Tensor, (x, x))
        g.call_function(lib.ops.aten.add.Tensor, (x, x))
        g.call_function(lib.ops.aten.relu, (x,))
        h = g.call_function(lib.ops.profiler._record_function_enter, ("r",))
        g.call_function(lib.ops.profiler._record_function_exit, (h,))
        g.output(x)
        g.eliminate_dead_code()
        return [n.name for n in g.nodes]
    assert build(ftorch, ffx) == build(torch, tfx) == [
        "x", "add__tensor", "_record_function_enter", "_record_function_exit", "output"]
