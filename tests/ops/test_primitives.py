"""Registry-driven tests: every primitive, every fgrad.numpy function.

Each module tests/cases/<family>.py (names starting with "_" are skipped) defines

    CASES = [
        (name, fgrad_fn, numpy_fn, args),            # or
        (name, fgrad_fn, numpy_fn, args, options),
        ...
    ]

  name      unique string, the test id; by convention the fgrad.numpy function's name,
            then details in brackets: "sin", "add[(3,1)+(1,4)]", "getitem[int_array]".
  fgrad_fn  the function under test, written with fgrad (fnp.sin, lambda x: x[::2], ...).
            It takes the arrays made by `args` positionally and returns one array.
  numpy_fn  the same function written with NumPy/SciPy, the reference for the forward
            value (shape, dtype and values); None skips the forward comparison.
  args      callable (rng, dtype) -> tuple of NumPy arrays. Float inputs use `dtype`
            (float64, or float32 for the f32 check); integer inputs (indices) stay
            integers and are not differentiated. Choose values away from kinks and
            singularities (positive for log/sqrt, |x| < 1 for arcsin, no ties for max).
  options   dict, every key optional:
     "grad": True    run check_grads and the jvp/vjp agreement test. False for functions
                     whose derivative is zero or undefined (sign, argmax, comparisons).
     "fwd": True     forward mode applies. False for a custom_vjp function, which refuses it
                     (TypeError, as JAX): check_grads then runs reverse mode only, and the
                     jvp/vjp agreement test checks that jvp raises.
     "order": 2      highest derivative order for check_grads.
     "grad_tol": None  atol/rtol for check_grads (None: its float64 default, 2e-5).
     "f32": False    also compare the forward value in float32.
     "rtol": 1e-10   forward tolerance in float64 (1e-5 is used in float32).
     "jit": True     the function can be staged by make_jaxpr (False for value-dependent
                     shapes, e.g. boolean masks computed from the input).
     "prims": ()     names of primitives the case exercises that the jaxprs of the
                     function, of its jvp and of its vjp do not show.
     "gpu": True     the GPU suite (tests/gpu) runs the case with its arrays on the GPU.
                     False for functions that refuse device arrays by design (the host
                     factorizations of fgrad/ops/linalg_lu.py): the GPU tests skip it.

For every case: (1) forward value vs numpy_fn (float64, and float32 where "f32");
(2) fgrad.test_util.check_grads(fn, args, order=2, modes=("fwd", "rev")) in float64;
(3) <u, J v> (jvp) == <J^T u, v> (vjp); (4) abstract_eval agrees with impl: make_jaxpr's
output types equal the eager output's, and replaying each equation of the function's, the
jvp's and the vjp's jaxpr with the primitive's impl gives exactly the shape and dtype the
jaxpr recorded; (5) vmap over two examples equals a loop (float inputs mapped).

Then, for every primitive in fgrad.core.primitive.ALL_PRIMITIVES (after importing fgrad,
fgrad.numpy and the optional fgrad.torch.nn.functional, fgrad.ops.linalg, fgrad.ops.nn): it has
impl and abstract_eval, and jvp and vjp unless `nondiff`, and some case exercises it (seen
in those jaxprs, or listed in "prims"); a missing one fails with its name.
"""
from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
from pathlib import Path

import numpy as np
import pytest

import fgrad
import fgrad.numpy  # noqa: F401
from fgrad.core.ir import ClosedJaxpr, Jaxpr, Literal, typecheck_jaxpr
from fgrad.core.primitive import ALL_PRIMITIVES
from fgrad.core.trace import aval_of
from fgrad.test_util import check_grads

_OPTIONAL_MODULES = ("fgrad.torch.nn.functional", "fgrad.ops.linalg", "fgrad.ops.nn")
_DEFAULTS = {"grad": True, "fwd": True, "order": 2, "grad_tol": None, "f32": False, "rtol": 1e-10, "jit": True,
             "prims": (), "gpu": True}


def _import_optional(name):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError as e:
        if e.name is None or not name.startswith(e.name):
            raise  # the module exists but imports something missing: a real error


for _mod in _OPTIONAL_MODULES:
    _import_optional(_mod)

# --- collecting the cases ------------------------------------------------------------------

_CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
MODULE_ERRORS: dict[str, BaseException] = {}


class Case:
    def __init__(self, module, name, fn, np_fn, args, options):
        unknown = set(options) - set(_DEFAULTS)
        if unknown:
            raise ValueError(f"case {name} in tests/cases/{module}.py: unknown options {sorted(unknown)}")
        self.module, self.name, self.fn, self.np_fn, self.args = module, name, fn, np_fn, args
        self.opt = {**_DEFAULTS, **options}

    def make_args(self, dtype=np.float64, seed=0):
        rng = np.random.default_rng(seed)
        return tuple(self.args(rng, np.dtype(dtype)))

    def __repr__(self):
        return self.name


def _load_cases():
    cases = []
    for info in sorted(pkgutil.iter_modules([str(_CASES_DIR)]), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        try:
            mod = importlib.import_module(f"tests.cases.{info.name}")
        except Exception as e:  # reported by test_case_module_imports
            MODULE_ERRORS[info.name] = e
            continue
        for entry in getattr(mod, "CASES"):
            if len(entry) not in (4, 5):
                raise ValueError(f"tests/cases/{info.name}.py: a case is (name, fgrad_fn, numpy_fn, "
                                 f"args[, options]), got {len(entry)} items in {entry[:1]}")
            name, fn, np_fn, args = entry[:4]
            cases.append(Case(info.name, name, fn, np_fn, args, entry[4] if len(entry) == 5 else {}))
    names = [c.name for c in cases]
    dups = sorted({n for n in names if names.count(n) > 1})
    if dups:
        raise ValueError(f"duplicate case names: {dups}")
    return cases


CASES = _load_cases()
GRAD_CASES = [c for c in CASES if c.opt["grad"]]
JIT_CASES = [c for c in CASES if c.opt["jit"]]


def _ids(case):
    return case.name


@pytest.mark.parametrize("module", sorted(p.stem for p in _CASES_DIR.glob("[!_]*.py")))
def test_case_module_imports(module):
    if module in MODULE_ERRORS:
        raise MODULE_ERRORS[module]


# --- helpers -------------------------------------------------------------------------------

def _np(x):
    return np.asarray(getattr(x, "_value", x))


def _is_float(x):
    return aval_of(getattr(x, "_value", x)).dtype.kind in "fc"


def _random_like(x, rng):
    x = _np(x)
    if x.dtype.kind in "fc":
        return rng.standard_normal(x.shape).astype(x.dtype)
    return np.zeros_like(x)


def _inner(a, b):
    return float(np.sum(_np(a).astype(np.float64) * _np(b).astype(np.float64)))


# --- (1) forward values --------------------------------------------------------------------

def _check_forward(case, dtype, rtol):
    args = case.make_args(dtype)
    got = case.fn(*args)
    want = case.np_fn(*args)
    got_a, want_a = _np(got), np.asarray(want)
    assert got_a.shape == want_a.shape, f"{case.name}: shape {got_a.shape}, NumPy gives {want_a.shape}"
    assert got_a.dtype == want_a.dtype, f"{case.name}: dtype {got_a.dtype}, NumPy gives {want_a.dtype}"
    np.testing.assert_allclose(got_a, want_a, rtol=rtol, atol=rtol, equal_nan=True, err_msg=case.name)


@pytest.mark.parametrize("case", [c for c in CASES if c.np_fn is not None], ids=_ids)
def test_forward_float64(case):
    _check_forward(case, np.float64, case.opt["rtol"])


@pytest.mark.parametrize("case", [c for c in CASES if c.np_fn is not None and c.opt["f32"]], ids=_ids)
def test_forward_float32(case):
    _check_forward(case, np.float32, 1e-5)


# --- (2) derivatives against finite differences, (3) jvp/vjp agreement ----------------------

@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids)
def test_check_grads(case):
    tol = case.opt["grad_tol"]
    modes = ("fwd", "rev") if case.opt["fwd"] else ("rev",)
    check_grads(case.fn, case.make_args(), order=case.opt["order"], modes=modes, atol=tol)


@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids)
def test_jvp_vjp_agree(case):
    args = case.make_args()
    rng = np.random.default_rng(1)
    v = tuple(_random_like(a, rng) for a in args)
    if not case.opt["fwd"]:
        with pytest.raises(TypeError, match="forward-mode"):
            fgrad.jvp(case.fn, args, v)
        return
    out, t_out = fgrad.jvp(case.fn, args, v)
    u = _random_like(out, rng)
    out2, vjp_fn = fgrad.vjp(case.fn, *args)
    cts = vjp_fn(u)
    np.testing.assert_allclose(_np(out), _np(out2), rtol=1e-12, atol=1e-12)
    lhs = _inner(u, t_out)
    rhs = sum(_inner(c, t) for c, t, a in zip(cts, v, args) if _is_float(a))
    assert np.isclose(lhs, rhs, rtol=1e-9, atol=1e-9), f"{case.name}: <u, J v> = {lhs}, <J^T u, v> = {rhs}"


# --- (4) abstract_eval vs impl, and which primitives each case exercises --------------------

def _staged_functions(case, args):
    """The function, its jvp and (when differentiable) its vjp, each as f(*args)."""
    fns = {"fn": case.fn}
    if case.opt["grad"]:
        rng = np.random.default_rng(2)
        v = tuple(_random_like(a, rng) for a in args)
        u = _random_like(case.fn(*args), rng)
        if case.opt["fwd"]:
            fns["jvp"] = lambda *a: fgrad.jvp(case.fn, a, v)[1]
        fns["vjp"] = lambda *a: tuple(c for c, x in zip(fgrad.vjp(case.fn, *a)[1](u), a) if _is_float(x))
    return fns


def _eqns(jaxpr):
    """Every equation, also those of jaxprs nested in parameters (control flow, custom rules)."""
    for e in jaxpr.eqns:
        yield e
        for p in e.params.values():
            for sub in (p if isinstance(p, (tuple, list)) else (p,)):
                if isinstance(sub, ClosedJaxpr):
                    yield from _eqns(sub.jaxpr)
                elif isinstance(sub, Jaxpr):
                    yield from _eqns(sub)


def _replay_with_impl(closed, args, where):
    """Evaluate each equation with its primitive's impl and compare with the recorded aval."""
    env = {id(v): x for v, x in zip(closed.jaxpr.constvars, closed.consts)}
    env.update({id(v): x for v, x in zip(closed.jaxpr.invars, args)})
    for e in closed.jaxpr.eqns:
        vals = [a.val if isinstance(a, Literal) else env[id(a)] for a in e.invars]
        out = e.primitive.impl(*vals, xp=np, **e.params)
        want = e.outvars[0].aval
        assert (tuple(out.shape), out.dtype) == (want.shape, want.dtype), (
            f"{where}: {e.primitive.name}{e.params}: abstract_eval says {want}, impl gives "
            f"{out.dtype}{list(out.shape)}")
        env[id(e.outvars[0])] = out


@functools.lru_cache(maxsize=None)
def _staged(case_name):
    """{kind: ClosedJaxpr} for a case, computed once per session."""
    case = next(c for c in CASES if c.name == case_name)
    args = case.make_args()
    return args, {k: fgrad.make_jaxpr(f)(*args) for k, f in _staged_functions(case, args).items()}


@pytest.mark.parametrize("case", JIT_CASES, ids=_ids)
def test_abstract_eval_matches_impl(case):
    args, staged = _staged(case.name)
    out = _np(case.fn(*args))
    (aval,) = staged["fn"].out_avals
    assert (aval.shape, aval.dtype) == (out.shape, out.dtype), \
        f"{case.name}: make_jaxpr says {aval}, eager gives {out.dtype}{list(out.shape)}"
    (replayed,) = staged["fn"](*args)
    np.testing.assert_allclose(_np(replayed), out, rtol=1e-12, atol=1e-12, equal_nan=True)
    for kind, closed in staged.items():
        _replay_with_impl(closed, args, f"{case.name} ({kind})")


@pytest.mark.parametrize("case", JIT_CASES, ids=_ids)
def test_staged_jaxprs_typecheck(case):
    """typecheck_jaxpr accepts make_jaxpr of the case's function, of its jvp and of its vjp."""
    _, staged = _staged(case.name)
    for kind, closed in staged.items():
        try:
            typecheck_jaxpr(closed)
        except TypeError as e:
            raise AssertionError(f"{case.name} ({kind}): {e}\n{closed}") from None


@pytest.mark.parametrize("case", GRAD_CASES, ids=_ids)
def test_recorded_graph_typechecks(case):
    """The graph fgrad.vjp records for the case, as a Jaxpr (vjp_fn.forward_jaxpr()), passes
    typecheck_jaxpr -- there its avals are the impls' outputs, so this checks abstract_eval
    against impl on the recorded path too -- and replaying it gives the output."""
    args = case.make_args()
    out, vjp_fn = fgrad.vjp(case.fn, *args)
    closed = vjp_fn.forward_jaxpr()
    try:
        typecheck_jaxpr(closed)
    except TypeError as e:
        raise AssertionError(f"{case.name}: {e}\n{closed}") from None
    (replayed,) = closed(*args)
    np.testing.assert_allclose(_np(replayed), _np(out), rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("case", JIT_CASES, ids=_ids)
def test_vmap_matches_loop(case):
    """vmap over a batch of two examples (float inputs mapped, integer inputs shared)."""
    examples = [case.make_args(seed=s) for s in (3, 4)]
    in_axes = tuple(0 if _is_float(a) else None for a in examples[0])
    if all(ax is None for ax in in_axes):
        pytest.skip("no float input to map over")
    examples = [tuple(e[i] if ax == 0 else examples[0][i] for i, ax in enumerate(in_axes)) for e in examples]
    stacked = tuple(np.stack([e[i] for e in examples]) if ax == 0 else examples[0][i]
                    for i, ax in enumerate(in_axes))
    want = np.stack([_np(case.fn(*e)) for e in examples])
    got = _np(fgrad.vmap(case.fn, in_axes=in_axes)(*stacked))
    assert got.shape == want.shape and got.dtype == want.dtype, \
        f"{case.name}: vmap gives {got.dtype}{list(got.shape)}, a loop {want.dtype}{list(want.shape)}"
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


@functools.lru_cache(maxsize=None)
def _coverage():
    covered = {}
    for case in CASES:
        names = set(case.opt["prims"])
        if case.opt["jit"]:
            try:
                staged = _staged(case.name)[1]
            except Exception:  # that case's own test_abstract_eval_matches_impl reports it
                staged = {}
            for closed in staged.values():
                names.update(e.primitive.name for e in _eqns(closed.jaxpr))
        for n in names:
            covered.setdefault(n, case.name)
    return covered


def _prim_id(p):
    return p.name


@pytest.mark.parametrize("prim", list(ALL_PRIMITIVES), ids=_prim_id)
def test_primitive_has_rules(prim):
    missing = [r for r in ("impl", "abstract_eval") if getattr(prim, r) is None]
    if not prim.nondiff:
        missing += [r for r in ("jvp", "vjp") if getattr(prim, r) is None]
    assert not missing, f"primitive '{prim.name}' has no {', '.join(missing)} rule"


@pytest.mark.parametrize("prim", list(ALL_PRIMITIVES), ids=_prim_id)
def test_primitive_is_exercised(prim):
    assert prim.name in _coverage(), (
        f"primitive '{prim.name}' is not exercised by any case in tests/cases/*.py: add a case whose "
        "function (or its jvp/vjp) binds it, or list it in a case's options['prims']")


def test_listed_primitives_exist():
    known = {p.name for p in ALL_PRIMITIVES}
    bad = {c.name: sorted(set(c.opt["prims"]) - known) for c in CASES if set(c.opt["prims"]) - known}
    assert not bad, f"options['prims'] names no primitive: {bad}"


def test_primitive_names_are_unique():
    names = [p.name for p in ALL_PRIMITIVES]
    assert len(names) == len(set(names)), sorted({n for n in names if names.count(n) > 1})


def _ops_modules():
    import fgrad.ops
    for info in pkgutil.walk_packages(fgrad.ops.__path__, "fgrad.ops."):
        yield importlib.import_module(info.name)


def test_public_ops_functions_have_names_and_docstrings():
    """Every public function of an fgrad.ops module (factory-built ones too) has its real name,
    not `<lambda>` or a factory's inner name, and a docstring."""
    bad = []
    for mod in _ops_modules():
        for attr, obj in vars(mod).items():
            if attr.startswith("_") or not inspect.isfunction(obj) or obj.__module__ != mod.__name__:
                continue
            if obj.__name__ != attr:
                bad.append(f"{mod.__name__}.{attr} is named {obj.__name__!r}")
            if not (obj.__doc__ or "").strip():
                bad.append(f"{mod.__name__}.{attr} has no docstring")
    assert not bad, "\n".join(bad)


# --- every fgrad.numpy function the project promises has a case -----------------------------

REQUIRED_NUMPY = """
negative add subtract multiply divide true_divide power square sqrt cbrt exp exp2 expm1 log log2
log10 log1p sin cos tan arcsin arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh abs
sign maximum minimum clip where logaddexp sum prod mean var std max min argmax argmin cumsum
reshape ravel transpose swapaxes moveaxis expand_dims squeeze broadcast_to concatenate stack split
tile repeat flip pad take trace diag eye zeros_like ones_like full_like
getitem[int] getitem[slice] getitem[none] getitem[ellipsis] getitem[int_array] getitem[bool_mask]
""".split()


def test_every_required_numpy_function_has_a_case():
    names = {c.name for c in CASES}
    bases = {n.split("[")[0] for n in names}
    missing = [r for r in REQUIRED_NUMPY if (r not in names if "[" in r else r not in bases)]
    assert not missing, f"no case in tests/cases/*.py for: {missing}"


# --- indexing, creation and shape behaviour a table of cases cannot express ----------------

import fgrad.numpy as fnp  # noqa: E402
from fgrad.core.errors import ConcretizationError  # noqa: E402


def _random_index(rng, shape):
    """A random NumPy index for an array of `shape`: ints, slices, None, Ellipsis,
    integer arrays and boolean masks, in any mixture NumPy accepts."""
    items, d, used_ellipsis = [], 0, False
    while d < len(shape):
        kind = rng.choice(["int", "slice", "slice", "none", "ellipsis", "array", "mask", "stop"])
        n = shape[d]
        if kind == "stop":
            break
        if kind == "int":
            items.append(int(rng.integers(-n, n)))
        elif kind == "slice":
            pick = lambda: None if rng.random() < 0.3 else int(rng.integers(-n - 2, n + 2))  # noqa: E731
            step = None if rng.random() < 0.3 else int(rng.choice([-3, -2, -1, 1, 2, 3]))
            items.append(slice(pick(), pick(), step))
        elif kind == "none":
            items.append(None)
            continue
        elif kind == "ellipsis":
            if used_ellipsis:
                continue
            used_ellipsis = True
            items.append(Ellipsis)
            d = len(shape) - int(rng.integers(0, len(shape) - d + 1))
            continue
        elif kind == "array":
            items.append(rng.integers(-n, n, size=tuple(rng.integers(1, 3, size=rng.integers(0, 3)))))
        else:
            k = int(rng.integers(1, len(shape) - d + 1))
            items.append(rng.random(shape[d:d + k]) < 0.5)
            d += k
            continue
        d += 1
    return tuple(items)


def test_getitem_fuzz_matches_numpy():
    x = np.random.default_rng(0).standard_normal((3, 4, 5))
    rng = np.random.default_rng(1)
    checked = 0
    while checked < 300:
        idx = _random_index(rng, x.shape)
        try:
            want = x[idx]
        except IndexError:  # e.g. index arrays that do not broadcast: NumPy refuses too
            with pytest.raises(IndexError):
                fnp.getitem(x, idx)
            continue
        got = fnp.getitem(x, idx)
        assert got.shape == want.shape and np.array_equal(got, want), idx
        if not any(isinstance(i, np.ndarray) and i.dtype == bool for i in idx):
            assert fgrad.make_jaxpr(lambda y: fnp.getitem(y, idx))(x).out_avals[0].shape == want.shape, idx
        w = rng.standard_normal(want.shape)
        g = fgrad.grad(lambda y: fnp.sum(fnp.getitem(y, idx) * w))(x)
        expect = np.zeros_like(x)
        np.add.at(expect, idx, w)
        np.testing.assert_allclose(g, expect, err_msg=str(idx))
        if checked % 3 == 0:  # vmap over a new leading or trailing axis
            ax = int(rng.integers(0, 2)) * 3
            xs = np.stack([x, 2 * x + 1], axis=ax)
            got = fgrad.vmap(lambda y: fnp.getitem(y, idx), in_axes=ax)(xs)
            np.testing.assert_array_equal(got, np.stack([want, (2 * x + 1)[idx]]), err_msg=str(idx))
            gb = fgrad.vmap(fgrad.grad(lambda y: fnp.sum(fnp.getitem(y, idx) * w)), in_axes=ax)(xs)
            np.testing.assert_allclose(gb, np.stack([expect, expect]), err_msg=str(idx))
        checked += 1


def test_boolean_mask_under_staging_is_a_clear_error():
    x = np.arange(6.0)
    for f in (lambda y: y[y > 2], lambda y: fnp.nonzero(y > 2)[0], lambda y: fnp.where(y > 2)[0]):
        with pytest.raises(ConcretizationError, match=r"fgrad\.numpy\.where") as info:
            fgrad.make_jaxpr(f)(x)
        assert isinstance(info.value, fnp.NonConcreteBooleanIndexError)
    with pytest.raises(fnp.NonConcreteBooleanIndexError):
        fgrad.jit(lambda y: y[y > 2].sum())(x)
    # JAX's NonConcreteBooleanIndexError is an IndexError (its docs catch it as one)
    with pytest.raises(IndexError):
        fgrad.jit(lambda y: y[y > 2].sum())(x)


def test_boolean_mask_under_grad_and_constant_mask_under_jit():
    x = np.array([-1.0, 2.0, -3.0, 4.0])
    np.testing.assert_allclose(fgrad.grad(lambda y: fnp.sum(y[y > 0] ** 2))(x), [0, 4, 0, 8])
    mask = np.array([True, False, True, True])
    np.testing.assert_allclose(fgrad.jit(lambda y: y[mask] * 2.0)(x), x[mask] * 2)
    np.testing.assert_array_equal(fnp.nonzero(x > 0)[0], [1, 3])


def test_index_errors():
    x = np.zeros((2, 3))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 3"):
        fnp.getitem(x, (0, 3))
    with pytest.raises(IndexError, match="too many indices"):
        fnp.getitem(x, (0, 0, 0))
    with pytest.raises(IndexError, match="integer"):
        fnp.getitem(x, np.array([0.5]))
    with pytest.raises(IndexError, match="boolean index did not match"):
        fnp.getitem(x, np.array([True, False, True]))
    with pytest.raises(IndexError, match="single ellipsis"):
        fnp.getitem(x, (Ellipsis, 0, Ellipsis))


def test_traced_indices_under_jit_and_vmap():
    x = np.arange(20.0).reshape(4, 5)
    i = np.array([3, 0, 3])
    f = fgrad.jit(lambda y, k: y[k, 1:] * 2.0)
    np.testing.assert_allclose(f(x, i), x[i, 1:] * 2)
    np.testing.assert_allclose(f(x, np.array([1, 1, 2])), x[[1, 1, 2], 1:] * 2)
    g = fgrad.jit(lambda y, k: y[k])
    np.testing.assert_allclose(g(x, np.array(2)), x[2])
    # vmap over the index arrays (and over both) agrees with a loop
    idx = np.array([[0, 1], [3, 3], [2, 0]])
    np.testing.assert_allclose(fgrad.vmap(lambda k: fnp.getitem(x, (k, slice(None, None, -1))))(idx),
                               np.stack([x[k, ::-1] for k in idx]))
    xs = np.arange(60.0).reshape(3, 4, 5)
    np.testing.assert_allclose(fgrad.vmap(lambda y, k: y[1:, k])(xs, idx),
                               np.stack([a[1:, k] for a, k in zip(xs, idx)]))
    x4 = np.arange(120.0).reshape(3, 4, 5, 2)
    for f in (lambda y: y[0, :, [1, 0]], lambda y: fgrad.grad(lambda z: fnp.sum(z[0, :, [1, 1]] ** 2))(y)):
        want = np.stack([f(x4[:, j]) for j in range(4)])
        np.testing.assert_allclose(fgrad.vmap(f, in_axes=1)(x4), want)


def test_basic_indexing_lowers_to_slice_rev_reshape():
    x = np.zeros((4, 5))
    names = lambda f: [e.primitive.name for e in fgrad.make_jaxpr(f)(x).eqns]  # noqa: E731
    assert names(lambda y: y[1:3, ::-1]) == ["slice", "rev"]
    assert names(lambda y: y[0]) == ["slice", "reshape"]
    assert names(lambda y: y[:, None]) == ["reshape"]
    assert names(lambda y: y[...]) == []
    assert names(lambda y: y[::2]) == ["getitem"]
    assert names(lambda y: fgrad.grad(lambda z: fnp.sum(z[[0, 0]] ** 3))(y))[-1] == "scatter_add"


def test_prod_derivatives_are_exact_at_zeros():
    for x in ([0.0, 1.0, 2.0, 3.0], [0.0, 0.0, 2.0, 3.0], [2.0, 0.0, 5.0, 0.0, 0.0], [0.0]):
        x = np.array(x)
        n = len(x)
        want_g = [np.prod(np.delete(x, i)) for i in range(n)]
        want_h = [[0.0 if i == j else np.prod(np.delete(x, [i, j])) for j in range(n)] for i in range(n)]
        np.testing.assert_array_equal(fgrad.grad(fnp.prod)(x), want_g)
        np.testing.assert_array_equal(fgrad.hessian(fnp.prod)(x), want_h)
        np.testing.assert_array_equal(fgrad.jacrev(fgrad.grad(fnp.prod))(x), want_h)
    x = np.array([[0.0, 2.0], [3.0, 0.0], [1.0, 4.0]])
    np.testing.assert_array_equal(fgrad.grad(lambda y: fnp.prod(y, axis=0).sum())(x), [[3, 0], [0, 8], [0, 0]])
    np.testing.assert_array_equal(fnp.prod(np.zeros((2, 0)), axis=1), [1.0, 1.0])


def test_functional_updates():
    x = np.arange(12.0).reshape(3, 4)
    y = fnp.at_set(x, (1, slice(None, None, 2)), -1.0)
    want = x.copy()
    want[1, ::2] = -1
    np.testing.assert_array_equal(y, want)
    np.testing.assert_array_equal(x, np.arange(12.0).reshape(3, 4))  # not modified
    g = fgrad.grad(lambda z: fnp.sum(z.at[1].set(5.0) ** 2))(x)
    want = 2 * x
    want[1] = 0
    np.testing.assert_allclose(g, want)
    g = fgrad.grad(lambda v: fnp.sum(fnp.at_set(x, [0, 2, 0], v) * x))(np.array([[1.0], [2.0], [3.0]]))
    np.testing.assert_allclose(g, [[0.0] * 1, [x[2].sum()], [x[0].sum()]])  # last write wins
    np.testing.assert_array_equal(fnp.at_add(np.zeros(3), [0, 0, 2], 1.0), [2.0, 0.0, 1.0])
    f = fgrad.jit(lambda z, i, v: z.at[i].set(v))
    np.testing.assert_array_equal(f(x, np.array([2, 0]), np.ones(4)), fnp.at_set(x, [2, 0], np.ones(4)))


def test_creation_functions_give_constants():
    seen = {}

    def f(x):
        seen["zeros"] = fnp.zeros_like(x)
        seen["full"] = fnp.full_like(x, 3.0, dtype=np.float32)
        seen["traced_full"] = fnp.full_like(x, x[0])
        return x

    fgrad.make_jaxpr(f)(np.ones(3))
    assert type(seen["zeros"]) is fnp.Array and seen["zeros"].dtype == np.float64
    assert type(seen["full"]) is fnp.Array and seen["full"].dtype == np.float32
    assert not isinstance(seen["traced_full"], np.ndarray)
    assert fnp.eye(2, dtype=int).dtype == np.int64 and fnp.zeros(3).dtype == np.float64
    np.testing.assert_array_equal(fnp.arange(5), np.arange(5))
    np.testing.assert_allclose(fnp.linspace(0, 1, 4, retstep=True)[1], 1 / 3)
    np.testing.assert_allclose(fgrad.grad(lambda a: fnp.linspace(a, 2.0, 5).sum())(0.5), 2.5)


def test_shape_function_errors_name_the_shapes():
    with pytest.raises(ValueError, match=r"\(2, 3\).*\(2, 4\)"):
        fnp.concatenate([np.zeros((2, 3)), np.zeros((2, 4))], axis=0)
    with pytest.raises(ValueError, match="same shape"):
        fnp.stack([np.zeros(2), np.zeros(3)])
    with pytest.raises(ValueError, match="equal division"):
        fnp.split(np.zeros(5), 2)
    with pytest.raises(ValueError, match="negative"):
        fnp.pad(np.zeros(3), -1)


def test_split_pad_roll_repeat_match_numpy():
    x = np.arange(30.0).reshape(5, 6)
    for spec in (3, [1, 4], [0, 2, 2, 10], [-2]):
        for got, want in zip(fnp.array_split(x, spec, axis=1), np.array_split(x, spec, axis=1)):
            np.testing.assert_array_equal(got, want)
    for mode in ("constant", "edge", "reflect", "symmetric", "wrap"):
        for width in (0, 1, (3, 5), ((7, 0), (2, 9))):
            np.testing.assert_array_equal(fnp.pad(x, width, mode=mode), np.pad(x, width, mode=mode))
    for shift, axis in ((7, None), (-3, 0), ((1, -8), (0, 1)), (2, (1, 1))):
        np.testing.assert_array_equal(fnp.roll(x, shift, axis), np.roll(x, shift, axis))
    for reps, axis in ((2, None), (0, 1), ([1, 0, 2, 1, 3], 0), (3, -1)):
        np.testing.assert_array_equal(fnp.repeat(x, reps, axis), np.repeat(x, reps, axis))
    for reps in ((2,), (2, 1, 2), 0, (1, 3)):
        np.testing.assert_array_equal(fnp.tile(x, reps), np.tile(x, reps))
    np.testing.assert_array_equal(fnp.concatenate([np.ones(2, np.float32), np.arange(2)]),
                                  np.concatenate([np.ones(2, np.float32), np.arange(2)]))
    assert fnp.concatenate([np.ones(2, np.float32), np.ones(1, np.float32)]).dtype == np.float32
