"""The boundary's `operands` declaration: a plain tuple lists every declared position in the
node (None for an operand that needs no gradient); a GradOperands one lists only the operands
that require grad, as PyTorch's NotImplemented nodes do, and records no node without one."""
import numpy as np
import pytest

import fgrad.torch as ftorch
from fgrad.torch._tensor._boundary import GradOperands, call


def _fma(a, b, c):
    return a * b + c


def _entries(t):
    return [None if n is None else n.variable for n, _ in t.grad_fn.next_functions]


def _abc(*requires):
    vals = ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0])
    return [ftorch.tensor(v, requires_grad=r) for v, r in zip(vals, requires)]


def test_plain_declaration_lists_every_position():
    a, b, c = _abc(True, False, True)
    out = call("AddBackward0", _fma, (a, b, c), operands=(0, 1, 2))
    assert _entries(out) == [a, None, c]


def test_grad_declaration_lists_only_operands_requiring_grad():
    a, b, c = _abc(True, False, True)
    out = call("NotImplemented", _fma, (a, b, c), operands=GradOperands((0, 1, 2)))
    assert type(out.grad_fn).__name__ == "NotImplemented"
    assert _entries(out) == [a, c]
    out.sum().backward()  # (each gradient reaches its own operand, though entries were left out)
    np.testing.assert_array_equal(a.grad.numpy(), [3.0, 4.0])
    np.testing.assert_array_equal(c.grad.numpy(), [1.0, 1.0])
    assert b.grad is None


def test_grad_declaration_keeps_the_declared_order():
    a, b, c = _abc(True, True, False)
    out = call("NotImplemented", _fma, (a, b, c), operands=GradOperands((1, 0, 2)))
    assert _entries(out) == [b, a]


def test_grad_declaration_records_no_node_without_grad():
    a, b, c = _abc(False, False, False)
    out = call("NotImplemented", _fma, (a, b, c), operands=GradOperands((0, 1, 2)))
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(out.numpy(), [8.0, 14.0])
    a, b, c = _abc(True, True, True)
    with ftorch.no_grad():
        out = call("NotImplemented", _fma, (a, b, c), operands=GradOperands((0, 1, 2)))
    assert out.grad_fn is None


def test_ops_without_derivative_refuse_both_modes_as_pytorch():
    """floor division and remainder(number, Tensor): reverse mode raises at backward, forward
    mode (torch.func.jvp, a dual tensor) at the op, with PyTorch's types and words; values
    alone (vmap, no grad) compute."""
    torch = pytest.importorskip("torch")
    ones = np.ones(3)
    cases = {
        "jvp //": lambda lib: lib.func.jvp(lambda x: x // 2, (lib.tensor(ones),), (lib.tensor(ones),)),
        "jvp %": lambda lib: lib.func.jvp(lambda x: 2 % x, (lib.tensor(ones),), (lib.tensor(ones),)),
        "grad //": lambda lib: lib.func.grad(lambda x: (x // 2).sum())(lib.tensor(ones)),
    }
    for name, case in cases.items():
        errors = []
        for lib in (ftorch, torch):
            with pytest.raises((RuntimeError, NotImplementedError)) as info:
                case(lib)
            errors.append((info.type, str(info.value).splitlines()[0]))
        (ours, ours_text), (theirs, theirs_text) = errors
        assert issubclass(ours, theirs) and ours_text == theirs_text, name
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(ftorch.func.vmap(lambda r: r // 2)(ftorch.tensor(x)).numpy(), x // 2)
