"""Build notebooks/*.ipynb with nbformat and execute them with nbclient (outputs committed)."""
import os
import sys

import nbformat
from nbclient import NotebookClient

OUT = sys.argv[1]
md = nbformat.v4.new_markdown_cell
code = nbformat.v4.new_code_cell

NB1 = [
    md("# 01 · Autograd basics with `fgrad`\n\n"
       "`fgrad` gives PyTorch's autograd experience on top of a JAX-style core: every operation on "
       "tensors binds a *primitive*, and when an input requires grad the facade records a graph "
       "node whose derivative rule is the primitive's own VJP rule. This notebook walks through "
       "the concepts of the two seed articles: leaves and `grad_fn`, `.grad`, accumulation, "
       "`retain_grad`, `retain_graph` and `create_graph` for higher derivatives.\n\n"
       "A PyTorch script ports by changing its import: `import fgrad.torch as torch`."),
    code("import warnings\nimport fgrad.torch as torch\nimport fgrad.torch.nn as nn\nprint(torch.__version__)"),
    md("## Leaves and `grad_fn`\n\n"
       "Tensors the user creates are **leaves**: their `grad_fn` is `None`. A tensor computed from "
       "a tensor that requires grad is a **non-leaf**; its `grad_fn` names the backward function of "
       "the operation that made it (`PowBackward0` for `x ** 2`). Before `backward()`, `.grad` is "
       "`None`."),
    code("x = torch.tensor(4.0, requires_grad=True)\n"
         "print('x.grad:', x.grad)\nprint('x.grad_fn:', x.grad_fn)\nprint('x.is_leaf:', x.is_leaf)\n\n"
         "z = x ** 2\nprint('z.grad_fn:', z.grad_fn)\nprint('z.is_leaf:', z.is_leaf)"),
    md("`fgrad.viz.draw` draws the recorded graph, as torchviz's `make_dot` does: the leaf `x` "
       "(named through `params`), the `PowBackward0` node, the output."),
    code("import fgrad.viz\nfgrad.viz.draw(z, params={'x': x})"),
    md("Reading `.grad` of a non-leaf gives `None` and the same `UserWarning` PyTorch gives: only "
       "leaves get their gradient stored, to save memory."),
    code("with warnings.catch_warnings(record=True) as caught:\n"
         "    warnings.simplefilter('always')\n"
         "    print('z.grad:', z.grad)\n"
         "print(caught[0].category.__name__, '-', str(caught[0].message)[:90], '...')"),
    code("z.backward()\nprint('x.grad:', x.grad)   # dz/dx = 2x = 8"),
    md("## The graph\n\n"
       "`grad_fn.next_functions` links each node to the nodes of its inputs; leaves end in "
       "`AccumulateGrad`, where gradients land. Only floating-point tensors can require grad."),
    code("w = torch.tensor([1.], requires_grad=True)\nx = torch.tensor([2.], requires_grad=True)\n"
         "a = torch.add(w, x)\nb = torch.add(w, 1)\ny = torch.mul(a, b)\n\n"
         "def show(fn, depth=0):\n"
         "    print('  ' * depth + fn.name())\n"
         "    for nxt, _ in getattr(fn, 'next_functions', ()):\n"
         "        if nxt is not None:\n"
         "            show(nxt, depth + 1)\n\nshow(y.grad_fn)"),
    md("The same graph as a picture. `show_saved=True` adds the values each node keeps for its "
       "backward pass (orange, with their shapes): `MulBackward0` saved both factors, the adds "
       "saved nothing."),
    code("fgrad.viz.draw(y, params={'w': w, 'x': x}, show_saved=True)"),
    code("try:\n    torch.tensor([1, 2]).requires_grad_(True)\nexcept RuntimeError as e:\n    print('RuntimeError:', e)"),
    md("## Non-scalar outputs: `gradient=`\n\n"
       "`backward()` of a non-scalar needs the vector to contract the Jacobian with. Here "
       "`loss = [y0, y1]` with dy0/dw = 5 and dy1/dw = 2, so weights `[1, 2]` give 5·1 + 2·2 = 9."),
    code("w = torch.tensor([1.], requires_grad=True)\nx = torch.tensor([2.], requires_grad=True)\n"
         "a = torch.add(w, x)\nb = torch.add(w, 1)\n"
         "y0 = torch.mul(a, b)   # (x+w)(w+1): dy0/dw = 5\n"
         "y1 = torch.add(a, b)   # (x+w)+(w+1): dy1/dw = 2\n"
         "loss = torch.cat([y0, y1], dim=0)\n"
         "loss.backward(gradient=torch.tensor([1., 2.]))\nprint(w.grad)"),
    md("## Gradients accumulate\n\n"
       "Each `backward()` **adds** into `.grad`. That is why training loops call "
       "`optimizer.zero_grad()` (which sets the grads to `None`, PyTorch's default) before "
       "`loss.backward()`."),
    code("w = torch.tensor([1.], requires_grad=True)\nx = torch.tensor([2.], requires_grad=True)\n"
         "for i in range(3):\n    y = torch.mul(torch.add(w, x), torch.add(w, 1))\n    y.backward()\n    print(w.grad)\n\n"
         "print('with zeroing:')\nfor i in range(3):\n    y = torch.mul(torch.add(w, x), torch.add(w, 1))\n"
         "    w.grad = None   # or w.grad.zero_(), or optimizer.zero_grad()\n    y.backward()\n    print(w.grad)"),
    md("## `retain_grad()` for intermediate values"),
    code("a = torch.add(w, x)\na.retain_grad()\ny = torch.mul(a, torch.add(w, 1))\ny.backward()\n"
         "print('dy/da =', a.grad, '(= w + 1)')"),
    md("## `retain_graph`\n\n"
       "A backward pass frees the values the graph saved. A second pass through the same graph "
       "needs `retain_graph=True` on the first one; otherwise it fails with PyTorch's error."),
    code("w = torch.tensor([1.], requires_grad=True)\nx = torch.tensor([2.], requires_grad=True)\n"
         "y = torch.mul(torch.add(w, x), torch.add(w, 1))\n"
         "y.backward(retain_graph=True)\nprint(w.grad)\ny.backward()\nprint(w.grad)\n"
         "try:\n    y.backward()\nexcept RuntimeError as e:\n    print('RuntimeError:', str(e)[:120], '...')"),
    md("## Higher derivatives: `create_graph=True`\n\n"
       "With `create_graph=True` the backward pass itself is recorded, so its result can be "
       "differentiated again: d(x²)/dx = 2x = 6 at x = 3, and d(2x)/dx = 2."),
    code("x = torch.tensor([3.], requires_grad=True)\ny = torch.pow(x, 2)\n"
         "grad_1 = torch.autograd.grad(y, x, create_graph=True)\nprint(grad_1)\n"
         "grad_2 = torch.autograd.grad(grad_1[0], x)\nprint(grad_2)"),
    md("## The same rules, functionally\n\n"
       "Underneath, `backward()` and `fgrad.grad` use one engine and one set of derivative rules. "
       "The functional transforms compose to any order without `create_graph`:"),
    code("import fgrad\nimport fgrad.numpy as fnp\n\n"
         "f = lambda x: x ** 2\nprint(fgrad.grad(f)(3.0), fgrad.grad(fgrad.grad(f))(3.0))\n"
         "print(fgrad.make_jaxpr(fgrad.grad(lambda x: fnp.sin(x) * x))(1.0))"),
    md("`fgrad.viz.draw(f, *args)` draws that IR. For a derivative it colours each equation by "
       "the pass that emitted it: *forward*, or *backward* when the reverse-mode engine was "
       "running, i.e. the equation comes from a VJP rule (here `cos`, the product and the sum)."),
    code("f = lambda x: fnp.sin(x) * x\nfgrad.viz.draw(fgrad.grad(f), 1.0)"),
    md("The second derivative, 2 cos(x) − x sin(x), runs two backward passes: the first "
       "derivative's (which the second records as its forward computation) and its own."),
    code("fgrad.viz.draw(fgrad.grad(fgrad.grad(f)), 1.0)"),
    md("## A training step is the same machinery\n\n"
       "`output = net(data)` records the graph, `loss.backward()` fills every parameter's `.grad`, "
       "`optimizer.step()` updates the parameters in place, `optimizer.zero_grad()` clears the grads."),
    code("torch.manual_seed(0)\nnet = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))\n"
         "optimizer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)\n"
         "criterion = nn.CrossEntropyLoss()\n"
         "data, target = torch.randn(16, 4), torch.randint(0, 3, (16,))\n"
         "for step in range(5):\n    output = net(data)\n    loss = criterion(output, target)\n"
         "    optimizer.zero_grad()\n    loss.backward()\n    optimizer.step()\n"
         "    print(step, round(loss.item(), 4), loss.grad_fn.name())\n"
         "print([p.grad.shape for p in net.parameters()])"),
]

NB2 = [
    md("# 02 · Higher-order derivatives\n\n"
       "Every derivative rule in fgrad is written with fgrad primitives, so derivatives of "
       "derivatives are just more tracing: `grad(grad(f))`, `hessian`, `jacfwd(jacrev(f))` all "
       "compose. This notebook checks a few against closed forms and plots them."),
    code("import numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
         "%matplotlib inline\nimport fgrad\nimport fgrad.numpy as fnp"),
    md("## Repeated derivatives of tanh\n\n"
       "`vmap` maps a scalar function over a grid, so `vmap(grad(grad(f)))` evaluates f'' at "
       "every point in one call."),
    code("f = fnp.tanh\nderivs = [f]\nfor _ in range(4):\n    derivs.append(fgrad.grad(derivs[-1]))\n"
         "xs = np.linspace(-3, 3, 200)\nfig, ax = plt.subplots(figsize=(7, 4))\n"
         "for k, d in enumerate(derivs):\n    ax.plot(xs, fgrad.vmap(d)(xs), label=f\"order {k}\")\n"
         "ax.legend(); ax.set_title('tanh and its first four derivatives'); ax.grid(alpha=0.3)\nplt.show()"),
    md("The IR of the second derivative, equations coloured by the backward pass that made them:"),
    code("import fgrad.viz\nfgrad.viz.draw(derivs[2], 0.5)"),
    md("`jit` compiles the vmapped second derivative; its element-wise equations fuse into one "
       "Numba loop, drawn as one box (the kernel's name is the one `lower(xs).as_text()` prints):"),
    code("fgrad.viz.draw(fgrad.jit(fgrad.vmap(derivs[2])), xs)"),
    md("Check against closed forms: tanh' = 1 − tanh², tanh'' = −2 tanh (1 − tanh²)."),
    code("t = np.tanh(xs)\nprint(np.abs(fgrad.vmap(derivs[1])(xs) - (1 - t**2)).max())\n"
         "print(np.abs(fgrad.vmap(derivs[2])(xs) - (-2 * t * (1 - t**2))).max())"),
    md("## Taylor polynomials from derivatives\n\n"
       "The derivatives at a point give the Taylor expansion; more terms fit sin(x)·exp(−x²/4) "
       "further out."),
    code("import math\ng = lambda x: fnp.sin(x) * fnp.exp(-x ** 2 / 4)\nx0 = 0.5\n"
         "ds, d = [], g\nfor k in range(9):\n    ds.append(float(d(x0)))\n    d = fgrad.grad(d)\n"
         "xs = np.linspace(-2.5, 3.5, 300)\nfig, ax = plt.subplots(figsize=(7, 4))\n"
         "ax.plot(xs, fgrad.vmap(g)(xs), 'k', lw=2, label='g')\n"
         "for n in (1, 3, 5, 8):\n"
         "    taylor = sum(ds[k] / math.factorial(k) * (xs - x0) ** k for k in range(n + 1))\n"
         "    ax.plot(xs, taylor, '--', label=f'Taylor order {n}')\n"
         "ax.set_ylim(-1.5, 1.5); ax.legend(); ax.set_title('Taylor polynomials at x0 = 0.5'); plt.show()"),
    md("## Hessians three ways\n\n"
       "`hessian` is forward-over-reverse; reverse-over-reverse and forward-over-forward must agree."),
    code("def rosen(p):\n    x, y = p[0], p[1]\n    return (1 - x) ** 2 + 100 * (y - x ** 2) ** 2\n\n"
         "p = np.array([-0.5, 1.2])\nH1 = fgrad.hessian(rosen)(p)\nH2 = fgrad.jacrev(fgrad.jacrev(rosen))(p)\n"
         "H3 = fgrad.jacfwd(fgrad.jacfwd(rosen))(p)\nprint(H1)\nprint(np.abs(H1 - H2).max(), np.abs(H1 - H3).max())\n"
         "x, y = p\nprint(np.array([[2 - 400 * (y - 3 * x**2), -400 * x], [-400 * x, 200]]))"),
    md("## Newton's method with the exact Hessian\n\n"
       "With exact second derivatives Newton's method reaches the minimum of the Rosenbrock "
       "function (1, 1) in a handful of steps."),
    code("path = [np.array([-1.2, 1.0])]\nfor _ in range(8):\n    q = path[-1]\n"
         "    step = np.linalg.solve(fgrad.hessian(rosen)(q), fgrad.grad(rosen)(q))\n    path.append(q - step)\n"
         "path = np.array(path)\nX, Y = np.meshgrid(np.linspace(-1.5, 1.5, 200), np.linspace(-0.5, 1.5, 200))\n"
         "Z = (1 - X) ** 2 + 100 * (Y - X ** 2) ** 2\nfig, ax = plt.subplots(figsize=(6, 4))\n"
         "ax.contour(X, Y, np.log1p(Z), 20, cmap='viridis')\nax.plot(path[:, 0], path[:, 1], 'ro-')\n"
         "ax.set_title('Newton steps on Rosenbrock'); plt.show()\nprint(path[-1], rosen(path[-1]))"),
    md("## The facade does it too: `create_graph=True`\n\n"
       "Second derivatives through a small network with `autograd.grad(..., create_graph=True)` "
       "equal those of the functional `hessian`."),
    code("import fgrad.torch as torch\nimport fgrad.torch.nn.functional as F\ntorch.manual_seed(0)\n"
         "W = torch.randn(3, 2, dtype=torch.float64, requires_grad=True)\n"
         "x = torch.tensor([0.3, -0.7], dtype=torch.float64)\n"
         "loss = F.log_softmax(F.linear(x, W), dim=0)[1]\n"
         "g, = torch.autograd.grad(loss, W, create_graph=True)\n"
         "row = torch.autograd.grad(g[0, 0], W)[0]   # d/dW of dloss/dW[0,0]\n"
         "H = fgrad.hessian(lambda w: F.log_softmax(F.linear(x.numpy(), w), dim=0)[1])(W.detach().numpy())\n"
         "print(row.numpy())\nprint(H[0, 0])"),
]

NB3 = [
    md("# 03 · Training a CNN on handwritten digits\n\n"
       "The seed article's training loop on scikit-learn's 8×8 digits (bundled, offline), with "
       "`import fgrad.torch as torch`. See `examples/train_digits.py` for the full script (tqdm bars, "
       "`--mnist DIR`)."),
    code("import time\nimport numpy as np\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
         "%matplotlib inline\nimport fgrad.torch as torch\nimport fgrad.torch.nn as nn\nimport fgrad.torch.nn.functional as F\n"
         "import fgrad.torch.optim as optim\nfrom fgrad.torch.utils.data import DataLoader, datasets\n\n"
         "from threadpoolctl import threadpool_limits\n"
         "threadpool_limits(1)  # tiny matrices: one BLAS thread beats waking several\n\n"
         "torch.manual_seed(0)\ntrain_set, test_set = datasets.digits()\n"
         "train_loader = DataLoader(train_set, batch_size=32, shuffle=True)\n"
         "test_loader = DataLoader(test_set, batch_size=500)\nprint(len(train_set), len(test_set), train_set.tensors[0].shape)"),
    code("fig, axes = plt.subplots(1, 8, figsize=(8, 1.3))\nx, y = train_set.tensors\n"
         "for i, ax in enumerate(axes):\n    ax.imshow(x[i, 0].numpy(), cmap='gray_r'); ax.set_title(int(y[i])); ax.axis('off')\nplt.show()"),
    code("class ConvNet(nn.Module):\n    def __init__(self):\n        super().__init__()\n"
         "        self.conv1 = nn.Conv2d(1, 16, 5, padding=2)\n        self.pool = nn.MaxPool2d(2, 2)\n"
         "        self.conv2 = nn.Conv2d(16, 32, 5, padding=2)\n        self.fc1 = nn.Linear(2 * 2 * 32, 128)\n"
         "        self.fc2 = nn.Linear(128, 10)\n\n    def forward(self, x):\n"
         "        x = self.pool(F.relu(self.conv1(x)))\n        x = self.pool(F.relu(self.conv2(x)))\n"
         "        x = x.view(-1, 2 * 2 * 32)\n        x = F.dropout(F.relu(self.fc1(x)), training=self.training)\n"
         "        return self.fc2(x)\n\n"
         "def rightness(predictions, labels):\n    pred = torch.max(predictions.data, 1)[1]\n"
         "    return pred.eq(labels.data.view_as(pred)).sum(), len(labels)\n\nnet = ConvNet()\nnet"),
    md("The graph a training step records, from the loss back to the parameters, named after "
       "them (drawn on two images in eval mode: no dropout, so the training below draws the same "
       "random numbers):"),
    code("import fgrad.viz\nnet.eval()\n"
         "fgrad.viz.draw(nn.CrossEntropyLoss()(net(x[:2]), y[:2]), params=dict(net.named_parameters()))"),
    code("criterion = nn.CrossEntropyLoss()\noptimizer = optim.SGD(net.parameters(), lr=0.01, momentum=0.9)\n"
         "losses, record = [], []\nstart = time.perf_counter()\nfor epoch in range(12):\n    train_rights = []\n"
         "    for batch_idx, (data, target) in enumerate(train_loader):\n"
         "        data, target = data.clone().requires_grad_(True), target.clone().detach()\n"
         "        net.train()\n        output = net(data)\n        loss = criterion(output, target)\n"
         "        optimizer.zero_grad()\n        loss.backward()\n        optimizer.step()\n"
         "        train_rights.append(rightness(output, target))\n        losses.append(loss.item())\n"
         "    net.eval()\n    with torch.no_grad():\n        test_rights = [rightness(net(d), t) for d, t in test_loader]\n"
         "    acc = lambda rs: sum(r[0].item() for r in rs) / sum(r[1] for r in rs)\n"
         "    record.append((acc(train_rights), acc(test_rights)))\n"
         "print(f'{time.perf_counter() - start:.1f} s; final train/test accuracy: {record[-1][0]:.3f} / {record[-1][1]:.3f}')"),
    code("fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.5))\na1.plot(losses); a1.set_yscale('log'); a1.set_xlabel('step'); a1.set_ylabel('loss')\n"
         "a2.plot([1 - r[0] for r in record], 'o-', label='train error')\na2.plot([1 - r[1] for r in record], 's-', label='test error')\n"
         "a2.set_xlabel('epoch'); a2.legend(); plt.show()"),
    md("The first-layer kernels after training:"),
    code("k = net.conv1.weight.detach().numpy()[:, 0]\nfig, axes = plt.subplots(1, 16, figsize=(10, 1))\n"
         "for ax, w in zip(axes, k):\n    ax.imshow(w, cmap='gray'); ax.axis('off')\nplt.show()"),
    md("Saving and restoring the trained weights (a NumPy `.npz` archive, no pickle):"),
    code("import os, tempfile\npath = os.path.join(tempfile.mkdtemp(), 'digits.pt')\ntorch.save(net.state_dict(), path)\n"
         "twin = ConvNet(); twin.load_state_dict(torch.load(path)); twin.eval()\n"
         "x, y = test_set.tensors\nwith torch.no_grad():\n    print((twin(x).argmax(1) == y).float().mean().item())"),
]


def build(name, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    NotebookClient(nb, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": os.path.dirname(OUT)}}).execute()
    nbformat.write(nb, os.path.join(OUT, name))
    print("wrote", name)


build("01_autograd_basics.ipynb", NB1)
build("02_higher_order.ipynb", NB2)
build("03_training.ipynb", NB3)
