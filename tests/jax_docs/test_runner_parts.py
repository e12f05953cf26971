"""The docs runner's parts, in the default run: the alias leaves sys.modules as it found it,
the comparison tells numbers apart, and the MyST parser reads cells and tags."""
import sys

import pytest

from .alias import jax_alias
from .compare import numbers, same_output
from .extract import parse_myst
from .notebook import run_cell, strip_magics


def test_alias_loads_fgrad_and_restores_sys_modules():
    before = {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    meta = list(sys.meta_path)
    with jax_alias():
        import jax
        import jax.numpy as jnp
        from jax import grad

        import fgrad
        assert jax is fgrad and jnp is fgrad.numpy and grad is fgrad.grad
        with pytest.raises(ModuleNotFoundError, match="jax.extend"):
            import jax.extend  # noqa: F401
    after = {k: v for k, v in sys.modules.items() if k == "jax" or k.startswith("jax.")}
    assert after == before and sys.meta_path == meta


def test_numbers_ignore_formatting():
    assert numbers("Array([1., 2.5e-3], dtype=float32) f32[3] 2j") == [1, 0.0025, 2j]
    assert numbers("Traced<f64[3]>with<jit#1> JitTracer(~float32[3])") == []
    assert same_output("array([0.84147098])", "Array([0.84147096], dtype=float32)")
    assert not same_output("array([0.84])", "Array([0.85], dtype=float32)")
    assert not same_output("[1 2]", "[1 2 3]")
    assert same_output("nan", "nan")
    assert not same_output("[ True False]", "[ True  True]")
    assert same_output("x: array([1.])", "x: Array([1.], dtype=float32, weak_type=True)")
    assert not same_output("Executing\nExecuting\n", "Executing\n")
    assert same_output("Executing\nExecuting\n", "Executing\n", compare_words=False)


def test_parse_myst_cells_and_tags():
    text = ("# title\n```{code-cell}\n:tags: [raises-exception]\n\nx = 1\n```\ntext\n"
            "```{code-cell} ipython3\n---\nid: a\n---\nprint(x)\n```\n")
    assert parse_myst(text) == [{"source": "x = 1", "tags": ["raises-exception"]},
                                {"source": "print(x)", "tags": []}]


def test_run_cell_shows_last_value_and_reports_errors():
    ns: dict = {}
    assert run_cell("x = 2\nx + 1", ns)["shown"] == "3"
    assert run_cell("x + 1;", ns)["shown"] is None
    out = run_cell("[][1]", ns)
    assert out["error"] == "IndexError" and "IndexError" in out["message"]
    assert strip_magics("%timeit -n 3 f(x)\n%xmode minimal\ny = 1") == ("f(x)\ny = 1", True)
