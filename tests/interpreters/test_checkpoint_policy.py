"""checkpoint(policy=...) and checkpoint_name: the policy's outputs are kept by the forward
pass and read, not recomputed, by the backward pass (fgrad/custom.py's checkpoint,
interpreters.record.record_known), with the derivatives of the function itself."""
from __future__ import annotations

import numpy as np
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ad_checkpoint import checkpoint_name, saved_residuals
from fgrad.ops.linalg import dot_general_p

P = fgrad.checkpoint_policies


def _net(w, x):
    h = checkpoint_name(fnp.sin(fnp.dot(w, x)), "h")
    g = checkpoint_name(fnp.tanh(fnp.dot(w, h)), "g")
    return (fnp.dot(w, g) ** 2).sum()


POLICIES = {
    "none": None,
    "nothing_saveable": P.nothing_saveable,
    "everything_saveable": P.everything_saveable,
    "dots_saveable": P.dots_saveable,
    "dots_with_no_batch_dims_saveable": P.dots_with_no_batch_dims_saveable,
    "save_only_these_names": P.save_only_these_names("h"),
    "save_any_names_but_these": P.save_any_names_but_these("h"),
    "save_anything_except_these_names": P.save_anything_except_these_names("g"),
    "save_from_both_policies": P.save_from_both_policies(P.dots_saveable,
                                                         P.save_only_these_names("g")),
    "save_and_offload_only_these_names": P.save_and_offload_only_these_names(
        names_which_can_be_saved=["h"], names_which_can_be_offloaded=["g"],
        offload_src="device", offload_dst="pinned_host"),
    "offload_dot_with_no_batch_dims": P.offload_dot_with_no_batch_dims("device", "pinned_host"),
}

W = np.random.default_rng(0).uniform(-1, 1, (4, 4))
X = np.linspace(-1.0, 1.0, 4)


@pytest.mark.parametrize("name", list(POLICIES))
def test_gradients_are_the_functions(name):
    want = fgrad.grad(_net, argnums=(0, 1))(W, X)
    got = fgrad.grad(fgrad.checkpoint(_net, policy=POLICIES[name]), argnums=(0, 1))(W, X)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("transform", ["jit(grad)", "hessian", "vmap(grad)"])
def test_under_enclosing_transforms_the_values_stay(transform):
    """Under jit, vmap or a higher order the policy is not applied: the same values."""
    pol = fgrad.checkpoint(lambda x: _net(W, x), policy=P.dots_saveable)
    plain = lambda x: _net(W, x)  # noqa: E731
    if transform == "jit(grad)":
        got, want = fgrad.jit(fgrad.grad(pol))(X), fgrad.grad(plain)(X)
    elif transform == "hessian":
        got, want = fgrad.hessian(pol)(X), fgrad.hessian(plain)(X)
    else:
        xs = np.stack([X, 2 * X])
        got, want = fgrad.vmap(fgrad.grad(pol))(xs), fgrad.vmap(fgrad.grad(plain))(xs)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def _dot_calls(policy, monkeypatch) -> int:
    calls = []
    impl = dot_general_p.raw_impl

    def counting(*args, **params):
        calls.append(1)
        return impl(*args, **params)
    monkeypatch.setattr(dot_general_p, "raw_impl", counting)
    fgrad.grad(fgrad.checkpoint(_net, policy=policy), argnums=(0, 1))(W, X)
    monkeypatch.setattr(dot_general_p, "raw_impl", impl)
    return len(calls)


def test_saved_dots_are_not_recomputed(monkeypatch):
    """The backward pass of nothing_saveable runs the three forward dots again; with
    dots_saveable it reads them (the backward's own dots are the same in both)."""
    recomputed = _dot_calls(None, monkeypatch)
    saved = _dot_calls(P.dots_saveable, monkeypatch)
    assert recomputed - saved == 3


def test_saved_residuals_name_what_the_policy_keeps():
    line = _net.__code__.co_firstlineno
    dots = saved_residuals(fgrad.checkpoint(_net, policy=P.dots_saveable), W, X)
    assert [d for _, d in dots][:2] == ["from the argument w", "from the argument x"]
    assert [d.split(" from ")[0] for _, d in dots[2:]] == ["output of dot_general"] * 3
    assert dots[2][1].endswith(f"{__file__}:{line + 1}:32 (_net)")
    names = saved_residuals(fgrad.checkpoint(_net, policy=P.save_only_these_names("g")), W, X)
    assert [d for _, d in names][2:] == [f"named 'g' from {__file__}:{line + 2}:8 (_net)"]
    assert [a.shape for a, _ in names] == [(4, 4), (4,), (4,)]
    nothing = saved_residuals(fgrad.checkpoint(_net), W, X)
    assert len(nothing) == 2


def test_a_checkpoints_output_is_named_by_its_producer_inside():
    """As JAX prints it: the value a checkpointed function returns is the output of the last
    operation inside it (sin here), located there."""
    def layer(w, x):
        return fnp.sin(fnp.dot(w, x))

    def f(w, x):
        return fgrad.checkpoint(layer)(w, fgrad.checkpoint(layer)(w, x))
    res = saved_residuals(f, W, X)
    line = layer.__code__.co_firstlineno + 1
    assert [d for _, d in res][2:] == [f"output of sin from {__file__}:{line}:15 ({layer.__qualname__})"]


@pytest.mark.parametrize("transform", ["eager", "jit", "vmap", "jvp", "grad"])
def test_checkpoint_name_is_the_identity(transform):
    f = lambda x: checkpoint_name({"a": x * 2.0, "b": [fnp.sin(x)]}, "n")  # noqa: E731
    g = lambda x: {"a": x * 2.0, "b": [fnp.sin(x)]}  # noqa: E731
    if transform == "eager":
        got, want = f(X), g(X)
    elif transform == "jit":
        got, want = fgrad.jit(f)(X), g(X)
    elif transform == "vmap":
        got, want = fgrad.vmap(f)(np.stack([X, X])), fgrad.vmap(g)(np.stack([X, X]))
    elif transform == "jvp":
        got, want = fgrad.jvp(f, (X,), (X,))[1], fgrad.jvp(g, (X,), (X,))[1]
    else:
        s = lambda h: lambda x: (h(x)["a"] * h(x)["b"][0]).sum()  # noqa: E731
        got, want = {"a": fgrad.grad(s(f))(X), "b": []}, {"a": fgrad.grad(s(g))(X), "b": []}
    for a, b in zip(fgrad.tree_util.tree_leaves(got), fgrad.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(a, b, rtol=1e-14)


def test_bad_arguments_are_named():
    with pytest.raises(TypeError, match="policy must be a predicate"):
        fgrad.checkpoint(_net, policy="dots")
    with pytest.raises(TypeError, match="name must be a string"):
        checkpoint_name(X, 3)
