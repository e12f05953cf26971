"""fgrad.torch's random streams equal torch 2.13's bit for bit on the CPU (issue 26 item 2).

Every random function and method of the facade is a row of TABLE (a new one must be added:
test_every_random_name_is_in_the_table), drawn twice in a row (the generator's state carries
over) after `manual_seed(seed)` for several seeds, shapes and both float dtypes, and compared
with real torch's values with array_equal. TOLERANT lists the rows whose last step is not torch's
arithmetic (orthogonal_'s QR is NumPy's LAPACK call, torch's own differs in the last bits):
their draws are torch's, their values are compared to `RTOL`, and a later draw must again be
equal (the stream stays in step). trunc_normal__narrow's accept test takes NumPy's log of
torch's uniforms; it equals torch's on these seeds (a borderline test could in principle differ).
"""
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import fgrad.torch as ft  # noqa: E402
import fgrad.torch.nn.functional as fF  # noqa: E402
import fgrad.torch.nn.init as finit  # noqa: E402

SEEDS = (0, 1, 42, 2 ** 32 + 5)
DTYPES = ("float32", "float64")
SHAPES = ((), (1,), (7,), (16,), (17,), (3, 5), (100,), (1000,))
MATRIX_SHAPES = ((3, 5), (4, 4), (6, 2), (8, 3, 3))
RTOL = {"float32": 1e-5, "float64": 1e-12}
WEIGHTS = np.random.default_rng(7).random(3000)


def _probs(m, shape, dt):
    """Deterministic probabilities in [0, 1] (no draw) for bernoulli / multinomial."""
    n = math.prod(shape)
    return m.tensor(np.linspace(0.05, 0.95, n).reshape(shape), dtype=dt)


def _init(name, *args, **kwargs):
    def run(m, shape, dt):
        t = m.empty(shape, dtype=dt)
        init = finit if m is ft else torch.nn.init
        return getattr(init, name)(t, *args, **kwargs)
    return run


# name -> (sample(m, shape, dtype) with m = fgrad.torch or torch, shapes it takes)
TABLE = {
    "rand": (lambda m, s, d: m.rand(s, dtype=d), SHAPES),
    "randn": (lambda m, s, d: m.randn(s, dtype=d), SHAPES),
    "rand_like": (lambda m, s, d: m.rand_like(m.zeros(s, dtype=d)), SHAPES),
    "randn_like": (lambda m, s, d: m.randn_like(m.zeros(s, dtype=d)), SHAPES),
    "randint": (lambda m, s, d: m.randint(-3, 17, s), SHAPES),
    "randint__wide": (lambda m, s, d: m.randint(0, 2 ** 40, s), SHAPES),
    "randint__32bit_edge": (lambda m, s, d: m.randint(-2 ** 31, 2 ** 31, s), SHAPES),
    # a range of 2**28 or more takes a 64-bit draw, below a 32-bit one
    "randint__2_28": (lambda m, s, d: m.randint(5, 2 ** 28 + 5, s), SHAPES),
    "randint__below_2_28": (lambda m, s, d: m.randint(2 ** 28 - 1, s), SHAPES),
    "randint__int32": (lambda m, s, d: m.randint(0, 2 ** 30, s, dtype=m.int32), SHAPES),
    "randint__huge": (lambda m, s, d: m.randint(-2 ** 62, 2 ** 62 + 12345, s), SHAPES),
    "randint_like": (lambda m, s, d: m.randint_like(m.zeros(s, dtype=d), 5, 9), SHAPES),
    "randperm": (lambda m, s, d: m.randperm(math.prod(s) + 3), SHAPES),
    "randperm__long": (lambda m, s, d: m.randperm(5 * math.prod(s) + 600), SHAPES[-2:]),
    "normal": (lambda m, s, d: m.normal(0.5, 2.0, s, dtype=d), SHAPES),
    "normal__tensors": (lambda m, s, d: m.normal(m.full(s, 0.5, dtype=d), m.full(s, 3.0, dtype=d)), SHAPES),
    "normal__tensor_mean": (lambda m, s, d: m.normal(m.full(s, 0.5, dtype=d), 3.0), SHAPES),
    "bernoulli": (lambda m, s, d: m.bernoulli(_probs(m, s, d)), SHAPES),
    "bernoulli__p": (lambda m, s, d: m.bernoulli(m.zeros(s, dtype=d), 0.3), SHAPES),
    "poisson": (lambda m, s, d: m.poisson(m.full(s, 4.0, dtype=d) + m.arange(math.prod(s), dtype=d).reshape(s)),
                SHAPES),
    "binomial": (lambda m, s, d: m.binomial(m.full(s, 30.0, dtype=d), m.full(s, 0.45, dtype=d)), SHAPES),
    "multinomial": (lambda m, s, d: m.multinomial(_probs(m, (9,), d), 4), SHAPES[:1]),
    "multinomial__replacement": (lambda m, s, d: m.multinomial(_probs(m, (9,), d), 7, True), SHAPES[:1]),
    "multinomial__rows": (lambda m, s, d: m.multinomial(_probs(m, (3, 6), d), 2), SHAPES[:1]),
    # many categories: the cumulative weights and the ratios w / q are rounded in the dtype, as torch's
    "multinomial__many": (lambda m, s, d: m.multinomial(m.tensor(WEIGHTS, dtype=d), 20000, True), SHAPES[:1]),
    "multinomial__many_once": (lambda m, s, d: m.multinomial(m.tensor(WEIGHTS, dtype=d), 1), SHAPES[:1]),
    "multinomial__many_without": (lambda m, s, d: m.multinomial(m.tensor(WEIGHTS, dtype=d), 300), SHAPES[:1]),
    "Tensor.uniform_": (lambda m, s, d: m.empty(s, dtype=d).uniform_(-2.0, 3.0), SHAPES),
    "Tensor.normal_": (lambda m, s, d: m.empty(s, dtype=d).normal_(1.5, 0.3), SHAPES),
    "Tensor.bernoulli_": (lambda m, s, d: m.empty(s, dtype=d).bernoulli_(0.7), SHAPES),
    "Tensor.bernoulli_tensor": (lambda m, s, d: m.empty(s, dtype=d).bernoulli_(_probs(m, s, d)), SHAPES),
    "Tensor.random_": (lambda m, s, d: m.empty(s, dtype=d).random_(-4, 9), SHAPES),
    "Tensor.random__to": (lambda m, s, d: m.empty(s, dtype=d).random_(9), SHAPES),
    "Tensor.random__full": (lambda m, s, d: m.empty(s, dtype=d).random_(), SHAPES),
    "Tensor.random__int64": (lambda m, s, d: m.empty(s, dtype=m.int64).random_(), SHAPES),
    "Tensor.random__int32": (lambda m, s, d: m.empty(s, dtype=m.int32).random_(), SHAPES),
    "Tensor.random__int8": (lambda m, s, d: m.empty(s, dtype=m.int8).random_(), SHAPES),
    "Tensor.random__bool": (lambda m, s, d: m.empty(s, dtype=m.bool).random_(), SHAPES),
    "Tensor.random__int32_range": (lambda m, s, d: m.empty(s, dtype=m.int32).random_(-2 ** 30, 2 ** 30), SHAPES),
    "Tensor.exponential_": (lambda m, s, d: m.empty(s, dtype=d).exponential_(2.5), SHAPES),
    "Tensor.geometric_": (lambda m, s, d: m.empty(s, dtype=d).geometric_(0.3), SHAPES),
    "Tensor.cauchy_": (lambda m, s, d: m.empty(s, dtype=d).cauchy_(0.5, 0.3), SHAPES),
    "Tensor.log_normal_": (lambda m, s, d: m.empty(s, dtype=d).log_normal_(0.2, 0.7), SHAPES),
    "Tensor.multinomial": (lambda m, s, d: _probs(m, (9,), d).multinomial(3), SHAPES[:1]),
    "F.dropout": (lambda m, s, d: (fF if m is ft else torch.nn.functional).dropout(m.ones(s, dtype=d), 0.3), SHAPES),
    "F.dropout1d": (lambda m, s, d: (fF if m is ft else torch.nn.functional).dropout1d(
        m.ones((2, 3, 4), dtype=d), 0.4), SHAPES[:1]),
    "F.dropout2d": (lambda m, s, d: (fF if m is ft else torch.nn.functional).dropout2d(
        m.ones((2, 3, 4, 4), dtype=d), 0.4), SHAPES[:1]),
    "F.dropout3d": (lambda m, s, d: (fF if m is ft else torch.nn.functional).dropout3d(
        m.ones((2, 3, 2, 2, 2), dtype=d), 0.4), SHAPES[:1]),
    "F.alpha_dropout": (lambda m, s, d: (fF if m is ft else torch.nn.functional).alpha_dropout(
        m.ones(s, dtype=d), 0.2, True), SHAPES),
    "F.feature_alpha_dropout": (lambda m, s, d: (fF if m is ft else torch.nn.functional).feature_alpha_dropout(
        m.ones((2, 3, 4), dtype=d), 0.2, True), SHAPES[:1]),
    "F.rrelu": (lambda m, s, d: (fF if m is ft else torch.nn.functional).rrelu(
        m.tensor(np.linspace(-2.0, 1.0, math.prod(s)).reshape(s), dtype=d), 0.1, 0.4, True), SHAPES),
    "init.uniform_": (_init("uniform_", -0.5, 2.0), SHAPES),
    "init.normal_": (_init("normal_", 0.1, 0.7), SHAPES),
    "init.xavier_uniform_": (_init("xavier_uniform_", gain=1.3), MATRIX_SHAPES),
    "init.xavier_normal_": (_init("xavier_normal_"), MATRIX_SHAPES),
    "init.kaiming_uniform_": (_init("kaiming_uniform_", a=math.sqrt(5)), MATRIX_SHAPES),
    "init.kaiming_uniform__fan_out": (_init("kaiming_uniform_", mode="fan_out", nonlinearity="relu"),
                                      MATRIX_SHAPES),
    "init.kaiming_normal_": (_init("kaiming_normal_"), MATRIX_SHAPES),
    "init.sparse_": (_init("sparse_", 0.4), MATRIX_SHAPES[:3]),
    "init.trunc_normal_": (_init("trunc_normal_", 0.2, 1.5, -1.0, 2.5), SHAPES),
    "init.trunc_normal__narrow": (_init("trunc_normal_", 0.0, 1.0, 1.0, 1.5), SHAPES),
    "init.orthogonal_": (_init("orthogonal_", 1.5), MATRIX_SHAPES),
}
TOLERANT = {"init.orthogonal_"}

# Random names of torch whose fgrad.torch versions do not follow torch's stream yet, with why.
NOT_TORCH_STREAM: dict[str, str] = {}
# torch's random functions and methods (names that exist on fgrad.torch must be covered above)
TORCH_RANDOM = (["rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm", "normal",
                 "bernoulli", "multinomial", "poisson", "binomial"]
                + ["Tensor." + n for n in ("uniform_", "normal_", "bernoulli_", "random_", "exponential_",
                                           "geometric_", "cauchy_", "log_normal_", "multinomial")]
                + ["F." + n for n in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
                                      "feature_alpha_dropout", "rrelu")])


def _has(name):
    if name.startswith("Tensor."):
        return hasattr(ft.Tensor, name[7:])
    if name.startswith("F."):
        return hasattr(fF, name[2:])
    return hasattr(ft, name)


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def test_every_random_name_is_in_the_table():
    covered = {k.split("__")[0] for k in TABLE} | set(NOT_TORCH_STREAM)
    names = [n for n in TORCH_RANDOM if _has(n)]
    # (the deprecated names without the underscore, `init.normal`, call the same samplers)
    names += ["init." + n for n in finit.__all__ if n not in ("calculate_gain", "constant_", "zeros_", "ones_",
                                                               "eye_", "dirac_", "_calculate_fan_in_and_fan_out")
              and n + "_" not in finit.__all__]
    missing = [n for n in names if n not in covered]
    assert not missing, f"random functions of fgrad.torch missing from TABLE: {missing}"


# the 1000-element cases (compiled transforms, see test_compiled_and_numpy_transforms_agree_with_torch)
# run in the slow step
CASES = [pytest.param(name, shape, id=f"{name}-{shape}", marks=[pytest.mark.slow] if math.prod(shape) >= 1000 else [])
         for name, (_, shapes) in TABLE.items() for shape in shapes]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,shape", CASES)
def test_draws_equal_torch(name, shape, dtype):
    sample = TABLE[name][0]
    for seed in SEEDS:
        torch.manual_seed(seed)
        ft.manual_seed(seed)
        for draw in range(2):
            want = _np(sample(torch, shape, getattr(torch, dtype)))
            got = _np(sample(ft, shape, getattr(ft, dtype)))
            assert got.shape == want.shape and got.dtype == want.dtype, (name, got.shape, want.shape)
            if name in TOLERANT:
                np.testing.assert_allclose(got, want, rtol=RTOL[dtype], atol=RTOL[dtype],
                                           err_msg=f"{name} seed={seed} draw {draw}")
            else:
                assert np.array_equal(got, want, equal_nan=True), \
                    f"{name} {shape} {dtype} seed={seed} draw {draw}:\nfgrad {got}\ntorch {want}"
        # the stream is still in step with torch's
        assert np.array_equal(ft.rand(5, dtype=ft.float64).numpy(), torch.rand(5, dtype=torch.float64).numpy())


@pytest.mark.parametrize("seed", SEEDS)
def test_explicit_generator_and_layers_equal_torch(seed):
    g, tg = ft.Generator().manual_seed(seed), torch.Generator().manual_seed(seed)
    assert np.array_equal(ft.randn(33, generator=g).numpy(), torch.randn(33, generator=tg).numpy())
    assert np.array_equal(ft.randperm(20, generator=g).numpy(), torch.randperm(20, generator=tg).numpy())
    torch.manual_seed(seed)
    ft.manual_seed(seed)
    for make in (lambda m: m.nn.Linear(5, 3), lambda m: m.nn.Conv2d(2, 4, 3)):
        want, got = make(torch), make(ft)
        for (n, p), (_, q) in zip(want.named_parameters(), got.named_parameters()):
            assert np.array_equal(_np(q), _np(p)), n


def test_state_seed_and_default():
    """get/set_rng_state replay a stream (with the cached normal sample); an unseeded generator
    starts at torch's default seed."""
    assert ft.Generator().initial_seed() == torch.Generator().initial_seed()
    assert np.array_equal(ft.Generator().engine.uniform_(4, np.float32),
                          torch.rand(4, generator=torch.Generator()).numpy())
    ft.manual_seed(3)
    ft.randn(1)  # leaves a cached second Box-Muller sample
    state = ft.get_rng_state()
    first = ft.randn(3).numpy()
    ft.set_rng_state(state)
    assert np.array_equal(ft.randn(3).numpy(), first)
    assert ft.manual_seed(-1).initial_seed() == torch.manual_seed(-1).initial_seed()
    with pytest.raises(RuntimeError, match="manual_seed"):
        ft.manual_seed(2 ** 64)


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_data_loading_without_a_generator_follows_the_default_stream(seed):
    """The data loader's samplers, random_split and worker seeds draw from the same engine as
    rand: with generator=None they give torch's order and leave torch's state behind."""
    from fgrad.torch.utils import data as fd
    tdata = torch.utils.data
    ds = list(range(23))
    torch.manual_seed(seed)
    ft.manual_seed(seed)
    want = [[b.tolist() for b in tdata.DataLoader(ds, batch_size=4, shuffle=True)],
            [list(s) for s in tdata.random_split(ds, [10, 13])], list(tdata.SubsetRandomSampler(list(range(9)))),
            list(tdata.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 6)), torch.rand(3).numpy().tolist()]
    got = [[b.tolist() for b in fd.DataLoader(ds, batch_size=4, shuffle=True)],
           [list(s) for s in fd.random_split(ds, [10, 13])], list(fd.SubsetRandomSampler(list(range(9)))),
           list(fd.WeightedRandomSampler([1.0, 2.0, 3.0, 4.0], 6)), ft.rand(3).numpy().tolist()]
    assert got == want


def _same_stream(seed):
    """torch's and fgrad's default streams are at the same place: their next draws agree."""
    assert np.array_equal(ft.rand(3, dtype=ft.float64).numpy(), torch.rand(3, dtype=torch.float64).numpy()), seed


LAYERS = {
    "Linear": lambda m: m.nn.Linear(5, 3),
    "Linear_float64": lambda m: m.nn.Linear(20, 30, dtype=m.float64),
    "Conv1d": lambda m: m.nn.Conv1d(2, 4, 3),
    "Conv2d": lambda m: m.nn.Conv2d(2, 4, 3),
    "ConvTranspose2d": lambda m: m.nn.ConvTranspose2d(2, 4, 3),
    "LSTM": lambda m: m.nn.LSTM(4, 6, num_layers=2, bidirectional=True),
    "GRU": lambda m: m.nn.GRU(4, 6),
    "RNN": lambda m: m.nn.RNN(3, 5),
    "LSTMCell": lambda m: m.nn.LSTMCell(3, 4),
    "Embedding": lambda m: m.nn.Embedding(10, 4),
    "BatchNorm2d": lambda m: m.nn.BatchNorm2d(3),
    "LayerNorm": lambda m: m.nn.LayerNorm(4),
    "MultiheadAttention": lambda m: m.nn.MultiheadAttention(8, 2),
    "TransformerEncoderLayer": lambda m: m.nn.TransformerEncoderLayer(8, 2, 16),
}


@pytest.mark.parametrize("seed", SEEDS[:2])
def test_default_initial_weights_equal_torch(seed):
    """After manual_seed, every layer's initial parameters (and buffers) are torch's, and the
    stream is left where torch leaves it."""
    for name, make in LAYERS.items():
        torch.manual_seed(seed)
        ft.manual_seed(seed)
        want, got = make(torch), make(ft)
        want_state, got_state = want.state_dict(), got.state_dict()
        assert list(got_state) == list(want_state), name
        for key, value in want_state.items():
            assert np.array_equal(_np(got_state[key]), _np(value)), (name, key)
        _same_stream((seed, name))


@pytest.mark.parametrize("seed", SEEDS)
def test_interleaved_calls_keep_the_streams_in_step(seed):
    """A mix of samplers (the normal cache carried between the scalar calls, blocks, 32- and
    64-bit draws) on the default generator and on an explicit one."""
    def program(m, g):
        return [m.randn(3, generator=g), m.rand(5, generator=g), m.randn(1, generator=g),
                m.randperm(12, generator=g), m.randn(20, dtype=m.float64, generator=g),
                m.randint(0, 2 ** 35, (4,), generator=g), m.randn(2, generator=g),
                m.multinomial(m.tensor([0.2, 0.5, 0.3]), 5, True, generator=g),
                m.empty(6).normal_(2.0, 0.5, generator=g), m.bernoulli(m.full((9,), 0.4), generator=g),
                m.empty(4, dtype=m.float64).uniform_(-1.0, 1.0, generator=g)]
    torch.manual_seed(seed)
    ft.manual_seed(seed)
    tg, fg = torch.Generator().manual_seed(seed + 1), ft.Generator().manual_seed(seed + 1)
    for want, got in zip(program(torch, None) + program(torch, tg), program(ft, None) + program(ft, fg)):
        assert np.array_equal(_np(got), _np(want)), (seed, want, got)
    _same_stream(seed)
    assert np.array_equal(ft.randn(5, generator=fg).numpy(), torch.randn(5, generator=tg).numpy())


@pytest.mark.parametrize("seed", SEEDS[:3])
def test_rng_state_is_torchs_bytes(seed):
    """get_rng_state gives torch's exact bytes at every point (just seeded, mid-block, with a
    cached normal sample); states travel between fgrad.torch and torch in both directions."""
    torch.manual_seed(seed)
    ft.manual_seed(seed)
    steps = [lambda m: None, lambda m: m.randn(1), lambda m: m.rand(700), lambda m: m.rand(620),
             lambda m: m.randn(2, dtype=m.float64), lambda m: m.randperm(50)]
    for step in steps:
        step(torch)
        step(ft)
        state = ft.get_rng_state()
        assert state.dtype == ft.uint8 and tuple(state.shape) == (5056,)
        assert np.array_equal(state.numpy(), torch.get_rng_state().numpy())
    mine = ft.get_rng_state()
    first = ft.randn(5).numpy()
    torch.set_rng_state(torch.from_numpy(mine.numpy().copy()))
    assert np.array_equal(torch.randn(5).numpy(), first)
    g = torch.Generator().manual_seed(seed)
    torch.randn(3, generator=g)
    mine = ft.Generator().set_state(g.get_state())
    assert np.array_equal(ft.randn(7, generator=mine).numpy(), torch.randn(7, generator=g).numpy())
    twin = mine.clone_state()
    assert np.array_equal(ft.rand(4, generator=twin).numpy(), ft.rand(4, generator=mine).numpy())
    with pytest.raises(RuntimeError, match="5056"):
        ft.set_rng_state(ft.zeros(10, dtype=ft.uint8))
    with pytest.raises(RuntimeError, match="invalid mt19937 state"):
        ft.set_rng_state(ft.zeros(5056, dtype=ft.uint8))


def test_fork_rng_seed_and_initial_seed():
    ft.manual_seed(7)
    torch.manual_seed(7)
    with ft.random.fork_rng():
        ft.randn(30)
    with ft.random.fork_rng(enabled=False):
        ft.rand(2)
    torch.rand(2)
    _same_stream(7)
    assert ft.initial_seed() == torch.initial_seed() == 7
    s = ft.seed()
    assert s == ft.initial_seed() and 0 <= s < 2 ** 64
    torch.manual_seed(s)
    _same_stream(s)
    g = ft.Generator()
    assert g.seed() == g.initial_seed()


@pytest.mark.parametrize("dtype", DTYPES)
def test_compiled_and_numpy_transforms_agree_with_torch(dtype, monkeypatch):
    """_random's NumPy references and _random_kernels' compiled loops give torch's values on
    the same sizes (each path forced in turn; which one runs otherwise depends on size)."""
    from fgrad.torch._tensor import _random
    seed, n = 42, 530

    def draws(m):
        d = getattr(m, dtype)
        return [m.randn(n, dtype=d), m.empty(n + 7, dtype=d).normal_(0.5, 2.0), m.empty(n, dtype=d).uniform_(-3.0, 1.5),
                m.randperm(n), m.empty(n, dtype=d).exponential_(1.5), m.empty(n, dtype=d).geometric_(0.2),
                m.empty(n, dtype=d).cauchy_(1.0, 0.3), m.empty(n, dtype=d).log_normal_(0.0, 0.4),
                m.empty(2, n, dtype=d).t().normal_()]  # not contiguous: the scalar path
    torch.manual_seed(seed)
    want = draws(torch)
    # _KERNELS False: Numba unavailable (the NumPy references); None with _KERNEL_MIN 1: load
    # and use the compiled loops for any size
    for path, loaded, minimum in (("numpy", False, 10 ** 9), ("compiled", None, 1)):
        monkeypatch.setattr(_random, "_KERNELS", loaded)
        monkeypatch.setattr(_random, "_KERNEL_MIN", minimum)
        ft.manual_seed(seed)
        got = draws(ft)
        for i, (a, b) in enumerate(zip(got, want)):
            assert np.array_equal(_np(a), _np(b)), (path, i)


DISTRIBUTIONS = {
    "Normal": lambda m, d: d.Normal(m.tensor([0.5, -1.0, 2.0]), m.tensor([1.0, 0.3, 2.5])),
    "Normal_float64": lambda m, d: d.Normal(m.full((20,), 0.5, dtype=m.float64), m.full((20,), 1.5, dtype=m.float64)),
    "Uniform": lambda m, d: d.Uniform(m.tensor([0.0, -2.0]), m.tensor([1.0, 3.0])),
    "Bernoulli": lambda m, d: d.Bernoulli(m.tensor([0.1, 0.5, 0.9])),
    "Categorical": lambda m, d: d.Categorical(m.tensor([0.1, 0.2, 0.3, 0.4])),
    "Categorical_batch": lambda m, d: d.Categorical(logits=m.tensor([[0.1, 0.2, 0.3], [1.0, -1.0, 0.0]])),
    "MultivariateNormal": lambda m, d: d.MultivariateNormal(m.tensor([0.0, 1.0]),
                                                            m.tensor([[2.0, 0.3], [0.3, 1.0]])),
}


@pytest.mark.parametrize("name", list(DISTRIBUTIONS))
def test_distribution_samples_equal_torch(name):
    """torch.distributions' sample/rsample draw as torch's (randn, rand, bernoulli, multinomial
    on the default stream); MultivariateNormal's values pass through a matmul, so to rounding."""
    for seed in SEEDS[:2]:
        for shape in ((), (5,), (2, 3)):
            torch.manual_seed(seed)
            ft.manual_seed(seed)
            want = DISTRIBUTIONS[name](torch, torch.distributions).sample(torch.Size(shape)).numpy()
            got = DISTRIBUTIONS[name](ft, ft.distributions).sample(shape).numpy()
            assert got.shape == want.shape and got.dtype == want.dtype, (name, shape)
            if name == "MultivariateNormal":
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
            else:
                assert np.array_equal(got, want), (name, seed, shape, got, want)
            _same_stream((name, seed, shape))


VIEWS = {
    "transposed": lambda m, d: m.empty(4, 5, dtype=d).t(),
    "strided": lambda m, d: m.empty(4, 6, dtype=d)[:, ::2],
    "permuted": lambda m, d: m.empty(3, 1, 4, dtype=d).permute(2, 1, 0),
    "permuted_sliced": lambda m, d: m.empty(2, 3, 4, dtype=d).transpose(0, 2)[:, 1:],
    "rows": lambda m, d: m.empty(6, 5, dtype=d)[1:4],
    "long_strided": lambda m, d: m.empty(40, dtype=d)[::2],
}
IN_PLACE = {
    "normal_": lambda x: x.normal_(0.5, 2.0),
    "uniform_": lambda x: x.uniform_(-1.0, 2.0),
    "bernoulli_": lambda x: x.bernoulli_(0.4),
    "random_": lambda x: x.random_(0, 100),
    "exponential_": lambda x: x.exponential_(1.5),
    "log_normal_": lambda x: x.log_normal_(0.1, 0.5),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", list(VIEWS))
def test_in_place_draws_on_views_follow_memory_order(view, dtype):
    """torch fills a tensor in place in memory order (a transposed view gets its draws down the
    columns), and normal_ on a tensor that is not contiguous draws element by element (the
    scalar Box-Muller path) whatever its size."""
    for name, fill in IN_PLACE.items():
        torch.manual_seed(3)
        ft.manual_seed(3)
        want, got = VIEWS[view](torch, getattr(torch, dtype)), VIEWS[view](ft, getattr(ft, dtype))
        fill(want)
        fill(got)
        assert np.array_equal(got.numpy(), want.numpy()), (view, name)
        _same_stream((view, name))


def test_distribution_parameters_are_checked():
    t = ft.empty(3)
    for call, message in ((lambda: t.geometric_(1.5), "geometric_ expects p"), (lambda: t.cauchy_(0.0, -1.0), "sigma"),
                          (lambda: t.log_normal_(0.0, 0.0), "std"), (lambda: ft.randperm(-1), "non-negative")):
        with pytest.raises(RuntimeError, match=message):
            call()


LIKE = {
    "rand_like": lambda m, x: m.rand_like(x),
    "randn_like": lambda m, x: m.randn_like(x),
    "randint_like": lambda m, x: m.randint_like(x, 3, 40),
    "bernoulli": lambda m, x: m.bernoulli(x.clamp(0.0, 1.0)),
    "F.dropout": lambda m, x: (fF if m is ft else torch.nn.functional).dropout(x, 0.4),
    "F.alpha_dropout": lambda m, x: (fF if m is ft else torch.nn.functional).alpha_dropout(x, 0.4, True),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("view", list(VIEWS))
def test_random_tensors_like_a_view_follow_its_layout(view, dtype):
    """torch's *_like and dropout draw into empty_like(input), which keeps the order of the
    input's strides: a transposed input gets its draws in memory order (randn_like: element by
    element); torch.bernoulli makes a contiguous result."""
    for name, make in LIKE.items():
        torch.manual_seed(5)
        ft.manual_seed(5)
        x_t = VIEWS[view](torch, getattr(torch, dtype)).fill_(0.25)
        x_f = VIEWS[view](ft, getattr(ft, dtype)).fill_(0.25)
        assert np.array_equal(_np(make(ft, x_f)), _np(make(torch, x_t))), (view, name)
        _same_stream((view, name))


def test_half_precision_uniform_never_returns_the_upper_bound():
    """torch draws float16 uniforms as float32 ones rounded, and maps the values that round to
    the upper bound to the lower one."""
    for lo, hi in ((0.0, 1.0), (100.0, 101.0)):
        torch.manual_seed(0)
        ft.manual_seed(0)
        want = [torch.rand(3000, dtype=torch.float16), torch.empty(3000, dtype=torch.float16).uniform_(lo, hi),
                torch.rand_like(torch.zeros(40, dtype=torch.float16))]
        got = [ft.rand(3000, dtype=ft.float16), ft.empty(3000, dtype=ft.float16).uniform_(lo, hi),
               ft.rand_like(ft.zeros(40, dtype=ft.float16))]
        for w, g in zip(want, got):
            assert g.dtype == ft.float16 and np.array_equal(g.numpy(), w.numpy()), (lo, hi)
            assert not (g.numpy() == np.float16(hi)).any()
