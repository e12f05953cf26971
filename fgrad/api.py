"""The functional transforms: grad, vjp, jvp, linearize, jacobians, make_jaxpr, jit."""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import math
import threading
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from .core.avals import PY_NUMBERS, is_float, is_weak, weak_aval
from .core.errors import (
    DifferentiationError,
    FgradRuntimeError,
    FgradTypeError,
    FgradValueError,
    ShapeError,
)
from .core.ir import ClosedJaxpr, cse_jaxpr, dce_jaxpr, eval_jaxpr
from .core.trace import (
    EVAL_TRACE,
    Tracer,
    _state,
    aval_of,
    debug_nans,
    new_trace,
    snapshot,
    xp_of,
)
from .interpreters.backward import FREED_MESSAGE, Leaf, backward_pass, toposort
from .interpreters.batching import BatchTrace, BatchTracer
from .interpreters.compile.executable import Executable, JitStats, fast_args
from .interpreters.jvp import JVPTrace, JVPTracer, WeakJVPTracer
from .interpreters.record import (
    RecordTrace,
    RecordTracer,
    WeakRecordTracer,
    graph_to_jaxpr,
)
from .interpreters.replay import replay_grad
from .interpreters.staging import StagingTrace
from .numpy import add as fnp_add
from .numpy._array import AnyArray as Array  # noqa: F401 (fgrad.Array: JAX's jax.Array)
from .numpy._array import Array as EagerArray
from .numpy._array import as_array
from .numpy._util import MAX_NDIM, as_value, cast, plain_value, refuse_foreign
from .ops import elementwise as ew
from .ops._batching import loop_batch
from .ops.elementwise import const
from .ops.shape import broadcast_in_dim, move_axis, reshape, transpose
from .ops.shape import slice as slice_array
from .tree_util import (
    broadcast_prefix,
    keystr,
    register_pytree_node,
    tree_flatten,
    tree_flatten_with_path,
    tree_leaves,
    tree_map,
    tree_unflatten,
)

# --- inputs: Python data in, NumPy arrays out ---------------------------------------------
# The transforms take arrays, Python numbers and tracers. Objects of a layer built on top of
# fgrad, whose class declares `__fgrad_foreign__`, are refused with that layer's own message
# (numpy._util.refuse_foreign): such a layer has its own doors (fgrad.torch.func), which
# unwrap its objects and call these transforms on plain values.

def _input_values(leaves, transform: str, fname: str) -> list:
    """The value of each input leaf of `transform` (a Python number becomes an array)."""
    entry = f"fgrad.{transform}"
    return [plain_value(x, entry, f"{fname}: input {i}") for i, x in enumerate(leaves)]


def _fname(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _check_argnums(argnums, nargs: int, fname: str):
    single = isinstance(argnums, (int, np.integer))
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, (int, np.integer)) or not -nargs <= a < nargs:
            raise FgradValueError(f"argnums={argnums!r} is out of range for {fname}, which was called with "
                             f"{nargs} positional argument(s). Use an index in [0, {nargs}).", doc="argnums-range")
    norm = tuple(int(a) % nargs for a in nums)
    repeated = sorted({a for a in norm if norm.count(a) > 1})
    if repeated:
        raise FgradValueError(f"argnums={argnums!r} of {fname} repeats argument(s) "
                         f"{', '.join(map(str, repeated))}: name each argument once (negative indices "
                         "count from the end, so -1 and the last index are the same argument).", doc="argnums-repeated")
    return single, norm


def _partial(f, args, kwargs, nums):
    def f_dyn(*dyn):
        full = list(args)
        for i, v in zip(nums, dyn):
            full[i] = v
        return f(*full, **kwargs)
    return f_dyn


# --- what can be differentiated -------------------------------------------------------------

# Complex values follow JAX's convention (fgrad.ops.complex): jvp is the complex-linear
# pushforward, vjp its plain transpose (no conjugation), so for a real-valued f of z = x + iy,
# grad f(z) = df/dx - i df/dy. A Jacobian of complex numbers exists only for holomorphic
# functions, which say so with holomorphic=True (as in JAX).

def _check_differentiable(transform: str, fname: str, value, where: str, fix: str,
                          holomorphic: bool = False) -> None:
    """DifferentiationError unless `value` (an input of `transform`) can be differentiated:
    a real float, or a complex number (which `holomorphic` requires; jacfwd and hessian
    take one only with holomorphic=True, as JAX's)."""
    dt = aval_of(value).dtype
    if holomorphic and dt.kind != "c":
        raise DifferentiationError(
            f"{transform} of {fname} with holomorphic=True requires complex inputs, but {where} has dtype "
            f"{dt}. Pass a complex value (x + 0j, or x.astype(complex)), or drop holomorphic=True to "
            "differentiate with respect to a real input.", doc="holomorphic-real-input")
    if dt.kind == "c":
        if not holomorphic and transform in ("jacfwd", "hessian"):
            raise DifferentiationError(
                f"{transform} of {fname} with respect to {where}, which has dtype {dt}: without "
                "holomorphic=True it needs real inputs, as JAX's (a complex number stands for the "
                "derivative only when f is holomorphic). Pass holomorphic=True if f is holomorphic, "
                "use jacrev (or grad) for a real-valued f, or call jvp directly.", doc="complex-input")
        return
    if dt.kind != "f":
        raise DifferentiationError(
            f"{transform} of {fname} with respect to {where}, which has dtype {dt}: only "
            f"floating-point inputs have {'gradients' if transform == 'grad' else 'derivatives'}. "
            f"Pass a float (e.g. 3.0 instead of 3, or x.astype(float)), or {fix}.",
            doc="jacobian-int-input" if transform.startswith("jac") or transform in ("hessian", "linearize")
            else "grad-int-input")


def _check_argnum_inputs(transform: str, fname: str, args, nums, holomorphic: bool = False) -> None:
    for i in nums:
        for leaf in tree_flatten(args[i])[0]:
            _check_differentiable(transform, fname, plain_value(leaf, f"fgrad.{transform}", f"{fname}: argument {i}"),
                                  f"argument {i}", "leave this argument out of argnums", holomorphic)


def _check_holomorphic_output(transform: str, fname: str, k: int, dtype, holomorphic: bool) -> None:
    """FgradTypeError (JAX's TypeError) for a complex output of a transform that needs a real
    one unless holomorphic=True, and for a real output with holomorphic=True."""
    if holomorphic and dtype.kind != "c":
        raise FgradTypeError(
            f"{transform} of {fname} with holomorphic=True requires complex outputs, but output {k} has "
            f"dtype {dtype}: a holomorphic function maps complex to complex. Drop holomorphic=True for "
            "a real-valued function.", doc="holomorphic-real-output")
    if not holomorphic and dtype.kind == "c":
        raise FgradTypeError(
            f"{transform} of {fname}: output {k} has dtype {dtype}, but {transform} needs real outputs "
            "(as JAX's). If the function is holomorphic, pass holomorphic=True for its complex "
            f"derivative; otherwise differentiate a real function of it (abs(z), z.real), "
            f"{'or use jacfwd' if transform == 'jacrev' else 'or use vjp'} directly.",
            doc="grad-complex-output" if transform == "grad" else "jacrev-complex-output")


def _is_weak(raw) -> bool:
    """A Python int/float, or a traced value standing for one: it takes the dtype it meets."""
    return is_weak(raw) and aval_of(raw).dtype.kind in "iuf"


def _match_dtype(raw, value, want, what: str, exc: type, doc: str | None = None):
    """`value` (from `raw`) with dtype `want`: equal dtypes pass, a weakly typed number is
    cast to a float `want`, anything else is `exc` naming both types (as JAX)."""
    have = aval_of(value).dtype
    if have == want:
        return value
    if want.kind in "fc" and _is_weak(raw):  # (a real number adapts to a complex want too)
        return cast(value, want)
    if want.kind == "c" and is_weak(raw) and aval_of(value).dtype.kind == "c":
        return cast(value, want)  # a Python complex number
    raise exc(what, doc=doc)


# --- vjp, grad ----------------------------------------------------------------------------

def vjp(f: Callable, *primals, has_aux: bool = False) -> tuple[Any, ...]:
    """(f(*primals), vjp_fn) where vjp_fn(ct) gives one cotangent per primal.

    The cotangent passed to vjp_fn has the output's structure, and each leaf the shape and
    dtype of its output (a Python number adapts to a float or complex output). Integer primals
    get integer zero cotangents (JAX's float0). Complex primals and outputs follow JAX's
    convention: vjp_fn(ct) is ct times the transpose of the Jacobian (no conjugation), so
    for a real-valued f of a complex z, vjp_fn(1.0) is df/dx - i df/dy.
    `vjp_fn.forward_jaxpr()` is the recorded forward computation as a ClosedJaxpr (flattened
    primals in, flattened outputs out), to print or to rerun on other values. vjp_fn is a
    pytree whose leaves are its residuals (`VJPFunction`), as JAX's is.

    Args:
        f: the function; its arguments and output are pytrees of arrays or numbers.
        *primals: the point at which to differentiate, one value per positional argument.
        has_aux: f returns (output, aux); vjp then returns (output, vjp_fn, aux).

    Returns:
        (output, vjp_fn): f(*primals) and the pullback, which maps a cotangent of the
        output to a tuple with one cotangent per primal.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> out, vjp_fn = fgrad.vjp(lambda x: x * 2.0, jnp.array([1.0, 2.0]))
        >>> print(out, vjp_fn(jnp.array([1.0, 10.0])))
        [2. 4.] (array([ 2., 20.]),)
    """
    return _vjp(f, primals, has_aux, "vjp")



class VJPFunction:
    """The function vjp returns: `vjp_fn(ct)` gives one cotangent per primal (see `vjp`).

    It is a pytree whose leaves are its residuals, the values the recorded graph keeps for
    the backward pass (each array once, in recording order), as JAX's vjp function is: a
    transform can take it in or out (`jit(lambda *a: vjp(f, *a))`), and
    `tree_unflatten(tree_structure(vjp_fn), new_residuals)` is a pullback that reads the new
    values (tracers, to stage the backward pass alone)."""

    __slots__ = ("out_tree", "out_vals", "out_nodes", "in_tree", "vals", "leaves", "name",
                 "transform", "once", "_residuals")

    def __init__(self, out_tree, out_vals, out_nodes, in_tree, vals, leaves, name: str,
                 transform: str, once: bool) -> None:
        self.out_tree, self.out_vals, self.out_nodes = out_tree, out_vals, out_nodes
        self.in_tree, self.vals, self.leaves = in_tree, vals, leaves
        self.name, self.transform, self.once = name, transform, once
        # (values, slots) when built by unflattening, whose leaves need not be arrays
        # (tree_map(lambda r: r.shape, vjp_fn)); None: found in the graph (_residual_slots)
        self._residuals = None

    def __call__(self, ct):
        out_tree, name, transform = self.out_tree, self.name, self.transform
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise FgradValueError(f"vjp_fn: the cotangent's structure {ct_tree} differs from the output's "
                             f"{out_tree}; pass one cotangent per output, shaped like it.", doc="vjp-ct-structure")
        roots = []
        for k, (node, o, raw) in enumerate(zip(self.out_nodes, self.out_vals, ct_flat)):
            c = plain_value(raw, f"fgrad.{transform}", "vjp_fn cotangent")
            ca, oa = aval_of(c), aval_of(o)
            if ca.shape != oa.shape:
                raise ShapeError(f"vjp_fn: cotangent of shape {ca.shape} for an output of shape "
                                 f"{oa.shape}; they must match.", doc="vjp-ct-shape")
            # integer outputs have no cotangent space: any value is ignored (and an equal
            # dtype needs no check: the message below is built only for a mismatch)
            if ca.dtype != oa.dtype and is_float(oa.dtype):
                c = _match_dtype(raw, c, oa.dtype, (
                    f"vjp_fn of {name}: cotangent {k} has type {ca} but output {k} has type {oa}; a "
                    "cotangent must have its output's shape and dtype (JAX's rule). Cast it, e.g. "
                    f"ct.astype({oa.dtype.name}), or build it with ones_like/zeros_like of the output."),
                    FgradValueError, "vjp-ct-dtype")
            if node is not None:
                roots.append((node, c))
        cts = backward_pass(roots, add=fnp_add, retain=not self.once) if roots else {}
        grads = [_zeros_like(v) if leaf is None or id(leaf) not in cts else cts[id(leaf)]
                 for v, leaf in zip(self.vals, self.leaves)]
        return tree_unflatten(self.in_tree, grads)

    def forward_jaxpr(self) -> ClosedJaxpr:
        """The recorded forward computation as a typed ClosedJaxpr (flat inputs -> flat
        outputs), to print or to rerun on other values.

        Returns:
            The ClosedJaxpr.
        """
        return graph_to_jaxpr(list(zip(self.out_nodes, self.out_vals)), list(zip(self.leaves, self.vals)))

    def __repr__(self) -> str:
        values = _residual_slots(self)[0]
        shown = ", ".join(aval_of(v).str_short() if _is_residual(v) else repr(v) for v in values)
        return f"VJPFunction({self.name}, residuals=[{shown}])"


def _is_residual(v) -> bool:
    return isinstance(v, (np.ndarray, np.generic, Tracer))


def _residual_slots(fn: VJPFunction) -> tuple[list, list]:
    """(values, slots) of `fn`'s residuals: each array its graph keeps, once (by identity),
    with the places it is kept: (node, "p", i) for input i of a node, (node, "o", 0) for its
    output, (node, "r", j) for leaf j of its own forward's residuals. (The pullback reads
    only the shapes and dtypes of vjp's inputs and outputs, which the treedef keeps.)"""
    if fn._residuals is not None:
        return fn._residuals
    values: list = []
    slots: list = []
    where: dict[int, int] = {}

    def keep(v, slot):
        k = where.get(id(v))
        if k is None:
            k = where[id(v)] = len(values)
            values.append(v)
            slots.append([])
        slots[k].append(slot)

    for node in toposort([n for n in fn.out_nodes if n is not None]):
        if node.prim is None:
            continue
        if node.primals is None:
            raise FgradRuntimeError(FREED_MESSAGE)
        for i, v in enumerate(node.primals):
            if _is_residual(v):
                keep(v, (node, "p", i))
        if _is_residual(node.out):
            keep(node.out, (node, "o", 0))
        if node.residuals is not None:
            for j, v in enumerate(tree_leaves(node.residuals)):
                if _is_residual(v):
                    keep(v, (node, "r", j))
    return values, slots


def _flatten_vjp(fn: VJPFunction) -> tuple[list, tuple]:
    values, slots = _residual_slots(fn)
    # (the static part is the function itself, equal only to itself: a pullback's graph is
    # its own, as JAX's vjp functions of two calls have different jaxprs)
    return values, (fn, tuple(tuple(s) for s in slots))


def _unflatten_vjp(aux: tuple, values) -> VJPFunction:
    """A pullback over a copy of the recorded graph whose residuals are `values` (the
    nodes are copied, the leaves kept: cotangents are keyed by them)."""
    fn, slots = aux
    values = list(values)
    if all(v is old for v, old in zip(values, _residual_slots(fn)[0])):
        return fn
    new_of: dict = {}
    for v, places in zip(values, slots):
        for node, kind, i in places:
            new_of.setdefault(node, []).append((kind, i, v))
    copies: dict = {}
    for node in toposort([n for n in fn.out_nodes if n is not None]):
        if node.prim is None:
            continue
        c = copy.copy(node)
        c.parents = tuple(copies.get(p, p) for p in node.parents)
        changes = new_of.get(node, ())
        if changes:
            primals = list(c.primals)
            res = None
            for kind, i, v in changes:
                if kind == "p":
                    primals[i] = v
                elif kind == "o":
                    c.out = v
                else:
                    if res is None:
                        res, res_tree = tree_flatten(c.residuals)
                    res[i] = v
            c.primals = tuple(primals)
            if res is not None:
                c.residuals = tree_unflatten(res_tree, res)
        copies[node] = c
    new = VJPFunction(fn.out_tree, fn.out_vals, [copies.get(n, n) for n in fn.out_nodes], fn.in_tree,
                      fn.vals, fn.leaves, fn.name, fn.transform, fn.once)
    new._residuals = (values, [[(copies[n], kind, i) for n, kind, i in places] for places in slots])
    return new


register_pytree_node(VJPFunction, _flatten_vjp, _unflatten_vjp)

def _vjp(f, primals, has_aux, transform, once: bool = False, trace_type: type = RecordTrace):
    """vjp's work; with `once` the vjp_fn frees each saved value after its last use, for
    callers that pull back exactly once (grad, jacrev), which so hold at most what the
    remaining backward pass still reads. `trace_type`: the recording trace's class (a
    RecordTrace subclass that also notes where each node was recorded, for
    ad_checkpoint.print_saved_residuals)."""
    name = _fname(f)
    flat, in_tree = tree_flatten(primals)
    vals = _input_values(flat, transform, f"{transform} of {name}")
    if not once:  # vjp_fn may run after the caller has written into its arrays
        vals = [snapshot(v) for v in vals]
    with new_trace(trace_type) as trace:
        leaves = [Leaf() if is_float(aval_of(v).dtype) else None for v in vals]
        # a Python number stays weakly typed (vjp(f, x32, 2.0) is float32, as f(x32, 2.0) is)
        args = [(WeakRecordTracer if type(x) in PY_NUMBERS else RecordTracer)(trace, v, leaf)
                if leaf is not None else v for x, v, leaf in zip(flat, vals, leaves)]
        out = f(*tree_unflatten(in_tree, args))
        if has_aux:
            out, aux = _split_aux(out, f)
    out_tree, out_vals, out_nodes = _traced_outputs(out, trace, name, transform)

    vjp_fn = VJPFunction(out_tree, out_vals, out_nodes, in_tree, vals, leaves, name, transform, once)
    shown = out_vals
    if not once:  # the caller's copies: the graph keeps the recorded values for vjp_fn
        shown = [_own(o) if n is not None or any(o is v for v in vals) else o
                 for o, n in zip(out_vals, out_nodes)]
    out = tree_unflatten(out_tree, shown)
    if has_aux:
        return out, vjp_fn, tree_map(lambda a: _strip(a, trace, own=not once), aux)
    return out, vjp_fn


def _own(x):
    """A writable copy of `x`, a value a transform keeps (a recorded output, a snapshot input),
    for the caller to do with as NumPy arrays allow; `x` itself when it is not an array."""
    return x.copy() if isinstance(x, np.ndarray) else x


def _traced_outputs(out, trace, name: str, transform: str) -> tuple:
    """(tree, values, extras) of the output pytree `out` of a function traced by `trace`
    (grad's recording, jvp's): each leaf's value and its extra (what `trace.unpack` gives
    besides the value: its node, its tangent; None for a leaf that does not depend on the
    inputs)."""
    flat, tree = tree_flatten(out)
    vals, extras = [], []
    for o in flat:
        if isinstance(o, Tracer) and o._trace is trace:
            v, e = trace.unpack(o)
        else:
            v, e = plain_value(o, f"fgrad.{transform}", f"output of {name}"), None
        vals.append(v)
        extras.append(e)
    return tree, vals, extras


def _split_aux(out, f):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise FgradTypeError(f"has_aux=True needs {_fname(f)} to return a pair (output, aux), "
                        f"got {type(out).__name__}", doc="has-aux")
    return out


def _strip(x, trace, own: bool = False):
    """The value behind a tracer of `trace` (aux outputs are not differentiated); with `own`,
    a copy of it (the trace's graph keeps that value, see _own)."""
    inner = x
    while isinstance(inner, Tracer) and inner._trace is trace:
        inner = inner.primal
    if inner is x:
        return x
    return _own(inner) if own else inner


def _zeros_like(v):
    xp = xp_of((v,))
    if xp is not np:  # a GPU value: its zero (co)tangent lives on its device, like the others
        a = aval_of(v)
        return xp.zeros(a.shape, a.dtype)
    return broadcast_in_dim(const(v, 0), aval_of(v).shape, ())


def _ones_like(v):
    a = aval_of(v)
    return xp_of((v,)).ones(a.shape, a.dtype)  # grad's seed on the output's device


def value_and_grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Function returning (f(*args), gradient of f w.r.t. args[argnums]).

    f returns a real scalar; its arguments may be real or complex, and the gradient of a
    complex argument z = x + iy is df/dx - i df/dy (JAX's convention). With holomorphic=True,
    f maps complex arguments to a complex scalar and the result is the complex derivative
    f'(z) (the arguments and the output must then be complex).

    Args:
        f: the function, returning a real scalar (or (scalar, aux) with has_aux=True).
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: f returns (value, aux); the function then returns ((value, aux), gradient).
        holomorphic: f is holomorphic in complex arguments; see above.

    Returns:
        A function of f's arguments returning (value, gradient); the gradient has the
        structure of args[argnums] (a tuple when argnums is a tuple).

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> value, g = fgrad.value_and_grad(lambda x: jnp.sum(x ** 2))(jnp.array([1.0, 2.0]))
        >>> print(value, g)
        5.0 [2. 4.]
    """
    # One positional argument with argnums an int: when it is a float NumPy array, a Python
    # float or a value traced by an enclosing grad, _grad_one does the work without pytrees
    # (grad's fixed cost, paid once per order of a nested grad)
    one = type(argnums) is int and not holomorphic

    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        if one and -len(args) <= argnums < len(args):
            x = args[argnums]
            t = type(x)
            if t is float or ((t is np.ndarray or t is RecordTracer or t is WeakRecordTracer)
                              and x.dtype.kind in "fc"):
                return _grad_one(f, args, kwargs, argnums, has_aux)
        name = _fname(f)
        single, nums = _check_argnums(argnums, len(args), name)
        _check_argnum_inputs("grad", name, args, nums, holomorphic)
        res = _vjp(_partial(f, args, kwargs, nums), tuple(args[i] for i in nums), has_aux, "grad", once=True)
        out, fn = res[0], res[1]
        _check_grad_output(name, out, holomorphic)
        g = fn(_ones_like(out))
        g = g[0] if single else g
        return ((out, res[2]), g) if has_aux else (out, g)
    return value_and_grad_f


def _check_grad_output(name: str, o, holomorphic: bool) -> None:
    """FgradTypeError unless `o` (grad's output, unboxed) is a scalar of a float dtype, or
    of a complex one exactly when `holomorphic`."""
    a = aval_of(o) if hasattr(o, "shape") else None
    if a is None or a.shape != () or a.dtype.kind not in "fc":
        desc = f"shape {a.shape} and dtype {a.dtype}" if a is not None else type(o).__name__
        raise FgradTypeError(
            f"grad requires {name} to return a real scalar float, but it returned {desc}. Use "
            "jacrev/jacfwd for a Jacobian, vjp for vector-Jacobian products, or reduce the "
            "output to a scalar (e.g. .sum()).", doc="grad-nonscalar")
    _check_holomorphic_output("grad", name, 0, a.dtype, holomorphic)


def _grad_one(f, args, kwargs, i: int, has_aux: bool):
    """value_and_grad(f, i, has_aux)(*args, **kwargs) for an args[i] that is a Python float, or
    a NumPy array or RecordTracer of a float or complex dtype (so it passes grad's input
    checks): what _vjp and its vjp_fn do for one leaf, without pytrees, argument checks or
    the pullback's cotangent checks (its seed is built to match the output)."""
    x = args[i]
    weak = type(x) is float
    v = np.asarray(x) if weak else x
    leaf = Leaf()
    full = list(args)
    # (on concrete values only, the tape lets a graph seen before replay its backward pass)
    with new_trace(RecordTrace, _state.trace is EVAL_TRACE) as trace:
        # a Python number stays weakly typed, as in _vjp
        full[i] = (WeakRecordTracer if weak else RecordTracer)(trace, v, leaf)
        out = f(*full, **kwargs)
        if has_aux:
            out, aux = _split_aux(out, f)
    tape, trace.tape = trace.tape, None
    t = type(out)
    if (t is RecordTracer or t is WeakRecordTracer) and out._trace is trace:
        node, value = out.node, out.primal
        o = value
    else:  # a value that does not depend on x, a pytree (an error below), ...
        name = _fname(f)
        out_tree, vals, nodes = _traced_outputs(out, trace, name, "grad")
        value = o = tree_unflatten(out_tree, vals)
        node = nodes[0] if len(nodes) == 1 else None
    if type(o) is np.ndarray and o.shape == () and o.dtype.kind == "f":
        seed = np.ones((), o.dtype)
    else:
        _check_grad_output(_fname(f), o, False)
        seed = _ones_like(o)
    g = None
    if node is not None:
        # a graph structure seen before runs its backward as one program (interpreters/replay.py)
        g = replay_grad(tape, node, seed, leaf, fnp_add)
        if g is NotImplemented:
            g = backward_pass([(node, seed)], add=fnp_add, retain=False).get(id(leaf))
    if g is None:  # the output does not depend on x
        g = _zeros_like(v)
    if has_aux:
        return (value, tree_map(lambda a: _strip(a, trace), aux)), g
    return value, g


def grad(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Gradient of a scalar-valued `f` with respect to args[argnums]; composes to any order.

    For a real-valued f of a complex z = x + iy it is df/dx - i df/dy (JAX's and HIPS
    autograd's convention: grad(abs)(1+2j) == (1-2j)/sqrt(5)). A complex-valued f is a
    TypeError unless holomorphic=True, which gives the complex derivative f'(z) (inputs and
    output must then be complex).

    Args:
        f: the function, returning a real scalar (or (scalar, aux) with has_aux=True); its
            arguments are pytrees of arrays or numbers.
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: f returns (value, aux); the gradient function then returns (gradient, aux).
        holomorphic: f is holomorphic in complex arguments; see above.

    Returns:
        A function of f's arguments returning the gradient, with the structure of
        args[argnums] (a tuple of gradients when argnums is a tuple).

    Example:
        >>> import fgrad
        >>> print(fgrad.grad(lambda x: x ** 3)(2.0))
        12.0
        >>> print(fgrad.grad(fgrad.grad(lambda x: x ** 3))(2.0))
        12.0
        >>> fgrad.grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 5.0)
        (array(5.), array(2.))
    """
    vg = value_and_grad(f, argnums, has_aux, holomorphic)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


# --- jvp, linearize -----------------------------------------------------------------------

def _check_tangents(primals, tangents, fname: str):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise FgradTypeError("jvp takes primals and tangents as tuples (or lists), e.g. "
                        "jvp(f, (x,), (v,)); got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise FgradValueError(f"jvp: primals {p_tree} and tangents {t_tree} have different structures", doc="jvp-structure")
    vals = _input_values(p_flat, "jvp", f"jvp of {fname}")
    touts = []
    for i, (p, raw, t) in enumerate(zip(vals, t_flat, _input_values(t_flat, "jvp", f"jvp of {fname}: tangent"))):
        pa, ta = aval_of(p), aval_of(t)
        if pa.shape != ta.shape:
            raise ShapeError(f"jvp: tangent {i} has shape {ta.shape} but its primal has shape {pa.shape}", doc="jvp-tangent-shape")
        touts.append(_check_tangent(fname, i, p, raw, t))
    return vals, p_tree, touts


def _check_tangent(fname: str, i: int, p, raw, t):
    """The tangent `t` for primal `p`, checked as JAX does: a float primal takes a tangent of
    its dtype (a Python number adapts); an integer primal has no tangent space, so it only
    takes an integer/bool (zero) tangent, fgrad's stand-in for JAX's float0."""
    pa, ta = aval_of(p), aval_of(t)
    if pa.dtype.kind in "fc":
        return _match_dtype(raw, t, pa.dtype, (
            f"jvp of {fname}: tangent {i} has type {ta} but its primal has type {pa}; a tangent must "
            f"have its primal's dtype (JAX's rule). Cast it, e.g. t.astype({pa.dtype.name})."), FgradTypeError,
            "jvp-tangent-dtype")
    if ta.dtype.kind not in "biu":
        raise DifferentiationError(
            f"jvp of {fname}: primal {i} has dtype {pa.dtype}, which has no derivatives, but its tangent "
            f"has type {ta}. Pass a float primal (e.g. 3.0 instead of 3, or x.astype(float)) to "
            "differentiate with respect to it, or a zero tangent of the primal's dtype "
            "(zeros_like(x), fgrad's stand-in for JAX's float0) to hold it constant.", doc="jvp-int-primal")
    return None


def jvp(f: Callable, primals: Sequence, tangents: Sequence, has_aux: bool = False) -> tuple[Any, ...]:
    """(f(*primals), J·tangents) : forward-mode derivative; with has_aux=True, f returns
    (output, aux) and jvp returns (output, tangent_out, aux).

    Each tangent has its primal's shape and dtype (a Python number adapts to a float primal).
    An integer primal is held constant and takes a zero tangent of its own dtype (JAX's
    float0). A complex primal takes a complex tangent, pushed forward complex-linearly (JAX's
    convention).

    Args:
        f: the function; its arguments and output are pytrees of arrays or numbers.
        primals: a tuple or list with one value per positional argument of f.
        tangents: a tuple or list like primals: the direction of differentiation.
        has_aux: f returns (output, aux).

    Returns:
        (f(*primals), the directional derivative of f along tangents), and aux with
        has_aux=True.

    Example:
        >>> import fgrad
        >>> fgrad.jvp(lambda x: x ** 2, (3.0,), (1.0,))
        (array(9.), array(6.))
    """
    name = _fname(f)
    vals, in_tree, ts = _check_tangents(primals, tangents, name)
    raw = tree_flatten(tuple(primals))[0]
    with new_trace(JVPTrace) as trace:
        # a Python number stays weakly typed (jvp of f(x32, 2.0) is float32, as f(x32, 2.0) is)
        args = [(WeakJVPTracer if type(x) in PY_NUMBERS else JVPTracer)(trace, v, t)
                if t is not None else v for x, v, t in zip(raw, vals, ts)]
        out = f(*tree_unflatten(in_tree, args))
        if has_aux:
            out, aux = _split_aux(out, f)
    out_tree, outs, touts = _traced_outputs(out, trace, name, "jvp")
    touts = [_zeros_like(o) if t is None else t for o, t in zip(outs, touts)]
    res = (tree_unflatten(out_tree, outs), tree_unflatten(out_tree, touts))
    if has_aux:
        return res + (tree_map(lambda a: _strip(a, trace), aux),)
    return res


def linearize(f: Callable, *primals, has_aux: bool = False) -> tuple[Any, ...]:
    """(f(*primals), f_jvp): f_jvp(*tangents) replays only the tangent computation. With
    has_aux=True, f returns (output, aux) and linearize returns (output, f_jvp, aux).
    Every primal must be a real or complex float (DifferentiationError otherwise).

    Args:
        f: the function; its arguments and output are pytrees of arrays or numbers.
        *primals: the point at which to linearize, one value per positional argument.
        has_aux: f returns (output, aux).

    Returns:
        (output, f_jvp), f_jvp mapping tangents (one per primal) to the output's tangent.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> y, f_jvp = fgrad.linearize(jnp.sin, 0.0)
        >>> print(y, f_jvp(2.0))
        0.0 2.0
    """
    name = _fname(f)
    flat, in_tree = tree_flatten(primals)
    vals = _input_values(flat, "linearize", f"linearize of {name}")
    for i, v in enumerate(vals):
        _check_differentiable("linearize", name, v, f"primal {i}",
                              "close over it (lambda x: f(x, n)) instead of passing it")
    # freeze: f_jvp reads the residuals as they were now (core.trace.snapshot)
    with new_trace(StagingTrace, "linearize", True) as staging:
        with new_trace(JVPTrace) as trace:
            args = [JVPTracer(trace, v, staging.new_arg(aval_of(v))) for v in vals]
            out = f(*tree_unflatten(in_tree, args))
            if has_aux:
                out, aux = _split_aux(out, f)
        out_tree, primal_outs, tangent_outs = _traced_outputs(out, trace, name, "linearize")
        tangent_outs = [_zeros_like(o) if t is None else t for o, t in zip(primal_outs, tangent_outs)]
        jaxpr, consts = staging.to_jaxpr(tangent_outs)

    def f_jvp(*tangents):
        t_flat, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise FgradValueError(f"f_jvp: tangents {t_tree} must have the primals' structure {in_tree}")
        ts = []
        for i, (v, raw) in enumerate(zip(vals, t_flat)):
            t = plain_value(raw, "fgrad.linearize", f"f_jvp of {name}: tangent {i}")
            if aval_of(t).shape != aval_of(v).shape:
                raise ShapeError(f"f_jvp: tangent {i} has shape {aval_of(t).shape} but its primal has "
                                 f"shape {aval_of(v).shape}", doc="linearize-tangent-shape")
            ts.append(_check_tangent(name, i, v, raw, t))
        outs = eval_jaxpr(jaxpr, consts, *ts)
        return tree_unflatten(out_tree, list(outs))

    primal = tree_unflatten(out_tree, primal_outs)
    if has_aux:
        return primal, f_jvp, tree_map(lambda a: _strip(a, trace), aux)
    return primal, f_jvp


# --- Jacobians ----------------------------------------------------------------------------

def _std_basis(avals) -> tuple[int, list]:
    """The identity over the concatenated, flattened leaves of `avals`, split per leaf: leaf
    k's block has shape (N,) + its shape and its dtype (a tangent or cotangent must have its
    value's dtype), where N is the total size. Row i is the i-th basis vector."""
    n = sum(a.size for a in avals)
    blocks, start = [], 0
    for a in avals:
        blocks.append(np.eye(n, a.size, -start, dtype=a.dtype).reshape((n,) + tuple(a.shape)))
        start += a.size
    return n, blocks


def _split_basis(v, starts, avals, other_shape, other_first: bool) -> list:
    """`v` has shape (N,) + other_shape, its first axis running over the basis: the block of
    each leaf in `avals` (laid out from `starts` along that axis), shaped leaf shape +
    other_shape, or other_shape + leaf shape with `other_first` (a view: no copy)."""
    other = tuple(other_shape)
    n = aval_of(v).shape[0]
    out = []
    for start, a in zip(starts, avals):
        block = v
        if a.size != n:
            block = slice_array(v, (start,) + (0,) * len(other), (start + a.size,) + other)
        block = reshape(block, tuple(a.shape) + other)
        if other_first and a.shape and other:
            nd = len(a.shape)
            block = transpose(block, tuple(range(nd, nd + len(other))) + tuple(range(nd)))
        out.append(block)
    return out


def _starts(avals) -> list[int]:
    starts, s = [], 0
    for a in avals:
        starts.append(s)
        s += a.size
    return starts


def _check_jacobian_rank(transform: str, fname: str, out_shape, in_shape):
    """A Jacobian has out.ndim + in.ndim dimensions; NumPy arrays have at most MAX_NDIM."""
    if len(out_shape) + len(in_shape) > MAX_NDIM:
        raise ShapeError(f"{transform} of {fname}: the Jacobian of an output of shape {tuple(out_shape)} "
                         f"with respect to an input of shape {tuple(in_shape)} would have "
                         f"{len(out_shape) + len(in_shape)} dimensions, more than NumPy's limit of "
                         f"{MAX_NDIM}. Reshape the input or the output (e.g. ravel it) first.")


def jacrev(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Jacobian by reverse mode: f is recorded once and its pullback applied to every basis
    cotangent at once (vmap); shape out.shape + in.shape.
    With has_aux=True, f returns (output, aux) and the Jacobian function returns (jac, aux).
    The outputs must be real (a complex input's row is then df/dx - i df/dy, as grad's),
    unless holomorphic=True: inputs and outputs complex, and the Jacobian of complex
    derivatives (TypeError otherwise, as JAX's).

    Args:
        f: the function; its arguments and output are pytrees of arrays.
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: f returns (output, aux).
        holomorphic: f is holomorphic in complex arguments.

    Returns:
        A function of f's arguments returning the Jacobian (a pytree like the output, each
        leaf of shape out.shape + in.shape).

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> print(fgrad.jacrev(lambda x: jnp.array([x[0] * x[1], x[0]]))(jnp.array([2.0, 3.0])))
        [[3. 2.]
         [1. 0.]]
    """
    return _jacrev(f, argnums, has_aux, "jacrev", holomorphic)


def _jacrev(f, argnums, has_aux, transform, holomorphic=False):
    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        name = _fname(f)
        single, nums = _check_argnums(argnums, len(args), name)
        _check_argnum_inputs("jacrev" if holomorphic else transform, name, args, nums, holomorphic)
        dyn = [args[i] for i in nums]
        # the pullback runs once (under vmap), so it frees what it read as it goes
        res = _vjp(_partial(f, args, kwargs, nums), tuple(dyn), has_aux, transform, once=True)
        out, pullback = res[0], res[1]
        out_flat, out_tree = tree_flatten(out)
        in_flat, in_tree = tree_flatten(tuple(dyn))
        out_avals = [aval_of(o) for o in out_flat]
        for k, oa in enumerate(out_avals):
            _check_holomorphic_output("jacrev", name, k, oa.dtype, holomorphic)
        in_avals = [aval_of(as_value(x)) for x in in_flat]
        for oa in out_avals:
            for xa in in_avals:
                _check_jacobian_rank(transform, name, oa.shape, xa.shape)
        m, basis = _std_basis(out_avals)
        if m == 1:  # a scalar output (grad, hessian's inner Jacobian): one pullback, no vmap
            rows = [reshape(g, (1,) + tuple(a.shape)) for g, a in
                    zip(tree_flatten(pullback(tree_unflatten(out_tree, [b[0] for b in basis])))[0], in_avals)]
        elif m == 0:  # no output element: no row to pull back
            rows = [np.zeros((0,) + tuple(a.shape), a.dtype) for a in in_avals]
        else:
            rows = tree_flatten(vmap(lambda *cts: pullback(tree_unflatten(out_tree, list(cts))))(*basis))[0]
        # rows[j]: (M,) + in_j.shape; Jacobian block (k, j): out_k.shape + in_j.shape
        starts = _starts(out_avals)
        blocks = [_split_basis(r, starts, out_avals, a.shape, other_first=False)
                  for r, a in zip(rows, in_avals)]
        per_out = []
        for k in range(len(out_flat)):
            jac = tree_unflatten(in_tree, [blocks[j][k] for j in range(len(in_flat))])
            per_out.append(jac[0] if single else jac)
        jac = tree_unflatten(out_tree, per_out)
        return (jac, res[2]) if has_aux else jac
    return jac_f


def jacfwd(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """Jacobian by forward mode: every basis tangent is pushed through one jvp at once
    (vmap); shape out.shape + in.shape.
    With has_aux=True, f returns (output, aux) and the Jacobian function returns (jac, aux).
    The differentiated arguments must be real floats (outputs may be complex), unless
    holomorphic=True: inputs and outputs complex, and the Jacobian of complex derivatives
    (DifferentiationError/TypeError otherwise, as JAX's).

    Args:
        f: the function; its arguments and output are pytrees of arrays.
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: f returns (output, aux).
        holomorphic: f is holomorphic in complex arguments.

    Returns:
        A function of f's arguments returning the Jacobian (a pytree like the output, each
        leaf of shape out.shape + in.shape).

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> print(fgrad.jacfwd(lambda x: x ** 2)(jnp.array([1.0, 2.0])))
        [[2. 0.]
         [0. 4.]]
    """
    return _jacfwd(f, argnums, has_aux, "jacfwd", holomorphic)


def _jacfwd(f, argnums, has_aux, transform, holomorphic=False):
    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        name = _fname(f)
        single, nums = _check_argnums(argnums, len(args), name)
        _check_argnum_inputs(transform, name, args, nums, holomorphic)
        dyn = tuple(args[i] for i in nums)
        in_flat, in_tree = tree_flatten(dyn)
        in_avals = [aval_of(as_value(x)) for x in in_flat]
        f_dyn = _partial(f, args, kwargs, nums)
        n, basis = _std_basis(in_avals)
        if n == 0:  # no input element: no tangent to push, only the output's shape to read
            out = f_dyn(*dyn)
            if has_aux:
                out, aux = _split_aux(out, f)
            out_flat, out_tree = tree_flatten(out)
            touts = [np.zeros((0,) + aval_of(plain_value(o, f"fgrad.{transform}", f"output of {name}")).shape,
                              aval_of(as_value(o)).dtype) for o in out_flat]
        else:
            def push(*ts):
                return jvp(f_dyn, dyn, tree_unflatten(in_tree, list(ts)), has_aux=has_aux)
            # the primal output and aux do not depend on the tangents: one copy (out_axes None)
            res = vmap(push, out_axes=(None, 0, None) if has_aux else (None, 0))(*basis)
            out, aux = res[0], (res[2] if has_aux else None)
            out_flat, out_tree = tree_flatten(out)
            touts = tree_flatten(res[1])[0]
        starts = _starts(in_avals)
        per_out = []
        for k, (o, t) in enumerate(zip(out_flat, touts)):
            oa = aval_of(as_value(o, f"output of {name}"))
            if holomorphic:
                _check_holomorphic_output("jacfwd", name, k, oa.dtype, holomorphic)
            for xa in in_avals:
                _check_jacobian_rank(transform, name, oa.shape, xa.shape)
            # t: (N,) + out.shape; Jacobian block j: out.shape + in_j.shape
            blocks = _split_basis(t, starts, in_avals, oa.shape, other_first=True)
            jac = tree_unflatten(in_tree, blocks)
            per_out.append(jac[0] if single else jac)
        jac = tree_unflatten(out_tree, per_out)
        return (jac, aux) if has_aux else jac
    return jac_f


def hessian(f: Callable, argnums: int | Sequence[int] = 0, has_aux: bool = False, holomorphic: bool = False) -> Callable:
    """jacfwd(jacrev(f)): forward-over-reverse second derivatives. With has_aux=True, f
    returns (output, aux) and the Hessian function returns (hessian, aux). holomorphic=True
    passes to both (a holomorphic f of complex inputs: the matrix of f''(z)).

    Args:
        f: the function, returning a real scalar.
        argnums: the position, or a tuple of positions, of the arguments to differentiate.
        has_aux: f returns (output, aux).
        holomorphic: f is holomorphic in complex arguments.

    Returns:
        A function of f's arguments returning the Hessian, of shape in.shape + in.shape.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> print(fgrad.hessian(lambda x: jnp.sum(x ** 3))(jnp.array([1.0, 2.0])))
        [[ 6.  0.]
         [ 0. 12.]]
    """
    return _jacfwd(_jacrev(f, argnums, has_aux, "hessian", holomorphic), argnums, has_aux, "hessian",
                   holomorphic)


# --- vmap ---------------------------------------------------------------------------------

def _is_axis(a) -> bool:
    return a is None or (isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_)))


def _check_axis_leaves(spec, leaves, what: str, fname: str):
    for a in leaves:
        if not _is_axis(a):
            raise FgradTypeError(f"vmap of {fname}: {what} must be an int, None, or a (nested) tuple/list/"
                            f"dict of those, got {a!r:.60} (of type {type(a).__name__}) in "
                            f"{what}={spec!r:.80}", doc="vmap-in-axes-type")


def _in_axes_per_leaf(in_axes, args, fname):
    """One axis (or None) per leaf of args: in_axes is an int, None, or a tuple/list with one
    entry per positional argument, each a prefix of its argument's pytree (None a leaf)."""
    if _is_axis(in_axes):
        return [in_axes] * len(tree_flatten(args)[0])
    if not isinstance(in_axes, (tuple, list)):
        raise FgradTypeError(f"vmap of {fname}: in_axes must be an int, None, or a tuple with one entry "
                        f"per positional argument, got {type(in_axes).__name__} {in_axes!r:.80}")
    if len(in_axes) != len(args):
        raise FgradValueError(f"vmap of {fname}: in_axes must be an int, None, or a tuple with one entry "
                         f"per positional argument ({len(args)}), got {in_axes!r:.80} with "
                         f"{len(in_axes)}")
    axes = _broadcast_axes(tuple(in_axes), tuple(args), "in_axes", "the positional arguments", fname)
    _check_axis_leaves(in_axes, axes, "in_axes", fname)
    return axes


def _broadcast_axes(spec, tree, what: str, against: str, fname: str) -> list:
    try:
        return broadcast_prefix(spec, tree, prefix_name=what, full_name=against)
    except ValueError as e:
        raise FgradValueError(f"vmap of {fname}: {e}",
                              doc="vmap-out-axes-prefix" if what == "out_axes" else "vmap-in-axes-prefix") from None


def vmap(f: Callable, in_axes=0, out_axes=0, axis_size: int | None = None) -> Callable:
    """Map f over an axis of its inputs; composes with every other transform.

    in_axes: an int, None, or a tuple with one entry per positional argument; each entry is
    an int, None, or a pytree prefix of its argument (None leaves: not mapped). Keyword
    arguments are mapped over axis 0 (as in JAX; pass an unmapped value positionally with
    in_axes None, or close over it). Unmapped arguments are passed through untouched (a
    Python number stays a weakly typed Python number).
    out_axes: an int, None, or a pytree prefix of the output; None marks an output that is
    the same for every example (an error if it depends on a mapped input).
    axis_size: the batch size, needed when no input is mapped; checked against mapped axes.

    Args:
        f: the function to map; its arguments and output are pytrees of arrays.
        in_axes: see above.
        out_axes: see above.
        axis_size: see above.

    Returns:
        A function taking batched arguments and returning f's outputs stacked along
        out_axes.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> rows_dot_w = fgrad.vmap(jnp.dot, in_axes=(0, None))
        >>> print(rows_dot_w(jnp.ones((3, 2)), jnp.array([1.0, 2.0])))
        [3. 3. 3.]
    """
    @functools.wraps(f)
    def vf(*args, **kwargs):
        name = _fname(f)
        axes = _in_axes_per_leaf(in_axes, args, name)
        pairs, in_tree = tree_flatten_with_path((args, kwargs))
        n_pos = len(axes)
        axes = axes + [0] * (len(pairs) - n_pos)  # keyword arguments: axis 0, as in JAX
        labels = [(f"argument {p[1].idx}" if top.idx == 0 else f"keyword argument {p[1].key!r}")
                  + keystr(p[2:]) for p, _ in pairs for top in [p[0]]]
        vals, sizes = [], {}
        for i, ((_, x), a) in enumerate(zip(pairs, axes)):
            refuse_foreign(x, "fgrad.vmap")
            if a is None:  # not mapped: passed through as it is
                vals.append(x)
                continue
            v = as_value(x, f"vmap of {name}: {labels[i]}")
            shape = aval_of(v).shape
            nd = len(shape)
            if not -nd <= a < nd:
                kw = (" Keyword arguments are mapped over axis 0, as in JAX: pass an unmapped value "
                      "positionally with in_axes=None, or close over it.") if i >= n_pos else ""
                use = f"use an axis in [-{nd}, {nd}), or None" if nd else "a scalar has no axis to map: use None"
                raise FgradValueError(f"vmap of {name}: in_axes={a} but {labels[i]} has shape {shape}: "
                                      f"{use} for a value that is not mapped." + kw,
                                      doc="vmap-keyword-scalar" if kw else "vmap-in-axes")
            axes[i] = int(a) % nd
            sizes[i] = shape[axes[i]]
            vals.append(v)
        n = _axis_size(name, sizes, axes, labels, axis_size)
        with new_trace(BatchTrace, n, loop_batch) as trace:
            tracers = [v if a is None else BatchTracer(trace, v, a) for v, a in zip(vals, axes)]
            pos, kw = tree_unflatten(in_tree, tracers)
            out = f(*pos, **kw)
        out_pairs, out_tree = tree_flatten_with_path(out)
        o_axes = _out_axes_per_leaf(out_axes, out, name)
        res = []
        for (path, o), a in zip(out_pairs, o_axes):
            k = f"output{keystr(path)}"
            refuse_foreign(o, "fgrad.vmap")
            if isinstance(o, BatchTracer) and o._trace is trace:
                if a is None:
                    raise FgradValueError(
                        f"vmap of {name}: out_axes is None for {k}, so it must be the same for every "
                        "example, but it depends on a mapped input. Give it an "
                        "int out_axes, or return a value that does not depend on the mapped inputs.", doc="vmap-out-axes-none")
                v = move_axis(o.val, o.bdim, _out_axis(name, a, k, len(o.val.shape)))
            elif a is None:
                res.append(o)  # not mapped: returned as it is
                continue
            else:
                o = _beside(vals, as_value(o, f"output of {name}"))
                shape = aval_of(o).shape
                v = broadcast_in_dim(o, (n,) + shape, tuple(range(1, len(shape) + 1)))
                v = move_axis(v, 0, _out_axis(name, a, k, len(v.shape)))
            res.append(v)
        return tree_unflatten(out_tree, res)
    return vf


def _beside(vals, o):
    """`o` on the inputs' device: an output that does not depend on the inputs (a constant of
    the traced function) is a host array, and comes back on the GPU when the inputs are there."""
    if isinstance(o, (np.ndarray, np.generic)):
        xp = xp_of(vals)
        if xp is not np:
            return xp.asarray(o)
    return o


def _axis_size(name, sizes, axes, labels, axis_size) -> int:
    if axis_size is not None and (not isinstance(axis_size, (int, np.integer))
                                  or isinstance(axis_size, (bool, np.bool_)) or axis_size < 0):
        raise FgradTypeError(f"vmap of {name}: axis_size must be a non-negative int, got {axis_size!r:.60}", doc="vmap-axis-size-type")
    if not sizes:
        if axis_size is None:
            raise FgradValueError(f"vmap of {name}: no input is mapped (every in_axes is None): pass "
                             "axis_size=n to map over n examples, or map an input.", doc="vmap-no-mapped-input")
        return int(axis_size)
    found = set(sizes.values())
    if len(found) > 1 or (axis_size is not None and found != {axis_size}):
        detail = ", ".join(f"{labels[i]} axis {axes[i]} has size {n}" for i, n in sizes.items())
        given = f"axis_size={axis_size}, but " if axis_size is not None else ""
        raise FgradValueError(f"vmap of {name}: the mapped axes have different sizes: {given}{detail}",
                              doc="vmap-axis-size" if axis_size is not None else "vmap-sizes")
    return next(iter(found))


def _out_axes_per_leaf(out_axes, out, fname):
    if _is_axis(out_axes):
        return [out_axes] * len(tree_flatten(out)[0])
    axes = _broadcast_axes(out_axes, out, "out_axes", "the output", fname)
    _check_axis_leaves(out_axes, axes, "out_axes", fname)
    return axes


def _out_axis(name, a, k, nd) -> int:
    if not -nd <= a < nd:
        raise FgradValueError(f"vmap of {name}: out_axes={a} for {k}, which has {nd} dimension(s) "
                         f"with the batch axis: use an axis in [-{nd}, {nd}).", doc="vmap-out-axes-range")
    return int(a) % nd


# --- stop_gradient ------------------------------------------------------------------------

def stop_gradient(x: Any) -> Any:
    """Identity whose derivative is zero (applies to every leaf of a pytree)."""
    return tree_map(lambda v: ew.stop_gradient(plain_value(v, "fgrad.stop_gradient")), x)


# --- staging: make_jaxpr, jit -------------------------------------------------------------



def _static_positions(static_argnums, nargs: int, fname: str) -> set:
    out = set()
    for i in static_argnums:
        if not isinstance(i, (int, np.integer)):
            raise FgradTypeError(f"static_argnums of {fname} must be integers, got {i!r}")
        if -nargs <= i < nargs:
            out.add(int(i) % nargs)
    return out


def _split_static(f, args, kwargs, static_argnums, static_argnames):
    """The call's traced part (positional and keyword leaves, as JAX traces keywords too)
    and its static part (a hashable key)."""
    fname = _fname(f)
    static = _static_positions(static_argnums, len(args), fname)
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static)
    dyn_kwargs = {k: v for k, v in kwargs.items() if k not in static_argnames}
    static_items = tuple((i, _static_key(args[i], f"static argument {i} of {fname}")) for i in sorted(static))
    static_items += tuple((k, _static_key(v, f"static argument {k!r} of {fname}"))
                          for k, v in sorted(kwargs.items()) if k in static_argnames)
    return static, dyn_args, dyn_kwargs, static_items


def _stage(f, args, kwargs, static_argnums, name, static_argnames=()):
    fname = _fname(f)
    static, dyn_args, dyn_kwargs, _ = _split_static(f, args, kwargs, static_argnums, static_argnames)
    dyn_idx = [i for i in range(len(args)) if i not in static]
    flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
    vals = _input_values(flat, name, f"{name} of {fname}")
    # freeze: the jaxpr keeps closed-over arrays as they are now (core.trace.snapshot)
    with new_trace(StagingTrace, name, True) as st:
        labels = _leaf_labels(f, dyn_args, dyn_idx) + [
            lab for k, v in sorted(dyn_kwargs.items())
            for lab in _labels_for(v, f"keyword argument {k!r} of {fname}")]
        # A Python number stays weakly typed when traced, as it is eagerly (x32 * 2.0 is float32).
        tracers = [st.new_arg(weak_aval(aval_of(v)) if type(x) in PY_NUMBERS else aval_of(v), label)
                   for x, v, label in zip(flat, vals, labels)]
        dyn, dyn_kw = tree_unflatten(in_tree, tracers)
        full = list(args)
        for i, v in zip(dyn_idx, dyn):
            full[i] = v
        out = f(*full, **{**kwargs, **dyn_kw})
        out_flat, out_tree = tree_flatten(out)
        for o in out_flat:
            refuse_foreign(o, f"fgrad.{name}")
        jaxpr, consts = st.to_jaxpr(out_flat)
    jaxpr, used = dce_jaxpr(cse_jaxpr(jaxpr))
    return ClosedJaxpr(jaxpr, [consts[i] for i in used]), out_tree, vals


def _labels_for(arg, base: str) -> list[str]:
    n = len(tree_flatten(arg)[0])
    return [base] if n == 1 else [f"leaf {k} of {base}" for k in range(n)]


def _leaf_labels(f, dyn_args, positions) -> list[str]:
    """'argument x of f' for each flattened input leaf (with the leaf's index in a pytree)."""
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    labels = []
    for pos, arg in zip(positions, dyn_args):
        name = params[pos] if pos < len(params) else str(pos)
        labels.extend(_labels_for(arg, f"argument {pos} ({name!r}) of {_fname(f)}"))
    return labels


def _as_tuple(v, what: str) -> tuple:
    if v is None:
        return ()
    if isinstance(v, (int, np.integer, str)):
        return (v,)
    return tuple(v)


class _JitSwitch(threading.local):
    """disable_jit's flag: a thread inside disable_jit has its own (`local`); every other
    thread reads the process-wide one that config.update("jax_disable_jit", ...) sets."""
    local: bool | None = None
    process_wide = [False]

    @property
    def disabled(self) -> bool:
        return self.process_wide[0] if self.local is None else self.local


_JIT_SWITCH = _JitSwitch()
# How many disable_jit(True) contexts are open in any thread, plus one while config's
# process-wide switch is on: a jitted call reads this int, and the per-thread flag only when
# it is not 0 (the flag costs a few percent of a small jitted call)
_jit_disabled_uses = 0


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside this context, jit-decorated functions run their Python eagerly, every call
    (print and breakpoints see concrete values), as `jax.disable_jit`."""
    global _jit_disabled_uses
    prev = _JIT_SWITCH.local
    _JIT_SWITCH.local = bool(disable)
    _jit_disabled_uses += bool(disable)
    try:
        yield
    finally:
        _JIT_SWITCH.local = prev
        _jit_disabled_uses -= bool(disable)


def _set_process_wide_disable_jit(value: bool) -> None:
    """config's jax_disable_jit: for every thread not inside disable_jit itself."""
    global _jit_disabled_uses
    _jit_disabled_uses += int(value) - int(_JitSwitch.process_wide[0])
    _JitSwitch.process_wide[0] = value


def _run_lowered(jitted, args, kwargs, nums, names, want, *call_args, **call_kwargs):
    """Call jitted with the lowering's static arguments put back among call_args (a
    compiled program takes only the traced ones, as JAX's), after checking that the traced
    ones have the shapes and dtypes it was compiled for."""
    static = _static_positions(nums, len(args), _fname(jitted))
    it = iter(call_args)
    full = [args[i] if i in static else next(it, None) for i in range(len(args))]
    full += list(it)
    kw = {**{k: v for k, v in kwargs.items() if k in names}, **call_kwargs}
    got = _signature(full, kw, static, names)
    if got != want:
        raise FgradTypeError(
            f"Argument types differ from the types for which this computation was compiled: "
            f"compiled for {want}, called with {got}; lower and compile again for these arguments.")
    return jitted(*full, **kw)


def _signature(args, kwargs, static, names) -> list:
    dyn = ([a for i, a in enumerate(args) if i not in static],
           {k: v for k, v in kwargs.items() if k not in names})
    flat, tree = tree_flatten(dyn)
    return [str(tree)] + [str(aval_of(as_value(x))) for x in flat]


class Compiled:
    """A jitted function compiled for one signature (`jit(f).lower(*args).compile()`):
    call it with the traced arguments only (static ones are fixed at lowering)."""

    def __init__(self, program, run: Callable) -> None:
        self._program, self._run = program, run

    def __call__(self, *args, **kwargs):
        return self._run(*args, **kwargs)

    def as_text(self) -> str:
        """The compiled program's source."""
        return self._program.as_text()


class Lowered:
    """A jitted function lowered for arguments like some (`jit(f).lower(*args)`); reads of
    any other attribute go to the program (`.as_text()`, `.steps`, `.source`)."""

    def __init__(self, program, run: Callable) -> None:
        self._program, self._run = program, run

    @property
    def program(self):
        """The compiled program itself (fgrad.interpreters.compile's Program)."""
        return self._program

    def compile(self) -> Compiled:
        """The program, loaded (its kernels compile on first run), callable on the traced
        arguments."""
        return Compiled(self._program, self._run)

    def __getattr__(self, name: str):
        if name.startswith("_"):  # (copy and pickle probe before __init__ ran)
            raise AttributeError(name)
        return getattr(self._program, name)


class Traced:
    """A jitted function traced for arguments like some (`jit(f).trace(*args)`)."""

    def __init__(self, jaxpr: ClosedJaxpr, lower: Callable[[], Lowered]) -> None:
        self.jaxpr = jaxpr
        self._lower = lower

    def lower(self) -> Lowered:
        """The compiled program for the traced arguments."""
        return self._lower()


def make_jaxpr(f: Callable, static_argnums: Sequence[int] | int = (),
               static_argnames: Sequence[str] | str = (), return_shape: bool = False) -> Callable:
    """make_jaxpr(f)(*args, **kwargs): the typed IR of f on arguments shaped like args.
    Keyword arguments are traced like positional ones unless static: a parameter in
    static_argnums or static_argnames is static however it is passed (as jit's). With
    return_shape, (jaxpr, f's output as a pytree of ShapeDtypeStruct)."""
    nums, names = _static_args(f, static_argnums, static_argnames)

    @functools.wraps(f)
    def make(*args, **kwargs):
        closed, out_tree = _stage(f, args, kwargs, nums, "make_jaxpr", names)[:2]
        if not return_shape:
            return closed
        return closed, tree_unflatten(out_tree, [ShapeDtypeStruct(a.shape, a.dtype, is_weak(a))
                                                 for a in closed.out_avals])
    return make


def _static_args(f, static_argnums, static_argnames) -> tuple[tuple, tuple]:
    """JAX's reading of static_argnums/static_argnames: a parameter named static is static
    also when passed by position, and one numbered static also when passed by keyword (for
    parameters that can be passed both ways)."""
    nums, names = _as_tuple(static_argnums, "static_argnums"), _as_tuple(static_argnames, "static_argnames")
    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        return nums, names
    either = (inspect.Parameter.POSITIONAL_OR_KEYWORD,)
    positional = [p for p in params if p.kind in (inspect.Parameter.POSITIONAL_ONLY, *either)]
    nums = tuple(dict.fromkeys(nums + tuple(i for i, p in enumerate(positional)
                                            if p.name in names and p.kind in either)))
    npos = len(positional)
    names = tuple(dict.fromkeys(names + tuple(
        positional[i].name for i in nums if isinstance(i, (int, np.integer)) and -npos <= i < npos
        and positional[i].kind in either)))
    return nums, names


def jit(f: Callable | None = None, static_argnums: Sequence[int] | int = (),
        static_argnames: Sequence[str] | str = ()) -> Callable:
    """Trace f once per input signature into IR, compile the IR, and run the compiled
    program on later calls.

    Positional and keyword arguments are traced (a new value of the same shape and dtype
    reuses the trace); those in `static_argnums`/`static_argnames` are Python values that
    key the cache instead (they must be hashable). Python numbers are traced weakly typed,
    so jit never changes a result's dtype.

    The program (fgrad.interpreters.compile) fuses element-wise regions into Numba loops
    and calls every other primitive's impl directly; `jitted.lower(*args).as_text()` shows
    it. Under an enclosing transform (grad, vmap, ...), with CuPy arrays or under
    debug_nans, the IR is replayed through the primitives instead, which those need.
    `jitted.stats` counts traces and compilations.

    As in JAX, a parameter named in static_argnames is static however it is passed
    (positionally too), and `jit(static_argnums=...)` without f is a decorator.
    `jitted.trace(*args).jaxpr` is the traced IR and `jitted.lower(*args).compile()` the
    compiled program, callable on arguments like args. Under `disable_jit()` (or
    `config.update("jax_disable_jit", True)`) f runs eagerly.

    Args:
        f: the function; its arguments and output are pytrees of arrays. Without it, jit
            returns a decorator.
        static_argnums: positions of arguments that are hashable Python values, not traced.
        static_argnames: names of arguments that are hashable Python values, not traced.

    Returns:
        The compiled function, called like f.

    Example:
        >>> import fgrad
        >>> import fgrad.numpy as jnp
        >>> f = fgrad.jit(lambda x: jnp.sum(x ** 2))
        >>> print(f(jnp.array([1.0, 2.0])), f(jnp.array([3.0, 4.0])))
        5.0 25.0
        >>> f.stats
        JitStats(traces=1, compiles=1)
    """
    if f is None:
        return functools.partial(jit, static_argnums=static_argnums, static_argnames=static_argnames)
    nums, names = _static_args(f, static_argnums, static_argnames)
    cache: dict = {}  # signature -> Executable
    fast: dict = {}   # fast_args key of positional arguments -> the compiled program's runner
    stats = JitStats()
    admits_fast = not nums and not names

    def executable(args, kwargs):
        _, dyn_args, dyn_kwargs, static_items = _split_static(f, args, kwargs, nums, names)
        flat, in_tree = tree_flatten((dyn_args, dyn_kwargs))
        vals = _input_values(flat, "jit", f"jit of {_fname(f)}")
        # everything the trace depends on: structure, avals, weak typing and the static values
        key = (in_tree, tuple((a.shape, a.dtype, type(v).__module__, type(x) in PY_NUMBERS)
                              for x, v in zip(flat, vals) for a in [aval_of(v)]), static_items)
        entry = cache.get(key)
        if entry is None:
            closed, out_tree = _stage(f, args, kwargs, nums, "jit", names)[:2]
            stats.traces += 1
            entry = cache[key] = Executable(closed, out_tree, stats)
        # no array among the inputs (Python numbers only): the outputs are fgrad.numpy
        # Arrays, as JAX's jit gives jax.Arrays; arrays in give arrays of their kind out
        numbers = not any(isinstance(x, np.ndarray) or hasattr(x, "__cuda_array_interface__")
                          for x in flat)
        return entry, vals, numbers

    @functools.wraps(f)
    def jitted(*args, **kwargs):
        if _jit_disabled_uses and _JIT_SWITCH.disabled:
            return f(*args, **kwargs)
        found = fast_args(args) if admits_fast and not kwargs else None
        if found is not None:
            run = fast.get(found[0])
            if run is not None and _state.trace is EVAL_TRACE and not _state.debug_nans:
                return run(*found[1])
        entry, vals, numbers = executable(args, kwargs)
        out = entry(vals)
        if xp_of(vals) is not np:  # outputs that are constants of the trace come out on the host
            out = tree_map(lambda o: _beside(vals, o), out)
        if numbers and _state.trace is EVAL_TRACE:
            out = tree_map(as_array, out)
        if found is not None and entry.can_compile(vals):
            run = entry.fast()
            fast[found[0]] = _arrays_out(run) if numbers else run
        return out

    def lower(*args, **kwargs) -> Lowered:
        """The compiled program for arguments like these (`.as_text()`: its source;
        `.compile()`: the program, callable on arguments like these)."""
        entry = executable(args, kwargs)[0]
        want = _signature(args, kwargs, _static_positions(nums, len(args), _fname(f)), names)
        return Lowered(entry.lower(), functools.partial(_run_lowered, jitted, args, kwargs, nums, names, want))

    def trace(*args, **kwargs) -> Traced:
        """The trace of f on arguments like these: `.jaxpr` (a ClosedJaxpr), `.lower()`."""
        return Traced(_stage(f, args, kwargs, nums, "jit", names)[0], functools.partial(lower, *args, **kwargs))

    jitted._cache = cache
    jitted._fast = fast
    jitted.stats = stats
    jitted.lower = lower
    jitted.trace = trace
    return jitted


def _arrays_out(run: Callable) -> Callable:
    """`run` with its outputs (a pytree of NumPy arrays) as fgrad.numpy Arrays."""
    def run_arrays(*args):
        out = run(*args)
        t = type(out)
        if t is np.ndarray:
            return out.view(EagerArray)
        if t is tuple:  # (a flat tuple of arrays without a pytree walk)
            flat = [o.view(EagerArray) for o in out if type(o) is np.ndarray]
            if len(flat) == len(out):
                return tuple(flat)
        return tree_map(_eager_array, out)
    return run_arrays


def _eager_array(o):
    """An output leaf as an fgrad.numpy Array (a NumPy array viewed as one, so an input the
    fast path passed through as a 0-d array comes out as the general path gives it)."""
    return o.view(EagerArray) if type(o) is np.ndarray else as_array(o)


def _static_key(v, what: str = "static argument"):
    if isinstance(v, Tracer):
        raise FgradTypeError(
            f"jit: {what} is a traced value ({v.aval}), but static arguments must be "
            "concrete Python values known at trace time. Under vmap, pass it with in_axes=None "
            "(unmapped); under grad or an outer jit, leave it out of static_argnums/static_argnames "
            "so that it is traced.", doc="jit-static-traced")
    try:
        hash(v)
    except TypeError:
        raise FgradTypeError(f"jit: {what}, {v!r:.60}, is not hashable; static arguments key the "
                        "trace cache, so pass a hashable value (tuple instead of list), or leave "
                        "it out of static_argnums/static_argnames so that it is traced.", doc="jit-static-unhashable") from None
    # equal is not the same: 1 == True == 1.0 and 0.0 == -0.0 trace differently
    return (type(v), v, math.copysign(1.0, v) if type(v) is float else None)


# --- JAX's utility names: jacobian, eval_shape, linear_transpose, Array, config ----------

jacobian = jacrev  # JAX's jax.jacobian is jacrev


def block_until_ready(x: Any) -> Any:
    """x itself: fgrad computes eagerly on the host, so every array is ready when it exists
    (JAX waits for asynchronous device work here)."""
    return x


class ShapeDtypeStruct:
    """An array's shape and dtype without its values: what `eval_shape` returns, and what
    `eval_shape` and `linear_transpose` accept in place of arrays."""

    __slots__ = ("shape", "dtype", "weak_type")

    def __init__(self, shape: Sequence[int], dtype: Any, weak_type: bool = False) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)
        self.weak_type = bool(weak_type)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __eq__(self, other) -> bool:
        return (isinstance(other, ShapeDtypeStruct) and (self.shape, self.dtype, self.weak_type)
                == (other.shape, other.dtype, other.weak_type))

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.weak_type))

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak_type else ""
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name}{weak})"


def _stand_in(x):
    """A zero-stride array of x's shape and dtype (no memory) for a ShapeDtypeStruct or
    anything with .shape and .dtype that is not an array; other leaves stay."""
    if isinstance(x, ShapeDtypeStruct) or (not isinstance(x, (np.ndarray, np.generic, Tracer))
                                           and hasattr(x, "shape") and hasattr(x, "dtype")
                                           and getattr(type(x), "__fgrad_foreign__", None) is None):
        return np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape))
    return x


def eval_shape(fun: Callable, *args, **kwargs) -> Any:
    """The shapes and dtypes of fun(*args, **kwargs) as a pytree of ShapeDtypeStruct, found
    by tracing fun, without computing it. Leaves of args may be arrays or ShapeDtypeStruct."""
    args, kwargs = tree_map(_stand_in, (args, kwargs))
    return make_jaxpr(fun, return_shape=True)(*args, **kwargs)[1]


def linear_transpose(fun: Callable, *primals) -> Callable:
    """The transpose of the linear function fun: `linear_transpose(fun, *primals)(ct)` is
    the tuple of input cotangents, one per primal (each primal, an array or a
    ShapeDtypeStruct, only gives the inputs' shapes and dtypes). fun must be linear in its
    inputs: the transpose is taken at zero inputs by reverse mode, so a constant offset is
    ignored (as JAX does) and a non-linear fun gives its linearisation's transpose at zero."""
    zeros = tree_map(lambda p: np.zeros(np.shape(_stand_in(p)), np.result_type(_stand_in(p))), primals)
    _, pull = vjp(fun, *zeros)

    def transposed(out_cotangent):
        return pull(out_cotangent)
    return transposed


class _Config:
    """JAX's `jax.config` on fgrad: `config.update(name, value)` and `config.<name>`.

    - jax_enable_x64: fgrad always computes in 64 bits by default (JAX's x64 mode), so True
      is what it does already; False (float32 defaults) is refused, not ignored;
    - jax_debug_nans: fgrad's debug_nans (raise at the first primitive that produces a NaN),
      on the calling thread;
    - jax_disable_jit: disable_jit for every thread that has not entered disable_jit itself;
    - jax_platform_name, jax_platforms, jax_default_matmul_precision, jax_traceback_filtering,
      jax_log_compiles: accepted and stored, with no effect (fgrad runs on the host, computes
      matmuls in the operands' precision, and keeps full tracebacks)."""

    _NO_EFFECT = frozenset({"jax_platform_name", "jax_platforms", "jax_default_matmul_precision",
                            "jax_traceback_filtering", "jax_log_compiles"})

    def __init__(self) -> None:
        self._values: dict = {"jax_enable_x64": True, "jax_debug_nans": False,
                              "jax_disable_jit": False, "jax_platform_name": "cpu",
                              "jax_platforms": "cpu", "jax_default_matmul_precision": None,
                              "jax_traceback_filtering": "off", "jax_log_compiles": False}
        self._nans: contextlib.ExitStack | None = None

    def update(self, name: str, value: Any) -> None:
        """Set option `name` (see the class docstring for what each one does)."""
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name} (fgrad knows "
                                 f"{', '.join(sorted(self._values))})")
        if name == "jax_enable_x64" and not value:
            raise FgradValueError("config.update('jax_enable_x64', False): fgrad computes in 64 bits by "
                             "default and has no 32-bit default mode; pass dtype=float32 explicitly "
                             "where you want float32 (see docs/jax-differences.md)")
        if name == "jax_debug_nans":
            if self._nans is not None:
                self._nans.close()
                self._nans = None
            if value:
                self._nans = contextlib.ExitStack()
                self._nans.enter_context(debug_nans(True))
        if name == "jax_disable_jit":
            _set_process_wide_disable_jit(bool(value))
        self._values[name] = value

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("_values", {})
        if name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")


config = _Config()
