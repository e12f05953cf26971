"""Kernels' machine code: compiled from LLVM IR, kept on disk and linked, all with llvmlite.

llvm_kernels.py writes each element-wise kernel as LLVM IR; `compile_ir` makes its object code
(MCJIT's code generator, for this CPU), `write` keeps it in the cache directory (`<name>.o`,
then `<name>.json`: the symbol to call, the external symbols it needs, the symbols it
defines, and what the code was built for), and `link` adds it to the process's engine, so a
later process calls the kernel through ctypes without building its IR (20-30 ms for a first
call on an idle machine, importing llvmlite included). Numba is never imported here.

loops.py's loops are compiled by Numba, whose object code (`describe`) is kept and linked
the same way where it needs only the process's own symbols (`portable`).

Such code is loaded only where it is sure to run: the bytes that were written (the metadata
holds the object code's SHA-256 and a checksum of itself, so a truncated, damaged or
half-written file is discarded and rebuilt, never linked: a damaged object file can crash the
process); built for this CPU (name and features), by this cache format, llvmlite and Python;
every external symbol resolvable (the C library's math); no symbol defined twice. Otherwise
the caller compiles the kernel again.
"""
from __future__ import annotations

import ctypes
import hashlib
import json
import os
import struct
import sys
import tempfile
import threading
import warnings
from pathlib import Path

# the layout of what this module writes (object code, metadata), and what it keys the object
# code by; a cache entry of another format is rebuilt
FORMAT = 4

_ENGINE: list = []      # [(llvmlite.binding, engine, defined symbols, build key)] once made
_FAILED: list = []      # [True] once the engine could not be made
_LOCK = threading.Lock()  # one linking at a time: the engine is not thread-safe
_MACHINES: dict = {}    # code generator level -> llvmlite TargetMachine for this CPU


def _build_key() -> dict:
    """What object code depends on besides its IR: the CPU, llvmlite (its LLVM), Python."""
    # optional dependency (comes with Numba), imported only when native code is cached
    import llvmlite
    import llvmlite.binding as llvm  # (the same optional dependency)
    return {"format": FORMAT, "cpu": llvm.get_host_cpu_name(), "features": llvm.get_host_cpu_features().flatten(),
            "llvmlite": llvmlite.__version__, "python": sys.version}


def _engine():
    """The process's MCJIT engine, or None where llvmlite is missing."""
    if not _ENGINE and not _FAILED:
        try:
            import llvmlite.binding as llvm  # optional dependency (comes with Numba)
            llvm.initialize_native_target()
            llvm.initialize_native_asmprinter()
            empty = llvm.parse_assembly("")
            empty.triple = llvm.get_process_triple()
            tm = llvm.Target.from_default_triple().create_target_machine(opt=0)
            engine = llvm.create_mcjit_compiler(empty, tm)
            engine.finalize_object()
            _ENGINE.append((llvm, engine, set(), _build_key()))
        except Exception:  # noqa: BLE001 - any failure: no kernels can be linked
            _FAILED.append(True)
    return _ENGINE[0] if _ENGINE else None


def started() -> bool:
    """Whether this process has made its engine (LLVM's code is then loaded: tens of MiB
    resident, which a process that never compiles or links a kernel does not pay)."""
    return bool(_ENGINE)


def saved(folder: Path, name: str) -> bool:
    """Whether `folder` holds an entry for kernel `name` (its metadata file: what load reads
    first; whether the entry is sound is load's to check)."""
    return (folder / f"{name}.json").is_file()


def load(folder: Path, name: str) -> int | None:
    """The address of kernel `name`'s entry point, linked from `folder`, or None (no usable
    object code there: the caller compiles it with llvmlite, and writes it anew). An
    entry whose bytes do not match its metadata's checksums is deleted, with a warning."""
    meta_path = folder / f"{name}.json"
    try:
        text = meta_path.read_bytes()
    except OSError:  # (missing: never built here)
        return None
    meta = _verified_meta(text)
    if meta is None and _older_format(text):  # (no checksums to check: rebuilt without a warning)
        discard(folder, name)
        return None
    obj = None
    if meta is not None:
        try:
            obj = (folder / f"{name}.o").read_bytes()
        except OSError:
            obj = None
    if meta is None or obj is None or len(obj) != meta["size"] or _digest(obj) != meta["sha256"]:
        discard(folder, name, "its object code or metadata is damaged, truncated or missing")
        return None
    return link(obj, meta)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _meta_digest(meta: dict) -> str:
    """The checksum of metadata `meta` (its "check" entry left out)."""
    body = {k: v for k, v in meta.items() if k != "check"}
    return _digest(json.dumps(body, sort_keys=True).encode())


def _verified_meta(text: bytes) -> dict | None:
    """The metadata `write` wrote as `text`, or None where it is not that (damaged, cut
    short, of an older format that had no checksums)."""
    try:
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return None
    if (not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str)
            or not isinstance(meta.get("size"), int) or meta.get("check") != _meta_digest(meta)):
        return None
    return meta


def _older_format(text: bytes) -> bool:
    """Whether `text` is whole metadata written before it had checksums (FORMAT 1)."""
    try:
        meta = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        return False
    return (isinstance(meta, dict) and "check" not in meta and isinstance(meta.get("build"), dict)
            and "format" not in meta["build"])


def discard(folder: Path, name: str, why: str | None = None) -> None:
    """Delete kernel `name`'s object code and metadata from `folder` (they are rebuilt), with
    a warning that says `why` (none without); nothing where they cannot be deleted.

    Args:
        folder: the cache folder.
        name: the kernel's name.
        why: what is wrong with the entry, for the warning.
    """
    if why is not None:
        warnings.warn(f"fgrad: the cached kernel {name} in {folder} is discarded and rebuilt: {why}.",
                      RuntimeWarning, stacklevel=3)
    for suffix in (".json", ".o"):
        try:
            (folder / f"{name}{suffix}").unlink()
        except OSError:
            pass


def link(obj: bytes, meta: dict) -> int | None:
    """The address of `meta`'s symbol once object code `obj` (described by `meta`, as
    `save` writes it) is linked into the process's engine, or None where it cannot be."""
    try:
        with _LOCK:
            state = _engine()
            if state is None:
                return None
            llvm, engine, defined, key = state
            if meta.get("build") != key:
                return None
            if meta["defines"] and set(meta["defines"]) <= defined:
                # linked before (kernel names are hashes of their code: the same code)
                return engine.get_function_address(meta["symbol"]) or None
            if defined & set(meta["defines"]):
                return None
            if not all(llvm.address_of_symbol(s) for s in meta["externals"]):
                return None  # linking would abort the process
            engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
            engine.finalize_object()
            defined.update(meta["defines"])
            return engine.get_function_address(meta["symbol"]) or None
    except (OSError, ValueError, KeyError, TypeError, RuntimeError):
        return None


def compile_ir(text: str, symbol: str, passes: int, codegen: int) -> tuple[bytes, dict] | None:
    """Object code for the LLVM IR `text` (defining function `symbol` and calling only the C
    library) for this CPU, its IR optimised by LLVM's pipeline at level `passes` (0: none)
    and its machine code at level `codegen`, and its metadata for `link` and `write`; None
    where llvmlite is missing or rejects it."""
    try:
        with _LOCK:
            state = _engine()
            if state is None:
                return None
            llvm, _, _, key = state
            module = llvm.parse_assembly(text)
            module.verify()
            tm = _MACHINES.get(codegen)
            if tm is None:  # (one per process and level: making one reads the host's CPU again)
                tm = _MACHINES[codegen] = llvm.Target.from_default_triple().create_target_machine(
                    cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(),
                    opt=codegen, reloc="default", codemodel="jitdefault")
            module.triple = llvm.get_process_triple()
            module.data_layout = str(tm.target_data)
            if passes:
                pb = llvm.create_pass_builder(tm, llvm.create_pipeline_tuning_options(speed_level=passes))
                pb.getModulePassManager().run(module, pb)
            obj = tm.emit_object(module)
    except RuntimeError:
        return None
    return describe(obj, symbol)


def describe(obj: bytes, symbol: str) -> tuple[bytes, dict] | None:
    """Object code `obj` (for this CPU, made by this process's llvmlite: by `compile_ir`, or
    by Numba) with its metadata for `link` and `write`: `symbol`, the entry point, and the
    symbols it needs and defines; None where `obj` is not ELF64 little-endian object code."""
    symbols = _elf_symbols(obj)
    with _LOCK:
        state = _engine()
    if symbols is None or state is None:
        return None
    undefined, defined = symbols
    return obj, {"symbol": symbol, "externals": sorted(undefined), "defines": sorted(defined), "build": state[3]}


def portable(meta: dict) -> bool:
    """Whether every symbol that the object code of `meta` needs is the process's own (the C
    library's, Python's), which any process can link; not one that a library such as Numba
    registered with LLVM at run time, found only in a process that imported it."""
    process = ctypes.CDLL(None)
    return all(hasattr(process, s) for s in meta["externals"])


def _elf_symbols(obj: bytes) -> tuple[set[str], set[str]] | None:
    """The undefined symbols of ELF64 little-endian object code `obj` (those the code
    generator added, such as compiler-rt's helpers, included: the IR does not list them) and
    the strong ones it defines, or None for any other format. Weak and common definitions
    (Numba's copies of shared helpers and their environments) are left out: the engine keeps
    the first of each, as Numba's own engine does with the same code."""
    if obj[:6] != b"\x7fELF\x02\x01":
        return None
    shoff, = struct.unpack_from("<Q", obj, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", obj, shoff + k * shentsize) for k in range(shnum)]
    undefined, defined = set(), set()
    for _, kind, _, _, offset, size, link, _, _, entsize in sections:
        if kind != 2 or not entsize:  # SHT_SYMTAB
            continue
        strtab = sections[link][4]
        for k in range(size // entsize):
            st_name, info, _, st_shndx = struct.unpack_from("<IBBH", obj, offset + k * entsize)
            # (SHN_UNDEF: 0, SHN_COMMON: 0xFFF2; binding STB_GLOBAL: 1)
            if not st_name or (st_shndx and (info >> 4 != 1 or st_shndx == 0xFFF2)):
                continue
            end = obj.index(b"\0", strtab + st_name)
            (undefined if st_shndx == 0 else defined).add(obj[strtab + st_name:end].decode())
    return undefined, defined


def write(folder: Path, name: str, obj: bytes, meta: dict) -> None:
    """Write object code `obj` and its `meta` as kernel `name`'s, atomically (nothing where
    the folder is unwritable). The metadata records the object code's size and SHA-256 and
    its own checksum: where processes write the same kernel at once, a reader that gets one
    writer's object code and another's metadata finds them different and rebuilds."""
    meta = {**meta, "size": len(obj), "sha256": _digest(obj)}
    meta["check"] = _meta_digest(meta)
    try:
        for suffix, data in ((".o", obj), (".json", json.dumps(meta).encode())):  # the .json last
            # not flushed to the disk: load checks both files' checksums, so what a crash
            # leaves half-written is rebuilt, and a kernel's first call does not wait on the disk
            write_atomic(folder / f"{name}{suffix}", data, durable=False)
    except OSError:
        pass  # an unwritable cache: the kernel is compiled again by the next process


def cache_dir() -> Path:
    """Where generated kernels and their machine code are kept."""
    root = os.environ.get("FGRAD_CACHE_DIR")
    return Path(root) if root else Path.home() / ".cache" / "fgrad"


def write_atomic(path: Path, data: bytes, durable: bool = True) -> None:
    """`path` holding `data`, written under a temporary name in its folder (flushed to disk
    where `durable`) and renamed, so processes reading or writing it at the same time see
    either the old file or the new one whole (its folder made if missing; OSError where it
    cannot be written).

    Args:
        path: the file to write.
        data: its new contents.
        durable: flush the data to the disk before the rename, so that a crash of the machine
            cannot leave the new name on a file whose data never reached the disk. Readers
            that verify what they read (a checksum) do not need it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            if durable:
                os.fsync(fh.fileno())  # (the rename must not reach the disk before the data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ctypes calls a C function with at most this many arguments
MAX_CALL_ARGS = 1024


def function(address: int, argtypes: list):
    """The ctypes function at `address` taking `argtypes` (arrays as NumPy objects; at most
    MAX_CALL_ARGS of them)."""
    return ctypes.CFUNCTYPE(None, *argtypes)(address)
