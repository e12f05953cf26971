"""The digits CNN of train_digits.py, trained the functional way: the parameters are a
pytree (a dict of Tensors), the loss is a pure function of it, and `torch.func.grad_and_value`
(fgrad's value_and_grad on the Tensors' values) differentiates it -- JAX's style, on the same
primitives and rules as loss.backward().

    python examples/functional_training.py
"""
from __future__ import annotations

import importlib.util
import os
import time

import fgrad
import fgrad.torch.nn.functional as F
from fgrad.torch.utils.data import DataLoader, datasets
from fgrad.torch.func import functional_call
from fgrad.tree_util import tree_map

# the model class of train_digits.py (examples/ is not a package)
_spec = importlib.util.spec_from_file_location(
    "train_digits", os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_digits.py"))
if _spec is None or _spec.loader is None:
    raise ImportError("examples/functional_training.py needs train_digits.py beside it")
train_digits = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(train_digits)


def main(epochs: int = 20, lr: float = 0.01, momentum: float = 0.9, batch_size: int = 32, seed: int = 0):
    fgrad.torch.manual_seed(seed)
    train_set, test_set = datasets.digits()
    net = train_digits.ConvNet(8, train_digits.DIGITS_DEPTH)
    # the parameter pytree: a dict of Tensors outside any graph (torch.func.grad hands the model
    # Tensors wrapping fgrad.grad's tracers, so PyTorch-style model code such as x.view() runs as is)
    params = {name: p.detach().clone() for name, p in net.named_parameters()}
    velocity = tree_map(fgrad.torch.zeros_like, params)

    def loss_fn(params, x, y):
        return F.nll_loss(functional_call(net, params, (x,)), y)  # the net ends in log_softmax

    grad_and_value = fgrad.torch.func.grad_and_value(loss_fn)

    def step(params, x, y):
        grads, loss = grad_and_value(params, x, y)
        return loss, grads
    x_test, y_test = test_set.tensors
    start = time.perf_counter()
    with train_digits._one_blas_thread(True):
        acc = _train(net, params, velocity, step, train_set, x_test, y_test, epochs, lr, momentum,
                     batch_size)
    print(f"final test accuracy {acc:.4f} in {time.perf_counter() - start:.1f} s")
    return acc


def _train(net, params, velocity, step, train_set, x_test, y_test, epochs, lr, momentum, batch_size):
    acc = 0.0
    for epoch in range(epochs):
        net.train()  # dropout on
        losses = []
        for data, target in DataLoader(train_set, batch_size=batch_size, shuffle=True):
            loss, grads = step(params, data, target)
            # SGD with momentum on the pytree (PyTorch's formula: v = m v + g; p -= lr v)
            velocity = tree_map(lambda v, g: momentum * v + g, velocity, grads)
            params = tree_map(lambda p, v: p - lr * v, params, velocity)
            losses.append(loss.item())
        net.eval()
        pred = functional_call(net, params, (x_test,)).argmax(1)
        acc = (pred == y_test).float().mean().item()
        print(f"epoch {epoch + 1:2d}  loss {sum(losses) / len(losses):.4f}  test acc {acc:.4f}", flush=True)
    return acc


if __name__ == "__main__":
    main()
