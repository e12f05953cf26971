"""The catalogue of user errors fgrad detects: one entry per error, shared by
tests/test_errors.py (which triggers each one and checks type, message and recovery)
and docs/errors.md (generated from this table by `python tests/error_catalogue.py`).

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
    x = fgrad.tensor([2.0], requires_grad=True)
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


def _second_backward():
    w = fgrad.tensor([1.0], requires_grad=True)
    y = fgrad.mul(fgrad.add(w, 2.0), fgrad.add(w, 1.0))
    y.backward()
    y.backward()


def _inplace_saved():
    a = fgrad.tensor([1.0, 2.0], requires_grad=True)
    b = a.exp()
    b.add_(1.0)
    b.sum().backward()


def _inplace_leaf():
    a = fgrad.tensor([1.0], requires_grad=True)
    a.add_(1.0)


def _nonscalar_backward():
    (fgrad.tensor([1.0, 2.0], requires_grad=True) * 2).backward()


def _unused_input():
    a, b = fgrad.tensor(1.0, requires_grad=True), fgrad.tensor(2.0, requires_grad=True)
    fgrad.autograd.grad(a * 2, [a, b])


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
    ("bool-mask-jit", "a boolean mask on a staged value",
     _bool_mask_jit, errors.ConcretizationError, r"where", "Use `fgrad.numpy.where(mask, x, 0)`.", _ok_grad),
    ("jit-static-unhashable", "an unhashable static argument to jit",
     lambda: fgrad.jit(lambda x, n: x * len(n), static_argnums=1)(1.0, [1, 2]), TypeError, r"hashable",
     "Pass a tuple instead of a list.", _ok_grad),
    ("custom-vjp-no-rule", "a custom_vjp function without a rule",
     _custom_without_rule, TypeError, r"defvjp", "Call `f.defvjp(fwd, bwd)`.", _ok_grad),
    ("custom-vjp-bwd-count", "a custom_vjp bwd returning the wrong number of cotangents",
     _custom_bad_bwd, ValueError, r"one per argument", "Return one cotangent per argument (None for zero).",
     _ok_grad),
    ("tree-mismatch", "tree_map over pytrees of different structure",
     lambda: fgrad.tree_util.tree_map(lambda a, b: a, {"a": 1}, {"b": 1}), ValueError,
     r"structures differ", "Pass pytrees of the same structure.", _ok_grad),
    ("debug-nans", "a NaN produced while debug_nans is on",
     lambda: _with_debug_nans(lambda: fnp.log(-1.0)), FloatingPointError, r"'log' produced NaN",
     "Guard the input of log/sqrt/div; the error names the first primitive that made the NaN.", _ok_grad),
    ("int-requires-grad", "requires_grad on an integer Tensor",
     lambda: fgrad.tensor([1, 2], requires_grad=True), RuntimeError,
     r"floating point", "Create a float tensor (`dtype=fgrad.float32`) or convert with `.float()`.",
     _ok_tensor),
    ("backward-nonscalar", "backward() of a non-scalar without gradient",
     _nonscalar_backward, RuntimeError, r"implicitly created only for scalar outputs",
     "Reduce to a scalar, or pass `gradient=` shaped like the output.", _ok_tensor),
    ("backward-twice", "a second backward through freed buffers",
     _second_backward, RuntimeError, r"backward through the graph a second time",
     "Pass `retain_graph=True` to the first backward.", _ok_tensor),
    ("inplace-leaf", "an in-place change of a leaf that requires grad",
     _inplace_leaf, RuntimeError, r"leaf Variable that requires grad",
     "Update parameters under `fgrad.no_grad()`.", _ok_tensor),
    ("inplace-saved", "an in-place change of a value saved for backward",
     _inplace_saved, RuntimeError, r"modified by an inplace operation",
     "Use the out-of-place op (`b = b + 1`) or `.clone()` first.", _ok_tensor),
    ("tensor-shapes", "a Tensor op on shapes that do not broadcast",
     lambda: fgrad.ones(2, 3) + fgrad.ones(4), RuntimeError, r"\(2, 3\).*\(4,\)|\[2, 3\].*\[4\]",
     "Reshape an operand so trailing dimensions match or are 1.", _ok_tensor),
    ("numpy-requires-grad", ".numpy() of a Tensor that requires grad",
     lambda: fgrad.tensor([1.0], requires_grad=True).numpy(), RuntimeError, r"detach",
     "Call `.detach().numpy()`.", _ok_tensor),
    ("grad-unused-input", "autograd.grad of an input the output does not use",
     _unused_input, RuntimeError, r"allow_unused",
     "Pass `allow_unused=True` (its gradient is then None).", _ok_tensor),
    ("cuda-missing", "device='cuda' without CuPy or a GPU",
     lambda: _cuda_tensor(), RuntimeError, r"CuPy|GPU|CUDA",
     "Install `fgrad[cuda]` on a machine with an NVIDIA GPU, or stay on 'cpu'.", _ok_tensor),
]


def _with_debug_nans(fn):
    with fgrad.debug_nans():
        fn()


def _cuda_tensor():
    try:
        import cupy  # noqa: F401
        raise RuntimeError("CuPy is installed here: the missing-CUDA error cannot be shown")
    except ImportError:
        fgrad.zeros(2, device="cuda")


def render() -> str:
    lines = ["# Errors fgrad detects", "",
             "Every error below is raised by fgrad's own checks, with a message that says what happened, "
             "where, and how to fix it. After any of them fgrad keeps working. The table is generated "
             "from `tests/error_catalogue.py`, and `tests/test_errors.py` triggers each entry, checks "
             "its type and message, and runs a correct computation right after.", ""]
    for i, (eid, title, trigger, exc, pattern, fix, _) in enumerate(ENTRIES, 1):
        try:
            trigger()
            message = "(not raised)"
        except Exception as e:  # noqa: BLE001
            message = str(e).strip().splitlines()[0]
        lines += [f"## {i}. {title} (`{eid}`)", "",
                  f"- **Exception:** `{exc.__module__.replace('builtins', '').strip('.') + '.' if exc.__module__ != 'builtins' else ''}{exc.__name__}`",
                  f"- **Message:** {message}", f"- **Fix:** {fix}", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    import pathlib
    path = pathlib.Path(__file__).resolve().parent.parent / "docs" / "errors.md"
    path.write_text(render())
    print(f"wrote {path} ({len(ENTRIES)} entries)")
