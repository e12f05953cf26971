"""The catalogue of user errors fgrad detects: one entry per error, shared by
tests/core/test_errors.py (which triggers each one and checks type, message and recovery)
and docs/errors.md (generated from this table by `python tests/core/error_catalogue.py`).

Each entry: (id, title, trigger, exception type, message regex, fix, recovery check).
`trigger` raises the error; `recovery` is a correct computation that must work after it.
"""
from __future__ import annotations

import numpy as onp

import fgrad
import fgrad.numpy as fnp
from fgrad.core import errors


def _ok_grad():
    assert fgrad.grad(lambda x: x * x)(3.0) == 6.0


def _ok_tensor():
    x = fgrad.torch.tensor([2.0], requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.tolist() == [4.0]


def _leak():
    stash = []
    fgrad.grad(lambda x: stash.append(x) or x * 1.0)(1.0)
    fnp.sin(stash[0])


def _bool_mask_jit():
    fgrad.jit(lambda x: x[x > 0])(onp.ones(3))


def _custom_without_rule():
    @fgrad.custom_vjp
    def f(x):
        return x
    f(1.0)


def _custom_bad_bwd():
    @fgrad.custom_vjp
    def f(x):
        return x * 2.0
    f.defvjp(lambda x: (x * 2.0, None), lambda r, ct: (ct, ct))
    fgrad.grad(f)(1.0)


def _custom_jvp_not_pair():
    @fgrad.custom_jvp
    def f(x):
        return fnp.sin(x)
    f.defjvp(lambda primals, tangents: fnp.cos(primals[0]) * tangents[0])
    fgrad.grad(f)(1.0)


def _custom_jvp_tangent_shape():
    @fgrad.custom_jvp
    def f(x):
        return fnp.sin(x)
    f.defjvp(lambda primals, tangents: (fnp.sin(primals[0]), onp.ones(3)))
    fgrad.jvp(f, (1.0,), (1.0,))


def _custom_fwd_not_pair():
    @fgrad.custom_vjp
    def f(x):
        return fnp.sin(x)
    f.defvjp(lambda x: fnp.sin(x), lambda res, ct: (ct,))
    fgrad.grad(f)(1.0)


def _custom_vjp_forward_mode():
    @fgrad.custom_vjp
    def clip_gradient(x):
        return x
    clip_gradient.defvjp(lambda x: (x, None), lambda res, ct: (fnp.clip(ct, -1.0, 1.0),))
    fgrad.jacfwd(clip_gradient)(2.0)


def _custom_bad_bwd_shape():
    @fgrad.custom_vjp
    def f(x):
        return fnp.sin(x)
    f.defvjp(lambda x: (fnp.sin(x), None), lambda res, ct: (fnp.sum(ct),))
    fgrad.grad(lambda x: fnp.sum(f(x)))(onp.ones(3))


def _custom_bad_bwd_structure():
    @fgrad.custom_vjp
    def f(d):
        return d["a"] * d["b"]
    f.defvjp(lambda d: (f(d), d), lambda d, ct: ((ct * d["b"], ct * d["a"]),))
    fgrad.grad(lambda a: f({"a": a, "b": 2.0}))(1.0)


def _custom_closure():
    fgrad.grad(lambda w: fgrad.checkpoint(lambda x: x * w)(w))(1.0)


def _custom_nondiff_range():
    from functools import partial

    @partial(fgrad.custom_vjp, nondiff_argnums=(1,))
    def f(x, *rest):
        return x * 2.0
    f.defvjp(lambda x, *rest: (x * 2.0, None), lambda *args: (args[-1] * 2.0,))
    f(1.0)


def _custom_keyword_only():
    @fgrad.custom_vjp
    def f(x, *, scale):
        return x * scale
    f.defvjp(lambda x, scale: (x * scale, scale), lambda scale, ct: (ct * scale,))
    fgrad.grad(lambda x: f(x, scale=2.0))(1.0)


def _custom_defjvps_nondiff():
    from functools import partial

    @partial(fgrad.custom_jvp, nondiff_argnums=(0,))
    def f(n, x):
        return x ** n
    f.defjvps(lambda t, ans, n, x: t * n * x ** (n - 1))


def _second_backward():
    w = fgrad.torch.tensor([1.0], requires_grad=True)
    y = fgrad.torch.mul(fgrad.torch.add(w, 2.0), fgrad.torch.add(w, 1.0))
    y.backward()
    y.backward()


def _inplace_saved():
    a = fgrad.torch.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.add_(1.0)
    b.sum().backward()


def _inplace_leaf():
    a = fgrad.torch.tensor([1.0], requires_grad=True)
    a.add_(1.0)


def _nonscalar_backward():
    (fgrad.torch.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def _unused_input():
    a, b = fgrad.torch.tensor(1.0, requires_grad=True), fgrad.torch.tensor(2.0, requires_grad=True)
    fgrad.torch.autograd.grad(a * 2, [a, b])


def _register_bare_class():
    class Bare:
        pass
    fgrad.tree_util.register_pytree_node_class(Bare)


def _setitem_traced():
    def f(x):
        x[0] = 1.0
        return x.sum()
    fgrad.grad(f)(onp.ones(3))


ENTRIES = [
    ("grad-nonscalar", "grad of a function with a non-scalar output",
     lambda: fgrad.grad(fnp.sin)(onp.ones(3)), TypeError, r"scalar.*jacrev",
     "Use `jacrev`/`jacfwd` for a Jacobian, `vjp` for vector-Jacobian products, or reduce the output "
     "with `.sum()`.", _ok_grad),
    ("grad-int-input", "grad with respect to an integer argument",
     lambda: fgrad.grad(lambda x: x * 1.0)(3), errors.DifferentiationError, r"int64.*floating-point",
     "Pass a float (`3.0`, `x.astype(float)`) or leave the argument out of `argnums`.", _ok_grad),
    ("argnums-range", "argnums out of range",
     lambda: fgrad.grad(lambda x: x, argnums=2)(1.0), ValueError, r"argnums=2 is out of range",
     "Use an index below the number of positional arguments.", _ok_grad),
    ("non-numeric-input", "a non-numeric input",
     lambda: fgrad.grad(lambda x: x)("abc"), TypeError, r"not numeric|cannot use",
     "Pass NumPy arrays, Python numbers, Tensors, or pytrees of them.", _ok_grad),
    ("ragged-input", "a ragged nested list",
     lambda: fnp.sin([[1.0, 2.0], [3.0]]), TypeError, r"equal lengths|inhomogeneous|cannot use",
     "Make every row the same length, or pad it.", _ok_grad),
    ("tracer-bool", "Python control flow on a staged value",
     lambda: fgrad.make_jaxpr(lambda x: x if x > 0 else -x)(1.0), errors.TracerBoolConversionError,
     r"static_argnums.*where", "Use `fgrad.numpy.where`, `static_argnums`, or run without jit/vmap "
     "(grad/vjp/jvp keep values concrete).", _ok_grad),
    ("tracer-to-numpy", "plain NumPy applied to a traced value",
     lambda: fgrad.grad(lambda x: onp.asarray(x).sum())(onp.ones(2)), errors.TracerArrayConversionError,
     r"import fgrad.numpy as np", "Write differentiated array code with `fgrad.numpy`.", _ok_grad),
    ("leaked-tracer", "a tracer used after its transform ended",
     _leak, errors.UnexpectedTracerError, r"leaked", "Return values from the transformed function "
     "instead of storing them in globals or lists.", _ok_grad),
    ("jvp-structure", "jvp tangents shaped unlike the primals (structure)",
     lambda: fgrad.jvp(fnp.sin, (1.0,), (1.0, 2.0)), ValueError, r"different structures",
     "Pass one tangent per primal, in the same pytree structure.", _ok_grad),
    ("jvp-tangent-shape", "jvp tangent of the wrong shape",
     lambda: fgrad.jvp(fnp.sin, (onp.ones(3),), (onp.ones(2),)), errors.ShapeError,
     r"tangent 0 has shape \(2,\) but its primal has shape \(3,\)", "Give each tangent its primal's shape.",
     _ok_grad),
    ("vjp-ct-shape", "vjp cotangent of the wrong shape",
     lambda: fgrad.vjp(fnp.sin, onp.ones(3))[1](onp.ones(2)), errors.ShapeError,
     r"cotangent of shape \(2,\) for an output of shape \(3,\)", "Shape the cotangent like the output.",
     _ok_grad),
    ("vjp-ct-structure", "vjp cotangent with the wrong structure",
     lambda: fgrad.vjp(lambda x: (x, x), 1.0)[1](1.0), ValueError, r"structure",
     "Pass one cotangent per output, in the output's pytree structure.", _ok_grad),
    ("broadcast", "operands that do not broadcast",
     lambda: fnp.add(onp.ones((2, 3)), onp.ones((4,))), errors.ShapeError,
     r"\(2, 3\) and \(4,\) cannot be broadcast", "Reshape an operand (`x[:, None]`, `x.reshape(...)`).",
     _ok_grad),
    ("reshape-size", "reshape to a different number of elements",
     lambda: fnp.reshape(onp.ones(6), (4, 2)), errors.ShapeError, r"6 elements|reshape",
     "Keep the product of the dimensions equal, or use -1 for one of them.", _ok_grad),
    ("matmul-shapes", "matmul with mismatched inner dimensions",
     lambda: fnp.matmul(onp.ones((2, 3)), onp.ones((4, 5))), errors.ShapeError, r"\(2, 3\).*\(4, 5\)",
     "The last axis of the first operand must equal the second-to-last of the second.", _ok_grad),
    ("axis-range", "an axis out of range",
     lambda: fnp.sum(onp.ones((2, 3)), axis=2), errors.ShapeError, r"axis 2 is out of bounds",
     "Use an axis in [-ndim, ndim).", _ok_grad),
    ("empty-max", "max of an empty array",
     lambda: fnp.max(onp.ones(0)), ValueError, r"zero-size", "Reduce a non-empty array, or use sum.",
     _ok_grad),
    ("has-aux", "has_aux=True with a function that does not return a pair",
     lambda: fgrad.grad(lambda x: x * 1.0, has_aux=True)(1.0), TypeError, r"return a pair",
     "Return `(output, aux)`.", _ok_grad),
    ("vmap-sizes", "vmap over axes of different sizes",
     lambda: fgrad.vmap(lambda a, b: a + b)(onp.ones(3), onp.ones(4)), ValueError, r"different sizes",
     "Map axes of equal length, or pass in_axes=None for an argument that is not mapped.", _ok_grad),
    ("vmap-in-axes", "vmap in_axes out of range",
     lambda: fgrad.vmap(lambda a: a, in_axes=3)(onp.ones(3)), ValueError, r"in_axes=3",
     "Use an axis the input has.", _ok_grad),
    ("vmap-in-axes-prefix", "vmap in_axes that is not a tree prefix of the arguments",
     lambda: fgrad.vmap(lambda p: p["w"], in_axes=({"a": 0},))({"w": onp.ones(3)}), ValueError,
     r"in_axes\[0\] is a dict with keys \('a',\).*keys \('w',\)",
     "Give each argument an int, None, or a container of its own type with the same keys or length "
     "(None inside it: that part is not mapped).", _ok_grad),
    ("vmap-in-axes-type", "vmap in_axes made of something else than ints and None",
     lambda: fgrad.vmap(lambda x: x, in_axes=(1.5,))(onp.ones(3)), TypeError, r"in_axes must be an int, None",
     "Use ints (the mapped axis) and None (not mapped), in a tuple with one entry per positional "
     "argument.", _ok_grad),
    ("vmap-out-axes-prefix", "vmap out_axes that is not a tree prefix of the output",
     lambda: fgrad.vmap(lambda x: {"a": x, "b": x}, out_axes={"a": 0})(onp.ones(3)), ValueError,
     r"out_axes is a dict with keys \('a',\)", "Give out_axes the output's structure, or one int for all.",
     _ok_grad),
    ("vmap-out-axes-none", "out_axes=None for an output that depends on a mapped input",
     lambda: fgrad.vmap(lambda x: x * 2.0, out_axes=None)(onp.ones(3)), ValueError,
     r"out_axes is None for output.*depends on a mapped input",
     "Use an int out_axes for it; None is for outputs that are the same for every example.", _ok_grad),
    ("vmap-out-axes-range", "vmap out_axes out of range",
     lambda: fgrad.vmap(lambda x: x, out_axes=3)(onp.ones((3, 2))), ValueError, r"out_axes=3 for output",
     "Use an axis of the batched output, in [-ndim, ndim).", _ok_grad),
    ("vmap-no-mapped-input", "vmap with no mapped input and no axis_size",
     lambda: fgrad.vmap(lambda x: x * 2.0, in_axes=None)(1.0), ValueError, r"no input is mapped.*axis_size",
     "Pass `axis_size=n`, or map an input.", _ok_grad),
    ("vmap-axis-size", "vmap axis_size that disagrees with a mapped axis",
     lambda: fgrad.vmap(lambda x: x, axis_size=4)(onp.ones(3)), ValueError,
     r"axis_size=4, but argument 0 axis 0 has size 3", "Pass the mapped axes' size, or leave axis_size out.",
     _ok_grad),
    ("vmap-axis-size-type", "vmap axis_size that is not a non-negative int",
     lambda: fgrad.vmap(lambda x: x, in_axes=None, axis_size=2.5)(1.0), TypeError,
     r"axis_size must be a non-negative int", "Pass an int.", _ok_grad),
    ("vmap-keyword-scalar", "a scalar keyword argument to vmap (keywords are mapped over axis 0, as in JAX)",
     lambda: fgrad.vmap(lambda x, s: x * s)(onp.ones(3), s=2.0), ValueError,
     r"keyword argument 's' has shape \(\).*positionally",
     "Pass it positionally with in_axes=None, or close over it (functools.partial).", _ok_grad),
    ("argnums-repeated", "argnums naming an argument twice",
     lambda: fgrad.grad(lambda x, y: x * y, argnums=(0, 0))(1.0, 2.0), ValueError,
     r"argnums=\(0, 0\) of <lambda> repeats argument", "Name each argument once.", _ok_grad),
    ("vjp-ct-dtype", "vjp cotangent of another dtype than its output",
     lambda: fgrad.vjp(lambda x: x * 2.0, onp.ones(2, onp.float32))[1](onp.ones(2)), ValueError,
     r"cotangent 0 has type f64\[2\] but output 0 has type f32\[2\]",
     "Give the cotangent its output's dtype (`ct.astype(out.dtype)`, `ones_like(out)`); a Python "
     "number adapts.", _ok_grad),
    ("jvp-tangent-dtype", "jvp tangent of another dtype than its primal",
     lambda: fgrad.jvp(lambda x: x * 2.0, (onp.ones(2, onp.float32),), (onp.ones(2),)), TypeError,
     r"tangent 0 has type f64\[2\] but its primal has type f32\[2\]",
     "Give each tangent its primal's dtype; a Python number adapts.", _ok_grad),
    ("jvp-int-primal", "a float tangent for an integer primal",
     lambda: fgrad.jvp(lambda x, n: x * n, (1.0, 3), (1.0, 1.0)), errors.DifferentiationError,
     r"primal 1 has dtype int64.*zeros_like",
     "Pass a float primal to differentiate with respect to it, or a zero tangent of its own dtype "
     "(JAX's float0) to hold it constant.", _ok_grad),
    ("jacobian-int-input", "jacrev/jacfwd/hessian/linearize with respect to an integer input",
     lambda: fgrad.jacfwd(lambda x: x * 2)(onp.arange(3)), errors.DifferentiationError,
     r"jacfwd of <lambda> .*int64.*floating-point",
     "Pass a float (`x.astype(float)`), or leave the argument out of `argnums`.", _ok_grad),
    ("complex-input", "jacfwd or hessian with respect to a complex input without holomorphic=True",
     lambda: fgrad.jacfwd(lambda z: z * z)(1 + 2j), errors.DifferentiationError,
     r"jacfwd of <lambda> with respect to argument 0, which has dtype complex128: without holomorphic=True",
     "Pass `holomorphic=True` if the function is holomorphic (its Jacobian is then f'(z)); use `jacrev` "
     "or `grad` for a real-valued function of complex inputs, or `jvp` directly.", _ok_grad),
    ("holomorphic-real-input", "holomorphic=True with a real input",
     lambda: fgrad.grad(lambda z: z * z, holomorphic=True)(1.0), errors.DifferentiationError,
     r"grad of <lambda> with holomorphic=True requires complex inputs, but argument 0 has dtype float64",
     "Pass a complex value (`x + 0j`), or drop `holomorphic=True` for a real input.", _ok_grad),
    ("holomorphic-real-output", "holomorphic=True for a function with a real output",
     lambda: fgrad.grad(lambda z: fnp.abs(z), holomorphic=True)(1j), errors.FgradTypeError,
     r"grad of <lambda> with holomorphic=True requires complex outputs, but output 0 has dtype float64",
     "Drop `holomorphic=True`: a real-valued function of complex inputs has an ordinary gradient "
     "(df/dx - i df/dy).", _ok_grad),
    ("grad-complex-output", "grad of a function with a complex output, without holomorphic=True",
     lambda: fgrad.grad(lambda z: z * z)(1 + 2j), errors.FgradTypeError,
     r"grad of <lambda>: output 0 has dtype complex128, but grad needs real outputs.*holomorphic=True",
     "Pass `holomorphic=True` for the complex derivative of a holomorphic function; otherwise "
     "differentiate a real function of the output (`abs(z)`, `z.real`), or use `vjp`.", _ok_grad),
    ("jacrev-complex-output", "jacrev of a function with a complex output, without holomorphic=True",
     lambda: fgrad.jacrev(lambda x: x * (1 + 1j))(1.0), errors.FgradTypeError,
     r"jacrev of <lambda>: output 0 has dtype complex128, but jacrev needs real outputs",
     "Pass `holomorphic=True` (complex inputs and outputs), use `jacfwd` for real inputs, or `vjp` "
     "directly.", _ok_grad),
    ("linearize-tangent-shape", "linearize's f_jvp called with a tangent of the wrong shape",
     lambda: fgrad.linearize(fnp.sin, onp.ones(3))[1](onp.ones(2)), errors.ShapeError,
     r"tangent 0 has shape \(2,\) but its primal has shape \(3,\)", "Give each tangent its primal's shape.",
     _ok_grad),
    ("pytree-class-methods", "register_pytree_node_class of a class without the pytree methods",
     _register_bare_class, TypeError, r"tree_flatten\(self\).*tree_unflatten",
     "Define `tree_flatten(self) -> (children, aux)` and the classmethod "
     "`tree_unflatten(cls, aux, children)`.", _ok_grad),
    ("bool-mask-jit", "a boolean mask on a staged value",
     _bool_mask_jit, errors.ConcretizationError, r"where", "Use `fgrad.numpy.where(mask, x, 0)`.", _ok_grad),
    ("jit-static-traced", "a traced value passed as a static argument of jit",
     lambda: fgrad.vmap(fgrad.jit(lambda x, n: x * n, static_argnums=1))(onp.ones(2), onp.ones(2)),
     TypeError, r"static argument 1 of <lambda> is a traced value.*in_axes=None",
     "Under vmap pass it with `in_axes=None`; otherwise leave it out of `static_argnums` so it is traced.",
     _ok_grad),
    ("number-of-differentiated-value", "float(), int(), .item() or math.* of a value being differentiated",
     lambda: fgrad.grad(lambda x: x * float(x))(3.0), errors.ConcretizationError,
     r"float\(\) of a traced value .* is being differentiated by grad.*stop_gradient",
     "Keep it an array and use `fgrad.numpy` functions (`fnp.sin`, not `math.sin`); for a constant, "
     "convert `fgrad.stop_gradient(x)`.", _ok_grad),
    ("jit-static-unhashable", "an unhashable static argument to jit",
     lambda: fgrad.jit(lambda x, n: x * len(n), static_argnums=1)(1.0, [1, 2]), TypeError, r"hashable",
     "Pass a tuple instead of a list.", _ok_grad),
    ("custom-vjp-no-rule", "a custom_vjp function without a rule",
     _custom_without_rule, TypeError, r"defvjp", "Call `f.defvjp(fwd, bwd)`.", _ok_grad),
    ("custom-vjp-bwd-count", "a custom_vjp bwd returning the wrong number of cotangents",
     _custom_bad_bwd, ValueError, r"one per argument", "Return one cotangent per argument (None for zero).",
     _ok_grad),
    ("custom-jvp-rule-pair", "a custom_jvp rule that does not return a pair",
     _custom_jvp_not_pair, TypeError, r"must return a pair \(primal_out, tangent_out\)",
     "Return `(primal_out, tangent_out)` from the rule.", _ok_grad),
    ("custom-jvp-tangent-shape", "a custom_jvp rule returning a tangent of the wrong shape",
     _custom_jvp_tangent_shape, TypeError, r"tangent of shape \(3,\) for a primal output of shape \(\)",
     "Give each tangent output its primal output's shape.", _ok_grad),
    ("custom-vjp-fwd-pair", "a custom_vjp fwd that does not return a pair",
     _custom_fwd_not_pair, TypeError, r"must return a pair \(output, residuals\)",
     "Return `(output, residuals)` from fwd (`None` residuals are fine).", _ok_grad),
    ("custom-vjp-forward-mode", "forward mode (jvp, jacfwd, linearize) of a custom_vjp function",
     _custom_vjp_forward_mode, TypeError, r"can't apply forward-mode autodiff \(jvp\) to a custom_vjp function",
     "Use reverse mode (grad, vjp, jacrev; hessian works) for it, or define its derivative with "
     "`fgrad.custom_jvp`, which serves both modes.", _ok_grad),
    ("custom-vjp-bwd-shape", "a custom_vjp bwd returning a cotangent of the wrong shape",
     _custom_bad_bwd_shape, ValueError, r"cotangent shape \(\) for an input of shape \(3,\)",
     "Give each cotangent its argument's shape.", _ok_grad),
    ("custom-vjp-bwd-structure", "a custom_vjp bwd cotangent structured unlike its argument",
     _custom_bad_bwd_structure, ValueError, r"the cotangent for argument 0 has the structure",
     "Return each argument's cotangent in that argument's pytree structure (None for zero).", _ok_grad),
    ("custom-closure", "a custom rule or checkpoint closing over a differentiated value",
     _custom_closure, errors.UnexpectedTracerError, r"not one of its arguments",
     "Pass the value as an argument of the custom function.", _ok_grad),
    ("custom-nondiff-argnums", "nondiff_argnums naming an argument the call does not pass",
     _custom_nondiff_range, TypeError, r"nondiff_argnums=\(1,\) names argument 1",
     "Pass every argument named in `nondiff_argnums`.", _ok_grad),
    ("custom-keyword-only", "a custom rule's function with keyword-only parameters",
     _custom_keyword_only, TypeError, r"could not be resolved to positions",
     "Make the parameters positional-or-keyword: custom rules receive positional arguments.", _ok_grad),
    ("custom-defjvps-nondiff", "defjvps on a custom_jvp with nondiff_argnums",
     _custom_defjvps_nondiff, TypeError, r"defjvps cannot be used with nondiff_argnums",
     "Use `defjvp`, whose rule receives the nondiff arguments first.", _ok_grad),
    ("tree-mismatch", "tree_map over pytrees of different structure",
     lambda: fgrad.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}), ValueError,
     r"structures differ", "Pass pytrees of the same structure.", _ok_grad),
    ("debug-nans", "a NaN produced while debug_nans is on",
     lambda: _with_debug_nans(lambda: fnp.log(-1.0)), FloatingPointError, r"'log' produced NaN",
     "Guard the input of log/sqrt/div; the error names the first primitive that made the NaN.", _ok_grad),
    ("int-requires-grad", "requires_grad on an integer Tensor",
     lambda: fgrad.torch.tensor([1, 2], requires_grad=True), RuntimeError,
     r"floating point", "Create a float tensor (`dtype=torch.float32`) or convert with `.float()`.",
     _ok_tensor),
    ("backward-nonscalar", "backward() of a non-scalar without gradient",
     _nonscalar_backward, RuntimeError, r"implicitly created only for scalar outputs",
     "Reduce to a scalar, or pass `gradient=` shaped like the output.", _ok_tensor),
    ("backward-twice", "a second backward through freed buffers",
     _second_backward, RuntimeError, r"backward through the graph a second time",
     "Pass `retain_graph=True` to the first backward.", _ok_tensor),
    ("inplace-leaf", "an in-place change of a leaf that requires grad",
     _inplace_leaf, RuntimeError, r"leaf Variable that requires grad",
     "Update parameters under `torch.no_grad()`.", _ok_tensor),
    ("inplace-saved", "an in-place change of a value saved for backward",
     _inplace_saved, RuntimeError, r"modified by an inplace operation",
     "Use the out-of-place op (`b = b + 1`) or `.clone()` first.", _ok_tensor),
    ("tensor-shapes", "a Tensor op on shapes that do not broadcast",
     lambda: fgrad.torch.ones(2, 3) + fgrad.torch.ones(4), RuntimeError, r"\(2, 3\).*\(4,\)|\[2, 3\].*\[4\]",
     "Reshape an operand so trailing dimensions match or are 1.", _ok_tensor),
    ("numpy-requires-grad", ".numpy() of a Tensor that requires grad",
     lambda: fgrad.torch.tensor([1.0], requires_grad=True).numpy(), RuntimeError, r"detach",
     "Call `.detach().numpy()`.", _ok_tensor),
    ("grad-unused-input", "autograd.grad of an input the output does not use",
     _unused_input, RuntimeError, r"allow_unused",
     "Pass `allow_unused=True` (its gradient is then None).", _ok_tensor),
    ("cuda-missing", "device='cuda' without CuPy or a GPU",
     lambda: _cuda_tensor(), RuntimeError, r"CuPy|GPU|CUDA",
     "Install `fgrad[cuda]` on a machine with an NVIDIA GPU, or stay on 'cpu'.", _ok_tensor),
    ("tracer-setitem", "item assignment on a traced value (x[i] = v)",
     _setitem_traced, TypeError, r"x = x\.at\[idx\]\.set\(v\)",
     "Write the update functionally: `x = x.at[idx].set(v)` (or `.add(v)`, `fgrad.numpy.at_set`).", _ok_grad),
    ("numpy-out", "NumPy's out= with a traced value",
     lambda: fgrad.grad(lambda x: onp.sum(x, out=onp.zeros(())))(onp.ones(3)), errors.TracerArrayConversionError,
     r"out= is not supported", "Use the returned value: `y = np.sum(x)`.", _ok_grad),
    ("numpy-ufunc-missing", "a NumPy ufunc that fgrad.numpy lacks, on a traced value",
     lambda: fgrad.grad(lambda x: (x * onp.spacing(x)).sum())(onp.ones(3)), errors.TracerArrayConversionError,
     r"numpy\.spacing.*no fgrad\.numpy counterpart",
     "Write it with fgrad.numpy functions, or compute it on a constant outside the traced function.", _ok_grad),
    ("layout-order", "order='F' (or another layout) on a traced value",
     lambda: fgrad.grad(lambda x: x.reshape(6, order="F").sum())(onp.ones((2, 3))),
     errors.TracerArrayConversionError, r"C order only", "Transpose explicitly: `x.T.reshape(-1)`.", _ok_grad),
    ("ragged-traced-list", "a ragged list of traced values",
     lambda: fgrad.grad(lambda x: fnp.sum(fnp.array([x, [1.0]])))(onp.ones(2)), TypeError, r"different shapes",
     "Give every entry one shape, or join them with `concatenate`.", _ok_grad),
    ("index-trick-directive", "an unknown r_/c_ directive",
     lambda: fnp.r_["x", 1.0, 2.0], ValueError, r"unknown special directive",
     "Use 'axis', 'axis,ndmin' or 'axis,ndmin,trans1d' as the first entry (e.g. r_['0,2', a, b]).", _ok_grad),
    ("bitwise-float", "& | ^ ~ (bitwise) on floats",
     lambda: fnp.bitwise_and(onp.ones(2), onp.ones(2)), TypeError, r"integers and booleans",
     "Compare first, `(x > 0) & (y > 0)`, or use `logical_and`/`logical_or`/`logical_not`.", _ok_grad),
    ("int-negative-power", "an integer raised to a negative integer power",
     lambda: fnp.power(onp.arange(1, 3), -1), ValueError, r"negative integer powers",
     "Use a float base: `x.astype(float) ** -1`.", _ok_grad),
    ("bool-positive", "unary + of booleans",
     lambda: fnp.positive(onp.array([True, False])), TypeError, r"booleans is not supported",
     "Convert first: `+x.astype(int)`.", _ok_grad),
    ("where-needs-initial", "max/min with where= but no initial=",
     lambda: fnp.max(onp.ones(3), where=onp.array([True, False, True])), ValueError, r"specify 'initial'",
     "Pass `initial=` (e.g. `-np.inf` for max): a masked-out slice needs a value.", _ok_grad),
    ("where-mask-dtype", "a where= mask that is not boolean",
     lambda: fnp.sum(onp.ones(3), where=onp.array([1, 0, 1])), TypeError, r"where= must be a boolean mask",
     "Compare to get a mask: `where=m > 0`.", _ok_grad),
    ("initial-not-scalar", "an initial= that is not a scalar",
     lambda: fnp.sum(onp.ones(3), initial=onp.ones(2)), ValueError, r"initial must be a scalar",
     "Pass one number; add an array to the result afterwards.", _ok_grad),
    ("ddof-and-correction", "var/std with both ddof= and correction=",
     lambda: fnp.var(onp.ones(3), ddof=1, correction=1), ValueError, r"ddof and correction",
     "Pass one of them (they mean the same).", _ok_grad),
    ("clip-bounds-twice", "clip with a_min/a_max and min=/max=",
     lambda: fnp.clip(onp.ones(3), 0.0, 1.0, min=0.0), ValueError, r"min.*max.*forbidden",
     "Pass the bounds once, positionally or as min=/max=.", _ok_grad),
    ("loop-carry-type", "a loop body that changes its carry's structure, shape or dtype",
     lambda: fgrad.lax.fori_loop(0, 3, lambda i, c: fnp.stack([c, c]), 1.0), TypeError,
     r"changes the carry.*f64\[\].*f64\[2\]",
     "Return the carry with the structure, shapes and dtypes of the initial value (cast with `.astype`, or "
     "give the initial value the type the body produces).", _ok_grad),
    ("cond-branch-mismatch", "cond/switch branches that return different structures or types",
     lambda: fgrad.lax.cond(True, lambda x: x, lambda x: fnp.stack([x, x]), 1.0), TypeError,
     r"branches return different types",
     "Return the same structure, shapes and dtypes from every branch (`.astype`, `zeros_like`).", _ok_grad),
    ("cond-pred", "a cond predicate (or switch index) that is not one boolean or integer",
     lambda: fgrad.lax.cond(onp.ones(3) > 0, lambda: 1.0, lambda: 2.0), TypeError,
     r"predicate must be a scalar boolean or integer, got bool\[3\]",
     "Reduce it to one value (`fgrad.numpy.all(p)`), or use `fgrad.numpy.where` for elementwise choices.",
     _ok_grad),
    ("while-cond-output", "a while_loop cond_fun that does not return one boolean",
     lambda: fgrad.lax.while_loop(lambda c: c, lambda c: c - 1.0, 3.0), TypeError,
     r"cond_fun must return one boolean scalar",
     "Compare to get a boolean (`i < n`, `norm(r) > tol`), reducing arrays with `any`/`all`.", _ok_grad),
    ("scan-body-output", "a scan body that does not return (carry, y)",
     lambda: fgrad.lax.scan(lambda c, x: c + x, 0.0, onp.ones(3)), TypeError, r"f must return a pair",
     "Return `carry, y` (y may be None).", _ok_grad),
    ("scan-length", "scan xs of different lengths, or no way to know the length",
     lambda: fgrad.lax.scan(lambda c, x: (c, None), 0.0, (onp.ones(3), onp.ones(4))), ValueError,
     r"same leading axis size",
     "Give every leaf of xs the same leading size, or pass `length=` (a Python int) when there are no xs.",
     _ok_grad),
    ("foreign-input", "a Tensor given to fgrad's functional door (grad, jit, vmap, custom rules, lax control flow)",
     lambda: fgrad.lax.scan(lambda c, x: (c * x, c), fgrad.torch.tensor(1.0), fgrad.torch.tensor([1.0, 2.0])),
     TypeError, r"fgrad\.lax\.scan got a fgrad\.torch\.Tensor",
     "Use the facade's door (fgrad.torch.func.grad/vjp/jvp/vmap, torch.compile, autograd.Function, "
     "torch.utils.checkpoint), which unboxes Tensors for fgrad's transforms, or pass plain arrays "
     "(t.detach().numpy()).", _ok_tensor),
    ("lax-arguments", "control-flow arguments of the wrong kind (not callable, not an int)",
     lambda: fgrad.lax.scan(lambda c, x: (c, x), 0.0, onp.ones(3), unroll=0), ValueError,
     r"unroll must be a positive int",
     "Follow the signature: functions where functions go, Python ints for lengths, bounds and options.",
     _ok_grad),
]


def _with_debug_nans(fn):
    with fgrad.debug_nans():
        fn()


def _cuda_tensor():
    try:
        import cupy  # noqa: F401
        raise RuntimeError("CuPy is installed here: the missing-CUDA error cannot be shown")
    except ImportError:
        fgrad.torch.zeros(2, device="cuda")


def render() -> str:
    lines = ["# Errors fgrad detects", "",
             "Every error below is raised by fgrad's own checks, with a message that says what happened, "
             "where, and how to fix it. After any of them fgrad keeps working. The table is generated "
             "from `tests/core/error_catalogue.py`, and `tests/core/test_errors.py` triggers each entry, checks "
             "its type and message, and runs a correct computation right after.", "",
             "Each message ends with two lines: `at <your file>:<line>: <source>`, the line of your own "
             "code that led to the error (fgrad's internal frames, the standard library's and installed "
             "packages' are skipped), and `See docs/errors.md#<id>`, a link to its entry below. The "
             "**Message** lines below show the first line of each message.", ""]
    for i, (eid, title, trigger, exc, pattern, fix, _) in enumerate(ENTRIES, 1):
        try:
            trigger()
            message = "(not raised)"
        except Exception as e:  # noqa: BLE001
            message = str(e).strip().splitlines()[0]
        lines += [f'<a id="{eid}"></a>', "", f"## {i}. {title} (`{eid}`)", "",
                  f"- **Exception:** `{exc.__module__.replace('builtins', '').strip('.') + '.' if exc.__module__ != 'builtins' else ''}{exc.__name__}`",
                  f"- **Message:** {message}", f"- **Fix:** {fix}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    import pathlib
    path = pathlib.Path(__file__).resolve().parents[2] / "docs" / "errors.md"
    path.write_text(render())
    print(f"wrote {path} ({len(ENTRIES)} entries)")
