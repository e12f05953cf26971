"""fgrad.ad_checkpoint.print_saved_residuals / saved_residuals: what vjp's recorded graph
keeps for the backward pass, printed in JAX's format (issue 25)."""
from __future__ import annotations

import contextlib
import io

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.ad_checkpoint import print_saved_residuals, saved_residuals


def _printed(printer, f, *args) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        printer(f, *args)
    return buf.getvalue()


@pytest.mark.parametrize("case", ["mul of two arguments", "pytree argument"])
def test_printed_as_jax_prints_where_both_keep_the_same(case):
    jax = pytest.importorskip("jax")
    jnp = pytest.importorskip("jax.numpy")
    from jax.ad_checkpoint import print_saved_residuals as jax_print
    was = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)  # fgrad's default: f64, as printed
    try:
        if case == "mul of two arguments":
            want = _printed(jax_print, lambda x, y: x * y, jnp.ones(3), jnp.ones(3))
        else:
            want = _printed(jax_print, lambda p: p["a"] * p["b"][0],
                            {"a": jnp.ones(3), "b": [jnp.ones(3)]})
    finally:
        jax.config.update("jax_enable_x64", was)
    if case == "mul of two arguments":
        got = _printed(print_saved_residuals, lambda x, y: x * y, fnp.ones(3), fnp.ones(3))
    else:
        got = _printed(print_saved_residuals, lambda p: p["a"] * p["b"][0],
                       {"a": fnp.ones(3), "b": [fnp.ones(3)]})
    assert got == want


def _layer(w, x):
    return fnp.tanh(fnp.dot(w, x))


def test_outputs_are_located_in_the_users_code():
    """tanh's rule reads its output, dot's its inputs: the first layer's tanh output feeds
    the second dot, the last tanh's output its own rule; each is located at the call."""
    line = _layer.__code__.co_firstlineno + 1
    res = saved_residuals(lambda w, x: _layer(w, _layer(w, x)), fnp.ones((3, 3)), fnp.ones(3))
    text = [d for _, d in res]
    assert text[:2] == ["from the argument w", "from the argument x"]
    assert text[2:] == [f"output of tanh from {__file__}:{line}:11 (_layer)"] * 2
    assert [a.shape for a, _ in res] == [(3, 3), (3,), (3,), (3,)]
    assert len({id(a) for a, _ in res}) == 4


def test_checkpoint_keeps_its_inputs_only():
    def f(w, x):
        x = fgrad.checkpoint(_layer)(w, x)
        return fgrad.checkpoint(_layer)(w, x)
    plain = saved_residuals(lambda w, x: _layer(w, _layer(w, x)), fnp.ones((3, 3)), fnp.ones(3))
    remat = saved_residuals(f, fnp.ones((3, 3)), fnp.ones(3))
    assert [d for _, d in remat][:2] == ["from the argument w", "from the argument x"]
    # (as JAX words it: the checkpoint's output is the tanh inside it, located there)
    line = _layer.__code__.co_firstlineno + 1
    assert [d for _, d in remat][2] == f"output of tanh from {__file__}:{line}:11 (_layer)"
    assert len(remat) == 3 < len(plain)  # the first layer's tanh output is not kept
    # the numbers: the printed line holds the shape and dtype as JAX's does
    out = _printed(print_saved_residuals, f, fnp.ones((3, 3)), fnp.ones(3)).splitlines()
    assert out[0] == "f64[3,3] from the argument w"


def test_constants_and_python_numbers():
    res = saved_residuals(lambda x, s: fnp.sin(x) * s * onp.arange(3.0), fnp.ones(3), 2.0)
    assert [d for _, d in res][:2] == ["from the argument x", "from the argument s"]
    assert "a constant" in [d for _, d in res]
