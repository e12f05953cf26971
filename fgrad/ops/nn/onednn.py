"""oneDNN's CPU convolutions and matrix products through ctypes, when the optional
`onednn-cpu-gomp` wheel is installed (`pip install fgrad[onednn]`): the forward pass, the
input gradient (oneDNN's backward data) and the weight gradient (backward weights) of a 2-D
convolution, float32; cached matmul primitives for the small products that recurrent
layers repeat every time step (`matmul_primitive`, used by fgrad.torch.nn's rnn_scan); and
oneDNN's sgemm for float32 matrix products (`gemm`, used by fgrad.ops.linalg.matmul_2d under
dot_general, linear and addmm).

The wheel ships `libdnnl.so.3` (oneDNN 3.x, the C API of include/oneapi/dnnl/dnnl.h) and no
headers; the enum values below are the C API's (checked against dnnl_types.h of v3.2).
Nothing here knows fgrad's primitives: conv.py decides when to call it (`conv._onednn_layout`),
rnn_scan's loops likewise (`_rnn_ops._times`), linalg.matmul_2d asks `gemm`, and all fall back
to their own paths when a function here returns None.

oneDNN runs its kernels under GNU OpenMP, on one thread unless a count was asked for
(OMP_NUM_THREADS, or threadpoolctl's "openmp" limit set after oneDNN loaded): see
`_Library.threads`.
Environment: FGRAD_ONEDNN=0 keeps fgrad's own kernels; FGRAD_ONEDNN_LIBRARY names a
libdnnl.so.3 to load instead of the wheel's.
"""
from __future__ import annotations

import contextlib
import ctypes
import os
import site
import sys
import threading
import warnings
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np

from ...core.errors import FgradValueError, OneDNNError

# --- the C API's constants (dnnl_types.h, dnnl_common_types.h, oneDNN 3.x) ---------------------
_SUCCESS = 0
_STATUS = {1: "out of memory", 2: "invalid arguments", 3: "unimplemented", 4: "last implementation reached",
           5: "runtime error", 6: "not required"}
_CPU_ENGINE = 1                       # dnnl_cpu
_STREAM_DEFAULT = 1                   # dnnl_stream_default_flags (in order)
_F32 = 3                              # dnnl_f32 (dnnl_f64 = 7 has no CPU convolution)
_TAG_ANY, _TAG_A, _TAG_ABCD, _TAG_ABCDE = 1, 2, 5, 6
_FORWARD_TRAINING = 64
_CONV_DIRECT = 1
_QUERY_SRC, _QUERY_DIFF_SRC, _QUERY_WEIGHTS, _QUERY_DIFF_WEIGHTS, _QUERY_DST, _QUERY_DIFF_DST = (
    129, 130, 131, 132, 133, 134)
_QUERY_SCRATCHPAD = 136
_ARG_SRC, _ARG_DST, _ARG_WEIGHTS, _ARG_BIAS = 1, 17, 33, 41
_ARG_SCRATCHPAD = 80
_ARG_DIFF_SRC, _ARG_DIFF_DST, _ARG_DIFF_WEIGHTS = 129, 145, 161
_ARG_FROM, _ARG_TO = 1, 17            # a reorder's source and destination (SRC, DST)
_SCRATCHPAD_USER = 1
_MAX_NDIMS = 12

_DTYPES = {np.dtype(np.float32): _F32}

_Dims = ctypes.c_int64 * _MAX_NDIMS
_p = ctypes.c_void_p


class _ExecArg(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_int), ("memory", ctypes.c_void_p)]


# --- loading ----------------------------------------------------------------------------------

def _candidates() -> list[str]:
    """Where the wheel puts the library: `<prefix>/lib` of the environment (its data files go
    there; the user base's for `pip install --user`), after FGRAD_ONEDNN_LIBRARY when set (a
    libdnnl.so.3 elsewhere)."""
    paths = []
    env = os.environ.get("FGRAD_ONEDNN_LIBRARY")
    if env:
        paths.append(env)
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, site.getuserbase())):
        paths.append(os.path.join(prefix, "lib", "libdnnl.so.3"))
    return paths


class _Library:
    """The loaded library, its CPU engine and one stream per thread."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path)
        self.lib = lib
        lib.dnnl_version.restype = ctypes.POINTER(ctypes.c_int * 3)
        major, minor, patch = lib.dnnl_version().contents
        if major != 3:
            raise OSError(f"{path} is oneDNN {major}.{minor}.{patch}; fgrad's binding needs oneDNN 3.x")
        self.version = (major, minor, patch)
        pp, i, d = ctypes.POINTER(_p), ctypes.c_int, ctypes.POINTER(ctypes.c_int64)
        signatures = {  # name: (argument types, result type); handles are void pointers
            "dnnl_engine_create": ([pp, i, ctypes.c_size_t], i),
            "dnnl_stream_create": ([pp, _p, ctypes.c_uint], i),
            "dnnl_memory_desc_create_with_tag": ([pp, i, d, i, i], i),
            "dnnl_memory_desc_destroy": ([_p], i),
            "dnnl_memory_desc_equal": ([_p, _p], i),
            "dnnl_memory_desc_get_size": ([_p], ctypes.c_size_t),
            "dnnl_memory_create": ([pp, _p, _p, _p], i),
            "dnnl_memory_set_data_handle": ([_p, _p], i),
            "dnnl_memory_destroy": ([_p], i),
            "dnnl_primitive_desc_query_md": ([_p, i, i], _p),
            "dnnl_primitive_desc_destroy": ([_p], i),
            "dnnl_primitive_create": ([pp, _p], i),
            "dnnl_primitive_execute": ([_p, _p, i, _p], i),
            "dnnl_primitive_destroy": ([_p], i),
            "dnnl_primitive_attr_create": ([pp], i),
            "dnnl_primitive_attr_destroy": ([_p], i),
            "dnnl_primitive_attr_set_scratchpad_mode": ([_p, i], i),
            "dnnl_convolution_forward_primitive_desc_create":
                ([pp, _p, i, i, _p, _p, _p, _p, d, d, d, d, _p], i),
            "dnnl_convolution_backward_data_primitive_desc_create":
                ([pp, _p, i, _p, _p, _p, d, d, d, d, _p, _p], i),
            "dnnl_convolution_backward_weights_primitive_desc_create":
                ([pp, _p, i, _p, _p, _p, _p, d, d, d, d, _p, _p], i),
            "dnnl_reorder_primitive_desc_create": ([pp, _p, _p, _p, _p, _p], i),
        }
        for name, (argtypes, restype) in signatures.items():
            f = getattr(lib, name)  # AttributeError names a missing symbol (a foreign library)
            f.argtypes, f.restype = argtypes, restype
        self.engine = _p()
        self.check(lib.dnnl_engine_create(ctypes.byref(self.engine), _CPU_ENGINE, 0),
                   "dnnl_engine_create")
        self._streams = threading.local()
        self._threads_setup()
        # user scratchpad: one attribute for every primitive, so that no primitive keeps a
        # buffer of its own; the buffers are fgrad's (per call)
        self.attr = _p()
        self.check(lib.dnnl_primitive_attr_create(ctypes.byref(self.attr)), "dnnl_primitive_attr_create")
        self.check(lib.dnnl_primitive_attr_set_scratchpad_mode(self.attr, _SCRATCHPAD_USER),
                   "dnnl_primitive_attr_set_scratchpad_mode")

    def _threads_setup(self) -> None:
        """The OpenMP runtime oneDNN runs on (the system's libgomp, already loaded with it),
        and its thread count before anyone changed it."""
        try:
            gomp = ctypes.CDLL("libgomp.so.1")
            gomp.omp_get_max_threads.restype = ctypes.c_int
            gomp.omp_set_num_threads.argtypes = [ctypes.c_int]
            self.gomp = gomp
            self.default_threads = gomp.omp_get_max_threads()
        except (OSError, AttributeError):
            self.gomp = None  # another OpenMP runtime: its own setting applies

    def threads(self) -> tuple[int, int]:
        """(OpenMP's thread count on this thread now, the count oneDNN runs with).

        One thread unless one was asked for: OMP_NUM_THREADS in the environment, or a count
        set since oneDNN loaded (threadpoolctl's "openmp" limit, omp_set_num_threads). On a
        machine shared with other work, OpenMP's default of one thread per core makes every
        barrier wait for a descheduled thread, which costs more than the second core gains."""
        if self.gomp is None:
            return 0, 0
        now = self.gomp.omp_get_max_threads()
        if "OMP_NUM_THREADS" in os.environ or now != self.default_threads:
            return now, now
        return now, 1

    @staticmethod
    def check(status: int, what: str) -> None:
        if status != _SUCCESS:
            raise OneDNNError(f"oneDNN: {what} failed with status {status} "
                              f"({_STATUS.get(status, 'unknown')})")

    def stream(self) -> ctypes.c_void_p:
        s = getattr(self._streams, "s", None)
        if s is None:
            s = _p()
            self.check(self.lib.dnnl_stream_create(ctypes.byref(s), self.engine, _STREAM_DEFAULT),
                       "dnnl_stream_create")
            self._streams.s = s
        return s


_lib_state: dict = {}
_lib_lock = threading.Lock()


def library() -> _Library | None:
    """The loaded oneDNN library, or None when it is not installed or failed to load (then
    once per process a RuntimeWarning names the reason, and fgrad keeps its own kernels)."""
    if "lib" in _lib_state:
        return _lib_state["lib"]
    with _lib_lock:
        if "lib" not in _lib_state:
            _lib_state["lib"] = _load()
    return _lib_state["lib"]


def _load() -> _Library | None:
    if os.environ.get("FGRAD_ONEDNN", "1") == "0":
        return None
    for path in _candidates():
        if not os.path.exists(path):
            continue
        try:
            return _Library(path)
        except (OSError, AttributeError, OneDNNError) as e:
            _lib_state["error"] = f"{path}: {e}"
            warnings.warn(f"fgrad: oneDNN at {path} could not be loaded ({e}); convolutions use "
                          "fgrad's own kernels (set FGRAD_ONEDNN=0 to skip oneDNN)",
                          RuntimeWarning, stacklevel=3)
            return None
    return None


def available() -> bool:
    """Whether oneDNN's convolutions can be used in this process.

    Returns:
        True when `libdnnl.so.3` (oneDNN 3.x) is installed and loaded.
    """
    return library() is not None


def load_error() -> str | None:
    """Why an installed oneDNN could not be loaded (None when it loaded or is absent).

    Returns:
        The path and the loader's message, or None.
    """
    library()
    return _lib_state.get("error")


def supports_dtype(dtype: np.dtype) -> bool:
    """Whether the binding runs convolutions of `dtype` (oneDNN's CPU kernels are float32,
    bfloat16, float16 and integers; it has no float64 convolution on CPU).

    Args:
        dtype: a NumPy dtype.

    Returns:
        True for float32.
    """
    return np.dtype(dtype) in _DTYPES


# --- memory descriptors and cached primitives -------------------------------------------------

class _Desc:
    """A memory descriptor owned here (destroyed with the object)."""

    def __init__(self, lib: _Library, dims: Sequence[int], dt: int, tag: int) -> None:
        self.lib = lib
        self.md = _p()
        d = _Dims(*dims)
        lib.check(lib.lib.dnnl_memory_desc_create_with_tag(ctypes.byref(self.md), len(dims), d, dt, tag),
                  "dnnl_memory_desc_create_with_tag")

    def __del__(self) -> None:
        if self.md:
            self.lib.lib.dnnl_memory_desc_destroy(self.md)
            self.md = None


class _Memory:
    """A memory object over a buffer that changes per call (its handle is set before each
    execution)."""

    def __init__(self, lib: _Library, md) -> None:
        self.lib = lib
        self.mem = _p()
        lib.check(lib.lib.dnnl_memory_create(ctypes.byref(self.mem), md, lib.engine, None),
                  "dnnl_memory_create")
        self.nbytes = lib.lib.dnnl_memory_desc_get_size(md)

    def bind(self, address: int) -> None:
        self.lib.lib.dnnl_memory_set_data_handle(self.mem, address)

    def __del__(self) -> None:
        if self.mem:
            self.lib.lib.dnnl_memory_destroy(self.mem)
            self.mem = None


class _Primitive:
    """A primitive, its descriptor, and a memory object per argument."""

    def __init__(self, lib: _Library, pd) -> None:
        self.lib, self.pd = lib, pd
        self.prim = _p()
        lib.check(lib.lib.dnnl_primitive_create(ctypes.byref(self.prim), pd), "dnnl_primitive_create")

    def md(self, query: int):
        return self.lib.lib.dnnl_primitive_desc_query_md(self.pd, query, 0)

    @staticmethod
    def arguments(args: Sequence[tuple[int, _Memory]]):
        """The C array of (argument, memory) pairs for `run` (built once per primitive)."""
        return (_ExecArg * len(args))(*[_ExecArg(a, m.mem) for a, m in args])

    def run(self, args) -> None:
        """Execute on this thread's stream; `args` from `arguments` (or the pairs themselves)."""
        if not isinstance(args, ctypes.Array):
            args = self.arguments(args)
        self.lib.check(self.lib.lib.dnnl_primitive_execute(self.prim, self.lib.stream(), len(args), args),
                       "dnnl_primitive_execute")

    def __del__(self) -> None:
        if self.prim:
            self.lib.lib.dnnl_primitive_destroy(self.prim)
            self.prim = None
        if self.pd:
            self.lib.lib.dnnl_primitive_desc_destroy(self.pd)
            self.pd = None


class _PD:
    """A primitive descriptor kept alive (a backward descriptor's forward hint)."""

    def __init__(self, lib: _Library, pd) -> None:
        self.lib, self.pd = lib, pd

    def __del__(self) -> None:
        if self.pd:
            self.lib.lib.dnnl_primitive_desc_destroy(self.pd)
            self.pd = None


# The layouts a primitive computes in. "plain": oneDNN reads and writes fgrad's NCHW / OIHW
# arrays directly (it then runs its im2col + GEMM kernels); "any": oneDNN picks its blocked
# layouts (channels in blocks of 16, for its direct convolutions) and fgrad's arrays are
# reordered into and out of them around the call.
LAYOUTS = ("plain", "any")


class _Conv:
    """One convolution primitive (forward, backward data or backward weights) for one
    geometry, with the reorders between fgrad's plain arrays and the layouts it chose."""

    def __init__(self, lib: _Library, kind: str, x_shape: tuple, w_shape: tuple, y_shape: tuple,
                 dt: int, stride: tuple, padding: tuple, dilation: tuple, groups: int, bias: bool,
                 layout: str) -> None:
        self.lib = lib
        self.kind = kind
        O, Cg, kh, kw = w_shape
        w_dims = (groups, O // groups, Cg, kh, kw) if groups > 1 else w_shape
        w_tag = _TAG_ABCDE if groups > 1 else _TAG_ABCD
        plain = {"x": _Desc(lib, x_shape, dt, _TAG_ABCD), "w": _Desc(lib, w_dims, dt, w_tag),
                 "y": _Desc(lib, y_shape, dt, _TAG_ABCD)}
        if layout == "any":
            chosen = {"x": _Desc(lib, x_shape, dt, _TAG_ANY), "w": _Desc(lib, w_dims, dt, _TAG_ANY),
                      "y": _Desc(lib, y_shape, dt, _TAG_ANY)}
        else:
            chosen = plain
        b = _Desc(lib, (O,), dt, _TAG_A) if bias else None
        geom = (_Dims(*stride), _Dims(*(d - 1 for d in dilation)),
                _Dims(*(p[0] for p in padding)), _Dims(*(p[1] for p in padding)))
        C = lib.lib
        fwd = _p()
        lib.check(C.dnnl_convolution_forward_primitive_desc_create(
            ctypes.byref(fwd), lib.engine, _FORWARD_TRAINING, _CONV_DIRECT, chosen["x"].md,
            chosen["w"].md, b.md if b is not None else None, chosen["y"].md, *geom, lib.attr),
            "dnnl_convolution_forward_primitive_desc_create")
        # a backward descriptor keeps a pointer to its forward hint: the hint lives as long
        self._hint = None if kind == "forward" else _PD(lib, fwd)
        if kind == "forward":
            pd = fwd
            roles = [("x", _ARG_SRC, _QUERY_SRC, True), ("w", _ARG_WEIGHTS, _QUERY_WEIGHTS, True),
                     ("y", _ARG_DST, _QUERY_DST, False)]
        elif kind == "backward_data":
            pd = _p()
            lib.check(C.dnnl_convolution_backward_data_primitive_desc_create(
                ctypes.byref(pd), lib.engine, _CONV_DIRECT, chosen["x"].md, chosen["w"].md,
                chosen["y"].md, *geom, fwd, lib.attr), "dnnl_convolution_backward_data_primitive_desc_create")
            roles = [("y", _ARG_DIFF_DST, _QUERY_DIFF_DST, True), ("w", _ARG_WEIGHTS, _QUERY_WEIGHTS, True),
                     ("x", _ARG_DIFF_SRC, _QUERY_DIFF_SRC, False)]
        else:
            pd = _p()
            lib.check(C.dnnl_convolution_backward_weights_primitive_desc_create(
                ctypes.byref(pd), lib.engine, _CONV_DIRECT, chosen["x"].md, chosen["w"].md, None,
                chosen["y"].md, *geom, fwd, lib.attr), "dnnl_convolution_backward_weights_primitive_desc_create")
            roles = [("x", _ARG_SRC, _QUERY_SRC, True), ("y", _ARG_DIFF_DST, _QUERY_DIFF_DST, True),
                     ("w", _ARG_DIFF_WEIGHTS, _QUERY_DIFF_WEIGHTS, False)]
        self.prim = _Primitive(lib, pd)
        # per argument: the user's memory (fgrad's array), and when the primitive's layout
        # differs, a reorder and a work buffer in the primitive's layout
        self.user: dict[str, _Memory] = {}
        self.steps_in: list = []
        self.steps_out: list = []
        self.work: list[np.ndarray] = []
        self.args: list[tuple[int, _Memory]] = []
        for name, arg, query, is_input in roles:
            md = self.prim.md(query)
            user = _Memory(lib, plain[name].md)
            self.user[name] = user
            if C.dnnl_memory_desc_equal(md, plain[name].md):
                self.args.append((arg, user))
                continue
            inner = _Memory(lib, md)
            buf = np.empty(max(inner.nbytes, 1), np.uint8)
            inner.bind(buf.ctypes.data)
            self.work.append(buf)
            src, dst = (plain[name].md, md) if is_input else (md, plain[name].md)
            rpd = _p()
            lib.check(C.dnnl_reorder_primitive_desc_create(ctypes.byref(rpd), src, lib.engine, dst,
                                                           lib.engine, lib.attr),
                      "dnnl_reorder_primitive_desc_create")
            reorder = _Primitive(lib, rpd)
            pair = (user, inner) if is_input else (inner, user)
            rargs = [(_ARG_FROM, pair[0]), (_ARG_TO, pair[1])]
            rscratch = _scratch_memory(lib, reorder)
            if rscratch is not None:
                rargs.append((_ARG_SCRATCHPAD, rscratch[0]))
                self.work.append(rscratch[1])
            (self.steps_in if is_input else self.steps_out).append((reorder, reorder.arguments(rargs), rargs))
            self.args.append((arg, inner))
        if bias:
            self.user["b"] = _Memory(lib, b.md)
            self.args.append((_ARG_BIAS, self.user["b"]))
        scratch = _scratch_memory(lib, self.prim)
        if scratch is not None:
            self.args.append((_ARG_SCRATCHPAD, scratch[0]))
            self.work.append(scratch[1])
        self.c_args = self.prim.arguments(self.args)

    def __call__(self, arrays: dict[str, np.ndarray]) -> None:
        """Compute with fgrad's arrays (C-contiguous, the primitive's dtype): the inputs and
        the output to write, by role ("x", "w", "y", "b")."""
        for name, a in arrays.items():
            self.user[name].bind(a.ctypes.data)
        for reorder, c_args, _ in self.steps_in:
            reorder.run(c_args)
        self.prim.run(self.c_args)
        for reorder, c_args, _ in self.steps_out:
            reorder.run(c_args)


def _scratch_memory(lib: _Library, prim: _Primitive):
    """The primitive's scratchpad (a memory over a NumPy buffer), or None when it needs none."""
    md = prim.md(_QUERY_SCRATCHPAD)
    if not md or lib.lib.dnnl_memory_desc_get_size(md) == 0:
        return None
    mem = _Memory(lib, md)
    buf = np.empty(mem.nbytes, np.uint8)
    mem.bind(buf.ctypes.data)
    return mem, buf


class _Cache(threading.local):
    """Primitives per geometry, per thread (a primitive's memory objects carry the buffers of
    the call in flight), least recently used dropped first."""

    def __init__(self, max_items: int = 32) -> None:
        self.max_items = max_items
        self.entries: OrderedDict = OrderedDict()


_cache = _Cache()
_UNSUPPORTED = object()


def _primitive(kind: str, x_shape, w_shape, y_shape, dtype, stride, padding, dilation, groups,
               bias: bool, layout: str) -> _Conv | None:
    if layout not in LAYOUTS:
        raise FgradValueError(f"oneDNN convolution: layout must be one of {LAYOUTS}, got {layout!r}")
    lib = library()
    if lib is None or np.dtype(dtype) not in _DTYPES:
        return None
    # a primitive is built for a thread count (its kernels split the work when created, and
    # run that many threads), so the count is part of the key
    key = (kind, x_shape, w_shape, y_shape, np.dtype(dtype).str, stride, padding, dilation, groups,
           bias, layout, lib.threads()[1])
    return _cached(key, lambda: _Conv(lib, kind, x_shape, w_shape, y_shape, _DTYPES[np.dtype(dtype)],
                                      stride, padding, dilation, groups, bias, layout))


def _cached(key, build):
    """The primitive cached under `key`, built by `build()` (with oneDNN's thread count set)
    the first time; None where oneDNN has no implementation for it (the same answer every
    time: a function of the shapes, the library and the CPU), so fgrad's own kernels take it."""
    entries = _cache.entries
    prim = entries.get(key)
    if prim is None:
        try:
            with _openmp_threads(library()):
                prim = build()
        except OneDNNError:
            prim = _UNSUPPORTED
        entries[key] = prim
        while len(entries) > _cache.max_items:
            entries.popitem(last=False)
    else:
        entries.move_to_end(key)
    return None if prim is _UNSUPPORTED else prim


@contextlib.contextmanager
def _openmp_threads(lib: _Library):
    """OpenMP's thread count set to the one oneDNN runs with (`_Library.threads`) on this
    thread while oneDNN builds or runs a primitive, then put back."""
    now, n = lib.threads()
    if n == now:
        yield
        return
    lib.gomp.omp_set_num_threads(n)
    try:
        yield
    finally:
        lib.gomp.omp_set_num_threads(now)


def _execute(conv: _Conv, arrays: dict[str, np.ndarray], key_kind: str) -> bool:
    """Run a cached primitive; False (after one RuntimeWarning per process) when oneDNN
    reports a failure, so that the caller computes the product with fgrad's kernels."""
    try:
        with _openmp_threads(conv.lib):
            conv(arrays)
        return True
    except OneDNNError as e:
        for key, value in _cache.entries.items():
            if value is conv:
                _cache.entries[key] = _UNSUPPORTED
                break
        if not _lib_state.get("warned_execute"):
            _lib_state["warned_execute"] = True
            warnings.warn(f"fgrad: oneDNN's convolution ({key_kind}) failed ({e}); fgrad's own kernels "
                          "compute it", RuntimeWarning, stacklevel=4)
        return False


def _c(a: np.ndarray) -> np.ndarray:
    return a if a.flags.c_contiguous and a.flags.aligned else np.ascontiguousarray(a)


def conv_forward(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, stride: tuple[int, int],
                 padding: tuple[tuple[int, int], tuple[int, int]], dilation: tuple[int, int],
                 groups: int, out_hw: tuple[int, int], layout: str = "any") -> np.ndarray | None:
    """conv2d (a cross-correlation, PyTorch's layouts) by oneDNN's forward convolution.

    Args:
        x: input [N, C, H, W].
        w: kernels [O, C/groups, kh, kw], same dtype as x.
        b: bias [O] or None.
        stride, padding, dilation, groups: as conv.conv2d's (padding as (lo, hi) pairs).
        out_hw: the output's spatial size.
        layout: "any" (oneDNN's blocked layouts, reordered around the call) or "plain".

    Returns:
        The output [N, O, *out_hw], or None when oneDNN is unavailable or has no kernel for
        this geometry and dtype (the caller computes it another way).
    """
    y_shape = (x.shape[0], w.shape[0]) + tuple(out_hw)
    conv = _primitive("forward", x.shape, w.shape, y_shape, x.dtype, stride, padding, dilation, groups,
                      b is not None, layout)
    if conv is None:
        return None
    out = np.empty(y_shape, x.dtype)
    arrays = {"x": _c(x), "w": _c(w), "y": out}
    if b is not None:
        arrays["b"] = _c(b)
    return out if _execute(conv, arrays, "forward") else None


def conv_backward_data(g: np.ndarray, w: np.ndarray, x_hw: tuple[int, int], stride: tuple[int, int],
                       padding: tuple[tuple[int, int], tuple[int, int]], dilation: tuple[int, int],
                       groups: int, layout: str = "any") -> np.ndarray | None:
    """conv2d's input gradient (the transposed convolution of g) by oneDNN's backward data.

    Args:
        g: cotangent [N, O, Ho, Wo].
        w: kernels [O, C/groups, kh, kw].
        x_hw: the input's spatial size.
        stride, padding, dilation, groups: the forward convolution's.
        layout: as conv_forward's.

    Returns:
        The input gradient [N, C, *x_hw], or None (as conv_forward).
    """
    x_shape = (g.shape[0], w.shape[1] * groups) + tuple(x_hw)
    conv = _primitive("backward_data", x_shape, w.shape, g.shape, g.dtype, stride, padding, dilation,
                      groups, False, layout)
    if conv is None:
        return None
    out = np.empty(x_shape, g.dtype)
    return out if _execute(conv, {"y": _c(g), "w": _c(w), "x": out}, "input gradient") else None


def conv_backward_weights(x: np.ndarray, g: np.ndarray, k_hw: tuple[int, int], stride: tuple[int, int],
                          padding: tuple[tuple[int, int], tuple[int, int]], dilation: tuple[int, int],
                          groups: int, layout: str = "any") -> np.ndarray | None:
    """conv2d's weight gradient by oneDNN's backward weights.

    Args:
        x: input [N, C, H, W].
        g: cotangent [N, O, Ho, Wo].
        k_hw: the kernels' spatial size.
        stride, padding, dilation, groups: the forward convolution's.
        layout: as conv_forward's.

    Returns:
        The weight gradient [O, C/groups, *k_hw], or None (as conv_forward).
    """
    w_shape = (g.shape[1], x.shape[1] // groups) + tuple(k_hw)
    conv = _primitive("backward_weights", x.shape, w_shape, g.shape, x.dtype, stride, padding, dilation,
                      groups, False, layout)
    if conv is None:
        return None
    out = np.empty(w_shape, x.dtype)
    return out if _execute(conv, {"x": _c(x), "y": _c(g), "w": out}, "weight gradient") else None


# --- matrix products (the recurrent GEMMs of rnn_scan) ----------------------------------------
# A small product such as an LSTM step's [20, 256] x [256, 1024] is called T times per layer
# with the same shapes: the primitive is built once per geometry, its argument array once,
# and each call only swaps the three data handles. The caller decides from shapes, dtype and
# availability alone (never from timings), so every run of a program takes the same kernel.

_MATMUL_SIGNATURES_SET: dict = {}


def _matmul_symbols(lib: _Library) -> None:
    """Declare the C functions the products use (once per library)."""
    if _MATMUL_SIGNATURES_SET.get(id(lib)):
        return
    pp, i, d = ctypes.POINTER(_p), ctypes.c_int, ctypes.POINTER(ctypes.c_int64)
    C = lib.lib
    C.dnnl_memory_desc_create_with_strides.argtypes = [pp, i, d, i, d]
    C.dnnl_memory_desc_create_with_strides.restype = i
    C.dnnl_matmul_primitive_desc_create.argtypes = [pp, _p, _p, _p, _p, _p, _p]
    C.dnnl_matmul_primitive_desc_create.restype = i
    _MATMUL_SIGNATURES_SET[id(lib)] = True


class _StridedDesc(_Desc):
    """A 2-D memory descriptor with explicit strides in elements (a transposed view, or rows
    of a wider array)."""

    def __init__(self, lib: _Library, dims: Sequence[int], dt: int, strides: Sequence[int]) -> None:
        self.lib = lib
        self.md = _p()
        lib.check(lib.lib.dnnl_memory_desc_create_with_strides(
            ctypes.byref(self.md), len(dims), _Dims(*dims), dt, _Dims(*strides)),
            "dnnl_memory_desc_create_with_strides")


class Matmul:
    """out[M, N] = a[M, K] @ b[K, N] by oneDNN's matmul primitive for one geometry: shapes,
    and strides in elements (so b may be a transposed view and out rows of a wider array).
    Use `matmul_primitive` to get one (cached), and run it inside `running()`.

    b is set once (`set_b`) and then multiplied by many a's: with `packed`, oneDNN chooses
    b's layout (blocks that its small-M kernels read faster) and `set_b` reorders b into a
    buffer of the primitive; otherwise the primitive reads b where it is."""

    def __init__(self, lib: _Library, M: int, K: int, N: int, dt: int, a_strides: tuple,
                 b_strides: tuple, out_strides: tuple, packed: bool) -> None:
        _matmul_symbols(lib)
        self.lib = lib
        self.shapes = ((M, K), (K, N), (M, N))
        self.strides = (a_strides, b_strides, out_strides)
        descs = [_StridedDesc(lib, dims, dt, st) for dims, st in zip(self.shapes, self.strides)]
        b_desc = _Desc(lib, (K, N), dt, _TAG_ANY) if packed else descs[1]
        pd = _p()
        lib.check(lib.lib.dnnl_matmul_primitive_desc_create(
            ctypes.byref(pd), lib.engine, descs[0].md, b_desc.md, None, descs[2].md, lib.attr),
            "dnnl_matmul_primitive_desc_create")
        self.prim = _Primitive(lib, pd)
        self.mems = [_Memory(lib, desc.md) for desc in descs]
        self.work: list = []
        self._reorder = None
        b_mem = self.mems[1]
        md = self.prim.md(_QUERY_WEIGHTS)
        if not lib.lib.dnnl_memory_desc_equal(md, descs[1].md):
            # the chosen layout differs from b's: a buffer in it, filled by a reorder
            b_mem = _Memory(lib, md)
            buf = np.empty(max(b_mem.nbytes, 1), np.uint8)
            b_mem.bind(buf.ctypes.data)
            self.work += [b_mem, buf]
            rpd = _p()
            lib.check(lib.lib.dnnl_reorder_primitive_desc_create(
                ctypes.byref(rpd), descs[1].md, lib.engine, md, lib.engine, lib.attr),
                "dnnl_reorder_primitive_desc_create")
            reorder = _Primitive(lib, rpd)
            rargs = [(_ARG_FROM, self.mems[1]), (_ARG_TO, b_mem)]
            rscratch = _scratch_memory(lib, reorder)
            if rscratch is not None:
                rargs.append((_ARG_SCRATCHPAD, rscratch[0]))
                self.work.extend(rscratch)
            self._reorder = (reorder, reorder.arguments(rargs))
        args = [(_ARG_SRC, self.mems[0]), (_ARG_WEIGHTS, b_mem), (_ARG_DST, self.mems[2])]
        scratch = _scratch_memory(lib, self.prim)
        if scratch is not None:
            args.append((_ARG_SCRATCHPAD, scratch[0]))
            self.work.extend(scratch)  # the memory object too: c_args holds only its handle
        self.c_args = self.prim.arguments(args)
        self.n_args = len(args)
        self.b_owner: object = None  # who set b last (a primitive is shared by its geometry)
        # bound once: the per-call path is two handle swaps and one execution
        self._set = lib.lib.dnnl_memory_set_data_handle
        self._exec = lib.lib.dnnl_primitive_execute
        self._a, self._out = self.mems[0].mem, self.mems[2].mem
        self._prim = self.prim.prim

    def fits(self, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> bool:
        """Whether the arrays have this primitive's shapes and strides."""
        return (a.shape, b.shape, out.shape) == self.shapes and (
            _elem_strides(a), _elem_strides(b), _elem_strides(out)) == self.strides

    def set_b(self, b: np.ndarray, owner: object = None) -> None:
        """Use b (this primitive's shape and strides) for the products that follow; packed,
        b is copied into the primitive's layout now, so later changes to b are not seen.
        `owner` is recorded in `b_owner` (so that a caller sharing the primitive can tell
        whether b is still its own)."""
        self.mems[1].bind(b.ctypes.data)
        if self._reorder is not None:
            reorder, c_args = self._reorder
            reorder.run(c_args)
        self.b_owner = owner

    def __call__(self, a_ptr: int, out_ptr: int) -> None:
        """Compute out = a @ b from the data addresses (`arr.ctypes.data`) of a and out,
        which must have the shapes and strides this primitive was built for (see `fits`),
        with the b of the last `set_b`."""
        s = self._set
        s(self._a, a_ptr)
        s(self._out, out_ptr)
        status = self._exec(self._prim, self.lib.stream(), self.n_args, self.c_args)
        if status != _SUCCESS:
            self.lib.check(status, "dnnl_primitive_execute (matmul)")


def _elem_strides(a: np.ndarray) -> tuple:
    return tuple(s // a.itemsize for s in a.strides)


def matmul_primitive(a: np.ndarray, b: np.ndarray, out: np.ndarray, packed: bool = False) -> Matmul | None:
    """The cached matmul primitive for out = a @ b with these arrays' shapes, strides and
    dtype (b in oneDNN's layout when `packed`: for many products with one b), or None when
    oneDNN is unavailable, the dtype is not float32, a stride is not a whole number of elements or not positive, or oneDNN has no kernel for the geometry (the
    caller then multiplies with NumPy). The answer depends on those alone.

    Args:
        a: [M, K]; b: [K, N] (a transposed view is fine); out: [M, N] to write.
        packed: let oneDNN choose b's layout (`Matmul.set_b` then reorders b into it).

    Returns:
        A `Matmul`, or None.
    """
    lib = library()
    if (lib is None or a.ndim != 2 or b.ndim != 2 or out.ndim != 2 or a.shape[1] != b.shape[0]
            or out.shape != (a.shape[0], b.shape[1]) or not (a.dtype == b.dtype == out.dtype)
            or a.dtype not in _DTYPES or 0 in a.shape or 0 in b.shape):
        return None
    if any(s % x.itemsize or s <= 0 for x in (a, b, out) for s in x.strides):
        return None
    if not (a.flags.aligned and b.flags.aligned and out.flags.aligned):
        return None
    M, K = a.shape
    N = b.shape[1]
    strides = (_elem_strides(a), _elem_strides(b), _elem_strides(out))
    key = ("matmul", M, K, N, a.dtype.str, strides, bool(packed), lib.threads()[1])
    return _cached(key, lambda: Matmul(lib, M, K, N, _DTYPES[a.dtype], *strides, packed=bool(packed)))


@contextlib.contextmanager
def running():
    """OpenMP's thread count set for oneDNN (see `_Library.threads`) around a loop of
    `Matmul` calls, once for the whole loop rather than per call; a no-op without oneDNN."""
    lib = library()
    if lib is None:
        yield
        return
    with _openmp_threads(lib):
        yield


# --- GEMM (dnnl_sgemm: the products of dot_general, linear and addmm) ----------------------------
# oneDNN's own single-precision GEMM (its JIT AVX-512/AVX2 kernels, the "gemm:jit" of its inner
# product), called like BLAS: row-major, a transposed operand as a trans flag. Its kernels keep
# closer to the core's peak than OpenBLAS's on a training step's shapes (MKL's, which PyTorch
# calls, do too), and most so on thin products. Chosen by shapes, dtype, the library and the
# thread configuration alone, never by timings:
#   - float32, 2-D operands, each either row-major or a transposed view (unit stride in one
#     axis: what BLAS takes without a copy);
#   - at least GEMM_MIN_MACS multiply-adds, or GEMM_MIN_MACS_THIN for a thin product (a
#     dimension of at most THIN_DIM, where OpenBLAS's kernels are at their weakest): a call
#     costs more than NumPy's before any arithmetic (ctypes, oneDNN's own dispatch), which
#     its faster kernels repay only on products this large;
#   - oneDNN runs as many threads as NumPy's BLAS does (`_Library.threads` against the
#     count of every BLAS library threadpoolctl finds when first asked), so that the
#     choice never trades a multi-threaded OpenBLAS product for a one-threaded one. By
#     default oneDNN runs one thread and OpenBLAS one per core: on a machine with several
#     cores the products stay OpenBLAS's unless a thread count is set (OMP_NUM_THREADS,
#     torch.set_num_threads, threadpoolctl's limits).
# For fixed inputs, library, CPU and thread count the bits are the same on every call; they
# differ from OpenBLAS's at rounding level (another summation order).

GEMM_MIN_MACS = 1 << 22
GEMM_MIN_MACS_THIN = 1 << 20
THIN_DIM = 32

_gemm_state: dict = {}


def _gemm_symbol(lib: _Library):
    f = _gemm_state.get("sgemm")
    if f is None or _gemm_state.get("lib") is not lib:
        i64, fl, p = ctypes.c_int64, ctypes.c_float, ctypes.c_void_p
        f = lib.lib.dnnl_sgemm
        f.argtypes = [ctypes.c_char, ctypes.c_char, i64, i64, i64, fl, p, i64, p, i64, fl, p, i64]
        f.restype = ctypes.c_int
        _gemm_state["sgemm"], _gemm_state["lib"] = f, lib
    return f


def _blas_thread_getters() -> list:
    """A function per BLAS library loaded now (NumPy's among them, as threadpoolctl finds them)
    giving its thread count, looked up once per process: OpenBLAS's own C getter where
    threadpoolctl names it (a direct call), else threadpoolctl's method."""
    getters = _gemm_state.get("blas")
    if getters is None:
        getters = []
        try:
            # (here: only products that may run oneDNN's GEMM need it, and `import fgrad` stays without it)
            from threadpoolctl import ThreadpoolController
            controllers = ThreadpoolController().select(user_api="blas").lib_controllers
        except Exception:  # noqa: BLE001 - threadpoolctl could not inspect this process
            controllers = []
        for c in controllers:
            name = (f"{getattr(c, '_symbol_prefix', '')}openblas_get_num_threads"
                    f"{getattr(c, '_symbol_suffix', '')}")
            f = getattr(c.dynlib, name, None) if getattr(c, "internal_api", "") == "openblas" else None
            if f is not None:
                f.argtypes, f.restype = [], ctypes.c_int
            getters.append(f if f is not None else c.get_num_threads)
        _gemm_state["blas"] = getters
    return getters


def _same_threads(n: int) -> bool:
    """Whether every BLAS library threadpoolctl found runs `n` threads (False when it found
    none: then nothing says what NumPy's products would run on)."""
    getters = _blas_thread_getters()
    if not getters:
        return False
    for get in getters:
        if get() != n:
            return False
    return True


def _blas_operand(x: np.ndarray) -> tuple[bytes, int] | None:
    """(trans flag, leading dimension) of a 2-D operand BLAS reads in place: row-major rows
    ("N") or a transposed view of row-major rows ("T"); None for any other layout."""
    rows, cols = x.shape
    s0, s1 = (s // x.itemsize for s in x.strides)
    if (s1 == 1 or cols == 1) and (rows == 1 or s0 >= cols):
        return b"N", max(s0 if rows > 1 else cols, cols, 1)
    if (s0 == 1 or rows == 1) and (cols == 1 or s1 >= rows):
        return b"T", max(s1 if cols > 1 else rows, rows, 1)
    return None


def _gemm_plan(a, b) -> tuple | None:
    """(library, (trans, ld) of a, (trans, ld) of b, (OpenMP's thread count now, oneDNN's))
    where oneDNN's GEMM takes a @ b, else None."""
    if not (type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 and b.ndim == 2
            and a.dtype == b.dtype and a.dtype == np.float32 and a.shape[1] == b.shape[0]):
        return None
    M, K = a.shape
    N = b.shape[1]
    macs = M * K * N
    if macs < GEMM_MIN_MACS and (macs < GEMM_MIN_MACS_THIN or min(M, K, N) > THIN_DIM):
        return None
    if not (a.flags.aligned and b.flags.aligned):
        return None
    la, lb = _blas_operand(a), _blas_operand(b)
    if la is None or lb is None:
        return None
    lib = library()
    if lib is None:
        return None
    threads = lib.threads()
    return (lib, la, lb, threads) if _same_threads(threads[1]) else None


def gemm_eligible(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `gemm(a, b)` runs oneDNN's GEMM (the rules above): float32 2-D operands in a
    BLAS layout, at least GEMM_MIN_MACS multiply-adds (GEMM_MIN_MACS_THIN with a dimension of
    at most THIN_DIM), oneDNN loaded and running NumPy's BLAS's thread count.

    Args:
        a: [M, K]; b: [K, N].

    Returns:
        A bool.
    """
    return _gemm_plan(a, b) is not None


def gemm(a: np.ndarray, b: np.ndarray, bias: np.ndarray | None = None) -> np.ndarray | None:
    """a @ b (+ bias, broadcast along the rows) by oneDNN's sgemm, or None where
    `gemm_eligible(a, b)` is False or oneDNN reports a failure (the caller multiplies with
    NumPy; a failure warns once per process).

    Args:
        a: [M, K] float32, row-major or a transposed view.
        b: [K, N] float32, likewise.
        bias: None or [N] float32: added to every row (the output starts as the bias and the
            product is accumulated onto it, as PyTorch's addmm does).

    Returns:
        A new C-contiguous [M, N] float32 array, or None.
    """
    plan = _gemm_plan(a, b)
    if plan is None:
        return None
    if bias is not None and (type(bias) is not np.ndarray or bias.shape != (b.shape[1],)
                             or bias.dtype != np.float32):
        return None
    lib, (ta, lda), (tb, ldb), (now, n) = plan
    f = _gemm_symbol(lib)
    M, K = a.shape
    N = b.shape[1]
    out = np.empty((M, N), np.float32)
    if bias is not None:
        out[...] = bias
    if n != now:  # (as _openmp_threads, inline: this runs per product)
        lib.gomp.omp_set_num_threads(n)
    try:
        status = f(ta, tb, M, N, K, 1.0, a.ctypes.data, lda, b.ctypes.data, ldb,
                   0.0 if bias is None else 1.0, out.ctypes.data, N)
    finally:
        if n != now:
            lib.gomp.omp_set_num_threads(now)
    if status != _SUCCESS:
        if not _lib_state.get("warned_gemm"):
            _lib_state["warned_gemm"] = True
            warnings.warn(f"fgrad: oneDNN's sgemm failed with status {status} "
                          f"({_STATUS.get(status, 'unknown')}) for {M}x{K} @ {K}x{N}; NumPy computes "
                          "the products", RuntimeWarning, stacklevel=3)
        return None
    return out
