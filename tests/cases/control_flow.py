"""Cases for the control-flow primitives (cond, scan, while) of fgrad.lax, each against the
Python loop or `if` it replaces (format: see tests/ops/test_primitives.py). tests/lax/test_control_flow.py
tests them under every transform and their compositions."""
import numpy as np

import fgrad.numpy as fnp
from fgrad import lax


def _rnn(x, w):
    """A tanh recurrence over the rows of x, with a pytree carry and stacked outputs."""
    def step(c, xi):
        h, s = c
        h = fnp.tanh(h * w + xi)
        return (h, s + fnp.sum(h)), h * h
    (h, s), ys = lax.scan(step, (fnp.zeros_like(w), fnp.zeros((), w.dtype)), x)
    return fnp.sum(ys, axis=0) + h * s


def _rnn_np(x, w):
    h, s, ys = np.zeros_like(w), np.zeros((), w.dtype), []
    for xi in x:
        h = np.tanh(h * w + xi)
        s = s + h.sum()
        ys.append(h * h)
    return np.sum(ys, axis=0) + h * s


def _reverse_scan(x, w):
    """reverse=True with an integer carry and an int output beside the float ones."""
    def step(c, xi):
        v, k = c
        v = fnp.sin(v * xi) + w * k
        return (v, k + 1), (v * 2.0, k)
    (v, k), (ys, ks) = lax.scan(step, (w, 0), x, reverse=True)
    return v + fnp.sum(ys * ks[:, None], axis=0) + k


def _reverse_scan_np(x, w):
    v, k = w, 0
    ys = [None] * len(x)
    for i in reversed(range(len(x))):
        v = np.sin(v * x[i]) + w * k
        ys[i] = v * 2.0 * k
        k += 1
    return v + np.sum(ys, axis=0) + k


def _fori(a, x):
    """Horner's rule with a closed-over matrix: fori_loop with static bounds (a scan)."""
    return lax.fori_loop(0, 4, lambda i, y: a @ y * 0.5 + fnp.cos(x) * i, x)


def _fori_np(a, x):
    y = x
    for i in range(4):
        y = a @ y * 0.5 + np.cos(x) * i
    return y


def _newton(a):
    """sqrt(a) by Newton's method in a while_loop, differentiated by reverse mode too."""
    def cond(c):
        y, it = c
        return (fnp.max(fnp.abs(y * y - a)) > 1e-10) & (it < 50)

    def body(c):
        y, it = c
        return y - (y * y - a) / (2.0 * y), it + 1
    return lax.while_loop(cond, body, (a + 1.0, 0))[0]


def _implicit_euler(k, y0):
    """dy/dt = -k y^3 by implicit Euler: a Newton while_loop in the body of a fori_loop."""
    def step(i, y):
        def residual(z):
            return z - y + 0.1 * k * z ** 3
        return lax.while_loop(lambda z: fnp.max(fnp.abs(residual(z))) > 1e-13,
                              lambda z: z - residual(z) / (1 + 0.3 * k * z ** 2), y)
    return lax.fori_loop(0, 3, step, y0)


def _implicit_euler_np(k, y0):
    y = y0
    for _ in range(3):
        z = y
        while np.max(np.abs(z - y + 0.1 * k * z ** 3)) > 1e-13:
            z = z - (z - y + 0.1 * k * z ** 3) / (1 + 0.3 * k * z ** 2)
        y = z
    return y


def _cond(x, y):
    return lax.cond(fnp.sum(x) > 0, lambda a, b: fnp.sin(a) * b, lambda a, b: a - fnp.exp(b), x, y)


def _cond_np(x, y):
    return np.sin(x) * y if x.sum() > 0 else x - np.exp(y)


def _switch(x):
    branches = [lambda v: v * 2.0, lambda v: fnp.tanh(v), lambda v: v ** 3]
    return lax.switch(fnp.argmax(x[0]), branches, x)


def _switch_np(x):
    return [lambda v: v * 2.0, np.tanh, lambda v: v ** 3][int(np.argmax(x[0]))](x)


X = lambda rng, dt: (rng.uniform(-1, 1, (5, 3)).astype(dt), rng.uniform(0.5, 1.5, (3,)).astype(dt))  # noqa: E731

def _linear_solve(a, b):
    """custom_linear_solve of a symmetric positive definite system made from a (matvec closes over it)."""
    m = fnp.matmul(a, fnp.swapaxes(a, 0, 1)) + 3.0 * fnp.eye(a.shape[0], dtype=a.dtype)
    return lax.custom_linear_solve(lambda x: fnp.matmul(m, x), b,
                                   lambda matvec, rhs: fnp.linalg.solve(m, rhs), symmetric=True)


def _linear_solve_np(a, b):
    return np.linalg.solve(a @ a.T + 3.0 * np.eye(a.shape[0]), b)


def _root(y):
    """custom_root: sqrt(y) by Newton's method, differentiated implicitly (not through the loop)."""
    def solve(f, x0):
        return lax.fori_loop(0, 30, lambda i, x: x - f(x) / (2.0 * x), x0)
    return lax.custom_root(lambda x: x * x - y, fnp.ones_like(y), solve,
                           lambda g, r: r / g(fnp.ones_like(r)))


CASES = [
    ("lax.scan[rnn]", _rnn, _rnn_np, X, {"f32": True}),
    ("lax.scan[reverse,int_carry]", _reverse_scan, _reverse_scan_np, X),
    ("lax.fori_loop[static]", _fori, _fori_np,
     lambda rng, dt: (rng.uniform(-1, 1, (3, 3)).astype(dt), rng.uniform(-1, 1, (3,)).astype(dt))),
    # its staged vjp (make_jaxpr of vjp) is a `deferred` equation: the trip count is known at run time
    ("lax.while_loop[newton]", _newton, np.sqrt, lambda rng, dt: (rng.uniform(0.5, 4, (3,)).astype(dt),),
     {"rtol": 1e-9}),
    ("lax.while_loop[in_scan]", _implicit_euler, _implicit_euler_np,
     lambda rng, dt: (rng.uniform(0.5, 2, (2,)).astype(dt), rng.uniform(0.5, 1.5, (2,)).astype(dt)),
     {"rtol": 1e-9}),
    ("lax.cond[pos]", _cond, _cond_np, lambda rng, dt: (rng.uniform(0.1, 1, (3,)).astype(dt),
                                                       rng.uniform(-1, 1, (3,)).astype(dt))),
    ("lax.cond[neg]", _cond, _cond_np, lambda rng, dt: (rng.uniform(-1, -0.1, (3,)).astype(dt),
                                                       rng.uniform(-1, 1, (3,)).astype(dt))),
    ("lax.switch", _switch, _switch_np, lambda rng, dt: (rng.uniform(-1, 1, (2, 3)).astype(dt),)),
    ("lax.custom_linear_solve", _linear_solve, _linear_solve_np,
     lambda rng, dt: (rng.uniform(-1, 1, (3, 3)).astype(dt), rng.uniform(-1, 1, (3,)).astype(dt)), {"rtol": 1e-9}),
    ("lax.custom_root[newton]", _root, np.sqrt, lambda rng, dt: (rng.uniform(0.5, 4, (3,)).astype(dt),),
     {"rtol": 1e-9}),
]
