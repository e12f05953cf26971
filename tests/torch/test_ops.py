"""torch.ops on fgrad.torch against PyTorch 2.13: the aten table's names and overloads are
torch's, the ops compute torch's values, packets and overloads print and compare as torch's, and
torch.ops.profiler's enter/exit ops open and close profiler ranges."""
from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import fgrad.torch as ftorch
from fgrad.torch import ops as fops
from fgrad.torch.utils import checkpoint as fcp

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(0)
A = _RNG.standard_normal((3, 4)).astype(np.float32)
B = _RNG.standard_normal((4, 5)).astype(np.float32)
C = _RNG.standard_normal((3, 4)).astype(np.float32)
BIAS = _RNG.standard_normal((5,)).astype(np.float32)
IMG = _RNG.standard_normal((1, 2, 5, 5)).astype(np.float32)
KER = _RNG.standard_normal((3, 2, 3, 3)).astype(np.float32)
IDX = np.array([[0, 2], [1, 0]], dtype=np.int64)

# (op path under torch.ops.aten, arguments: arrays become each library's tensors)
CASES = [
    ("add.Tensor", (A, C)), ("add.Tensor", (A, C), {"alpha": 2}), ("add.Scalar", (A, 1.5)),
    ("sub.Tensor", (A, C)), ("mul.Tensor", (A, C)), ("mul.Scalar", (A, 3.0)), ("div.Tensor", (A, C)),
    ("div.Tensor_mode", (A, C), {"rounding_mode": "floor"}), ("pow.Tensor_Scalar", (A, 2)),
    ("neg.default", (A,)), ("relu.default", (A,)), ("tanh.default", (A,)), ("sigmoid.default", (A,)),
    ("exp.default", (A,)), ("abs.default", (A,)), ("maximum.default", (A, C)), ("minimum.default", (A, C)),
    ("clamp_min.default", (A, 0.0)), ("clamp.default", (A, -0.5, 0.5)), ("gelu.default", (A,)),
    ("gelu.default", (A,), {"approximate": "tanh"}), ("silu.default", (A,)),
    ("mm.default", (A, B)), ("addmm.default", (BIAS, A, B)), ("t.default", (A,)),
    ("transpose.int", (A, 0, 1)), ("permute.default", (A, [1, 0])), ("view.default", (A, [4, 3])),
    ("_unsafe_view.default", (A, [2, 6])), ("reshape.default", (A, [12])), ("expand.default", (BIAS, [2, 5])),
    ("clone.default", (A,)), ("sum.default", (A,)), ("sum.dim_IntList", (A, [1])),
    ("sum.dim_IntList", (A, [0], True)), ("mean.dim", (A, [1])), ("amax.default", (A, [1])),
    ("_softmax.default", (A, 1, False)), ("_log_softmax.default", (A, 0, False)), ("softmax.int", (A, 1)),
    ("cat.default", ([A, C], 1)), ("stack.default", ([A, C],)), ("unsqueeze.default", (A, 0)),
    ("squeeze.dim", (A[None], 0)), ("select.int", (A, 1, 2)), ("flatten.using_ints", (IMG, 1)),
    ("embedding.default", (B, IDX)), ("convolution.default", (IMG, KER, None, [1, 1], [1, 1], [1, 1], False,
                                                               [0, 0], 1)),
    ("linear.default", (A, B.T.copy(), BIAS)), ("where.self", (A > 0, A, C)),
    ("tanh_backward.default", (A, np.tanh(C))), ("sigmoid_backward.default", (A, 1 / (1 + np.exp(-C)))),
    ("threshold_backward.default", (A, C, 0.0)), ("_to_copy.default", (A,), {"dtype": "float64"}),
    ("native_layer_norm.default", (A, [4], None, None, 1e-5)),
]

P = _RNG.uniform(0.1, 0.9, (3, 4)).astype(np.float32)  # (inside every unary op's domain)
MASK = A > 0
CASES += [(f"{name}.default", (P,)) for name in (
    "sin", "cos", "tan", "sqrt", "rsqrt", "reciprocal", "erf", "floor", "ceil", "sign", "exp2", "log", "log2",
    "log1p", "expm1", "logical_not", "isnan", "erfinv", "trunc", "atan", "asin", "acos", "sinh", "cosh", "round",
    "contiguous", "zeros_like", "ones_like", "relu_")]
CASES += [
    ("bmm.default", (A[None], B[None])), ("baddbmm.default", (C[:, :1][None], A[None], B[None, :, :1])),
    ("matmul.default", (A, B)), ("cumsum.default", (A, 1)), ("sort.default", (A, 1)), ("topk.default", (A, 2)),
    ("gather.default", (A, 1, IDX[:, :1].repeat(2, 0)[:3])), ("index_select.default", (A, 0, IDX[0])),
    ("full_like.default", (A, 2.5)), ("logsumexp.default", (A, [1])), ("amin.default", (A, [0])),
    ("argmax.default", (A, 1)), ("argmin.default", (A,)), ("chunk.default", (A, 2, 1)),
    ("clamp_max.default", (A, 0.1)), ("clamp.Tensor", (A, C)), ("remainder.Tensor", (A, C)),
    ("remainder.Scalar", (A, 0.7)), ("pow.Tensor_Tensor", (P, C)), ("pow.Scalar", (2.0, A)),
    ("eq.Tensor", (A, A)), ("ne.Scalar", (A, 0.0)), ("lt.Tensor", (A, C)), ("le.Scalar", (A, 0.0)),
    ("gt.Tensor", (A, C)), ("ge.Scalar", (A, 0.1)), ("masked_fill.Scalar", (A, MASK, 0.0)),
    ("max.default", (A,)), ("max.dim", (A, 1)), ("max.other", (A, C)), ("min.dim", (A, 0, True)),
    ("squeeze.default", (A[None],)), ("squeeze.dims", (A[None, :, None], [0, 2])), ("split.Tensor", (A, 2, 1)),
    ("split_with_sizes.default", (A, [1, 3], 1)), ("unbind.int", (A, 1)), ("log_softmax.int", (A, 1)),
    ("hardtanh.default", (A, -0.5, 0.5)), ("leaky_relu.default", (A, 0.2)), ("layer_norm.default", (A, [4])),
    ("where.ScalarOther", (MASK, A, 0.0)), ("where.ScalarSelf", (MASK, 1.0, A)), ("where.Scalar", (MASK, 1.0, 0.0)),
    ("sub.Scalar", (A, 1.0)), ("div.Scalar", (A, 4.0)), ("div.Scalar_mode", (A, 0.5), {"rounding_mode": "trunc"}),
    ("zeros.default", ([2, 3],)), ("ones.default", ([2],)), ("full.default", ([2, 2], 1.5)),
    ("arange.default", (5,)), ("arange.start", (1, 4)), ("arange.start_step", (0, 1, 0.25)),
    ("dropout.default", (A, 0.5, False)), ("empty.memory_format", ([0],)), ("detach.default", (A,)),
    ("add_.Tensor", (A, C)), ("add_.Scalar", (A, 1.0)), ("sub_.Tensor", (A, C)), ("mul_.Tensor", (A, C)),
    ("mul_.Scalar", (A, 2.0)), ("div_.Tensor", (A, C)), ("div_.Scalar", (A, 2.0)), ("copy_.default", (A, C)),
    ("fill_.Scalar", (A, 3.0)), ("zero_.default", (A,)), ("sub_.Scalar", (A, 2.0)),
    ("permute_copy.default", (A, [1, 0])), ("view_copy.default", (A, [2, 6])), ("expand_copy.default", (BIAS, [2, 5])),
    ("native_batch_norm.default", (IMG, KER[:2, 0, 0, 0], KER[:2, 1, 0, 0], IMG[0, :, 0, 0], P[0, :2], True, 0.1,
                                   1e-5)),
    ("_native_batch_norm_legit.default", (IMG, None, None, IMG[0, :, 0, 0], P[0, :2], False, 0.1, 1e-5)),
    ("_native_batch_norm_legit.no_stats", (IMG, KER[:2, 0, 0, 0], None, True, 0.1, 1e-5)),
]


def _op(lib, path):
    packet, overload = path.split(".")
    return getattr(getattr(lib.ops.aten, packet), overload)


def _conv(lib, a):
    if isinstance(a, np.ndarray):
        return lib.tensor(a.copy())
    if isinstance(a, (list, tuple)) and a and isinstance(a[0], np.ndarray):
        return [lib.tensor(e) for e in a]
    if a == "float64":
        return lib.float64
    return a


def _np(out):
    if isinstance(out, (tuple, list)):
        return [_np(o) for o in out]
    return out.detach().numpy()


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_aten_ops_compute_torchs_values(case):
    path, args, kwargs = case if len(case) == 3 else (*case, {})
    got = _op(ftorch, path)(*[_conv(ftorch, a) for a in args], **{k: _conv(ftorch, v) for k, v in kwargs.items()})
    ref = _op(torch, path)(*[_conv(torch, a) for a in args], **{k: _conv(torch, v) for k, v in kwargs.items()})
    g, r = _np(got), _np(ref)
    if isinstance(r, list):
        for a, b in zip(g, r):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    else:
        assert g.dtype == r.dtype and g.shape == r.shape
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-6)


def test_table_names_and_overloads_are_torchs():
    for name, (overloads, _) in fops.ATEN.items():
        ref = getattr(torch.ops.aten, name)
        assert set(overloads) <= set(ref.overloads()), name
        assert getattr(ftorch.ops.aten, name).overloads() == list(overloads)
    for name, (overloads, _) in fops.PROFILER.items():
        assert overloads == tuple(getattr(torch.ops.profiler, name).overloads())


def test_packets_and_overloads_print_and_compare_as_torchs():
    for lib in (ftorch, torch):
        add, mm = lib.ops.aten.add, lib.ops.aten.mm
        assert add is lib.ops.aten.add and add.Tensor is add.Tensor
        assert add.Tensor != add.Scalar and add.Tensor == add.Tensor
        assert str(add) == "aten.add" and str(add.Tensor) == "aten.add.Tensor"
        assert repr(add) == "<OpOverloadPacket(op='aten.add')>"
        assert repr(add.Tensor) == "<OpOverload(op='aten.add', overload='Tensor')>"
        assert add.Tensor.name() == "aten::add.Tensor" and mm.default.name() == "aten::mm"
        assert add._qualified_op_name == "aten::add" and add.__name__ == "add"
        assert add.Tensor.__name__ == "add.Tensor" and add.Tensor._overloadname == "Tensor"
        assert add.Tensor.overloadpacket is add and add.Tensor.namespace == "aten"
        assert copy.deepcopy(add.Tensor) is add.Tensor
        assert repr(lib.ops.aten) == "<module 'torch.ops.aten' from 'torch.ops'>"
    assert ftorch.ops.aten.add(ftorch.ones(2), 3).tolist() == [4.0, 4.0]
    # (fgrad's ops pickle, so a pickled fx graph keeps its targets)
    assert pickle.loads(pickle.dumps(ftorch.ops.aten.add)) is ftorch.ops.aten.add
    assert pickle.loads(pickle.dumps(ftorch.ops.aten.add.Tensor)) is ftorch.ops.aten.add.Tensor


def test_unknown_ops_and_overloads_raise_attribute_error():
    with pytest.raises(AttributeError, match="'_OpNamespace' 'aten' object has no attribute 'no_such_op'"):
        ftorch.ops.aten.no_such_op
    with pytest.raises(AttributeError, match="The underlying op of 'aten.add' has no overload name 'nope'"):
        ftorch.ops.aten.add.nope
    assert repr(ftorch.ops.mylib) == "<module 'torch.ops.mylib' from 'torch.ops'>"
    with pytest.raises(AttributeError, match="'_OpNamespace' 'mylib' object has no attribute 'f'"):
        ftorch.ops.mylib.f
    assert not hasattr(ftorch.ops.aten, "__wrapped__")


def test_selective_checkpoint_policies_take_these_ops():
    # a policy names ops through torch.ops; selective checkpointing's own ops (from grad_fn
    # names) equal them by op name
    from fgrad.torch.utils._selective_checkpoint import _op_of
    assert _op_of("MmBackward0", "mm") == ftorch.ops.aten.mm.default
    assert ftorch.ops.aten.mm.default == _op_of("MmBackward0", "mm")
    assert _op_of("MmBackward0", "mm") in {ftorch.ops.aten.mm.default}
    fcp.create_selective_checkpoint_contexts([ftorch.ops.aten.mm.default, ftorch.ops.aten.add.Tensor])


def _profile_names(lib, fn):
    with lib.autograd.profiler.profile() as prof:
        fn()
    return [(e.key, e.count) for e in prof.key_averages()]


def test_profiler_ops_open_ranges_the_profiler_sees():
    def legacy(lib):
        x = lib.ones(3)

        def run():
            h = lib.ops.profiler._record_function_enter("outer")
            lib.ops.aten.neg.default(x)
            lib.ops.profiler._record_function_exit(h)
        return run

    def new(lib):
        x = lib.ones(2, 2)

        def run():
            r = lib.ops.profiler._record_function_enter_new("outer", None)
            lib.ops.aten.exp.default(x)
            lib.ops.profiler._record_function_exit._RecordFunction(r)
        return run

    assert _profile_names(ftorch, legacy(ftorch)) == _profile_names(torch, legacy(torch)) == [
        ("outer", 1), ("aten::empty", 1), ("aten::neg", 1)]
    assert _profile_names(ftorch, new(ftorch)) == _profile_names(torch, new(torch)) == [
        ("outer", 1), ("aten::exp", 1)]
    with ftorch.autograd.profiler.profile() as prof:
        h = ftorch.ops.profiler._record_function_enter("r")
        ftorch.ops.profiler._record_function_exit(h)
    outer = next(e for e in prof.events() if e.name == "r")
    assert [c.name for c in outer.cpu_children] == ["aten::empty"] and outer.is_user_annotation


def test_profiler_ops_refuse_foreign_handles_and_double_exits():
    with pytest.raises(RuntimeError, match="expected the handle that _record_function_enter returned"):
        ftorch.ops.profiler._record_function_exit(ftorch.zeros(2))
    h = ftorch.ops.profiler._record_function_enter("once")
    ftorch.ops.profiler._record_function_exit(h)
    with pytest.raises(RuntimeError, match="expected the handle"):
        ftorch.ops.profiler._record_function_exit(h)
    r = ftorch.ops.profiler._record_function_enter_new("once")
    ftorch.ops.profiler._record_function_exit(r)
    with pytest.raises(RuntimeError, match="'once' is closed already"):
        ftorch.ops.profiler._record_function_exit._RecordFunction(r)
    with pytest.raises(TypeError, match="range name must be a str, got int 3"):
        ftorch.ops.profiler._record_function_enter(3)


def test_a_freed_handle_ends_its_range():
    def run(lib):
        x = lib.ones(2)
        with lib.autograd.profiler.profile() as prof:
            h = lib.ops.profiler._record_function_enter("dropped")
            del h
            lib.ops.aten.neg.default(x)
        return [(e.name, [c.name for c in e.cpu_children]) for e in prof.function_events]
    assert run(ftorch) == run(torch) == [("dropped", ["aten::empty"]), ("aten::empty", []), ("aten::neg", [])]

