"""Activations, losses, normalisation and embeddings (issue 14) against real PyTorch, in
float32 and float64: values, first derivatives (at the kinks too: fgrad takes PyTorch's
branch), second derivatives through create_graph (away from the kinks), and for the layers
equal state_dict keys and shapes and equal outputs once PyTorch's weights are loaded."""
import warnings

import numpy as np
import pytest

import fgrad

torch = pytest.importorskip("torch")
F_F, T_F = fgrad.torch.nn.functional, torch.nn.functional

RNG = np.random.default_rng(0)
KINKY = np.array([-4, -3, -1.5, -0.5, -0.0, 0.0, 0.5, 1.5, 3.0, 4.0, 6.0, 7.0])  # switch points included
SMOOTH = np.array([-3.7, -2.2, -1.1, -0.3, 0.2, 0.9, 1.7, 2.6, 4.4, 6.8])  # no switch point

ACTIVATIONS = {  # name: (kwargs, whether PyTorch has a double backward for it)
    "elu": ({"alpha": 0.7}, True), "selu": ({}, True), "celu": ({"alpha": 0.7}, True), "gelu": ({}, True),
    "gelu_tanh": ({"approximate": "tanh"}, True), "silu": ({}, True), "mish": ({}, True),
    "hardtanh": ({"min_val": -1.5, "max_val": 3.0}, True), "relu6": ({}, True), "hardsigmoid": ({}, False),
    "hardswish": ({}, True), "logsigmoid": ({}, True), "softsign": ({}, True), "tanhshrink": ({}, True),
    "softshrink": ({"lambd": 0.5}, True), "hardshrink": ({"lambd": 0.5}, True),
    "threshold": ({"threshold": 0.5, "value": -2.0}, True), "rrelu": ({}, True), "leaky_relu": ({}, True),
    "softplus": ({"beta": 2.0}, True),
}


def _fn(lib, name):
    F = F_F if lib is fgrad.torch else T_F
    return getattr(F, "gelu" if name == "gelu_tanh" else name)


def _derivatives(lib, fn, x, dtype, second: bool):
    a = lib.tensor(x, dtype=dtype, requires_grad=True)
    y = fn(a)
    (g,) = lib.autograd.grad(y.sum(), a, create_graph=second)
    h = None
    if second:
        h = (lib.autograd.grad(g.sum(), a, allow_unused=True)[0] if g.requires_grad else None)
        h = np.zeros_like(x) if h is None else h.detach().numpy()
    return y.detach().numpy(), g.detach().numpy(), h


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_activation(name, dtype):
    kw, has_second = ACTIVATIONS[name]
    # float64: PyTorch computes some (celu) with float32 scale factors, good to ~1e-8
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-7, "atol": 1e-9}
    for x, second in ((KINKY, False), (SMOOTH, has_second)):
        got = _derivatives(fgrad.torch, lambda a: _fn(fgrad.torch, name)(a, **kw), x, getattr(fgrad.torch, dtype), second)
        want = _derivatives(torch, lambda a: _fn(torch, name)(a, **kw), x, getattr(torch, dtype), second)
        for g, w in zip(got, want):
            if w is not None:
                np.testing.assert_allclose(g, w, **tol)


# arguments PyTorch does not differentiate (targets, class weights)
NONDIFF = {"binary_cross_entropy": {1, 2}, "binary_cross_entropy_with_logits": {1}, "soft_margin_loss": {1},
           "multilabel_soft_margin_loss": {1}, "hinge_embedding_loss": {1}, "poisson_nll_loss": {1},
           "kl_div": set(), "cosine_embedding_loss": {2}, "margin_ranking_loss": {2}}


def _both(fn_name, make_args, dtype, kwargs=None, second=True, tol=None):
    """fn(*args) under both libraries: values, gradients w.r.t. every float argument PyTorch
    differentiates, and the gradient of the sum of squared first gradients (create_graph)."""
    kwargs = kwargs or {}
    out = []
    nondiff = NONDIFF.get(fn_name, set())
    for lib, F in ((fgrad.torch, F_F), (torch, T_F)):
        args = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=i not in nondiff) if a.dtype.kind == "f"
                else lib.tensor(a) for i, a in enumerate(make_args())]
        diff = [a for a in args if a.requires_grad]
        y = getattr(F, fn_name)(*args, **kwargs)
        gs = lib.autograd.grad(y.sum(), diff, create_graph=second)
        res = [y.detach().numpy()] + [g.detach().numpy() for g in gs]
        if second:
            total = sum((g * g).sum() for g in gs)
            hs = lib.autograd.grad(total, diff, allow_unused=True) if total.requires_grad else [None] * len(diff)
            res += [np.zeros(tuple(a.shape)) if h is None else h.detach().numpy() for h, a in zip(hs, diff)]
        out.append(res)
    tol = tol or ({"rtol": 2e-4, "atol": 1e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-11})
    for g, w in zip(*out):
        np.testing.assert_allclose(g, w, **tol)


def _probs(*shape):
    return lambda: (RNG.uniform(0.05, 0.95, shape), RNG.uniform(0, 1, shape))


LOSSES = {
    "binary_cross_entropy": (_probs(4, 3), {}),
    "binary_cross_entropy[sum_weight]": (lambda: (*_probs(4, 3)(), RNG.uniform(0.5, 2, (4, 3))),
                                         {"reduction": "sum"}),
    "binary_cross_entropy_with_logits": (lambda: (RNG.normal(0, 3, (4, 3)), RNG.uniform(0, 1, (4, 3))), {}),
    "binary_cross_entropy_with_logits[pos_weight]": (
        lambda: (RNG.normal(0, 3, (4, 3)), RNG.uniform(0, 1, (4, 3))), {"pos_weight": "pw"}),
    "smooth_l1_loss": (lambda: (RNG.normal(0, 2, (5, 3)), RNG.normal(0, 2, (5, 3))), {"beta": 0.7}),
    "huber_loss": (lambda: (RNG.normal(0, 2, (5, 3)), RNG.normal(0, 2, (5, 3))), {"delta": 1.3, "reduction": "sum"}),
    "kl_div": (lambda: (np.log(RNG.dirichlet(np.ones(4), 3)), RNG.dirichlet(np.ones(4), 3)),
               {"reduction": "batchmean"}),
    "kl_div[log_target]": (lambda: (np.log(RNG.dirichlet(np.ones(4), 3)), np.log(RNG.dirichlet(np.ones(4), 3))),
                           {"reduction": "sum", "log_target": True}),
    "cosine_similarity": (lambda: (RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))), {"dim": 1}),
    "pairwise_distance": (lambda: (RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))), {"p": 3.0}),
    "cosine_embedding_loss": (lambda: (RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5)),
                                       np.array([1, -1, 1, -1])), {"margin": 0.1}),
    "margin_ranking_loss": (lambda: (RNG.normal(size=6), RNG.normal(size=6), np.array([1, -1, 1, 1, -1, -1])),
                            {"margin": 0.2}),
    "triplet_margin_loss": (lambda: (RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))),
                            {"margin": 2.0, "swap": True}),
    "hinge_embedding_loss": (lambda: (RNG.normal(size=6), np.array([1, -1, 1, 1, -1, -1])), {"margin": 0.5}),
    "soft_margin_loss": (lambda: (RNG.normal(size=6), np.array([1.0, -1, 1, 1, -1, -1])), {}),
    "multilabel_soft_margin_loss": (lambda: (RNG.normal(size=(3, 4)), RNG.integers(0, 2, (3, 4)).astype(float)), {}),
    "poisson_nll_loss": (lambda: (RNG.normal(size=(3, 4)), RNG.poisson(3, (3, 4)).astype(float)), {"full": True}),
    "gaussian_nll_loss": (lambda: (RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4)), RNG.uniform(0.5, 2, (3, 1))),
                          {"full": True}),
    "layer_norm": (lambda: (RNG.normal(size=(3, 4, 5)), RNG.normal(size=(4, 5)), RNG.normal(size=(4, 5))),
                   {"normalized_shape": (4, 5)}),
    "group_norm": (lambda: (RNG.normal(size=(2, 6, 3, 2)), RNG.normal(size=6), RNG.normal(size=6)),
                   {"num_groups": 3}),
    "instance_norm": (lambda: (RNG.normal(size=(2, 3, 7)),), {}),
    "rms_norm": (lambda: (RNG.normal(size=(3, 5)), RNG.normal(size=5)), {"normalized_shape": (5,)}),
    "normalize": (lambda: (RNG.normal(size=(3, 5)),), {"p": 3.0, "dim": 0}),
    "local_response_norm": (lambda: (RNG.normal(size=(2, 5, 3)),), {"size": 3}),
    "glu": (lambda: (RNG.normal(size=(3, 6)),), {"dim": 1}),
    "softmin": (lambda: (RNG.normal(size=(3, 6)),), {"dim": 1}),
    "prelu": (lambda: (RNG.normal(size=(3, 4, 2)), np.array([0.1, 0.2, -0.3, 0.4])), {}),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", sorted(LOSSES))
def test_functional_matches_pytorch(case, dtype):
    make, kwargs = LOSSES[case]
    name = case.split("[")[0]
    kwargs = dict(kwargs)
    order = {"layer_norm": ("input", "weight", "bias"), "group_norm": ("input", "weight", "bias"),
             "rms_norm": ("input", "weight")}.get(name)
    if kwargs.get("pos_weight") == "pw":
        _pos_weight_case(make(), RNG.uniform(0.5, 3, (3,)), dtype)
        return
    args = make()
    if order:
        shape_kw = {k: v for k, v in kwargs.items() if k in ("normalized_shape", "num_groups")}
        rest = {k: v for k, v in kwargs.items() if k not in shape_kw}
        vals = args

        def make_ordered():
            return vals
        key = "normalized_shape" if "normalized_shape" in shape_kw else "num_groups"
        _both_positional(name, make_ordered, dtype, shape_kw[key], rest)
        return
    fixed = args
    _both(name, lambda: fixed, dtype, kwargs, second=name not in ("hinge_embedding_loss",))


def _both_positional(name, make, dtype, second_arg, kwargs):
    """layer_norm(x, shape, w, b) style: the second positional argument is not a tensor."""
    out = []
    for lib, F in ((fgrad.torch, F_F), (torch, T_F)):
        x, *params = [lib.tensor(a, dtype=getattr(lib, dtype), requires_grad=True) for a in make()]
        y = getattr(F, name)(x, second_arg, *params, **kwargs)
        gs = lib.autograd.grad(y.pow(2).sum(), [x] + params, create_graph=True)
        hs = lib.autograd.grad(sum((g * g).sum() for g in gs), [x] + params, allow_unused=True)
        out.append([y.detach().numpy()] + [g.detach().numpy() for g in gs] + [h.detach().numpy() for h in hs])
    tol = {"rtol": 2e-4, "atol": 2e-5} if dtype == "float32" else {"rtol": 1e-9, "atol": 1e-10}
    for g, w in zip(*out):
        np.testing.assert_allclose(g, w, **tol)


def _pos_weight_case(args, pw, dtype):
    out = []
    for lib, F in ((fgrad.torch, F_F), (torch, T_F)):
        x = lib.tensor(args[0], dtype=getattr(lib, dtype), requires_grad=True)
        t = lib.tensor(args[1], dtype=getattr(lib, dtype))
        w = lib.tensor(pw, dtype=getattr(lib, dtype))
        y = F.binary_cross_entropy_with_logits(x, t, pos_weight=w)
        gs = lib.autograd.grad(y, [x], create_graph=True)
        hs = lib.autograd.grad(sum((g * g).sum() for g in gs), [x])
        out.append([y.detach().numpy()] + [g.detach().numpy() for g in gs + hs])
    for g, w in zip(*out):
        np.testing.assert_allclose(g, w, rtol=2e-4 if dtype == "float32" else 1e-9, atol=1e-6)


def test_embedding_padding_and_max_norm():
    w = RNG.normal(size=(10, 3))
    idx = np.array([[0, 1, 2], [2, 0, 9]])
    grads = []
    for lib, F in ((fgrad.torch, F_F), (torch, T_F)):
        wt = lib.tensor(w.copy(), requires_grad=True)
        y = F.embedding(lib.tensor(idx), wt, padding_idx=0)
        (y * lib.arange(3.0)).sum().backward()
        grads.append((y.detach().numpy(), wt.grad.numpy()))
        wn = lib.tensor(w.copy() * 5)
        F.embedding(lib.tensor(idx), wn, max_norm=1.0)
        grads.append((wn.numpy(),))
    for a, b in zip(grads[0] + grads[1], grads[2] + grads[3]):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    with pytest.raises(RuntimeError):
        F_F.embedding(fgrad.torch.tensor([0.5]), fgrad.torch.tensor(w))


def test_embedding_bag_modes():
    w = RNG.normal(size=(10, 3))
    idx, off = np.array([1, 2, 4, 5, 4, 3, 2, 9]), np.array([0, 3, 3])
    for mode in ("sum", "mean", "max"):
        res = []
        for lib, F in ((fgrad.torch, F_F), (torch, T_F)):
            wt = lib.tensor(w, requires_grad=True)
            y = F.embedding_bag(lib.tensor(idx), wt, lib.tensor(off), mode=mode)
            y.pow(2).sum().backward()
            res.append((y.detach().numpy(), wt.grad.numpy()))
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-10)


MODULES = {
    "LayerNorm": lambda nn: nn.LayerNorm((4, 5)), "RMSNorm": lambda nn: nn.RMSNorm(5),
    "GroupNorm": lambda nn: nn.GroupNorm(2, 4), "InstanceNorm1d": lambda nn: nn.InstanceNorm1d(4, affine=True,
                                                                                               track_running_stats=True),
    "InstanceNorm2d": lambda nn: nn.InstanceNorm2d(4), "Embedding": lambda nn: nn.Embedding(10, 5, padding_idx=2),
    "EmbeddingBag": lambda nn: nn.EmbeddingBag(10, 5, mode="sum"), "PReLU": lambda nn: nn.PReLU(4),
    "GELU": lambda nn: nn.GELU("tanh"), "ELU": lambda nn: nn.ELU(0.5), "Hardtanh": lambda nn: nn.Hardtanh(-2, 2),
    "BCEWithLogitsLoss": lambda nn: nn.BCEWithLogitsLoss(pos_weight=None), "LocalResponseNorm":
        lambda nn: nn.LocalResponseNorm(2),
}
INPUTS = {"LayerNorm": (3, 4, 5), "RMSNorm": (3, 5), "GroupNorm": (2, 4, 3), "InstanceNorm1d": (2, 4, 6),
          "InstanceNorm2d": (2, 4, 3, 3), "PReLU": (3, 4), "GELU": (3, 4), "ELU": (3, 4), "Hardtanh": (3, 4),
          "LocalResponseNorm": (2, 4, 3)}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_state_dict_repr_and_output(name):
    tm, fm = MODULES[name](torch.nn), MODULES[name](fgrad.torch.nn)
    tsd, fsd = tm.state_dict(), fm.state_dict()
    assert list(tsd) == list(fsd)
    assert all(tuple(tsd[k].shape) == tuple(fsd[k].shape) for k in tsd)
    assert repr(tm) == repr(fm)
    fm.load_state_dict({k: fgrad.torch.tensor(v.numpy()) for k, v in tsd.items()})
    if name in ("Embedding", "EmbeddingBag"):
        idx = np.array([[1, 2, 3], [2, 9, 0]])
        x_t, x_f = torch.tensor(idx), fgrad.torch.tensor(idx)
    elif name == "BCEWithLogitsLoss":
        a, b = RNG.normal(size=(3, 4)).astype(np.float32), RNG.uniform(0, 1, (3, 4)).astype(np.float32)
        np.testing.assert_allclose(fm(fgrad.torch.tensor(a), fgrad.torch.tensor(b)).numpy(),
                                   tm(torch.tensor(a), torch.tensor(b)).numpy(), rtol=1e-6)
        return
    else:
        x = RNG.normal(size=INPUTS[name]).astype(np.float32)
        x_t, x_f = torch.tensor(x), fgrad.torch.tensor(x)
    np.testing.assert_allclose(fm(x_f).detach().numpy(), tm(x_t).detach().numpy(), rtol=1e-5, atol=1e-6)
    for k, v in tm.state_dict().items():  # running statistics updated alike
        np.testing.assert_allclose(fm.state_dict()[k].numpy(), v.numpy(), rtol=1e-5, atol=1e-6)


def test_embedding_from_pretrained():
    w = RNG.normal(size=(4, 3)).astype(np.float32)
    for lib in (fgrad.torch, torch):
        e = lib.nn.Embedding.from_pretrained(lib.tensor(w), freeze=True, padding_idx=1)
        assert not e.weight.requires_grad and e.padding_idx == 1
        np.testing.assert_allclose(e(lib.tensor([3, 1])).numpy(), w[[3, 1]])


# --- module machinery: containers, reprs, backward hooks, init -------------------------------

def _module_script(lib):
    nn = lib.nn
    out = []
    pl = nn.ParameterList([nn.Parameter(lib.ones(2, 3)), nn.Parameter(lib.zeros(3, dtype=lib.float64))])
    pd = nn.ParameterDict({"a": nn.Parameter(lib.ones(2)), "b": nn.Parameter(lib.ones(1, 2))})

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.p, self.d = pl, pd
            self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Linear(2, 2), nn.ReLU(), nn.Linear(2, 2)])
    m = M()
    out.append(repr(m).replace("torch.float", "torch.float"))
    out.append([n for n, _ in m.named_parameters()])
    pl.append(lib.ones(1))
    out.append((type(pl[2]).__name__, len(pl), len(list(m.parameters())), len(pl[1:])))
    out.append(("a" in pd, list(pd.keys()), type(pd.pop("a")).__name__, len(pd)))
    out.append(repr(m.load_state_dict(m.state_dict())))
    out.append(repr(m.load_state_dict({}, strict=False)).count("missing_keys"))
    return out


def test_containers_reprs_and_state_dict_results_match_pytorch():
    assert _module_script(fgrad.torch) == _module_script(torch)


def _hook_script(lib):
    nn = lib.nn
    m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    w = lib.tensor([[0.1, -0.2, 0.3, 0.4], [0.5, 0.1, -0.3, 0.2], [0.2, 0.2, 0.2, -0.1]])
    with lib.no_grad():
        m[0].weight.copy_(w.t())
        m[0].bias.zero_()
        m[2].weight.copy_(w[:2])
        m[2].bias.zero_()
    log = []

    def hook(mod, gi, go):
        log.append((type(mod).__name__, [None if g is None else np.round(g.numpy(), 5).tolist() for g in gi],
                    [np.round(g.numpy(), 5).tolist() for g in go]))

    def double_grad_input(mod, gi, go):
        return tuple(None if g is None else g * 2 for g in gi)

    def pre(mod, go):
        log.append(("pre", len(go)))
        return (go[0] * 2,)
    m[1].register_full_backward_hook(hook)
    h = m[1].register_full_backward_hook(double_grad_input)
    m[2].register_full_backward_pre_hook(pre)
    m[0].register_full_backward_hook(hook)
    x = lib.tensor([[1.0, 2.0, -1.0]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m(x).sum().backward()
    log.append(np.round(m[0].weight.grad.numpy(), 5).tolist())
    log.append(np.round(x.grad.numpy(), 5).tolist())
    h.remove()
    m.zero_grad()
    m(x).sum().backward()
    log.append(np.round(m[0].weight.grad.numpy(), 5).tolist())
    return log


def test_full_backward_hooks_match_pytorch():
    assert _hook_script(fgrad.torch) == _hook_script(torch)


def test_init_orthogonal_dirac_sparse():
    w = fgrad.torch.empty(3, 5)
    fgrad.torch.nn.init.orthogonal_(w, gain=2.0)
    np.testing.assert_allclose(w.numpy() @ w.numpy().T, 4 * np.eye(3), atol=1e-5)
    w = fgrad.torch.empty(5, 2, 3)
    fgrad.torch.nn.init.orthogonal_(w)
    flat = w.numpy().reshape(5, 6)
    np.testing.assert_allclose(flat @ flat.T, np.eye(5), atol=1e-5)  # rows < cols: orthonormal rows
    a, b = fgrad.torch.empty(6, 3, 3, 3), torch.empty(6, 3, 3, 3)
    fgrad.torch.nn.init.dirac_(a, 2)
    torch.nn.init.dirac_(b, 2)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    s = fgrad.torch.empty(10, 4)
    fgrad.torch.nn.init.sparse_(s, 0.3)
    assert ((s.numpy() == 0).sum(0) == 3).all()
