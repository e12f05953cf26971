"""The functional door: grad with an argnums tuple, jit, vmap, jacfwd, value_and_grad."""
import fgrad
import fgrad.numpy as jnp


def loss(w, b, x):
    return jnp.sum(jnp.tanh(x @ w + b) ** 2)


w = jnp.ones((3, 2))
b = jnp.zeros(2)
x = jnp.arange(6.0).reshape(2, 3)
gw, gb = fgrad.grad(loss, argnums=(0, 1))(w, b, x)
value, g = fgrad.value_and_grad(loss)(w, b, x)
fast = fgrad.jit(loss)
print(fast(w, b, x), gw.shape, gb.shape, float(value), g.shape)
per_row = fgrad.vmap(lambda row: jnp.dot(row, row))(x)
jac = fgrad.jacfwd(jnp.sin)(jnp.linspace(0.0, 1.0, 4))
hess = fgrad.hessian(lambda v: jnp.sum(v ** 3))(jnp.ones(3))
print(per_row, jac.shape, hess.shape)
