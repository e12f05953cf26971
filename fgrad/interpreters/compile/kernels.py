"""Kernels of element-wise regions, and loading compiled code through a cache kept in
memory and on disk.

A region's kernel is one loop over the flattened elements: it reads each array input once
per element, computes every equation into a local (no temporaries), and writes the values
the rest of the program needs into preallocated arrays. `kernel_spec` lowers the equations
to scalar expressions (scalar.py) and has llvm_kernels.py write the kernel as LLVM IR: a
C-ABI function that takes the arrays as NumPy objects and reads their data pointers itself,
called through ctypes. native.py compiles it with llvmlite and keeps its object code in
`<cache dir>/kernels/` (`$FGRAD_CACHE_DIR`, default `~/.cache/fgrad`), named by a hash of
everything it depends on, so a later process links it without building its IR. Numba is
not involved: loops.py's loops are written as Numba source, which llvm_loops.py translates
to LLVM IR that llvmlite compiles like a kernel's (`m_<hash>.o`, one array object per
argument). Numba builds only the loops llvm_loops does not translate: `load_kernel` compiles
their source (through Numba's own cache, whose files are checked against recorded sums),
their vmath functions from one generated module (`fgrad_vmath_<hash>`, `vmath_helpers`). A
loop allocates nothing and raises nothing, so its compiled code calls only the C library:
native.py keeps Numba's object code too (`<loop>_<Numba version hash>.o`), and a later
process links it and calls it through ctypes, by Numba's calling convention, without
importing Numba.

A kernel over `vmath.LARGE` elements or more computes exp, log, tanh, sin, cos and the logistic
function with vmath's versions (`vectorised`), written branch-free so that they compute
several elements at once; smaller ones call the C library, which compiles faster. Sine and
cosine are exact enough only up to `vmath.TRIG_MAX`: such a kernel notes the arguments
beyond it (infinities included) in its vectorised loop and, where there was one, computes
every output again with the C library.
"""
from __future__ import annotations

import atexit
import ctypes
import hashlib
import importlib.util
import json
import math
import os
import re
import sys
from collections.abc import Callable
import tempfile
import warnings
from pathlib import Path

import numpy as np

from ...core.errors import FgradRuntimeError, FgradValueError
from ...core.ir import Literal
from . import llvm_kernels, llvm_loops, native, vmath
from .native import cache_dir
from .scalar import Operand, const_expr, lower_expr, operand

# vmath's bit casts, as LLVM bitcasts (vectorisable, unlike struct or np.frombuffer)
_BITS = '''
from llvmlite import ir as _ir
from numba import types as _t
from numba.core.extending import intrinsic as _intrinsic


@_intrinsic
def _f2i(typingctx, x):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _ir.IntType(64))
    return _t.int64(_t.float64), codegen


@_intrinsic
def _i2f(typingctx, i):
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], _ir.DoubleType())
    return _t.float64(_t.int64), codegen
'''

# a call of a library function that vmath may replace, on a plain operand
_CALL_RE = re.compile(r"\b(math\.\w+|fg_\w+)\((\w+)\)")
# calls of math functions and scalar_lib helpers; those in llvm_kernels.vector_calls() are
# vector instructions in a kernel, the others call the C library one element at a time
_LIBRARY_RE = re.compile(r"\b((?:math\.|fg_)\w*)\(")

# Counters for tests and benchmarks: kernels and loops built (compiled by llvmlite or Numba, or
# loaded from disk: native.py's object code or Numba's cache, counted in disk_cache_hits),
# the kernels llvmlite compiled, and those found in this process's memory.
STATS = {"kernels_built": 0, "kernels_reused": 0, "disk_cache_hits": 0, "llvm_compiled": 0}

_LOADED: dict[str, object] = {}  # source hash -> the callable (ctypes function, or Numba's)


class KernelSpec:
    """A kernel: its source (LLVM IR for a region's kernel, Numba source for loops.py's
    loops), and how the program calls it (`args`: per parameter, ("array", var) for an input
    read element by element, ("scalar", var) for a 0-d input, ("out", var) for an output)."""

    __slots__ = ("_source", "args", "bare", "in_place", "llvm", "name")

    def __init__(self, source, name: str, args: list, in_place: bool = True) -> None:
        self._source = source  # the text, or a function making it (on first use)
        self.name = name
        self.args = args
        # whether an output may take over a dying input's buffer: not where the kernel may
        # read its inputs again after writing its outputs
        self.in_place = in_place
        self.llvm = None  # llvm_kernels.LLVMKernel of a region's kernel (None: Numba source)
        # a loop compiled without Numba's runtime and Python wrapper, called through ctypes
        # (False: through Numba's own dispatcher)
        self.bare = False

    @property
    def source(self) -> str:
        """The kernel's source text (made now if it was given as a function)."""
        if callable(self._source):
            self._source = self._source()
        return self._source


def kernel_spec(step, reuse: dict[int, int] | None = None) -> KernelSpec:
    """The kernel of region `step` (kind "kernel"), as LLVM IR (llvm_kernels.py).

    Args:
        step: the region.
        reuse: output position -> position in `step.inputs` of the input whose buffer that
            output takes over (the caller passes one buffer for both: a dying input of the
            same shape and dtype, and only where the first spec's `in_place` allows it). Each
            element is read before it is written, so the kernel is the same either way.

    Returns:
        The KernelSpec.

    Raises:
        FgradValueError: `reuse` for a kernel that rereads its inputs after writing its outputs.
        FgradNotImplementedError: an expression llvm_kernels cannot translate (a lowering
            rule that writes Python it does not know: a bug, which the lowering tests catch).
    """
    names: dict[int, str] = {}
    inputs, args, pre = [], [], []
    consts: dict[str, str] = {}  # typed constant -> the local made before the loop
    for a in step.inputs:
        kind = "scalar" if a.aval.shape == () else "array"
        name = f"{'s' if kind == 'scalar' else 'x'}{len(args)}"
        args.append((kind, a))
        inputs.append((kind, name, a.aval.dtype))
        names[id(a)] = name

    def operand_of(a) -> Operand:
        if isinstance(a, Literal):
            text = const_expr(a.val, a.aval.dtype)
            if text.startswith("np."):  # a typed constant: made once, before the loop
                if text not in consts:
                    consts[text] = f"c{len(consts)}"
                    pre.append((consts[text], text))
                text = consts[text]
            return operand(text, a)
        return operand(names[id(a)], a)

    exprs = []
    single = set()  # the float32 operands (vmath's float32 functions take them)
    for k, e in enumerate(step.eqns):
        ops = [operand_of(a) for a in e.invars]
        single.update(str(o) for o in ops if o.dtype == np.float32)
        exprs.append(lower_expr(e, ops))
        names[id(e.outvars[0])] = f"t{k}"
    size = math.prod(step.shape)
    vexprs, checked = vectorised(exprs, float32=single) if size >= vmath.LARGE else (exprs, [])
    # A long kernel of arithmetic alone (no library call) takes the vectorised loop too: whole
    # vectors of the host's width loaded and stored, where the C library's loop moves LANES
    # elements one by one (its width suits per-element library calls); the same arithmetic,
    # so the same bits.
    arithmetic = size >= vmath.LARGE and vexprs == exprs and all(
        c in llvm_kernels.vector_calls() for e in exprs for c in _LIBRARY_RE.findall(e))
    if checked and reuse:
        raise FgradValueError("kernel_spec: this kernel rereads its inputs after writing its outputs "
                              "(its sine or cosine fallback), so no output may take over an input's buffer")
    args += [("out", v) for v in step.outputs]
    outputs = [(names[id(v)], v.aval.dtype) for v in step.outputs]
    ll_args = (inputs, pre, exprs, outputs)
    if vexprs != exprs or arithmetic:
        ll_args += (vexprs, tuple(checked), size < vmath.INLINE)
    name = llvm_kernels.kernel_name(*ll_args)
    if not llvm_kernels.strict() and native.saved(cache_dir() / "kernels", name):
        # an earlier process built this IR (the name hashes everything it depends on) and
        # saved its object code: linked by name, the IR is built only if that fails
        kernel = llvm_kernels.LLVMKernel(name, build=lambda: llvm_kernels.build_kernel(*ll_args).text)
    else:
        try:
            kernel = llvm_kernels.build_kernel(*ll_args)
        except llvm_kernels.Unsupported as e:
            raise llvm_kernels.unsupported_error(f"of {len(exprs)} equations ({step.eqns[0].primitive.name}...)",
                                                 str(e)) from e
    head = f"; fgrad kernel {name}: LLVM IR written by fgrad.interpreters.compile.llvm_kernels"

    def listing() -> str:
        body = [f";   t{k} = {e}" for k, e in enumerate(exprs)]
        if vexprs != exprs:
            body = [f"; with vmath's functions (checked against TRIG_MAX: {', '.join(checked) or 'none'}):",
                    *(f";   t{k} = {e}" for k, e in enumerate(vexprs)), "; with the C library's:", *body]
        return "\n".join([head, *body, kernel.text])
    spec = KernelSpec(listing, name, args, in_place=not checked)
    spec.llvm = kernel
    return spec


_VMATH: list = []  # [(module name, source)] once made


def _vmath_module() -> tuple[str, str]:
    """The name and source of the generated module that holds all of vmath's functions for
    loops.py's Numba loops: kept in the cache directory beside the loops, compiled once per
    signature and then loaded from Numba's cache, so a loop's compilation only inlines them
    (compiling them inside each loop's own module tripled its compile time)."""
    if not _VMATH:
        # force-inlined into the caller when it is compiled: LLVM vectorises only a loop
        # without calls (cross-module inlining works from Numba's cached code too)
        deco = "@numba.njit(forceinline=True, error_model='numpy', nogil=True, boundscheck=False, cache=True)\n"
        body = (_BITS + "".join(f"{k} = {v!r}\n" for k, v in sorted(vmath.CONSTANTS.items())) + "\n\n"
                + "\n\n".join(deco + vmath.numba_source(h)
                              for h in vmath.needed([*vmath.VECTOR.values(), *vmath.VECTOR32.values()])))
        name = "fgrad_vmath_" + hashlib.sha256(body.encode()).hexdigest()[:16]
        source = (f'"""fgrad {name}: vmath\'s functions for generated kernels (see '
                  f'fgrad/interpreters/compile/vmath.py)."""\nimport numba\nimport numpy as np\n{body}')
        _VMATH.append((name, source))
    return _VMATH[0]


def vmath_helpers(names) -> list[str]:
    """The module-level source that a generated module needs for the vmath functions among
    `names` (and TRIG_MAX): an import from vmath's own module (none: an empty list)."""
    vec = sorted(h for h in set(names) if h in vmath.VECTOR.values() or h in vmath.VECTOR32.values())
    if not vec:
        return []
    return [f"from {_vmath_module()[0]} import TRIG_MAX, {', '.join(vec)}  # noqa: F401\n"]


def vectorised(exprs: list[str], trig: bool = True,
               float32: set[str] | frozenset[str] = frozenset()) -> tuple[list[str], list[str]]:
    """`exprs` with each library call that vmath vectorises replaced by vmath's function, and
    the arguments of the replaced sines and cosines (which the kernel checks); `trig=False`
    leaves sines and cosines to the C library (for code that cannot check their arguments).
    A call on an operand named in `float32` (a float32 local) takes vmath's float32 version."""
    checked: list[str] = []

    def swap(m):
        fn = (vmath.VECTOR32 if m.group(2) in float32 else vmath.VECTOR).get(m.group(1))
        if fn is None or (not trig and fn in vmath.CHECKED):
            return m.group(0)
        if fn in vmath.CHECKED and m.group(2) not in checked:
            checked.append(m.group(2))
        return f"{fn}({m.group(2)})"
    return [_CALL_RE.sub(swap, e) for e in exprs], checked


def _write_source(folder: Path, spec: KernelSpec) -> Path:
    """The kernel's source file in `folder`, written atomically (processes that compile the
    same kernel at the same time agree on it) where it is missing or holds anything but the
    source (damaged, cut short, another version's): it is read back and compared first."""
    path = folder / f"{spec.name}.py"
    source = spec.source.encode()
    try:
        found = path.read_bytes()
    except OSError:  # missing (or unreadable: then writing fails too, and the caller falls back)
        found = None
    if found != source:
        if found is not None:
            warnings.warn(f"fgrad: the cached kernel source {path} differs from the kernel's "
                          "source (damaged or written by another version); it is rewritten.",
                          RuntimeWarning, stacklevel=3)
        native.write_atomic(path, source)
    return path


# Numba's own cache of a module (`__pycache__/<module>.<function>-<line>.py<version>.nbi`,
# its index, and `.nbc`, the compiled code that Numba links) is checked too: its files' SHA-256
# are recorded beside them (`<module>.sums.json`) once Numba has written them, and files that
# do not match (damaged, cut short, unrecorded) are deleted before Numba reads them, so it
# compiles anew. Numba rejects a foreign entry (another CPU, Numba or Python) itself.
_IMPORTED: dict[Path, None] = {}  # module files imported by this process, recorded at exit


def _numba_files(path: Path) -> list[Path]:
    return sorted((path.parent / "__pycache__").glob(f"{path.stem}.*.nb[ic]"))


def _sums_path(path: Path) -> Path:
    return path.parent / "__pycache__" / f"{path.stem}.sums.json"


def _sums(files: list[Path]) -> dict[str, str] | None:
    try:
        return {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    except OSError:  # (deleted meanwhile by a process that found them unrecorded)
        return None


def _check_numba_cache(path: Path, drop: bool = False) -> None:
    """Delete the Numba cache files of module `path` that its recorded sums do not vouch for
    (all of them where `drop`)."""
    files = _numba_files(path)
    if not files:
        return
    if drop:
        _unlink(files)
        return
    try:
        want = json.loads(_sums_path(path).read_text())
    except (OSError, ValueError):
        want = None
    if want is not None and _sums(files) == want:
        return
    if want is not None:
        warnings.warn(f"fgrad: Numba's cached code for {path.name} does not match its recorded "
                      "checksums (damaged or cut short); it is deleted and compiled anew.",
                      RuntimeWarning, stacklevel=3)
    _unlink(files)


def _unlink(files: list[Path]) -> None:
    for f in files:
        try:
            f.unlink()
        except OSError:
            pass


def _record_numba_cache(path: Path) -> None:
    """Record the sums of module `path`'s Numba cache files as they are now (nothing where
    they are already recorded, or the folder is unwritable)."""
    files = _numba_files(path)
    sums = _sums(files)
    if not files or sums is None:
        return
    target = _sums_path(path)
    try:
        if json.loads(target.read_text()) == sums:
            return
    except (OSError, ValueError):
        pass
    try:
        native.write_atomic(target, json.dumps(sums, sort_keys=True).encode())
    except OSError:
        pass


@atexit.register
def _record_imported() -> None:
    # what Numba compiled after import (a loop's function compiles on its first call)
    for path in _IMPORTED:
        _record_numba_cache(path)


_NUMBA: list = []  # [bool] once known


def numba_available() -> bool:
    """Whether kernels and loops can be made: Numba is installed (for loops.py's loops; it
    brings llvmlite, which region kernels need), checked without importing it (Numba takes
    0.2-0.6 s to import, which a process that runs no compiled loop never pays), and NumPy's
    array objects are laid out as kernels read them (checked once)."""
    if not _NUMBA:
        _NUMBA.append(importlib.util.find_spec("numba") is not None and _array_layout_ok())
    return _NUMBA[0]


def _array_layout_ok() -> bool:
    """Whether an array object holds its data pointer, number of axes and shape pointer in
    the pointer-sized slots 2, 3 and 4 (true of CPython's default builds; not of a build
    whose object header is larger, such as free-threaded or reference-tracing ones)."""
    a = np.empty((2, 3))
    slot = ctypes.sizeof(ctypes.c_void_p)
    base = id(a)  # CPython: the object's address
    dims = ctypes.c_void_p.from_address(base + 4 * slot).value
    return (slot == 8 and ctypes.c_void_p.from_address(base + 2 * slot).value == a.ctypes.data
            and ctypes.c_int.from_address(base + 3 * slot).value == 2 and dims is not None
            and list((ctypes.c_int64 * 2).from_address(dims)) == [2, 3])


_CTYPES = {np.dtype(k): v for k, v in {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16, "int32": ctypes.c_int32,
    "int64": ctypes.c_int64, "uint8": ctypes.c_uint8, "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32,
    "uint64": ctypes.c_uint64, "float32": ctypes.c_float, "float64": ctypes.c_double}.items()}


def _c_function(address: int, spec: KernelSpec):
    """The kernel at `address` as a Python callable (arrays passed as their objects)."""
    return native.function(address, [_CTYPES[v.aval.dtype] if kind == "scalar" else ctypes.py_object
                                      for kind, v in spec.args])


_WIDE: list = []  # set once prefer_wide_vectors has run


def prefer_wide_vectors() -> None:
    """On a CPU with AVX-512, let LLVM vectorise Numba's loops with 512-bit registers.

    LLVM's tuning for these CPUs prefers 256-bit vectors; kernels are long chains of
    arithmetic (vmath's polynomials) for which twice the lanes nearly halve the time. The
    width changes how many elements one instruction computes, never the arithmetic of an
    element (no fast-math, no reassociated reductions), so results keep their bits. Numba
    reads the features when it first compiles in the process: a user's NUMBA_CPU_FEATURES or
    NUMBA_CPU_NAME, or a Numba that has already compiled, is left as it is. Every fgrad module
    that compiles with Numba calls this before its first import of Numba, so which of them
    comes first in a process does not change the width of the others' loops."""
    if _WIDE:
        return
    _WIDE.append(True)
    try:
        import llvmlite.binding as llvm  # optional dependency (comes with Numba)
        from numba.core import config  # optional dependency, as llvmlite above
    except ImportError:
        return
    features = llvm.get_host_cpu_features()
    if config.CPU_FEATURES is None and config.CPU_NAME is None and features.get("avx512f"):
        config.CPU_FEATURES = features.flatten() + ",-prefer-256-bit"


def _import_file(path: Path, module_name: str, fresh: bool = False):
    """The module `module_name` run from `path` (registered in sys.modules before it runs:
    Numba's cached code refers to its module by name), its Numba code compiled anew where
    `fresh` (Numba's cache of it deleted)."""
    prefer_wide_vectors()
    _check_numba_cache(path, fresh)
    loader = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(loader)
    sys.modules[module_name] = module
    try:
        loader.loader.exec_module(module)  # compiles the loop, or loads Numba's cached code
    except BaseException:
        del sys.modules[module_name]
        raise
    _IMPORTED[path] = None
    _record_numba_cache(path)
    return module


def load_kernel(spec: KernelSpec):
    """The compiled kernel of `spec`: from memory; a region's kernel (`spec.llvm`) from its
    object code in the cache directory, or compiled by llvmlite; a loop (a callable taking
    the arrays of `spec.args`) as llvm_loops translates it (`_load_llvm_loop`), else from the
    object code an earlier process kept of Numba's compilation, or from its source file
    (written once, atomically, so concurrent processes agree), compiled by Numba or loaded
    from its cache, its object code then kept (None without Numba).

    Raises:
        FgradRuntimeError: llvmlite could not compile or link a region's kernel or a loop's IR.
    """
    fn = _LOADED.get(spec.name)
    if fn is not None:
        STATS["kernels_reused"] += 1
        return fn
    if spec.llvm is not None:
        fn = _LOADED[spec.name] = _load_llvm(spec)
        return fn
    if not numba_available():
        return None
    fn = _load_llvm_loop(spec)
    if fn is not None:
        _LOADED[spec.name] = fn
        return fn
    if not spec.bare:  # (a loop with more parameters than a ctypes call takes: Numba's dispatcher)
        fn = _LOADED[spec.name] = _import_loop(spec, fresh=False)
        return fn
    folder, entry = cache_dir() / "kernels", f"{spec.name}_{_numba_version()}"
    kept = native.saved(folder, entry)
    address = native.load(folder, entry) if kept else None
    if address is not None:  # kept by an earlier process: linked without importing Numba
        STATS["kernels_built"] += 1
        STATS["disk_cache_hits"] += 1
    else:
        # an entry that did not link (damaged, another build's) is made again: compiled by
        # Numba, not loaded from Numba's cache, which keeps no object code to write
        fn = _import_loop(spec, fresh=kept)
        address, built = _numba_code(fn)
        if built is not None and native.portable(built[1]):
            native.write(folder, entry, *built)  # (nothing where the cache is unwritable)
    fn = _LOADED[spec.name] = _loop_function(address, spec.args)
    return fn


def _load_llvm_loop(spec: KernelSpec):
    """Loop `spec` as llvm_loops translates its Numba source (a callable taking the arrays
    of `spec.args`): linked from the object code an earlier process kept, or translated,
    compiled by llvmlite and kept; None where llvm_loops does not translate it (or
    llvm_loops.BACKEND is "numba"): Numba compiles it then.

    Raises:
        FgradRuntimeError: llvmlite could not compile or link the loop's IR.
    """
    if llvm_loops.numba_only() or len(spec.args) > native.MAX_CALL_ARGS:
        return None
    name = llvm_loops.loop_name(spec.source)
    try:
        address = _linked(name, "loop", lambda: llvm_loops.build_loop(spec.source, spec.args, name),
                          llvm_loops.OPT, reuse=not llvm_kernels.strict())
    except llvm_kernels.Unsupported:
        return None
    return native.function(address, [ctypes.py_object] * len(spec.args))


def _linked(name: str, what: str, ir_text: Callable[[], str], opt: tuple, reuse: bool = True) -> int:
    """The address of compiled function `name` (a `what`: kernel or loop): linked from the
    object code the cache directory keeps (when `reuse`), or `ir_text()` compiled by llvmlite
    at `opt` ((IR level, code generator level)), linked, and kept there.

    Raises:
        llvm_kernels.Unsupported: from `ir_text`.
        FgradRuntimeError: llvmlite could not compile or link the IR.
    """
    folder = cache_dir() / "kernels"
    address = native.load(folder, name) if reuse else None
    if address is not None:
        STATS["kernels_built"] += 1
        STATS["disk_cache_hits"] += 1
        return address
    built = native.compile_ir(ir_text(), name, *opt)
    address = None if built is None else native.link(*built)
    if address is None:
        raise FgradRuntimeError(
            f"{what} {name}: llvmlite could not compile or link its LLVM IR; check that "
            f"`python -c 'import llvmlite.binding'` works (llvmlite comes with Numba)")
    native.write(folder, name, *built)  # (nothing where the cache is unwritable)
    STATS["kernels_built"] += 1
    STATS["llvm_compiled"] += 1
    return address


def _import_loop(spec: KernelSpec, fresh: bool):
    """Loop `spec`'s function `kernel`, compiled by Numba or loaded from Numba's cache (not
    where `fresh`)."""
    try:
        path = _write_source(cache_dir() / "kernels", spec)
    except OSError:  # an unwritable cache directory: this process's own, compiled afresh
        path = _write_source(Path(tempfile.gettempdir()) / f"fgrad-kernels-{os.getpid()}", spec)
    vm_name, vm_source = _vmath_module()
    if f"from {vm_name} import" in spec.source and vm_name not in sys.modules:
        # the loop imports it by name: loaded first, from the same folder
        _import_file(_write_source(path.parent, KernelSpec(vm_source, vm_name, [])), vm_name)
    module = _import_file(path, f"_fgrad_kernel_{spec.name}", fresh)
    fn = module.kernel
    STATS["kernels_built"] += 1
    STATS["disk_cache_hits"] += sum(fn.stats.cache_hits.values())
    return fn


def _numba_code(fn) -> tuple[int, tuple[bytes, dict] | None]:
    """The address of Numba function `fn`'s compiled code (its one signature) and its object
    code with native.py's metadata (None where Numba loaded it from its own cache: Numba
    then keeps no object code)."""
    cres = fn.overloads[fn.signatures[0]]
    symbol = cres.fndesc.llvm_func_name
    address = cres.library.get_pointer_to_function(symbol)
    try:  # (Numba's internal API: another Numba's shape of it only costs the kept copy)
        obj = cres.library.serialize_using_object_code()[2][0]
    except (RuntimeError, ValueError, AttributeError, IndexError, TypeError):
        return address, None
    return address, native.describe(obj, symbol)


_VERSION: list = []  # [the installed Numba's version tag] once read


def _numba_version() -> str:
    """A hash of the installed Numba's version file, read without importing Numba: a kept
    loop is called by Numba's calling convention, so another Numba's code is not used."""
    if not _VERSION:
        try:
            origin = importlib.util.find_spec("numba").origin
            data = (Path(origin).parent / "_version.py").read_bytes()
        except (AttributeError, OSError, TypeError):
            data = b""
        _VERSION.append(hashlib.sha256(data).hexdigest()[:8])
    return _VERSION[0]



def native_call_fits(args: list) -> bool:
    """Whether a loop taking the arrays of `args` ((dtype, shape) each) can be called through
    ctypes by Numba's calling convention (_loop_function: each array as 5 + 2 * ndim fields,
    after a status and an exception slot)."""
    return 2 + sum(5 + 2 * len(shape) for _, shape in args) <= native.MAX_CALL_ARGS


def _loop_function(address: int, args: list):
    """The loop function at `address` (Numba's calling convention: a status, a return and an
    exception slot, then each array as its fields, no runtime or parent object, its shape and
    strides in bytes) as a callable taking the arrays of `args` ((dtype, shape) each,
    C-ordered), in order.

    Raises (from the callable):
        FgradRuntimeError: the loop reported an error (it raises none).
    """
    argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    fixed = []
    for dtype, shape in args:
        argtypes += [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p]
        argtypes += [ctypes.c_int64] * (2 * len(shape))
        strides = [dtype.itemsize * math.prod(shape[k + 1:]) for k in range(len(shape))]
        fixed.append((math.prod(shape), dtype.itemsize, (*shape, *strides)))
    cfn = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(address)

    def call(*arrays) -> None:
        slots = ctypes.c_int64(), ctypes.c_void_p()  # (the return and exception slots, alive till it returns)
        flat = [ctypes.addressof(slots[0]), ctypes.addressof(slots[1])]
        for a, (n, item, tail) in zip(arrays, fixed):
            flat += [None, None, n, item, a.ctypes.data, *tail]
        if cfn(*flat):
            raise FgradRuntimeError("a compiled loop reported an error")
    return call


def _load_llvm(spec: KernelSpec):
    """The kernel of `spec.llvm` (llvm_kernels): its object code from the cache directory, or
    compiled by llvmlite and saved there."""
    def ir_text() -> str:
        try:
            return spec.llvm.text  # (built here where kernel_spec found the object code's entry)
        except llvm_kernels.Unsupported as e:
            raise llvm_kernels.unsupported_error(spec.name, str(e)) from e
    return _c_function(_linked(spec.name, "kernel", ir_text, llvm_kernels.OPT), spec)
