"""The Examples in the docstrings of both doors' main functions run, and print what they say
(doctest). A function listed here without an example fails, so the lists are also the lists of
functions that must keep one."""
from __future__ import annotations

import doctest

import pytest

import fgrad
import fgrad.torch as torch
from fgrad import lax
from fgrad.experimental import jet

MAIN = {
    "fgrad.grad": fgrad.grad, "fgrad.value_and_grad": fgrad.value_and_grad, "fgrad.vjp": fgrad.vjp,
    "fgrad.jvp": fgrad.jvp, "fgrad.linearize": fgrad.linearize, "fgrad.jacfwd": fgrad.jacfwd,
    "fgrad.jacrev": fgrad.jacrev, "fgrad.hessian": fgrad.hessian, "fgrad.vmap": fgrad.vmap,
    "fgrad.jit": fgrad.jit, "fgrad.checkpoint": fgrad.checkpoint, "fgrad.custom_jvp": fgrad.custom_jvp,
    "fgrad.custom_vjp": fgrad.custom_vjp, "fgrad.derivatives": fgrad.derivatives,
    "fgrad.experimental.jet.jet": jet.jet, "fgrad.lax.scan": lax.scan,
    "fgrad.lax.while_loop": lax.while_loop, "fgrad.lax.fori_loop": lax.fori_loop,
    "fgrad.lax.cond": lax.cond,
}
MAIN_TORCH = {
    "fgrad.torch.autograd.backward": torch.autograd.backward,
    "fgrad.torch.autograd.grad": torch.autograd.grad,
    "fgrad.torch.autograd.Function": torch.autograd.Function,
    "fgrad.torch.tensor": torch.tensor,
    "fgrad.torch.Tensor.backward": torch.Tensor.backward,
    "fgrad.torch.no_grad": torch.no_grad,
    "fgrad.torch.func.grad": torch.func.grad,
    "fgrad.torch.func.vmap": torch.func.vmap,
    "fgrad.torch.optim.SGD": torch.optim.SGD,
    "fgrad.torch.func.functional_call": torch.func.functional_call,
    "fgrad.torch.save": torch.save,
}


def run_examples(name: str, obj: object) -> doctest.TestResults:
    """Run the doctest examples of obj's own docstring (not its methods'), with empty globals:
    an example imports what it uses, as a reader copying it would."""
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(obj, name, globs={})
    for test in tests:
        runner.run(test)
    return doctest.TestResults(runner.failures, sum(len(t.examples) for t in tests))


@pytest.mark.parametrize("name", sorted(MAIN) + sorted(MAIN_TORCH))
def test_example_runs(name):
    failed, attempted = run_examples(name, {**MAIN, **MAIN_TORCH}[name])
    assert attempted > 0, f"{name}'s docstring has no example (>>> lines)"
    assert failed == 0, f"{name}'s example fails (doctest output above)"


def test_a_wrong_example_fails():
    def planted():
        """>>> 1 + 1
        3
        """
    assert run_examples("planted", planted).failed == 1
