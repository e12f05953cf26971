"""Derivatives of tanh to order 6, and a Newton optimiser driven by fgrad.hessian."""
import numpy as onp

import fgrad
import fgrad.numpy as np


def derivatives_of_tanh(order: int = 6):
    xs = onp.linspace(-3, 3, 7)
    f = np.tanh
    rows = []
    for k in range(order + 1):
        rows.append([float(f(x)) for x in xs])
        f = fgrad.grad(f)
    return xs, rows


def newton(f, x, steps: int = 8):
    g, h = fgrad.grad(f), fgrad.hessian(f)
    for _ in range(steps):
        x = x - onp.linalg.solve(h(x), g(x))
    return x


def rosenbrock(x):
    return (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2


if __name__ == "__main__":
    xs, rows = derivatives_of_tanh()
    print("x:        " + " ".join(f"{x:9.3f}" for x in xs))
    for k, row in enumerate(rows):
        print(f"tanh^({k}): " + " ".join(f"{v:9.4f}" for v in row))
    x = newton(rosenbrock, onp.array([-1.2, 1.0]), steps=10)
    print("Newton on Rosenbrock from (-1.2, 1.0):", x, "f =", float(rosenbrock(x)))
