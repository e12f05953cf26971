"""Selective activation checkpointing (torch.utils.checkpoint's CheckpointPolicy,
SelectiveCheckpointContext, create_selective_checkpoint_contexts, SAC_IGNORED_OPS) and
get/set_device_states, GraphExecGroup, against torch 2.13: the policy sees the same ops in the
same order with the same context, gradients equal, and the errors (bad lists, changed results,
mutated saved results, nested groups)."""
from __future__ import annotations

import functools

import numpy as np
import pytest

import fgrad.torch as ftorch
from fgrad.torch.utils import checkpoint as fcp

torch = pytest.importorskip("torch")
from torch.utils import checkpoint as tcp  # noqa: E402

X = np.random.default_rng(0).standard_normal((3, 3)).astype(np.float32)
W = np.random.default_rng(1).standard_normal((3, 3)).astype(np.float32)


def _fn(lib):
    def fn(x, y):
        return lib.sigmoid(lib.matmul(lib.matmul(x, y), y)) * y
    return fn


def _run(lib, cp, policy):
    x = lib.tensor(X, requires_grad=True)
    y = lib.tensor(W, requires_grad=True)
    out = cp.checkpoint(_fn(lib), x, y, use_reentrant=False,
                        context_fn=functools.partial(cp.create_selective_checkpoint_contexts, policy))
    out.sum().backward()
    return out.detach().numpy(), x.grad.numpy(), y.grad.numpy()


def test_policy_sees_torchs_ops_and_gradients_agree():
    seen = {}
    for lib, cp in ((ftorch, fcp), (torch, tcp)):
        log = seen[lib.__name__] = []

        def policy(ctx, op, *args, _log=log, _cp=cp, **kwargs):
            _log.append((str(op).split(".")[1], ctx.is_recompute, tuple(ctx.op_output.shape), len(args)))
            return _cp.CheckpointPolicy.MUST_SAVE if str(op).startswith("aten.mm") else \
                _cp.CheckpointPolicy.PREFER_RECOMPUTE
        res = _run(lib, cp, policy)
        seen[lib.__name__ + "res"] = res
    assert seen["fgrad.torch"] == seen["torch"]
    for a, b in zip(seen["fgrad.torchres"], seen["torchres"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_list_form_and_enum():
    f = _run(ftorch, fcp, [ftorch.ops.aten.mm.default])
    t = _run(torch, tcp, [torch.ops.aten.mm.default])
    for a, b in zip(f, t):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    assert [(p.name, p.value) for p in fcp.CheckpointPolicy] == [(p.name, p.value) for p in tcp.CheckpointPolicy]
    assert fcp.SelectiveCheckpointContext(is_recompute=False).op_output is None
    assert {str(o).split(".")[1] for o in fcp.SAC_IGNORED_OPS} == \
        {str(o).split(".")[1] for o in tcp.SAC_IGNORED_OPS if str(o).startswith("aten.")}


def test_bad_policies():
    for lib, cp in ((ftorch, fcp), (torch, tcp)):
        with pytest.raises(ValueError, match="OpOverload"):
            cp.create_selective_checkpoint_contexts(["mm"])
        with pytest.raises(TypeError, match="function or a list"):
            cp.create_selective_checkpoint_contexts(3)
    with pytest.raises(TypeError, match="CheckpointPolicy"):
        _run(ftorch, fcp, lambda ctx, op, *a, **k: 3)


def test_mutated_saved_result_raises():
    for lib, cp in ((ftorch, fcp), (torch, tcp)):
        def fn(x, w, lib=lib):
            y = lib.mm(x, w)
            y.mul_(2)
            return y.sigmoid()
        x = lib.tensor(X, requires_grad=True)
        w = lib.tensor(W, requires_grad=True)
        with pytest.raises(RuntimeError, match="mutated|modified in place"):
            out = cp.checkpoint(fn, x, w, use_reentrant=False, context_fn=functools.partial(
                cp.create_selective_checkpoint_contexts, [lib.ops.aten.mm.default]))
            out.sum().backward()


def test_changed_result_raises_and_preserved_rng_agrees():
    save_all = functools.partial(fcp.create_selective_checkpoint_contexts,
                                 lambda ctx, op, *a, **k: fcp.CheckpointPolicy.MUST_SAVE)

    def g(x):
        return x * ftorch.rand(3)
    x = ftorch.ones(3, requires_grad=True)
    out = fcp.checkpoint(g, x, use_reentrant=False, preserve_rng_state=True, context_fn=save_all)
    out.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), out.detach().numpy())
    x = ftorch.ones(3, requires_grad=True)
    out = fcp.checkpoint(g, x, use_reentrant=False, preserve_rng_state=False, context_fn=save_all)
    with pytest.raises(ftorch.utils.checkpoint.CheckpointError, match="differs"):
        out.sum().backward()


def test_device_states_and_groups():
    args = (ftorch.ones(2), [ftorch.ones(1)], {"k": 3})
    assert fcp.get_device_states(*args) == tcp.get_device_states(torch.ones(2), [torch.ones(1)], {"k": 3}) == ([], [])
    assert fcp.set_device_states([], []) is None and tcp.set_device_states([], []) is None
    state = ftorch.get_rng_state()
    first = ftorch.rand(2)
    fcp.set_device_states([0], [state], device_type="cuda")  # fgrad's one generator serves every device
    np.testing.assert_array_equal(ftorch.rand(2).numpy(), first.numpy())
    for cp in (fcp, tcp):
        with cp.GraphExecGroup():
            with pytest.raises(RuntimeError, match="cannot be nested"):
                with cp.GraphExecGroup():
                    pass
        with cp.GraphExecGroup():  # usable again after the first one closed
            pass
