"""fgrad.torch.compile of a Module: fx capture, one jitted program of parameters, buffers and
inputs, gradients through the jitted vjp; equal to eager on training steps."""
import numpy as np
import pytest

import fgrad.torch as torch
import fgrad.torch.nn as nn
import fgrad.torch.nn.functional as F


def _steps(model, step_model, x, y, n=3, lr=0.05):
    """n SGD steps of step_model (model itself or its compiled form); the losses and the final
    parameters."""
    opt = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    losses = []
    for _ in range(n):
        opt.zero_grad()
        loss = F.cross_entropy(step_model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().numpy().copy() for p in model.parameters()]


def _mlp():
    return nn.Sequential(nn.Linear(20, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 10))


def _cnn():
    return nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(8 * 2 * 2, 10))


@pytest.mark.parametrize("build, shape", [(_mlp, (16, 20)), (_cnn, (8, 1, 8, 8))])
def test_compiled_training_steps_equal_eager(build, shape):
    # parameters are inputs of the program: each step's update is seen by the next call
    torch.manual_seed(0)
    x, y = torch.randn(*shape), torch.randint(0, 10, (shape[0],))
    torch.manual_seed(1)
    eager = build()
    torch.manual_seed(1)
    model = build()
    compiled = torch.compile(model)
    l_e, p_e = _steps(eager, eager, x, y)
    l_c, p_c = _steps(model, compiled, x, y)
    # the compiled program computes the same primitives in the same order: bit for bit
    assert l_c == l_e
    for a, b in zip(p_c, p_e):
        np.testing.assert_array_equal(a, b)
    assert compiled.stats == {"programs": 1, "forward_traces": 1, "backward_traces": 1}
    assert compiled.capture == "fx"


def test_compiled_gradients_equal_eager_in_float64():
    torch.manual_seed(0)
    m = _mlp().double()
    x = torch.randn(4, 20, dtype=torch.float64, requires_grad=True)
    out = torch.compile(m)(x)
    assert type(out.grad_fn).__name__ == "CompiledFunctionBackward"  # torch.compile's node
    (out ** 2).sum().backward()
    g_c = [p.grad.clone() for p in m.parameters()] + [x.grad.clone()]
    m.zero_grad()
    x.grad = None
    (m(x) ** 2).sum().backward()
    for a, b in zip(g_c, [p.grad for p in m.parameters()] + [x.grad]):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-14)


class _Chain(nn.Module):
    """Element-wise functions a library approximates (sin, tanh, exp) between arithmetic."""

    def forward(self, x):
        for _ in range(3):
            x = (x.sin() * 1.01 + 0.1).tanh() + (x * -0.5).exp() * 0.25
        return x.sum()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_transcendental_chain_equals_eager_bit_for_bit(dtype):
    """The compiled programs compute sin, tanh and exp with NumPy, as eager does (jit's own
    vectorised math, over 1024 elements and more, differs from NumPy's in the last bits, and
    computes float32 in float64, slower): the value and the gradient equal eager's exactly."""
    from fgrad.interpreters.compile.vmath import LARGE
    torch.manual_seed(0)
    x = torch.randn(2 * LARGE, dtype=dtype) * 3
    m = _Chain()
    xe, xc = x.clone().requires_grad_(True), x.clone().requires_grad_(True)
    ye, yc = m(xe), torch.compile(m)(xc)
    ye.backward()
    yc.backward()
    assert yc.item() == ye.item()
    np.testing.assert_array_equal(xc.grad.numpy(), xe.grad.numpy())
    with torch.no_grad():  # the forward-only program too
        assert torch.compile(m)(x).item() == m(x).item()


def test_backward_reads_the_inputs_the_vjp_keeps_not_copies():
    """A residual that is an input of the forward (a Linear's input and weight) reaches the
    backward as that array, as in eager (jit copies an output that is one of its inputs; a
    copy missed the FFT convolution's per-array cache, so W3's backward transformed again)."""
    torch.manual_seed(0)
    m = _mlp()
    x = torch.randn(4, 20, requires_grad=True)
    compiled = torch.compile(m)
    compiled(x).sum().backward()
    (prog,) = compiled._programs.values()
    seen, jitted = [], prog.backward
    prog.backward = lambda res, cts, key: (seen.append(res), jitted(res, cts, key))[1]
    g_first = x.grad.numpy().copy()
    x.grad = None
    compiled(x).sum().backward()
    kept = {id(v) for v in seen[0]}
    assert id(x._value) in kept and id(m[0].weight._value) in kept
    np.testing.assert_array_equal(x.grad.numpy(), g_first)


def test_recompiles_on_new_shapes_and_dtypes_and_guards_training_mode():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 6), nn.Dropout(0.5), nn.Linear(6, 2))
    c = torch.compile(m)
    x = torch.randn(5, 6)
    c(x)
    c(torch.randn(7, 6))                        # a new batch size: a new trace, same program
    assert c.stats == {"programs": 1, "forward_traces": 2, "backward_traces": 0}
    c.eval()                                    # dropout off: its own program
    with torch.no_grad():
        np.testing.assert_array_equal(c(x).numpy(), m(x).numpy())
    assert c.stats["programs"] == 2
    c.train()
    c(torch.randn(7, 6))                        # back in training: the first program, traced already
    assert c.stats == {"programs": 2, "forward_traces": 3, "backward_traces": 0}
    with torch.no_grad():
        c.eval()
        m.double()                              # new parameter dtypes: a new trace
        out = c(x.double())
    assert out.dtype == torch.float64 and c.stats["forward_traces"] == 4


def test_batch_norm_runs_eagerly_in_training_and_compiles_in_eval():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Linear(6, 6), nn.BatchNorm1d(6), nn.Linear(6, 2))
    c = torch.compile(m)
    x = torch.randn(5, 6)
    with pytest.warns(UserWarning, match="runs eagerly in training mode"):
        c(x)
    assert int(m[1].num_batches_tracked) == 1 and not torch.equal(m[1].running_mean, torch.zeros(6))
    c.eval()
    with torch.no_grad():
        np.testing.assert_allclose(c(x).numpy(), m(x).numpy(), rtol=1e-6, atol=1e-6)
    assert c.stats["programs"] == 1


def test_a_forward_fx_cannot_trace_is_compiled_by_tracing_the_module():
    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            if x.shape[0] > 2:                  # fine for fgrad.jit (shapes are static)
                return self.lin(x).relu()
            return self.lin(x)

    torch.manual_seed(0)
    m = Branchy()
    c = torch.compile(m)
    x = torch.randn(4, 3)
    np.testing.assert_array_equal(c(x).detach().numpy(), m(x).detach().numpy())
    assert c.capture == "trace"


def test_data_dependent_forward_falls_back_to_eager_with_a_warning():
    class Data(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 3)

        def forward(self, x):
            return self.lin(x) if float(x.sum()) > 0 else -x

    m = Data()
    c = torch.compile(m)
    with pytest.warns(UserWarning, match="runs eagerly"):
        out = c(torch.ones(2, 3))
    np.testing.assert_array_equal(out.detach().numpy(), m(torch.ones(2, 3)).detach().numpy())


def test_compiled_module_reaches_the_original():
    m = _mlp()
    c = torch.compile(m)
    assert c._orig_mod is m and list(c.parameters()) == list(m.parameters())
    assert c.eval() is c and not m.training
    assert "OptimizedModule" in repr(c)


def test_create_graph_through_a_compiled_module_raises():
    m = nn.Linear(3, 1)
    y = torch.compile(m)(torch.randn(2, 3)).sum()
    with pytest.raises(NotImplementedError, match="first-order gradients only"):
        torch.autograd.grad(y, m.weight, create_graph=True)


def test_root_training_flag_and_replaced_submodules_are_guarded():
    # fx records `self.training` read in the root's forward as a constant: each mode is its
    # own capture; a replaced submodule (new parameters) is captured anew
    class Root(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return F.dropout(self.lin(x), 0.5, training=self.training)

    torch.manual_seed(0)
    m = Root()
    c = torch.compile(m)
    x = torch.ones(64, 4)
    with torch.no_grad():
        assert (c(x) == 0).any()                # dropout on in training
        c.eval()
        np.testing.assert_array_equal(c(x).numpy(), m.lin(x).numpy())
        m.lin = nn.Linear(4, 2)
        assert c(x).shape == (64, 2)
        np.testing.assert_array_equal(c(x).numpy(), m.lin(x).numpy())
    assert c.capture == "fx" and len(c._captures) == 3
