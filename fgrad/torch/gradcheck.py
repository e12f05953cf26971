"""`torch.autograd.gradcheck` and `gradgradcheck`: the Jacobian from backward() against
central finite differences, for every (output, input) pair."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.errors import FgradRuntimeError, FgradValueError, GradcheckError
from ._tensor import autograd as tensor_autograd
from ._tensor import creation, forward_ad
from ._tensor.tensor import Tensor


def _as_tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


def _outputs(func, xs) -> tuple:
    return tuple(o for o in _as_tuple(func(*xs)) if isinstance(o, Tensor))


def _numerical(func, xs, i, o, eps) -> np.ndarray:
    """d out[o] / d xs[i] by central differences, shape (out.numel(), in.numel())."""
    x = xs[i]
    # the input's own array, with its strides: a transposed or sliced input is a view, and
    # reshape(-1) of it would be a copy that func never reads (every difference 0). Elements
    # are visited in row-major order of the logical shape, the Jacobian's column order.
    values = x.detach().numpy()
    if not values.flags.writeable or any(st == 0 and n > 1 for st, n in zip(values.strides, values.shape)):
        raise FgradRuntimeError(f"The {i}th input has a dimension with stride 0. gradcheck only supports inputs that "
                                "are non-overlapping to be able to compute the numerical gradients correctly. You "
                                "should call .contiguous on the input before passing it to gradcheck.")
    cols = []
    # perturbed in place through the storage (no version bump: nothing recorded reads it);
    # grad mode stays on, as func may itself differentiate (gradgradcheck)
    for k in np.ndindex(values.shape):
        old = values[k]
        values[k] = old + eps
        plus = _outputs(func, xs)[o].detach().numpy().astype(np.float64).reshape(-1).copy()
        values[k] = old - eps
        minus = _outputs(func, xs)[o].detach().numpy().astype(np.float64).reshape(-1).copy()
        values[k] = old
        cols.append((plus - minus) / (2 * eps))
    n_out = _outputs(func, xs)[o].numel()
    return np.stack(cols, 1) if cols else np.zeros((n_out, 0))


def _analytical(func, xs, i, o) -> np.ndarray:
    out = _outputs(func, xs)[o]
    flat = out.reshape(-1)
    rows = []
    for k in range(flat.numel()):
        g = tensor_autograd.grad(flat[k], xs[i], retain_graph=True, allow_unused=True)[0]
        rows.append(np.zeros(xs[i].numel()) if g is None else g.detach().numpy().astype(np.float64).reshape(-1))
    return np.stack(rows) if rows else np.zeros((0, xs[i].numel()))


def _forward_analytical(func, xs, i, o) -> np.ndarray:
    """d out[o] / d xs[i] by forward mode (dual tensors), one column per input element."""
    x = xs[i]
    base = np.zeros(tuple(x.shape), x.detach().numpy().dtype)
    cols = []
    for k in np.ndindex(base.shape):
        e = base.copy()
        e[k] = 1
        with forward_ad.dual_level():
            args = list(xs)
            args[i] = forward_ad.make_dual(x, creation.tensor(e))
            out = _outputs(func, args)[o]
            t = forward_ad.unpack_dual(out).tangent
            cols.append(np.zeros(out.numel()) if t is None else t.detach().numpy().astype(np.float64).reshape(-1))
    n_out = _outputs(func, xs)[o].numel()
    return np.stack(cols, 1) if cols else np.zeros((n_out, 0))


def gradcheck(func: Callable, inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0, check_undefined_grad: bool = True,
              check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """True when every Jacobian of func (w.r.t. the inputs that require grad) matches its
    finite-difference estimate within atol + rtol * |numerical|; otherwise GradcheckError
    (or False with raise_exception=False). Inputs should be float64, as in PyTorch.

    check_backward_ad (default True) checks the Jacobian from backward(); check_forward_ad the
    one from forward mode (torch.autograd.forward_ad's dual tensors, one per input element)."""
    xs = _as_tuple(inputs)
    diff = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]
    if not diff:
        raise FgradValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    modes = [(name, jac) for name, jac, on in (("backward", _analytical, check_backward_ad),
                                               ("forward", _forward_analytical, check_forward_ad)) if on]
    if not modes:
        raise FgradValueError("gradcheck: check_backward_ad and check_forward_ad are both False, so there is nothing "
                              "to check; set one of them to True")
    for o in range(len(_outputs(func, xs))):
        for i in diff:
            num = _numerical(func, xs, i, o, eps)
            for mode, jac in modes:
                ana = jac(func, xs, i, o)
                if not np.allclose(ana, num, rtol=rtol, atol=atol):
                    if raise_exception:
                        what = "Jacobian" if mode == "backward" else "Jacobian computed with forward mode"
                        raise GradcheckError(f"{what} mismatch for output {o} with respect to input {i},\n"
                                             f"numerical:{creation.tensor(num)}\nanalytical:{creation.tensor(ana)}\n")
                    return False
    return True


def gradgradcheck(func: Callable, inputs: Any, grad_outputs: Any = None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  **kwargs: Any) -> bool:
    """gradcheck of the map (inputs, grad_outputs) -> vᵀJ: second derivatives against finite
    differences of first ones. Random grad_outputs (float64, requiring grad) when None."""
    xs = _as_tuple(inputs)
    outs = _outputs(func, xs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(creation.tensor(rng.standard_normal(tuple(o.shape)), dtype=o.dtype,
                                             requires_grad=True) for o in outs)
    vs = _as_tuple(grad_outputs)
    n = len(xs)
    diff = [i for i, x in enumerate(xs) if isinstance(x, Tensor) and x.requires_grad]

    def first_derivative(*args):
        ins, v = args[:n], args[n:]
        gs = tensor_autograd.grad(_outputs(func, ins), [ins[i] for i in diff], grad_outputs=v, create_graph=True,
                                  allow_unused=True)
        return tuple(g for g in gs if g is not None)
    return gradcheck(first_derivative, xs + vs, eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
