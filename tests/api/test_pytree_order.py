"""Pytree key order and container types survive every transform, on both sides:

- fgrad's transforms (fgrad.grad, vjp, jvp, jacrev, jacfwd, hessian, vmap, jit) match JAX's
  (oracle: jax), which flattens dicts by sorted key and rebuilds them sorted;
- the facade's torch.func transforms (fgrad.torch.func) and fgrad.torch.autograd.functional match
  PyTorch's (oracle: torch.func / torch.autograd.functional), which keep a dict's insertion
  order, so that code zipping a result's keys with another dict's values (PyTorch's
  per-sample-gradients tutorial) pairs the right entries.

Each result is compared by its structure (container types, dict keys in order, namedtuple
classes, None) and by its leaves' values in that order. Adding a structure is one entry of
STRUCTURES, a transform one entry of a side's TRANSFORMS."""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Callable

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

Pair = namedtuple("Pair", ["w", "b"])

A, B, C = onp.array([0.3, -1.2]), onp.array([0.8, 0.1]), onp.array([2.0, -0.5])

STRUCTURES = {
    "dict": lambda: {"w": A, "b": B, "a": C},
    "OrderedDict": lambda: OrderedDict([("w", A), ("b", B)]),
    "namedtuple": lambda: Pair(w=A, b=B),
    "tuple": lambda: (A, B),
    "list": lambda: [A, B],
    "None leaf": lambda: {"w": A, "n": None, "b": B},
    "nested": lambda: {"z": {"w": A, "b": B}, "a": [C, (B, Pair(A, C))], "m": OrderedDict([("y", A), ("x", B)])},
}


# --- trees walked in their own order (not through any library's pytrees) ---------------------

def _rebuild(t, children: list):
    if isinstance(t, tuple) and hasattr(t, "_fields"):
        return type(t)(*children)
    if isinstance(t, dict):
        return type(t)(zip(t.keys(), children))
    return type(t)(children)


def _map(fn: Callable, t, path: str = ""):
    """fn(path, leaf) at each leaf; containers keep their type and order; None stays None."""
    if t is None:
        return None
    if isinstance(t, dict):
        return _rebuild(t, [_map(fn, v, f"{path}[{k!r}]") for k, v in t.items()])
    if isinstance(t, (tuple, list)):
        return _rebuild(t, [_map(fn, v, f"{path}[{i}]") for i, v in enumerate(t)])
    return fn(path, t)


def _describe(t, leaves: list):
    """The structure of t (types, keys in order), its leaves appended to `leaves` in that order."""
    if t is None:
        return None
    if isinstance(t, dict):
        return (type(t).__name__, [(k, _describe(v, leaves)) for k, v in t.items()])
    if isinstance(t, (tuple, list)):
        return (type(t).__name__, [_describe(v, leaves) for v in t])
    leaves.append(_numpy(t))
    return "leaf"


def _numpy(x):
    if isinstance(x, (torch.Tensor, fgrad.torch.Tensor)):
        return onp.asarray(x.detach().numpy())
    return onp.asarray(x)


def _paths(t) -> list[str]:
    out: list = []
    _map(lambda p, v: out.append(p), t)
    return sorted(out)


class Lib:
    """One library's way to build and compute: `box` makes its arrays, `sin`/`sum` compute."""

    def __init__(self, box: Callable, sin: Callable, total: Callable) -> None:
        self.box, self.sin, self.total = box, sin, total


LIBS = {
    "torch": Lib(lambda a: torch.tensor(a, dtype=torch.float64), torch.sin, torch.sum),
    "facade": Lib(lambda a: fgrad.torch.tensor(a, dtype=fgrad.torch.float64), fgrad.torch.sin, fgrad.torch.sum),
    "jax": Lib(jnp.asarray, jnp.sin, jnp.sum),
    "fgrad": Lib(lambda a: onp.array(a), fnp.sin, fnp.sum),
}


def _functions(lib: Lib, weights: dict):
    """(loss: tree -> scalar, fmap: tree -> tree of the same structure), with a weight per key
    path so that pairing a gradient with the wrong entry shows in the values."""
    def fmap(t):
        return _map(lambda p, v: lib.sin(v) * weights[p], t)

    def loss(t):
        total = 0.0
        for v in _leaves(fmap(t)):
            total = total + lib.total(v)
        return total
    return loss, fmap


def _leaves(t) -> list:
    out: list = []
    _map(lambda p, v: out.append(v), t)
    return out


# --- the transforms, per side: run(T, lib, tree, batched_tree) -> pytree result ------------------

def _ones(lib, t):
    return _map(lambda p, v: lib.box(onp.ones(tuple(v.shape))), t)


TORCH_SIDE = {  # torch.func on torch, fgrad.torch.func on the facade
    "grad": lambda T, L, loss, fmap, t, bt: T.grad(loss)(t),
    "grad_and_value": lambda T, L, loss, fmap, t, bt: T.grad_and_value(loss)(t)[0],
    "vjp": lambda T, L, loss, fmap, t, bt: (lambda o, fn: (o, fn(_ones(L, o))))(*T.vjp(fmap, t)),
    "jvp": lambda T, L, loss, fmap, t, bt: T.jvp(fmap, (t,), (_ones(L, t),)),
    "jacrev": lambda T, L, loss, fmap, t, bt: T.jacrev(loss)(t),
    "jacfwd": lambda T, L, loss, fmap, t, bt: T.jacfwd(loss)(t),
    "hessian": lambda T, L, loss, fmap, t, bt: T.hessian(loss)(t),
    "vmap": lambda T, L, loss, fmap, t, bt: T.vmap(fmap)(bt),
    "vmap(grad)": lambda T, L, loss, fmap, t, bt: T.vmap(T.grad(loss))(bt),
    "vmap(grad) in_dims": lambda T, L, loss, fmap, t, bt: T.vmap(T.grad(lambda p, x: loss(p) * x),
                                                                 in_dims=(None, 0))(t, L.box(onp.arange(1.0, 4.0))),
}

JAX_SIDE = {  # jax on jax, fgrad on NumPy arrays
    "grad": lambda T, L, loss, fmap, t, bt: T.grad(loss)(t),
    "value_and_grad": lambda T, L, loss, fmap, t, bt: T.value_and_grad(loss)(t)[1],
    "vjp": lambda T, L, loss, fmap, t, bt: (lambda o, fn: (o, fn(_ones(L, o))))(*T.vjp(fmap, t)),
    "jvp": lambda T, L, loss, fmap, t, bt: T.jvp(fmap, (t,), (_ones(L, t),)),
    "linearize": lambda T, L, loss, fmap, t, bt: T.linearize(fmap, t)[1](_ones(L, t)),
    "jacrev": lambda T, L, loss, fmap, t, bt: T.jacrev(loss)(t),
    "jacfwd": lambda T, L, loss, fmap, t, bt: T.jacfwd(loss)(t),
    "hessian": lambda T, L, loss, fmap, t, bt: T.hessian(loss)(t),
    "vmap": lambda T, L, loss, fmap, t, bt: T.vmap(fmap)(bt),
    "jit": lambda T, L, loss, fmap, t, bt: T.jit(fmap)(t),
    "jit(grad)": lambda T, L, loss, fmap, t, bt: T.jit(T.grad(loss))(t),
    "vmap(grad)": lambda T, L, loss, fmap, t, bt: T.vmap(T.grad(loss))(bt),
}

SIDES = {
    "torch.func": (TORCH_SIDE, ("torch", torch.func), ("facade", fgrad.torch.func)),
    "jax": (JAX_SIDE, ("jax", jax), ("fgrad", fgrad)),
}


def _run(side: str, which: int, structure: str, transform: str):
    table = SIDES[side][0]
    libname, T = SIDES[side][which]
    L = LIBS[libname]
    tree = STRUCTURES[structure]()
    weights = {p: float(i + 1) for i, p in enumerate(_paths(tree))}
    loss, fmap = _functions(L, weights)
    t = _map(lambda p, v: L.box(v), tree)
    bt = _map(lambda p, v: L.box(onp.stack([v, 2.0 * v, -v])), tree)
    try:
        out = table[transform](T, L, loss, fmap, t, bt)
    except Exception as e:  # noqa: BLE001 -- the oracle's refusals are compared too
        return type(e).__name__, None
    leaves: list = []
    return _describe(out, leaves), leaves


CASES = [(side, s, t) for side in SIDES for t in SIDES[side][0] for s in STRUCTURES]


@pytest.mark.parametrize("side,structure,transform", CASES)
def test_structure_and_order_match_oracle(side, structure, transform):
    want, want_leaves = _run(side, 1, structure, transform)
    got, got_leaves = _run(side, 2, structure, transform)
    if want_leaves is None:
        # The oracle refuses (torch.func takes no None leaves): fgrad may too, or treat None as
        # JAX does (a node holding no leaf), returned where it was given
        assert got_leaves is None or "('n', None)" in repr(got), \
            f"{side} {transform} of {structure}: oracle raised {want}, fgrad gave {got}"
        return
    assert got == want, f"{side} {transform} of {structure}:\n fgrad  {got}\n oracle {want}"
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        onp.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_per_sample_gradients_tutorial_pairs_keys_with_their_gradients():
    """PyTorch's per-sample-gradients tutorial: parameters in named_parameters() order (weight
    before bias, not sorted), per-sample grads zipped back with the parameters' names."""
    torch.manual_seed(0)
    fgrad.torch.manual_seed(0)
    model = fgrad.torch.nn.Linear(3, 2).double()
    params = {k: v.detach() for k, v in model.named_parameters()}
    data, targets = fgrad.torch.randn(4, 3, dtype=fgrad.torch.float64), fgrad.torch.randn(4, 2, dtype=fgrad.torch.float64)

    def compute_loss(params, sample, target):
        out = fgrad.torch.func.functional_call(model, params, (sample.unsqueeze(0),))
        return ((out - target.unsqueeze(0)) ** 2).sum()
    per_sample = fgrad.torch.func.vmap(fgrad.torch.func.grad(compute_loss), in_dims=(None, 0, 0))(params, data, targets)
    assert list(per_sample) == list(params) == ["weight", "bias"]
    for (name, g), p in zip(per_sample.items(), params.values()):
        assert tuple(g.shape) == (4,) + tuple(p.shape), name


FUNCTIONAL = {  # torch.autograd.functional: inputs are a Tensor or a tuple of Tensors
    "jacobian": lambda F, f, t, v: F.jacobian(f, t),
    "hessian": lambda F, f, t, v: F.hessian(f, t),
    "vjp": lambda F, f, t, v: F.vjp(f, t),
    "jvp": lambda F, f, t, v: F.jvp(f, t, v),
    "hvp": lambda F, f, t, v: F.hvp(f, t, v),
    "vhp": lambda F, f, t, v: F.vhp(f, t, v),
}


@pytest.mark.parametrize("name", list(FUNCTIONAL))
@pytest.mark.parametrize("n_inputs", [1, 2])
def test_autograd_functional_structure_matches_torch(name, n_inputs):
    def run(libname, F):
        L = LIBS[libname]
        xs = tuple(L.box(a) for a in (A, B)[:n_inputs])
        t = xs[0] if n_inputs == 1 else xs
        v = L.box(onp.ones(2)) if n_inputs == 1 else tuple(L.box(onp.ones(2)) for _ in xs)

        def f(*args):
            return sum(L.total(L.sin(a) * (k + 1.0)) for k, a in enumerate(args))
        leaves: list = []
        return _describe(FUNCTIONAL[name](F, f, t, v), leaves), leaves
    want, want_leaves = run("torch", torch.autograd.functional)
    got, got_leaves = run("facade", fgrad.torch.autograd.functional)
    assert got == want
    for g, w in zip(got_leaves, want_leaves):
        onp.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
