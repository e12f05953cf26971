"""The functional transforms: grad, vjp, jvp, linearize, jacobians, make_jaxpr, jit."""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from .core.avals import is_float
from .core.errors import DifferentiationError, ShapeError
from .core.ir import ClosedJaxpr, cse_jaxpr, dce_jaxpr, eval_jaxpr
from .core.primitive import Primitive
from .core.rules import def_nondiff, def_vectorized
from .core.trace import Tracer, aval_of, facade, is_tensor, new_trace
from .interpreters.backward import Leaf, backward_pass
from .interpreters.batching import BatchTrace, BatchTracer, move_axis
from .interpreters.jvp import JVPTrace, JVPTracer
from .interpreters.record import RecordTrace, RecordTracer
from .interpreters.staging import StagingTrace
from .numpy._util import MAX_NDIM, as_value
from .tree_util import tree_flatten, tree_map, tree_unflatten


# --- boxing: Tensors in, Tensors out; Python data in, NumPy arrays out -------------------

def _is_tensor(x) -> bool:
    return is_tensor(x)


def _unbox_inputs(leaves, fname: str):
    """Values for each input leaf, and whether that leaf was a Tensor."""
    vals, boxed = [], []
    for i, x in enumerate(leaves):
        if _is_tensor(x):
            vals.append(x._value)
            boxed.append(True)
        else:
            vals.append(as_value(x, f"{fname}: input {i}"))
            boxed.append(False)
    return vals, boxed


def _box(x, boxed: bool):
    return facade.wrap(x) if boxed else x


def _unbox(x):
    return x._value if _is_tensor(x) else x


def _fname(f) -> str:
    return getattr(f, "__name__", type(f).__name__)


def _check_argnums(argnums, nargs: int, fname: str):
    single = isinstance(argnums, (int, np.integer))
    nums = (argnums,) if single else tuple(argnums)
    for a in nums:
        if not isinstance(a, (int, np.integer)) or not -nargs <= a < nargs:
            raise ValueError(f"argnums={argnums!r} is out of range for {fname}, which was called with "
                             f"{nargs} positional argument(s). Use an index in [0, {nargs}).")
    return single, tuple(int(a) % nargs for a in nums)


def _partial(f, args, kwargs, nums):
    def f_dyn(*dyn):
        full = list(args)
        for i, v in zip(nums, dyn):
            full[i] = v
        return f(*full, **kwargs)
    return f_dyn


# --- vjp, grad ----------------------------------------------------------------------------

def vjp(f: Callable, *primals, has_aux: bool = False):
    """(f(*primals), vjp_fn) where vjp_fn(ct) gives one cotangent per primal."""
    flat, in_tree = tree_flatten(primals)
    vals, boxed = _unbox_inputs(flat, f"vjp of {_fname(f)}")
    with new_trace(RecordTrace) as trace:
        leaves = [Leaf() if is_float(aval_of(v).dtype) else None for v in vals]
        args = [RecordTracer(trace, v, leaf) if leaf is not None else v for v, leaf in zip(vals, leaves)]
        out = f(*tree_unflatten(in_tree, [_box(a, b) for a, b in zip(args, boxed)]))
        if has_aux:
            out, aux = _split_aux(out, f)
    out_flat, out_tree = tree_flatten(out)
    out_nodes, out_vals, out_boxed = [], [], []
    for o in out_flat:
        out_boxed.append(_is_tensor(o))
        o = _unbox(o)
        if isinstance(o, RecordTracer) and o._trace is trace:
            out_nodes.append(o.node)
            out_vals.append(o.primal)
        else:
            out_nodes.append(None)
            out_vals.append(as_value(o, f"output of {_fname(f)}"))

    def vjp_fn(ct):
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != out_tree:
            raise ValueError(f"vjp_fn: the cotangent's structure {ct_tree} differs from the output's "
                             f"{out_tree}; pass one cotangent per output, shaped like it.")
        roots = []
        for node, o, c in zip(out_nodes, out_vals, ct_flat):
            c = as_value(_unbox(c), "vjp_fn cotangent")
            if aval_of(c).shape != aval_of(o).shape:
                raise ShapeError(f"vjp_fn: cotangent of shape {aval_of(c).shape} for an output of shape "
                                 f"{aval_of(o).shape}; they must match.")
            if node is not None:
                roots.append((node, c))
        cts = backward_pass(roots) if roots else {}
        grads = [_zeros_like(v) if leaf is None or id(leaf) not in cts else cts[id(leaf)]
                 for v, leaf in zip(vals, leaves)]
        return tree_unflatten(in_tree, [_box(g, b) for g, b in zip(grads, boxed)])

    out = tree_unflatten(out_tree, [_box(o, b) for o, b in zip(out_vals, out_boxed)])
    if has_aux:
        return out, vjp_fn, tree_map(lambda a: _strip(a, trace), aux)
    return out, vjp_fn


def _split_aux(out, f):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"has_aux=True needs {_fname(f)} to return a pair (output, aux), "
                        f"got {type(out).__name__}")
    return out


def _strip(x, trace):
    """The value behind a tracer of `trace` (aux outputs are not differentiated)."""
    inner = _unbox(x)
    while isinstance(inner, Tracer) and inner._trace is trace:
        inner = inner.primal
    return _box(inner, _is_tensor(x)) if inner is not _unbox(x) else x


def _zeros_like(v):
    from .ops.elementwise import const
    from .ops.shape import broadcast_in_dim
    return broadcast_in_dim(const(v, 0), aval_of(v).shape, ())


def _ones_like(v):
    a = aval_of(v)
    return np.ones(a.shape, a.dtype)


def value_and_grad(f: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Function returning (f(*args), gradient of f w.r.t. args[argnums])."""
    @functools.wraps(f)
    def value_and_grad_f(*args, **kwargs):
        name = _fname(f)
        single, nums = _check_argnums(argnums, len(args), name)
        for i in nums:
            for leaf in tree_flatten(args[i])[0]:
                dt = aval_of(as_value(_unbox(leaf), f"{name}: argument {i}")).dtype
                if not is_float(dt):
                    raise DifferentiationError(
                        f"grad of {name} with respect to argument {i}, which has dtype {dt}: only "
                        "floating-point inputs have gradients. Pass a float (e.g. 3.0 instead of 3, "
                        "or x.astype(float)), or leave this argument out of argnums.")
        res = vjp(_partial(f, args, kwargs, nums), *[args[i] for i in nums], has_aux=has_aux)
        out, fn = res[0], res[1]
        o = _unbox(out)
        if not hasattr(o, "shape") or aval_of(o).shape != () or not is_float(aval_of(o).dtype):
            desc = f"shape {aval_of(o).shape} and dtype {aval_of(o).dtype}" if hasattr(o, "shape") \
                else type(o).__name__
            raise TypeError(
                f"grad requires {name} to return a scalar float, but it returned {desc}. Use "
                "jacrev/jacfwd for a Jacobian, vjp for vector-Jacobian products, or reduce the "
                "output to a scalar (e.g. .sum()).")
        g = fn(_box(_ones_like(o), _is_tensor(out)))
        g = g[0] if single else g
        return ((out, res[2]), g) if has_aux else (out, g)
    return value_and_grad_f


def grad(f: Callable, argnums=0, has_aux: bool = False) -> Callable:
    """Gradient of a scalar-valued `f` with respect to args[argnums]; composes to any order."""
    vg = value_and_grad(f, argnums, has_aux)

    @functools.wraps(f)
    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    return grad_f


# --- jvp, linearize -----------------------------------------------------------------------

def _check_tangents(primals, tangents):
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp takes primals and tangents as tuples (or lists), e.g. "
                        "jvp(f, (x,), (v,)); got "
                        f"{type(primals).__name__} and {type(tangents).__name__}")
    p_flat, p_tree = tree_flatten(tuple(primals))
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if p_tree != t_tree:
        raise ValueError(f"jvp: primals {p_tree} and tangents {t_tree} have different structures")
    for i, (p, t) in enumerate(zip(p_flat, t_flat)):
        ps, ts = aval_of(as_value(_unbox(p))).shape, aval_of(as_value(_unbox(t))).shape
        if ps != ts:
            raise ShapeError(f"jvp: tangent {i} has shape {ts} but its primal has shape {ps}")
    return p_flat, p_tree, t_flat


def jvp(f: Callable, primals: Sequence, tangents: Sequence):
    """(f(*primals), J·tangents): forward-mode derivative."""
    p_flat, in_tree, t_flat = _check_tangents(primals, tangents)
    vals, boxed = _unbox_inputs(p_flat, f"jvp of {_fname(f)}")
    with new_trace(JVPTrace) as trace:
        args = []
        for v, t in zip(vals, t_flat):
            if is_float(aval_of(v).dtype):
                from .numpy._util import cast
                args.append(JVPTracer(trace, v, cast(as_value(_unbox(t)), aval_of(v).dtype)))
            else:
                args.append(v)
        out = f(*tree_unflatten(in_tree, [_box(a, b) for a, b in zip(args, boxed)]))
    out_flat, out_tree = tree_flatten(out)
    outs, touts = [], []
    for o in out_flat:
        b = _is_tensor(o)
        o = _unbox(o)
        if isinstance(o, JVPTracer) and o._trace is trace:
            outs.append(_box(o.primal, b))
            touts.append(_box(o.tangent, b))
        else:
            o = as_value(o)
            outs.append(_box(o, b))
            touts.append(_box(_zeros_like(o), b))
    return tree_unflatten(out_tree, outs), tree_unflatten(out_tree, touts)


def linearize(f: Callable, *primals):
    """(f(*primals), f_jvp): f_jvp(*tangents) replays only the tangent computation."""
    flat, in_tree = tree_flatten(primals)
    vals, _ = _unbox_inputs(flat, f"linearize of {_fname(f)}")
    with new_trace(StagingTrace, "linearize") as staging:
        with new_trace(JVPTrace) as trace:
            args = [JVPTracer(trace, v, staging.new_arg(aval_of(v))) for v in vals]
            out = f(*tree_unflatten(in_tree, args))
        out_flat, out_tree = tree_flatten(out)
        primal_outs, tangent_outs = [], []
        for o in out_flat:
            if isinstance(o, JVPTracer) and o._trace is trace:
                primal_outs.append(o.primal)
                tangent_outs.append(o.tangent)
            else:
                primal_outs.append(o)
                tangent_outs.append(_zeros_like(o))
        jaxpr, consts = staging.to_jaxpr(tangent_outs)

    def f_jvp(*tangents):
        t_flat, t_tree = tree_flatten(tangents)
        if t_tree != in_tree:
            raise ValueError(f"f_jvp: tangents {t_tree} must have the primals' structure {in_tree}")
        return tree_unflatten(out_tree, eval_jaxpr(jaxpr, consts, *[as_value(t) for t in t_flat]))

    return tree_unflatten(out_tree, primal_outs), f_jvp


# --- Jacobians ----------------------------------------------------------------------------

def _stack_rows(rows, lead_shape, trail_shape):
    """Stack equally shaped values into an array of shape lead_shape + trail_shape."""
    from .ops.shape import concatenate, reshape
    rows = [reshape(r, (1,) + tuple(trail_shape)) for r in rows]
    if not rows:
        return np.zeros(tuple(lead_shape) + tuple(trail_shape))
    return reshape(concatenate(rows, 0), tuple(lead_shape) + tuple(trail_shape))


def _check_jacobian_rank(transform: str, fname: str, out_shape, in_shape):
    """A Jacobian has out.ndim + in.ndim dimensions; NumPy arrays have at most MAX_NDIM."""
    if len(out_shape) + len(in_shape) > MAX_NDIM:
        raise ShapeError(f"{transform} of {fname}: the Jacobian of an output of shape {tuple(out_shape)} "
                         f"with respect to an input of shape {tuple(in_shape)} would have "
                         f"{len(out_shape) + len(in_shape)} dimensions, more than NumPy's limit of "
                         f"{MAX_NDIM}. Reshape the input or the output (e.g. ravel it) first.")


def jacrev(f: Callable, argnums=0) -> Callable:
    """Jacobian by reverse mode, one vjp per output element; shape out.shape + in.shape."""
    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        single, nums = _check_argnums(argnums, len(args), _fname(f))
        dyn = [args[i] for i in nums]
        out, fn = vjp(_partial(f, args, kwargs, nums), *dyn)
        out_flat, out_tree = tree_flatten(out)
        in_flat, in_tree = tree_flatten(tuple(dyn))
        per_out = []
        for k, o in enumerate(out_flat):
            oa = aval_of(_unbox(o))
            for x in in_flat:
                _check_jacobian_rank("jacrev", _fname(f), oa.shape, aval_of(as_value(_unbox(x))).shape)
            rows = []
            for i in range(oa.size):
                cts = [np.zeros(aval_of(_unbox(p)).shape, aval_of(_unbox(p)).dtype) for p in out_flat]
                cts[k] = np.eye(1, oa.size, i, dtype=oa.dtype).reshape(oa.shape)
                rows.append(tree_flatten(fn(tree_unflatten(out_tree, cts)))[0])
            jac = [_box(_stack_rows([_unbox(r[j]) for r in rows], oa.shape, aval_of(_unbox(x)).shape),
                        _is_tensor(x)) for j, x in enumerate(in_flat)]
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        return tree_unflatten(out_tree, per_out)
    return jac_f


def jacfwd(f: Callable, argnums=0) -> Callable:
    """Jacobian by forward mode, one jvp per input element; shape out.shape + in.shape."""
    @functools.wraps(f)
    def jac_f(*args, **kwargs):
        from .numpy import moveaxis
        single, nums = _check_argnums(argnums, len(args), _fname(f))
        dyn = [args[i] for i in nums]
        in_flat, in_tree = tree_flatten(tuple(dyn))
        f_dyn = _partial(f, args, kwargs, nums)
        cols = []  # per input leaf: list over its elements of the flat tangent outputs
        out_flat = out_tree = None
        for j, x in enumerate(in_flat):
            xa = aval_of(as_value(_unbox(x)))
            leaf_cols = []
            for i in range(xa.size):
                ts = [np.zeros(aval_of(as_value(_unbox(p))).shape, xa.dtype if q == j else
                               aval_of(as_value(_unbox(p))).dtype) for q, p in enumerate(in_flat)]
                ts[j] = np.eye(1, xa.size, i, dtype=xa.dtype).reshape(xa.shape)
                out, tout = jvp(f_dyn, tuple(dyn), tree_unflatten(in_tree, ts))
                out_flat, out_tree = tree_flatten(out)
                leaf_cols.append(tree_flatten(tout)[0])
            cols.append((xa, leaf_cols))
        if out_flat is None:
            out_flat, out_tree = tree_flatten(f_dyn(*dyn))
        per_out = []
        for k, o in enumerate(out_flat):
            oa = aval_of(_unbox(o))
            for xa, _ in cols:
                _check_jacobian_rank("jacfwd", _fname(f), oa.shape, xa.shape)
            jac = []
            for (xa, leaf_cols), x in zip(cols, in_flat):
                stacked = _stack_rows([_unbox(c[k]) for c in leaf_cols], xa.shape, oa.shape)
                nd = len(xa.shape)
                moved = moveaxis(stacked, tuple(range(nd)), tuple(range(len(oa.shape), len(oa.shape) + nd)))
                jac.append(_box(moved, _is_tensor(x)))
            jac = tree_unflatten(in_tree, jac)
            per_out.append(jac[0] if single else jac)
        return tree_unflatten(out_tree, per_out)
    return jac_f


def hessian(f: Callable, argnums=0) -> Callable:
    """jacfwd(jacrev(f)): forward-over-reverse second derivatives."""
    return jacfwd(jacrev(f, argnums), argnums)


# --- vmap ---------------------------------------------------------------------------------

def _axes_per_leaf(in_axes, args, fname):
    if isinstance(in_axes, (int, np.integer)) or in_axes is None:
        return [in_axes] * len(tree_flatten(args)[0])
    if not isinstance(in_axes, (tuple, list)) or len(in_axes) != len(args):
        raise ValueError(f"vmap of {fname}: in_axes must be an int, None, or a tuple with one entry "
                         f"per positional argument ({len(args)}), got {in_axes!r}")
    axes = []
    for a, arg in zip(in_axes, args):
        n = len(tree_flatten(arg)[0])
        if isinstance(a, (int, np.integer)) or a is None:
            axes.extend([a] * n)
        else:
            sub = tree_flatten(a)[0]
            if len(sub) != n:
                raise ValueError(f"vmap of {fname}: in_axes entry {a!r} does not match its argument's "
                                 "structure")
            axes.extend(sub)
    return axes


def vmap(f: Callable, in_axes=0, out_axes: int = 0) -> Callable:
    """Map f over an axis of its inputs; composes with every other transform."""
    @functools.wraps(f)
    def vf(*args):
        name = _fname(f)
        flat, in_tree = tree_flatten(args)
        vals, boxed = _unbox_inputs(flat, f"vmap of {name}")
        axes = _axes_per_leaf(in_axes, args, name)
        sizes = {}
        for i, (v, a) in enumerate(zip(vals, axes)):
            if a is None:
                continue
            nd = len(aval_of(v).shape)
            if not -nd <= a < nd:
                raise ValueError(f"vmap of {name}: in_axes={a} but input {i} has shape "
                                 f"{aval_of(v).shape}")
            axes[i] = a % nd
            sizes[i] = aval_of(v).shape[axes[i]]
        if not sizes:
            raise ValueError(f"vmap of {name}: no input is mapped (every in_axes is None)")
        if len(set(sizes.values())) > 1:
            detail = ", ".join(f"input {i} axis {axes[i]} has size {n}" for i, n in sizes.items())
            raise ValueError(f"vmap of {name}: the mapped axes have different sizes: {detail}")
        n = next(iter(sizes.values()))
        with new_trace(BatchTrace, n) as trace:
            tracers = [v if a is None else BatchTracer(trace, v, a) for v, a in zip(vals, axes)]
            out = f(*tree_unflatten(in_tree, [_box(t, b) for t, b in zip(tracers, boxed)]))
        out_flat, out_tree = tree_flatten(out)
        res = []
        for o in out_flat:
            b = _is_tensor(o)
            o = _unbox(o)
            if isinstance(o, BatchTracer) and o._trace is trace:
                v = move_axis(o.val, o.bdim, out_axes % len(o.val.shape))
            else:
                o = as_value(o)
                shape = aval_of(o).shape
                from .ops.shape import broadcast_in_dim
                v = broadcast_in_dim(o, (n,) + shape, tuple(range(1, len(shape) + 1)))
                v = move_axis(v, 0, out_axes % len(v.shape))
            res.append(_box(v, b))
        return tree_unflatten(out_tree, res)
    return vf


# --- stop_gradient ------------------------------------------------------------------------

stop_gradient_p = Primitive("stop_gradient")
stop_gradient_p.def_impl(lambda x, *, xp: x)
stop_gradient_p.def_abstract_eval(lambda x: x)
def_nondiff(stop_gradient_p)
def_vectorized(stop_gradient_p)


def stop_gradient(x: Any) -> Any:
    """Identity whose derivative is zero (applies to every leaf of a pytree)."""
    return tree_map(lambda v: stop_gradient_p.bind(as_value(v)) if not _is_tensor(v) else v.detach(), x)


# --- staging: make_jaxpr, jit -------------------------------------------------------------

def _stage(f, args, kwargs, static_argnums, name):
    static = set(int(i) % max(len(args), 1) for i in static_argnums)
    dyn_idx = [i for i in range(len(args)) if i not in static]
    flat, in_tree = tree_flatten(tuple(args[i] for i in dyn_idx))
    vals, boxed = _unbox_inputs(flat, f"{name} of {_fname(f)}")
    with new_trace(StagingTrace, name) as st:
        labels = _leaf_labels(f, [a for i, a in enumerate(args) if i in dyn_idx], dyn_idx)
        tracers = [st.new_arg(aval_of(v), label) for v, label in zip(vals, labels)]
        dyn = tree_unflatten(in_tree, [_box(t, b) for t, b in zip(tracers, boxed)])
        full = list(args)
        for i, v in zip(dyn_idx, dyn):
            full[i] = v
        out = f(*full, **kwargs)
        out_flat, out_tree = tree_flatten(out)
        out_boxed = [_is_tensor(o) for o in out_flat]
        jaxpr, consts = st.to_jaxpr([_unbox(o) for o in out_flat])
    jaxpr, used = dce_jaxpr(cse_jaxpr(jaxpr))
    return ClosedJaxpr(jaxpr, [consts[i] for i in used]), out_tree, out_boxed, vals


def _leaf_labels(f, dyn_args, positions) -> list[str]:
    """'argument x of f' for each flattened input leaf (with the leaf's index in a pytree)."""
    import inspect
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    labels = []
    for pos, arg in zip(positions, dyn_args):
        name = params[pos] if pos < len(params) else str(pos)
        n = len(tree_flatten(arg)[0])
        base = f"argument {pos} ({name!r}) of {_fname(f)}"
        labels.extend([base] if n == 1 else [f"leaf {k} of {base}" for k in range(n)])
    return labels


def make_jaxpr(f: Callable, static_argnums: Sequence[int] = ()) -> Callable:
    """make_jaxpr(f)(*args): the typed IR of f on arguments shaped like args."""
    @functools.wraps(f)
    def make(*args, **kwargs):
        return _stage(f, args, kwargs, static_argnums, "make_jaxpr")[0]
    return make


def jit(f: Callable, static_argnums: Sequence[int] | int = ()) -> Callable:
    """Trace f once per input signature into IR and replay the IR on later calls."""
    static_argnums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
    cache: dict = {}

    @functools.wraps(f)
    def jitted(*args, **kwargs):
        static = set(int(i) % max(len(args), 1) for i in static_argnums)
        flat, in_tree = tree_flatten(tuple(a for i, a in enumerate(args) if i not in static))
        vals = [as_value(_unbox(x)) for x in flat]
        key = (in_tree, tuple((a.shape, a.dtype, type(v).__module__) for v in vals for a in [aval_of(v)]),
               tuple((i, _static_key(args[i])) for i in sorted(static)), tuple(sorted(kwargs.items())))
        entry = cache.get(key)
        if entry is None:
            entry = cache[key] = _stage(f, args, kwargs, static_argnums, "jit")[:3]
        closed, out_tree, out_boxed = entry
        outs = eval_jaxpr(closed.jaxpr, closed.consts, *vals)
        return tree_unflatten(out_tree, [_box(o, b) for o, b in zip(outs, out_boxed)])

    jitted._cache = cache
    return jitted


def _static_key(v):
    try:
        hash(v)
    except TypeError:
        raise TypeError(f"jit: static argument {v!r:.60} is not hashable; static arguments key the "
                        "trace cache, so pass a hashable value (tuple instead of list).") from None
    return v
