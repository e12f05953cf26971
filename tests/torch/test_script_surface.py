"""The script-level surface of `import fgrad.torch as torch` (issue 13): backend switches, thread
counts, determinism, autocast and GradScaler, compile, legacy typed constructors, onnx,
serialization's allow-list, distributions, autograd.functional, gradcheck and anomaly mode.
Each is compared with real PyTorch where PyTorch defines the result."""
import math
import warnings

import numpy as np
import pytest

import fgrad

from tests.torch.test_gradcheck import wrong_backward

torch = pytest.importorskip("torch")


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def close(a, b, rtol=1e-6, atol=1e-7):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            close(x, y, rtol, atol)
        return
    np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol)


def test_switches_round_trip():
    cudnn = fgrad.torch.backends.cudnn
    flags = ("enabled", "benchmark", "deterministic", "allow_tf32")
    defaults = {k: getattr(cudnn, k) for k in flags}
    # PyTorch's defaults (literals: another test may have flipped torch's own switches)
    assert defaults == {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
    x, w = fgrad.torch.randn(2, 3, 8, 8), fgrad.torch.randn(4, 3, 3, 3)
    before_flip = fgrad.torch.nn.functional.conv2d(x, w).numpy()
    try:
        for k in flags:  # each switch keeps what a script sets
            setattr(cudnn, k, not defaults[k])
            assert getattr(cudnn, k) is (not defaults[k])
        # ...and changes nothing (fgrad does not use cuDNN; its CPU kernels are deterministic)
        np.testing.assert_array_equal(fgrad.torch.nn.functional.conv2d(x, w).numpy(), before_flip)
    finally:
        for k, v in defaults.items():
            setattr(cudnn, k, v)
    assert {k: getattr(cudnn, k) for k in flags} == defaults
    assert fgrad.torch.backends.mps.is_available() is False and cudnn.is_available() is False
    before = fgrad.torch.get_num_threads()
    fgrad.torch.set_num_threads(1)
    assert fgrad.torch.get_num_threads() == 1
    from threadpoolctl import threadpool_info
    assert all(p["num_threads"] == 1 for p in threadpool_info() if p["user_api"] == "blas")
    fgrad.torch.set_num_threads(before)
    fgrad.torch.use_deterministic_algorithms(True)
    assert fgrad.torch.are_deterministic_algorithms_enabled()
    fgrad.torch.use_deterministic_algorithms(False)
    fgrad.torch.set_float32_matmul_precision("high")
    assert fgrad.torch.get_float32_matmul_precision() == "high"
    fgrad.torch.set_float32_matmul_precision("highest")
    for lib in (fgrad.torch, torch):
        with pytest.warns(UserWarning, match="has no effect"):
            lib.set_float32_matmul_precision("fastest")
        assert lib.get_float32_matmul_precision() == "highest"
    with pytest.raises(ValueError, match="positive number of threads"):
        fgrad.torch.set_num_threads(0)


def test_autocast_keeps_values_and_dtypes():
    x = fgrad.torch.randn(4, 3)
    w = fgrad.torch.randn(3, 2)
    with fgrad.torch.autocast("cpu", dtype=fgrad.torch.float16):
        y = x @ w
    assert y.dtype == fgrad.torch.float32
    close(y, x @ w)

    @fgrad.torch.autocast("cuda")
    def f(a):
        return a * 2
    close(f(x), x * 2)
    with pytest.raises(RuntimeError):
        fgrad.torch.autocast("tpu")


def _scaler_run(lib, grads_nan_at):
    lib.manual_seed(0)
    w = lib.tensor([1.0, -2.0, 0.5], requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    scaler = lib.amp.GradScaler("cpu", init_scale=2.0 ** 4, growth_interval=2)
    scales = []
    for step in range(6):
        opt.zero_grad()
        loss = (w * w).sum() * (math.inf if step in grads_nan_at else 1.0)
        scaler.scale(loss).backward()
        scaler.step(opt)
        scaler.update()
        scales.append(scaler.get_scale())
    return w.detach(), scales, scaler.state_dict()["scale"]


def test_grad_scaler_matches_pytorch():
    got = _scaler_run(fgrad.torch, {2})
    want = _scaler_run(torch, {2})
    close(got[0], want[0])
    assert got[1] == want[1] and got[2] == want[2]


def test_cuda_grad_scaler_without_gpu_disables_itself():
    with pytest.warns(UserWarning, match="CUDA is not available"):
        s = fgrad.torch.cuda.amp.GradScaler()
    assert not s.is_enabled() and s.scale(fgrad.torch.tensor(2.0)).item() == 2.0


def test_compile():
    f = fgrad.torch.compile(lambda x: fgrad.torch.sin(x) * 2)
    x = fgrad.torch.randn(5)
    close(f(x), fgrad.torch.sin(x) * 2)

    def branchy(x):
        return x * 2 if float(x.sum()) > 0 else x - 1
    g = fgrad.torch.compile(branchy)
    with pytest.warns(UserWarning, match="runs eagerly"):
        close(g(fgrad.torch.ones(3)), fgrad.torch.ones(3) * 2)
    close(g(-fgrad.torch.ones(3)), -fgrad.torch.ones(3) - 1)
    model = fgrad.torch.nn.Linear(2, 2)
    compiled = fgrad.torch.compile(model)  # (tests/torch/test_compile_module.py tests it)
    assert compiled._orig_mod is model
    close(compiled(x[:2]), model(x[:2]))

    @fgrad.torch.compile(mode="reduce-overhead")
    def h(x):
        return x + 1
    close(h(x), x + 1)


def test_legacy_typed_constructors():
    for name, shape in (("FloatTensor", (2, 3)), ("DoubleTensor", (2,)), ("LongTensor", (3,))):
        a, b = getattr(fgrad.torch, name)(*shape), getattr(torch, name)(*shape)
        assert tuple(a.shape) == tuple(b.shape) and str(a.dtype).split(".")[1] == str(b.dtype).split(".")[1]
    for lib in (fgrad.torch, torch):
        x = lib.LongTensor([1, 2])
        assert isinstance(x, lib.LongTensor) and not isinstance(x, lib.FloatTensor)
        assert x.type(lib.DoubleTensor).dtype == lib.float64
        assert x.type() == "torch.LongTensor"


def test_onnx_export_says_what_is_missing():
    import fgrad.torch.onnx
    with pytest.raises(NotImplementedError, match="no ONNX exporter"):
        fgrad.torch.onnx.export(fgrad.torch.nn.Linear(2, 2), fgrad.torch.ones(1, 2), "model.onnx")


def test_safe_globals_and_weights_only(tmp_path):
    path = tmp_path / "sd.pt"
    fgrad.torch.save({"w": fgrad.torch.ones(2)}, path)
    with fgrad.torch.serialization.safe_globals([dict]):
        assert dict in fgrad.torch.serialization.get_safe_globals()
        out = fgrad.torch.load(path, weights_only=True)
    assert dict not in fgrad.torch.serialization.get_safe_globals()
    close(out["w"], np.ones(2))


# --- distributions -------------------------------------------------------------------------

def _dist_cases(lib):
    t = lambda v, **k: lib.tensor(v, dtype=lib.float64, **k)  # noqa: E731
    loc, scale = t([0.3, -1.0], requires_grad=True), t([1.5, 0.7], requires_grad=True)
    probs = t([0.2, 0.7], requires_grad=True)
    logits = t([[0.1, 2.0, -1.0], [0.0, 0.5, 0.5]], requires_grad=True)
    L = t([[1.0, 0.0, 0.0], [0.3, 1.2, 0.0], [-0.2, 0.4, 0.8]], requires_grad=True)
    D = lib.distributions
    return [
        (D.Normal(loc, scale), t([0.1, 0.2]), ("mean", "variance", "stddev"), (loc, scale), True),
        (D.Uniform(t([0.0, -1.0]), t([2.0, 1.0])), t([1.0, 0.5]), ("mean", "variance"), (), True),
        (D.Bernoulli(probs=probs), t([1.0, 0.0]), ("mean", "variance", "logits"), (probs,), False),
        (D.Bernoulli(logits=logits[0, :2]), t([0.0, 1.0]), ("probs",), (logits,), False),
        (D.Categorical(logits=logits), lib.tensor([1, 2]), ("probs", "logits"), (logits,), False),
        (D.Categorical(probs=t([0.2, 0.3, 0.5])), lib.tensor(2), ("logits",), (), False),
        (D.MultivariateNormal(t([0.5, -0.5, 1.0]), scale_tril=L), t([0.0, 0.1, 0.2]),
         ("mean", "variance", "covariance_matrix"), (L,), True),
        (D.MultivariateNormal(t([0.5, -0.5, 1.0]), covariance_matrix=t([[2.0, 0.3, 0.0], [0.3, 1.0, 0.1],
                                                                           [0.0, 0.1, 0.5]])),
         t([0.0, 0.1, 0.2]), ("precision_matrix",), (), True),
    ]


def test_distributions_match_pytorch():
    for got, want in zip(_dist_cases(fgrad.torch), _dist_cases(torch)):
        (dg, vg, props, params_g, rs), (dw, vw, _, params_w, _) = got, want
        close(dg.log_prob(vg), dw.log_prob(vw))
        close(dg.entropy(), dw.entropy())
        for p in props:
            close(getattr(dg, p), getattr(dw, p))
        assert tuple(dg.sample((4,)).shape) == tuple(dw.sample((4,)).shape)
        assert tuple(dg.batch_shape) == tuple(dw.batch_shape) and tuple(dg.event_shape) == tuple(dw.event_shape)
        if params_g:
            (dg.log_prob(vg).sum() + dg.entropy().sum()).backward()
            (dw.log_prob(vw).sum() + dw.entropy().sum()).backward()
            close([p.grad for p in params_g], [p.grad for p in params_w])
        if rs:
            assert dg.rsample((2,)).shape == dw.rsample((2,)).shape


def test_normal_cdf_icdf_and_rsample_gradient():
    for lib in (fgrad.torch,):
        loc = lib.tensor([0.5], requires_grad=True)
        n = lib.distributions.Normal(loc, lib.tensor([2.0]))
        n.rsample((10,)).sum().backward()
        assert loc.grad.item() == 10.0
    close(fgrad.torch.distributions.Normal(0.0, 2.0).cdf(fgrad.torch.tensor([0.3])),
          torch.distributions.Normal(0.0, 2.0).cdf(torch.tensor([0.3])))
    close(fgrad.torch.distributions.Normal(1.0, 2.0).icdf(fgrad.torch.tensor([0.3])),
          torch.distributions.Normal(1.0, 2.0).icdf(torch.tensor([0.3])), rtol=1e-5)
    with pytest.raises(ValueError):
        fgrad.torch.distributions.Normal(0.0, -1.0)
    with pytest.raises(ValueError):
        fgrad.torch.distributions.Bernoulli(probs=fgrad.torch.tensor([0.5]), logits=fgrad.torch.tensor([0.0]))


# --- autograd.functional, gradcheck, anomaly ------------------------------------------------

def _functional_results(lib):
    import importlib
    AF = importlib.import_module(f"{lib.__name__}.autograd.functional")
    t = lambda v: lib.tensor(v, dtype=lib.float64)  # noqa: E731
    x, y = t([1.0, 2.0, 3.0]), t([0.5, -1.0])
    f = lambda a: a ** 2 * a.sum()  # noqa: E731
    g = lambda a, b: (a.sum() * b ** 3, a * 2)  # noqa: E731
    s = lambda a, b: (a.sin() * b.sum()).sum()  # noqa: E731
    ones = t([1.0, 1.0, 1.0])
    out = [AF.jacobian(f, x), AF.jacobian(g, (x, y)), AF.jacobian(f, x, vectorize=True, strategy="forward-mode"),
           AF.hessian(s, (x, y)), AF.hessian(lambda a: (a ** 3).sum(), x),
           AF.vjp(f, x, ones), AF.jvp(f, x, ones), AF.hvp(s, (x, y), (ones, t([1.0, 1.0]))),
           AF.vhp(s, (x, y), (ones, t([1.0, 1.0])))]
    xg = t([1.0, 2.0, 3.0]).requires_grad_()
    J = AF.jacobian(lambda a: a.sin() * a, xg, create_graph=True)
    J.sum().backward()
    H = AF.hessian(lambda a: (a.sin() * a).sum(), xg.detach().requires_grad_(), create_graph=True)
    out += [xg.grad, H]
    return out


def test_autograd_functional_matches_pytorch():
    for a, b in zip(_functional_results(fgrad.torch), _functional_results(torch)):
        close(a, b, rtol=1e-10, atol=1e-12)


def test_gradcheck_and_gradgradcheck():
    for lib in (fgrad.torch, torch):
        x = lib.randn(3, dtype=lib.float64, requires_grad=True)
        y = lib.randn(3, dtype=lib.float64, requires_grad=True)
        assert lib.autograd.gradcheck(lambda a, b: (a.sin() * b, a.exp().sum()), (x, y))
        assert lib.autograd.gradgradcheck(lambda a, b: a.sin() * b * a, (x, y))
        wrong = wrong_backward(lib)
        with pytest.raises(RuntimeError, match="Jacobian mismatch for output 0 with respect to input 0"):
            lib.autograd.gradcheck(wrong, (x,))
        assert lib.autograd.gradcheck(wrong, (x,), raise_exception=False) is False


def test_detect_anomaly_names_the_function():
    msgs = []
    for lib in (fgrad.torch, torch):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = (x / x).sum()
                with pytest.raises(RuntimeError) as e:
                    y.backward()
        msgs.append(str(e.value).splitlines()[0])
        (x / x).sum().backward()  # off again: no error, NaN gradient
    assert msgs[0] == msgs[1] == "Function 'DivBackward0' returned nan values in its 1th output."


def test_matmul_refuses_mixed_dtypes_as_pytorch():
    cases = [((2,), "int64", (2,), "float32"), ((2, 2), "int64", (2, 2), "float32"),
             ((2, 2), "float32", (2, 2), "float64")]
    for sa, da, sb, db in cases:
        msgs = []
        for lib in (fgrad.torch, torch):
            a, b = lib.ones(*sa, dtype=getattr(lib, da)), lib.ones(*sb, dtype=getattr(lib, db))
            with pytest.raises(RuntimeError) as e:
                a @ b
            msgs.append(str(e.value).splitlines()[0])
        assert msgs[0] == msgs[1]
    close(fgrad.torch.ones(2, 2) @ fgrad.torch.ones(2), torch.ones(2, 2) @ torch.ones(2))


GRAD_FN_CASES = {
    "mse": lambda lib, F, x, t: F.mse_loss(x, t), "l1": lambda lib, F, x, t: F.l1_loss(x, t),
    "l1_sum": lambda lib, F, x, t: F.l1_loss(x, t, reduction="sum"),
    "cross_entropy": lambda lib, F, x, t: F.cross_entropy(x, lib.tensor([1, 0, 3, 2])),
    "softmax": lambda lib, F, x, t: F.softmax(x, 1), "log_softmax": lambda lib, F, x, t: F.log_softmax(x, 1),
    "relu": lambda lib, F, x, t: F.relu(x), "gelu": lambda lib, F, x, t: F.gelu(x),
    "silu": lambda lib, F, x, t: F.silu(x), "elu": lambda lib, F, x, t: F.elu(x),
    "selu": lambda lib, F, x, t: F.selu(x), "leaky_relu": lambda lib, F, x, t: F.leaky_relu(x),
    "hardtanh": lambda lib, F, x, t: F.hardtanh(x), "relu6": lambda lib, F, x, t: F.relu6(x),
    "logsigmoid": lambda lib, F, x, t: F.logsigmoid(x), "glu": lambda lib, F, x, t: F.glu(x, 0),
    "layer_norm": lambda lib, F, x, t: F.layer_norm(x, (5,)),
    "group_norm": lambda lib, F, x, t: F.group_norm(x.reshape(2, 2, 5), 2),
    "batch_norm": lambda lib, F, x, t: F.batch_norm(x, lib.zeros(5), lib.ones(5), training=True),
    "bce": lambda lib, F, x, t: F.binary_cross_entropy(lib.sigmoid(x), t.abs().clamp(max=1)),
    "bce_logits": lambda lib, F, x, t: F.binary_cross_entropy_with_logits(x, t.abs().clamp(max=1)),
    "smooth_l1": lambda lib, F, x, t: F.smooth_l1_loss(x, t), "huber": lambda lib, F, x, t: F.huber_loss(x, t),
    "embedding": lambda lib, F, x, t: F.embedding(lib.tensor([1, 0]), x),
    "select": lambda lib, F, x, t: x.select(0, 1), "max_dim": lambda lib, F, x, t: x.max(1)[0],
    "sort": lambda lib, F, x, t: x.sort(1)[0], "topk": lambda lib, F, x, t: x.topk(2)[0],
    "diagonal": lambda lib, F, x, t: x.diagonal(),
}


@pytest.mark.parametrize("name", sorted(GRAD_FN_CASES))
def test_grad_fn_names_as_pytorch(name):
    got = []
    for lib in (fgrad.torch, torch):
        x = lib.tensor(np.linspace(-1, 1, 20).reshape(4, 5).astype(np.float32), requires_grad=True)
        t = lib.tensor(np.linspace(1, -0.5, 20).reshape(4, 5).astype(np.float32))
        got.append(GRAD_FN_CASES[name](lib, lib.nn.functional, x, t).grad_fn.name())
    assert got[0] == got[1]


def test_utils_checkpoint_recomputes_with_the_same_gradients():
    from fgrad.torch.utils.checkpoint import checkpoint, checkpoint_sequential
    fgrad.torch.manual_seed(0)
    blocks = fgrad.torch.nn.Sequential(fgrad.torch.nn.Linear(4, 8), fgrad.torch.nn.Tanh(), fgrad.torch.nn.Linear(8, 4), fgrad.torch.nn.Tanh())
    x = fgrad.torch.randn(5, 4, requires_grad=True)
    blocks(x).pow(2).sum().backward()
    want = [p.grad.clone() for p in blocks.parameters()] + [x.grad.clone()]
    for run in (lambda: checkpoint(blocks, x, use_reentrant=False),
                lambda: checkpoint_sequential(blocks, 2, x, use_reentrant=True)):
        blocks.zero_grad()
        x.grad = None
        out = run()
        assert out.grad_fn is not None
        out.pow(2).sum().backward()
        close([p.grad for p in blocks.parameters()] + [x.grad], want, rtol=1e-6, atol=1e-7)
