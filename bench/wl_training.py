"""Training-step workloads, float32: W2 (MLP 784-512-512-10, batch 256, SGD momentum 0.9)
and W3 (the small CNN, batch 64, plain SGD).

All implementations start from the same weights (PyTorch's default init, drawn once with
NumPy) and the same batch, so the cross-check compares the loss and every parameter after
the first step. After that each implementation keeps stepping its own state; a step is
forward + backward + update, with the update inside the compiled function for the jit rows,
as a JAX user would write it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as onp
import wl_libs as L
from wl_harness import Impl, allclose, measure

LR = 0.01


@dataclass
class Model:
    """What differs between W2 and W3; the step machinery below is shared."""
    shapes: list            # (weight shape, bias shape) per layer, PyTorch layout
    facade: Callable        # nn -> Sequential (PyTorch or fgrad.torch.nn)
    fgrad_loss: Callable    # (F, fnp) -> loss(params, x, y)
    jax_loss: Callable      # (jax) -> loss(params, x, y)
    autograd_loss: Callable | None
    momentum: float | None


def init_params(rng, shapes) -> list:
    """PyTorch's default Linear/Conv2d init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for both."""
    out = []
    for w_shape, b_shape in shapes:
        bound = 1.0 / onp.sqrt(onp.prod(w_shape[1:]))
        out.append(rng.uniform(-bound, bound, w_shape).astype(onp.float32))
        out.append(rng.uniform(-bound, bound, b_shape).astype(onp.float32))
    return out


def sgd(params, bufs, grads, momentum):
    """torch.optim.SGD's update (buf = momentum * buf + grad; p -= lr * buf), zero-initialised
    buffers giving PyTorch's first step buf = grad. Works on NumPy arrays and tracers."""
    if momentum is None:
        return [p - LR * g for p, g in zip(params, grads)], bufs
    bufs = [momentum * b + g for b, g in zip(bufs, grads)]
    return [p - LR * b for p, b in zip(params, bufs)], bufs


# --- the implementations, generic over the model ---------------------------------------------

def _facade(lib_fn, model: Model, params, x, y):
    def build():
        lib = lib_fn()
        net = model.facade(lib.nn)
        with lib.no_grad():
            for p, a in zip(net.parameters(), params):
                p.copy_(lib.tensor(a))
        opt = lib.optim.SGD(net.parameters(), lr=LR, momentum=model.momentum or 0.0)
        crit = lib.nn.CrossEntropyLoss()
        data, target = lib.tensor(x), lib.tensor(y)
        last = {}

        def run():
            opt.zero_grad()
            loss = crit(net(data), target)
            loss.backward()
            opt.step()
            last["loss"] = loss
            return loss

        def inspect():
            return [last["loss"].item(), [p.detach().numpy().copy() for p in net.parameters()]]
        return run, inspect
    return build


def _fgrad_functional(model: Model, params, x, y, jit: bool):
    def build():
        fg = L.fgrad()
        loss = model.fgrad_loss(L.fgrad_torch().nn.functional, fg.numpy)

        def step(p, b, x, y):
            value, grads = fg.value_and_grad(loss)(p, x, y)
            p, b = sgd(p, b, grads, model.momentum)
            return p, b, value
        step = fg.jit(step) if jit else step
        return _stateful(step, params, x, y, to_dev=lambda a: a)
    return build


def _jax_jit(model: Model, params, x, y):
    def build():
        jax = L.jax()
        loss = model.jax_loss(jax)

        @jax.jit
        def step(p, b, x, y):
            value, grads = jax.value_and_grad(loss)(p, x, y)
            p, b = sgd(p, b, grads, model.momentum)
            return p, b, value
        return _stateful(lambda *a: L.block(step(*a)), params, x, y, to_dev=jax.numpy.asarray)
    return build


def _autograd(model: Model, params, x, y):
    def build():
        ag = L.autograd()
        loss = model.autograd_loss(ag.numpy, ag.scipy.special)
        vg = ag.value_and_grad(loss)

        def step(p, b, x, y):
            value, grads = vg(p, x, y)
            p, b = sgd(p, b, grads, model.momentum)
            return p, b, value
        return _stateful(step, params, x, y, to_dev=lambda a: a)
    return build


def _stateful(step, params, x, y, to_dev):
    """Wrap a functional step (p, b, x, y) -> (p, b, loss) into run/inspect over kept state."""
    state = {"p": [to_dev(a) for a in params], "b": [to_dev(onp.zeros_like(a)) for a in params]}
    x, y = to_dev(x), to_dev(y)

    def run():
        state["p"], state["b"], state["loss"] = step(state["p"], state["b"], x, y)
        return state["loss"]

    def inspect():
        return [float(state["loss"]), [onp.asarray(a) for a in state["p"]]]
    return run, inspect


def _run_model(wid: str, title: str, model: Model, x, y, config) -> dict:
    params = init_params(onp.random.default_rng(1), model.shapes)
    impls = [
        Impl("fgrad facade (nn/optim)", "fgrad", _facade(L.fgrad_torch, model, params, x, y), anchor="PyTorch"),
        Impl("fgrad functional", "fgrad", _fgrad_functional(model, params, x, y, jit=False), anchor="PyTorch"),
        Impl("fgrad functional + jit", "fgrad", _fgrad_functional(model, params, x, y, jit=True),
             anchor="jax.jit"),
        Impl("PyTorch", "PyTorch", _facade(L.torch, model, params, x, y), reference=True),
        Impl("jax.jit", "JAX", _jax_jit(model, params, x, y)),
    ]
    if model.autograd_loss is not None:
        impls.append(Impl("autograd", "autograd", _autograd(model, params, x, y)))
    rows = measure(impls, config, allclose(rtol=1e-4, atol=1e-6))
    note = ("fgrad's first backward pass calls fgrad.core.allocator.tune_malloc(), which tunes glibc "
            "for the whole process, PyTorch's and JAX's steps included (as in bench/train_step.py).")
    notes = [note]
    return {"id": wid, "title": title, "rows": [asdict(r) for r in rows], "tables": [], "notes": notes}


# --- W2: MLP --------------------------------------------------------------------------------

def _mlp_facade(nn):
    return nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))


def _mlp_fgrad(F, fnp):
    def loss(p, x, y):
        h = F.relu(F.linear(x, p[0], p[1]))
        h = F.relu(F.linear(h, p[2], p[3]))
        return F.cross_entropy(F.linear(h, p[4], p[5]), y)
    return loss


def _mlp_jax(jax):
    jnp = jax.numpy

    def loss(p, x, y):
        h = jax.nn.relu(x @ p[0].T + p[1])
        h = jax.nn.relu(h @ p[2].T + p[3])
        logp = jax.nn.log_softmax(h @ p[4].T + p[5], axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
    return loss


def _mlp_autograd(anp, special):
    def loss(p, x, y):
        h = anp.maximum(anp.dot(x, p[0].T) + p[1], 0.0)
        h = anp.maximum(anp.dot(h, p[2].T) + p[3], 0.0)
        logits = anp.dot(h, p[4].T) + p[5]
        logp = logits - special.logsumexp(logits, axis=1, keepdims=True)
        return -anp.mean(logp[anp.arange(len(y)), y])
    return loss


def w2(config) -> dict:
    rng = onp.random.default_rng(0)
    x = rng.standard_normal((256, 784)).astype(onp.float32)
    y = rng.integers(0, 10, 256)
    model = Model([((512, 784), (512,)), ((512, 512), (512,)), ((10, 512), (10,))], _mlp_facade,
                  _mlp_fgrad, _mlp_jax, _mlp_autograd, momentum=0.9)
    return _run_model("W2", "MLP training step 784-512-512-10, batch 256, float32, SGD momentum 0.9",
                      model, x, y, config)


# --- W3: CNN --------------------------------------------------------------------------------

def _cnn_facade(nn):
    return nn.Sequential(nn.Conv2d(1, 16, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(16, 32, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(32 * 7 * 7, 10))


def _cnn_fgrad(F, fnp):
    def loss(p, x, y):
        h = F.max_pool2d(F.relu(F.conv2d(x, p[0], p[1], padding=2)), 2)
        h = F.max_pool2d(F.relu(F.conv2d(h, p[2], p[3], padding=2)), 2)
        h = fnp.reshape(h, (h.shape[0], -1))
        return F.cross_entropy(F.linear(h, p[4], p[5]), y)
    return loss


def _cnn_jax(jax):
    jnp, lax = jax.numpy, jax.lax

    def conv(x, w, b):
        y = lax.conv_general_dilated(x, w, (1, 1), ((2, 2), (2, 2)),
                                     dimension_numbers=("NCHW", "OIHW", "NCHW"))
        return y + b[None, :, None, None]

    def pool(x):
        # a literal -inf init: JAX recognises max-pooling (and differentiates it) only then
        return lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID")

    def loss(p, x, y):
        h = pool(jax.nn.relu(conv(x, p[0], p[1])))
        h = pool(jax.nn.relu(conv(h, p[2], p[3])))
        logits = h.reshape(h.shape[0], -1) @ p[4].T + p[5]
        logp = jax.nn.log_softmax(logits, axis=1)
        return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))
    return loss


def w3(config) -> dict:
    rng = onp.random.default_rng(0)
    x = rng.random((64, 1, 28, 28), dtype=onp.float32)
    y = rng.integers(0, 10, 64)
    model = Model([((16, 1, 5, 5), (16,)), ((32, 16, 5, 5), (32,)), ((10, 32 * 7 * 7), (10,))], _cnn_facade,
                  _cnn_fgrad, _cnn_jax, None, momentum=None)
    return _run_model("W3", "CNN training step (conv-relu-pool x2, linear), batch 64 of 1x28x28, float32, SGD",
                      model, x, y, config)
