"""The functional door: JAX-style keys, lax.scan, lax.cond, a tree of parameters."""
import fgrad
import fgrad.numpy as jnp
from fgrad import lax, random

key = random.PRNGKey(0)
key, sub = random.split(key)
params = {"w": random.normal(sub, (4, 4)), "b": jnp.zeros(4)}


def step(carry, x):
    h = jnp.tanh(params["w"] @ carry + params["b"] + x)
    return h, jnp.sum(h)


xs = random.uniform(key, (5, 4))
last, totals = lax.scan(step, jnp.zeros(4), xs)
flipped = lax.cond(totals[0] > 0, lambda v: v, lambda v: -v, last)
leaves = fgrad.tree_util.tree_leaves(params)
print(flipped.shape, totals.shape, len(leaves))
print(fgrad.nn.relu(jnp.array([-1.0, 2.0])), jnp.mean(xs, axis=0))
