"""Primitive: a named operation with all of its rules attached.

Rule signatures (every rule is written with fgrad ops, so it is traceable):
  impl(*arrays, xp, **params) -> array                  concrete evaluation
  abstract_eval(*avals, **params) -> ShapedArray        shape/dtype rule
  jvp(primals, tangents, **params) -> (out, out_dot)    tangents entries may be None (zero)
  vjp(needs, ct, out, *primals, **params) -> [ct_in]    needs[i]: is input i's cotangent wanted;
                                                        entries may be None (zero)
  vjp_fwd(*primals, **params) -> (out, residuals)       optional: see Primitive.def_vjp_fwd
A primitive marked `nondiff` has a zero derivative everywhere (comparisons, argmax).
`def_saves` declares which of its inputs and output the vjp rule reads: recorded nodes keep
only those (the rest is freed once nothing else holds it).
"""
from __future__ import annotations

from typing import Callable, Container

import numpy as np

from .trace import _state

ALL_PRIMITIVES: list["Primitive"] = []

# NumPy >= 2 keeps its floating-point error state in a context variable: setting a prebuilt
# "ignore everything" state there costs about a fifth of entering np.errstate (~0.13 us
# against ~0.7 us), which a quiet impl (division, logarithms, powers, the fused backward of
# tanh) pays on every call. The prebuilt state has NumPy's default buffer size (only a
# ufunc's speed depends on it); its error callback is never called, since nothing warns.
try:
    # a private NumPy 2 module (it may move): NumPy 1.x and later layouts take the fallback below
    from numpy._core._ufunc_config import _extobj_contextvar, _make_extobj
    _IGNORE_ALL = _make_extobj(all="ignore")
    _set_fp_state, restore_fp_errors = _extobj_contextvar.set, _extobj_contextvar.reset
except (ImportError, AttributeError, TypeError):  # NumPy 1.x: the per-thread seterr state
    _IGNORE_ALL = None

    def _set_fp_state(_):
        return np.seterr(all="ignore")

    def restore_fp_errors(token) -> None:
        """Put back the floating-point error handling `ignore_fp_errors` replaced."""
        np.seterr(**token)


def ignore_fp_errors():
    """Silence NumPy's floating-point warnings (overflow, 0/0, log(0)) on this thread (in
    this context) until `restore_fp_errors(token)` with the token returned here: a cheap
    `with np.errstate(all="ignore")` for impls, which call it in try/finally."""
    return _set_fp_state(_IGNORE_ALL)


def quiet_impl(fn: Callable) -> Callable:
    """The impl `impl(*arrays, xp, **params)` that runs `fn(xp, *arrays, **params)` with
    NumPy's floating-point warnings silenced (for functions whose inf and NaN results are
    their values, not mistakes: division, logarithms, powers)."""
    def impl(*args, xp, **params):
        token = ignore_fp_errors()  # (np.errstate costs five times more: see above)
        try:
            return fn(xp, *args, **params)
        finally:
            restore_fp_errors(token)
    return impl


class Primitive:
    """A named operation and its rules; `bind` applies it through the current trace.
    `view` says that its eager result may share memory with its operands."""

    def __init__(self, name: str, *, view: bool = False) -> None:
        self.name = name
        # Whether the eager result may share memory with an operand (reshape, transpose,
        # basic slicing: NumPy's views). Any other primitive's eager result is new storage:
        # the eval trace copies what an impl hands back of its operands.
        self.view = view
        # Whether binding it has an effect beyond its output (a host callback): dead-code
        # elimination keeps such equations (core.ir.dce_jaxpr)
        self.effectful = False
        self.nondiff = False
        # How many element-wise equations it counts as where jit weighs a region's length
        # (compile.regions): a fused primitive that replaced a composite counts as that
        # composite did, so programs keep the regions, hence the bits, they had
        self.kernel_eqns = 1
        self.impl = None
        self.abstract_eval = None
        self.jvp = None
        self.vjp = None
        self.batch = None
        self.vjp_fwd = None
        # What the VJP rule reads (see def_saves): None keeps every input, else the positions
        # kept (a container: a frozenset, or a range for "all but the first")
        self.saved_inputs = None
        self.saves_output = True
        self._unread: dict[int, tuple] = {}  # arity -> the positions not in saved_inputs
        self.lowering = None  # scalar-expression rule of an element-wise primitive (def_lowering)
        self.np_function = None  # (name, quiet) when the impl is xp.<name>(*operands) (def_np_function)
        # NumPy's function itself when the impl is np.<name>(*operands) with warnings as NumPy
        # gives them: the eval trace calls it without the impl's frames (def_np_function)
        self.np_call = None
        ALL_PRIMITIVES.append(self)

    def def_impl(self, fn: Callable) -> Callable:
        """`fn(*arrays, xp, **params) -> array`: concrete evaluation (`xp` is numpy or cupy).
        `raw_impl` is `fn` itself (the eval trace converts scalars once); `impl` always
        returns an array."""
        def impl(*args, xp, **params):
            out = fn(*args, xp=xp, **params)
            return out if type(out) is np.ndarray or hasattr(out, "__cuda_array_interface__") \
                else xp.asarray(out)
        self.impl = impl
        self.raw_impl = fn
        self.np_call = None
        return fn

    def def_np_function(self, name: str, quiet: bool = False) -> None:
        """The impl is the array module's function `name` of the operands (`xp.multiply(x,
        y)`), with floating-point warnings silenced when `quiet`. Declared rather than
        written as a lambda so that jit's programs can call `np.<name>` directly, one
        Python call instead of three, computing exactly what the impl computes."""
        def fn(*args, xp):
            return getattr(xp, name)(*args)
        if quiet:
            fn = quiet_impl(lambda xp, *args: getattr(xp, name)(*args))
        fn.__name__ = fn.__qualname__ = f"{self.name}_impl"
        self.def_impl(fn)
        self.np_function = (name, quiet)
        self.np_call = None if quiet else getattr(np, name)

    def def_abstract_eval(self, fn: Callable) -> Callable:
        """`fn(*avals, **params) -> ShapedArray`: the output's shape and dtype (staging and
        typecheck_jaxpr use it)."""
        self.abstract_eval = fn
        return fn

    def def_jvp(self, fn: Callable) -> Callable:
        """`fn(primals, tangents, **params) -> (out, out_dot)`; None tangents are zeros."""
        self.jvp = fn
        return fn

    def def_vjp(self, fn: Callable) -> Callable:
        """`fn(needs, ct, out, *primals, **params) -> [ct_in]`, one per input (None = zero)."""
        self.vjp = fn
        return fn

    def def_vjp_fwd(self, fn: Callable) -> Callable:
        """`fn(*primals, **params) -> (out, residuals)`: the forward half of a VJP whose rule
        needs values computed with the output (custom_vjp's residuals). The recorder
        (`interpreters.record.record_primitive`, for RecordTrace and fgrad.torch's fast paths) runs
        it when it records an application, under its parent trace,
        instead of the primitive, keeps `residuals` in that application's Node, and the engine
        passes them to the VJP rule as `residuals=` (None when no recorder ran `fn`). So they
        belong to one application: params are shared by every application (jit replays one
        equation, vmap's loop binds the same params per example) and must never hold them."""
        self.vjp_fwd = fn
        return fn

    def def_saves(self, *, inputs: bool | Container[int] = True, output: bool = True) -> None:
        """Declare which values the VJP rule reads, so that a recorded application keeps only
        those alive until the backward pass (PyTorch's saved tensors): `inputs` is True (all),
        False (none) or the positions read (`range(1, sys.maxsize)`: all but the first);
        `output` whether the rule reads the output. The recorder replaces every other value
        with its shape and dtype (`interpreters.backward.Unsaved`), which is all a rule may
        ask of it (`shape_of`, `aval_of`, `const(x, ...)`). Without a declaration a node keeps
        everything."""
        if inputs is True:
            self.saved_inputs = None
        elif inputs is False:
            self.saved_inputs = frozenset()
        else:
            self.saved_inputs = inputs if isinstance(inputs, range) else frozenset(inputs)
        self.saves_output = bool(output)
        self._unread = {}

    def unread_inputs(self, n: int) -> tuple[int, ...]:
        """The positions among `n` inputs that the VJP rule does not read (def_saves)."""
        unread = self._unread.get(n)
        if unread is None:
            saved = self.saved_inputs
            unread = self._unread[n] = () if saved is None else tuple([i for i in range(n) if i not in saved])
        return unread

    def def_lowering(self, fn: Callable) -> Callable:
        """`fn(*operands, **params) -> str | None`: an element-wise primitive as one scalar
        Python expression, which jit's compiler (`fgrad.interpreters.compile`) fuses with its
        neighbours into one Numba loop. Each operand is a `str` (a variable's name, usable
        several times) with a `.dtype` attribute; the expression may use `math`, NumPy scalar
        functions as `np` and the helpers of `fgrad.interpreters.compile.scalar_lib`. Its
        value must have the output's dtype where that is float64, int64 or bool (narrower
        results are cast by the compiler), and equal what `impl` computes. Returning None
        (e.g. for operand dtypes the rule does not handle) falls back to `impl`."""
        self.lowering = fn
        return fn

    def def_batch(self, fn: Callable) -> Callable:
        """`fn(axis_size, vals, dims, **params) -> (out, out_dim)`: vmap's rule (dims[i] is
        input i's batch axis or None); without one, vmap loops over the examples."""
        self.batch = fn
        return fn

    def bind(self, *args, **params):
        """Apply the primitive through the current trace (its arguments are values: arrays,
        numbers, tracers; fgrad.torch unboxes its Tensors at its own boundary)."""
        return _state.trace.process_primitive(self, args, params)

    def __repr__(self) -> str:
        return self.name
