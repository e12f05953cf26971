"""L-BFGS with an optional strong-Wolfe line search, PyTorch's algorithm step for step.

Scalars follow PyTorch's types: losses are Python floats, dot products and norms are float32
(or float64) NumPy scalars, so mixed expressions round as PyTorch's 0-d tensors do (NumPy 2
treats a Python float next to a float32 scalar as float32, as PyTorch treats a Python
number next to a tensor)."""
from __future__ import annotations

import numpy as np

from ...core.errors import FgradRuntimeError, FgradValueError
from .._tensor.grad_mode import enable_grad, no_grad
from .._tensor.tensor import Tensor
from .._tensor.tensor import wrap as _wrap
from .optimizer import Optimizer, ParamsT, _number, _xp


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds
    (default: the interval between the points); the interval's midpoint when the cubic has
    no minimum."""
    if bounds is not None:
        lo, hi = bounds
    else:
        lo, hi = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9, max_ls=25):
    """Line search along d from x for a step t meeting the strong Wolfe conditions
    (sufficient decrease c1, curvature c2): bracketing, then zoom by cubic interpolation.
    Returns (f_new, g_new, t, function evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate: the next trial lies between 1.01 t and 10 t
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point meets the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a trial within 10% of the bracket's ends makes little progress: twice in a row, or
        # outside the bracket, it is moved to 10% inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False

        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1

        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


# Vectors and NumPy scalars are kept as arrays during a step and as Tensors in self.state,
# so state_dict() holds tensors where PyTorch's does.
def _to_state(v):
    return _wrap(v) if isinstance(v, (np.ndarray, np.generic)) else v


def _from_state(v):
    if isinstance(v, Tensor):
        v = v._value
        return v[()] if getattr(v, "ndim", 1) == 0 else v
    return v


class LBFGS(Optimizer):
    """PyTorch's L-BFGS. step(closure) runs up to max_iter iterations, evaluating the closure
    (which zeroes the gradients, computes the loss, calls backward() and returns the loss) at
    most max_eval times (default max_iter * 5 // 4), and returns the first loss.

    The direction is the two-loop recursion over the last history_size curvature pairs; the
    step is lr (the first iteration of all: min(1, 1 / |g|_1) lr), fixed, or found by a
    strong-Wolfe line search (line_search_fn="strong_wolfe"). It stops when the largest
    gradient entry is <= tolerance_grad, or the step or the loss changes by less than
    tolerance_change. One parameter group only; the state (history, direction, counters
    func_evals and n_iter) lives in the state of the first parameter, as in PyTorch."""

    def __init__(self, params: ParamsT, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9,
                 history_size: int = 100, line_search_fn: str | None = None) -> None:
        if not 0.0 <= lr:
            raise FgradValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        if line_search_fn not in (None, "strong_wolfe"):
            # PyTorch raises this at the first step; here it is raised where the value is given
            raise FgradRuntimeError(f"only 'strong_wolfe' is supported as line_search_fn, got "
                               f"{line_search_fn!r}; pass line_search_fn=None for a fixed step")
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                                      tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change,
                                      history_size=history_size, line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise FgradValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict) -> None:
        """The one parameter group (a second raises ValueError: LBFGS keeps one flat history)."""
        if self.param_groups:
            raise FgradValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    def _gather_flat_grad(self):
        views = []
        for p in self._params:
            w = p._value
            if p._grad is None:
                views.append(_xp(w).zeros(w.size, w.dtype))
            else:
                views.append(self._grad_array(p).reshape(-1))
        return _xp(views[0]).concatenate(views)

    def _add_grad(self, step_size, update) -> None:
        offset = 0
        for p in self._params:
            w = p._value
            n = w.size
            w += w.dtype.type(step_size) * update[offset:offset + n].reshape(w.shape)
            offset += n
            self._bump(p)

    def _clone_param(self):
        return [p._value.copy() for p in self._params]

    def _set_param(self, values) -> None:
        for p, v in zip(self._params, values):
            p._value[...] = v
            self._bump(p)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @no_grad()
    def step(self, closure):  # noqa: C901 - PyTorch's algorithm, kept in one piece to compare
        """One L-BFGS step (up to max_iter iterations); returns the closure's first loss."""
        if closure is None:
            raise FgradRuntimeError("LBFGS.step() needs a closure that re-evaluates the model and "
                               "returns the loss: opt.step(closure)")
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr = _number(group["lr"])
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        if line_search_fn not in (None, "strong_wolfe"):
            raise FgradRuntimeError("only 'strong_wolfe' is supported")

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1

        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:
            return orig_loss

        d, t = _from_state(state.get("d")), _from_state(state.get("t"))
        H_diag = _from_state(state.get("H_diag"))
        prev_flat_grad = _from_state(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        old_dirs, old_stps, ro = ([_from_state(v) for v in state[k]] if k in state else None
                                  for k in ("old_dirs", "old_stps", "ro"))
        al = [_from_state(v) for v in state["al"]] if "al" in state else None

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the descent direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:
                    # a curvature pair is kept only where it keeps the Hessian estimate positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                num_old = len(old_dirs)
                if al is None:
                    al = [None] * history_size
                q = -flat_grad
                for i in range(num_old - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += (-al[i]) * old_dirs[i]
                d = r = q * H_diag
                for i in range(num_old):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]

            prev_flat_grad = flat_grad.copy()
            prev_loss = loss

            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = flat_grad.dot(d)
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd, max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                opt_cond = False
                if n_iter != max_iter:
                    # the last iteration's loss is not re-evaluated: with stochastic closures
                    # it would be a wasted evaluation (PyTorch's choice)
                    loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break

        state["d"], state["t"] = _to_state(d), _to_state(t)
        state["old_dirs"] = [_to_state(v) for v in old_dirs]
        state["old_stps"] = [_to_state(v) for v in old_stps]
        state["ro"] = [_to_state(v) for v in ro]
        if al is not None:
            state["al"] = [_to_state(v) for v in al]
        state["H_diag"] = _to_state(H_diag)
        state["prev_flat_grad"] = _to_state(prev_flat_grad)
        state["prev_loss"] = prev_loss
        return orig_loss
