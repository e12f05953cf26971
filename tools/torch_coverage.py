"""Write docs/torch-coverage.md: every public name of PyTorch's namespaces (issue 26's scope) and
whether fgrad.torch has it at the same path.

Run `python tools/torch_coverage.py` with real PyTorch installed (the committed page was made
with the version in TORCH_VERSION); tests/torch/test_coverage_doc.py regenerates the page in
memory and fails when the committed one differs.

A name counts as *present* when fgrad.torch has an attribute of that name at that path
(`fgrad.torch.nn.functional.gelu`, `fgrad.torch.Tensor.add_`): this page answers "can a script
spell it", while the tests under tests/torch/ check that what it names behaves like PyTorch.
"""
from __future__ import annotations

import importlib
import re
import sys
import types
from pathlib import Path
from typing import Callable, NamedTuple

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "torch-coverage.md"
TORCH_VERSION = "2.13"  # the release the committed page lists; another one adds or drops names

# PyTorch's namespaces in scope (issue 26), in the page's order; "Tensor" is torch.Tensor's members.
NAMESPACES = (
    "torch", "Tensor", "torch.nn", "torch.nn.functional", "torch.nn.init", "torch.nn.utils",
    "torch.linalg", "torch.fft", "torch.special", "torch.distributions", "torch.autograd",
    "torch.autograd.forward_ad", "torch.autograd.functional", "torch.autograd.graph", "torch.func",
    "torch.optim", "torch.optim.lr_scheduler", "torch.utils.data", "torch.utils.checkpoint",
    "torch.testing",
)

# Names a namespace imports for its own use that torch defines elsewhere (typing helpers are
# dropped by the rule in `public_names`; these are torch objects, so the rule keeps them).
IMPORTED_HELPERS = {
    "torch": {"classproperty", "get_file_path", "prepare_multiprocessing_environment",
              "profiler_allow_cudagraph_cupti_lazy_reinit_cuda12", "LoggerBase"},
    "torch.nn.functional": {"Tensor", "has_torch_function", "has_torch_function_unary",
                            "has_torch_function_variadic", "handle_torch_function",
                            "boolean_dispatch", "BroadcastingList1", "BroadcastingList2",
                            "BroadcastingList3"},
    "torch.nn.init": {"Tensor"},
    "torch.special": {"Tensor"},
    "torch.fft": {"Tensor"},
    "torch.autograd": {"has_torch_function", "handle_torch_function", "is_tensor_like"},
    "torch.autograd.graph": {"Variable", "TorchDispatchMode", "RemovableHandle"},
    "torch.optim.lr_scheduler": {"Tensor", "Optimizer"},
    "torch.utils.checkpoint": {"LoggingTensorMode", "capture_logs", "TorchDispatchMode",
                               "tree_map", "SavedTensor"},
}


class Rule(NamedTuple):
    """One reason a name is out of scope, and the test that picks its names."""
    reason: str
    matches: Callable[[str], bool]


def _tokens(name: str) -> set[str]:
    """The lower-case words of a snake_case or CamelCase name (`to_sparse_csr` -> to, sparse, csr)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    return {t for t in spaced.lower().split("_") if t}


def _any_token(*words: str) -> Callable[[str], bool]:
    return lambda name: bool(_tokens(name) & set(words))


def _any_prefix(*prefixes: str) -> Callable[[str], bool]:
    return lambda name: any(t.startswith(p) for t in _tokens(name) for p in prefixes)


# The TorchScript compiler's classes and entry points that torch re-exports at the top level.
_TORCHSCRIPT = {
    "AliasDb", "AnyType", "Argument", "ArgumentSpec", "AwaitType", "Block", "BoolType",
    "BufferDict", "CallStack", "Capsule", "ClassType", "Code", "CompilationUnit",
    "CompleteArgumentSpec", "ComplexType", "ConcreteModuleType", "ConcreteModuleTypeBuilder",
    "DeepCopyMemoTable", "DeviceObjType", "DictType", "EnumType", "ErrorReport", "ExecutionPlan",
    "FileCheck", "FloatType", "FunctionSchema", "FutureType", "Gradient", "Graph",
    "GraphExecutorState", "InferredType", "IntType", "InterfaceType", "JITException", "ListType",
    "LiteScriptModule", "ModuleDict", "Node", "NoneType", "NumberType", "OptionalType",
    "ParameterDict", "PyObjectType", "RRefType", "ScriptClass", "ScriptClassFunction",
    "ScriptDict", "ScriptDictIterator", "ScriptDictKeyIterator", "ScriptFunction", "ScriptList",
    "ScriptListIterator", "ScriptMethod", "ScriptModule", "ScriptModuleSerializer", "ScriptObject",
    "ScriptObjectProperty", "StaticModule", "StreamObjType", "StringType", "SymBoolType",
    "SymIntType", "TensorType", "TracingState", "TupleType", "Type", "UnionType", "Use", "Value",
    "OperatorInfo", "AggregationType", "AVG", "SUM", "IODescriptor", "LockingLogger",
    "NoopLogger", "import_ir_module", "import_ir_module_from_buffer", "merge_type_from_type_comment",
    "parse_ir", "parse_schema", "parse_type_comment", "unify_type_list", "fork", "wait", "jit",
}

OUT_OF_SCOPE = (
    Rule("quantization",
         lambda n: n.startswith(("q_", "fake_quant", "quantize", "quantized", "dequantize"))
         or _any_token("qscheme", "qparams", "fbgemm", "qnnpack", "quantized", "dequantize",
                       "quant")(n)
         or _any_prefix("qint", "quint")(n)
         or n in {"per_channel_affine", "per_channel_affine_float_qparams", "per_channel_symmetric",
                  "per_tensor_affine", "per_tensor_symmetric", "int_repr", "is_quantized"}),
    # (two autograd switches about CUDA streams name no CUDA word: stream mismatches at
    # AccumulateGrad, and stale streams during CUDA graph capture; and SyncBatchNorm's kernels,
    # which PyTorch implements for CUDA only: on the CPU torch itself raises NotImplementedError)
    Rule("CUDA, cuDNN and MKLDNN internals",
         lambda n: _any_prefix("cuda", "cudnn", "miopen", "mkldnn", "mkl", "cufft", "nnpack", "xnnpack",
                               "cudagraph", "nccl", "cublas", "onednn")(n)
         or n in {"set_warn_on_accumulate_grad_stream_mismatch", "set_override_stale_capture_stream",
                  "batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
                  "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
                  "batch_norm_backward_elemt"}),
    # (the compressed layouts' index accessors and constructor have no layout word in their names)
    Rule("sparse CSR/CSC/BSR/BSC layouts",
         lambda n: _any_token("csr", "csc", "bsr", "bsc", "crow", "ccol")(n)
         or n in {"col_indices", "row_indices", "col_indices_copy", "row_indices_copy",
                  "sparse_compressed_tensor"}),
    Rule("named tensors", lambda n: n in {"names", "rename", "rename_", "refine_names", "align_to",
                                          "align_as", "align_tensors", "has_names"}),
    Rule("nested tensors", lambda n: n.startswith(("nested", "is_nested"))
         or n in {"jagged", "to_padded_tensor"}),
    Rule("storage internals", lambda n: ("storage" in n.lower() and n != "storage_offset")
         or n in {"record_stream", "is_shared", "share_memory_", "set_", "is_set_to",
                  "module_load", "resize_as_sparse_", "sparse_resize_",
                  "sparse_resize_and_clear_"}),
    Rule("TorchScript's compiler", _any_token("jit", "script")),
    Rule("other devices' and backends' internals",
         _any_token("mps", "xpu", "mtia", "hpu", "ipu", "vulkan", "xla", "maia", "hip", "metal",
                    "privateuse1", "meta", "vitals", "tf32", "miopen", "xnnpack",
                    "distributed", "rpc")),
)


def out_of_scope_reason(namespace: str, name: str) -> str | None:
    """The first out-of-scope reason whose rule picks `name` of `namespace`, or None when it is in
    scope (torch's top level also re-exports the TorchScript compiler's classes, _TORCHSCRIPT)."""
    # (torch.testing re-exports FileCheck, the TorchScript IR checker)
    if namespace in ("torch", "torch.testing") and name in _TORCHSCRIPT:
        return "TorchScript's compiler"
    for rule in OUT_OF_SCOPE:
        if rule.matches(name):
            return rule.reason
    return None


def _defined_by_torch(obj: object) -> bool:
    """Whether torch defines `obj` (a function or class from a torch module, or a value of a torch
    type such as a dtype or a memory format), as opposed to a typing or standard-library import."""
    module = getattr(obj, "__module__", None) if isinstance(obj, type) or callable(obj) else None
    if module is None:
        module = type(obj).__module__
    return isinstance(module, str) and (module == "torch" or module.startswith("torch."))


def public_names(namespace: str) -> list[str]:
    """The public names of one of PyTorch's namespaces, sorted.

    Args:
        namespace: a dotted torch module path from NAMESPACES, or "Tensor".

    Returns:
        For "Tensor", torch.Tensor's attributes without a leading underscore. For a module, its
        `__all__` (where defined) together with its other public attributes that torch itself
        defines, submodules left out (so `torch.set_grad_enabled` and `torch.fft.hfft2`, which their modules'
        `__all__` leave out, count), less IMPORTED_HELPERS.
    """
    import torch

    if namespace == "Tensor":
        return sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))
    module = importlib.import_module(namespace)
    listed = set(getattr(module, "__all__", ()))
    names = set()
    for name in listed | {n for n in dir(module) if not n.startswith("_")}:
        obj = getattr(module, name)
        if not isinstance(obj, types.ModuleType) and (name in listed or _defined_by_torch(obj)):
            names.add(name)
    return sorted(names - IMPORTED_HELPERS.get(namespace, set()))


def _fgrad_namespace(namespace: str) -> object | None:
    """fgrad.torch's counterpart of a torch namespace, or None when fgrad.torch has none."""
    import fgrad.torch

    if namespace == "Tensor":
        return fgrad.torch.Tensor
    obj: object = fgrad.torch
    for part in namespace.split(".")[1:]:
        nxt = getattr(obj, part, None)
        if nxt is None:
            try:
                nxt = importlib.import_module(f"{getattr(obj, '__name__', '')}.{part}")
            except ImportError:
                return None
        obj = nxt
    return obj


class Row(NamedTuple):
    """One name of one namespace and its status: "present", "missing" or "out of scope (...)"."""
    namespace: str
    name: str
    status: str


def rows() -> list[Row]:
    """Every public name of every namespace in NAMESPACES with its status on fgrad.torch."""
    table = []
    for namespace in NAMESPACES:
        target = _fgrad_namespace(namespace)
        for name in public_names(namespace):
            if target is not None and hasattr(target, name):
                status = "present"
            else:
                reason = out_of_scope_reason(namespace, name)
                status = "missing" if reason is None else f"out of scope ({reason})"
            table.append(Row(namespace, name, status))
    return table


def _path(row: Row) -> str:
    return f"torch.Tensor.{row.name}" if row.namespace == "Tensor" else f"{row.namespace}.{row.name}"


def render(table: list[Row]) -> str:
    """The Markdown page for `table` (deterministic: namespaces in NAMESPACES order, names sorted).

    Args:
        table: the output of `rows()`.

    Returns:
        The text of docs/torch-coverage.md.
    """
    import torch

    version = torch.__version__.split("+")[0]
    out = [
        "# PyTorch coverage: torch's public names on fgrad.torch",
        "",
        "Every public name of the PyTorch namespaces in issue 26's scope, and whether `fgrad.torch` "
        "has it at the same path. Generated by `python tools/torch_coverage.py`; "
        "`tests/torch/test_coverage_doc.py` fails when this page is stale.",
        "",
        f"Generated with torch {version} (another release adds or drops names).",
        "",
        "- **Names listed**: for a module, its `__all__` together with its other public "
        "attributes that torch defines (functions, classes, dtypes, layouts), less submodules and "
        "imports of helpers (`tools/torch_coverage.py`, `IMPORTED_HELPERS`); for `torch.Tensor`, "
        "its attributes without a leading underscore (in-place `_` variants included).",
        "- **present**: `fgrad.torch` has an attribute of that name at that path "
        "(`fgrad.torch.nn.functional.gelu`, `fgrad.torch.Tensor.add_`). This page says a script "
        "can spell the name; the tests under `tests/torch/` check what it does against PyTorch.",
        "- **missing**: in scope, and `fgrad.torch` has no such attribute.",
        "- **out of scope**: absent from `fgrad.torch` and outside the issue's scope, with the "
        "reason: quantization, CUDA/cuDNN/MKLDNN internals, sparse CSR/CSC/BSR/BSC layouts, named "
        "and nested tensors, storage internals, TorchScript's compiler, other devices' and "
        "backends' internals. A name that is out of scope but present counts as present.",
        "",
        "## Summary",
        "",
        "Coverage is present / (present + missing).",
        "",
        "| namespace | names | present | missing | out of scope | coverage |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    totals = [0, 0, 0, 0]
    for namespace in NAMESPACES:
        mine = [r for r in table if r.namespace == namespace]
        counts = [len(mine), sum(r.status == "present" for r in mine),
                  sum(r.status == "missing" for r in mine),
                  sum(r.status.startswith("out of scope") for r in mine)]
        totals = [a + b for a, b in zip(totals, counts)]
        out.append(f"| `{'torch.Tensor' if namespace == 'Tensor' else namespace}` | "
                   + " | ".join(map(str, counts)) + f" | {_percent(counts[1], counts[2])} |")
    out.append("| **all** | " + " | ".join(map(str, totals))
               + f" | {_percent(totals[1], totals[2])} |")
    for namespace in NAMESPACES:
        title = "torch.Tensor" if namespace == "Tensor" else namespace
        out += ["", f"## {title}", "", "| name | status |", "|---|---|"]
        out += [f"| `{_path(r)}` | {r.status} |" for r in table if r.namespace == namespace]
    return "\n".join(out) + "\n"


def _percent(present: int, missing: int) -> str:
    return f"{100 * present / (present + missing):.1f}%" if present + missing else "—"


def main() -> None:
    """Regenerate docs/torch-coverage.md and print the summary's totals."""
    table = rows()
    DOC.write_text(render(table))
    present = sum(r.status == "present" for r in table)
    missing = sum(r.status == "missing" for r in table)
    print(f"wrote {DOC.relative_to(ROOT)}: {present} present, {missing} missing, "
          f"{len(table) - present - missing} out of scope")


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    main()
