"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes.

A pytree is a container structure (the nodes) holding arbitrary values (the leaves). The
transforms (grad, vmap, jit, ...) flatten their arguments and results with these functions,
so any registered class can cross them. As in JAX:

- tuples, lists, dicts (sorted by key; in insertion order inside `dicts_in_insertion_order`,
  which the facade's torch.func transforms use), OrderedDicts (in insertion order), namedtuples and
  None are nodes; None is a node with no children, so it holds no leaf;
- every other value is a leaf, unless its class was registered with `register_pytree_node`,
  `register_pytree_node_class` or `register_pytree_with_keys`.

Key paths (`tree_flatten_with_path`, `tree_map_with_path`) are tuples of key objects, one per
level: `SequenceKey(idx)` for tuples and lists, `DictKey(key)` for dicts, `GetAttrKey(name)`
for namedtuples, and `FlattenedIndexKey(i)` for registered classes without their own keys.
`keystr(path)` renders one as Python would index it, e.g. ``[0]['w'].bias``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import functools
import threading
from collections import OrderedDict
from typing import Any, Callable, Hashable, Iterable, Iterator, NamedTuple, Sequence, TypeVar

from .core.errors import FgradTypeError, FgradValueError

__all__ = [
    "PyTreeDef", "register_pytree_node", "register_pytree_node_class", "register_pytree_with_keys",
    "tree_flatten", "tree_unflatten", "tree_leaves", "tree_structure", "tree_map", "tree_reduce",
    "tree_all", "tree_flatten_with_path", "tree_leaves_with_path", "tree_map_with_path", "keystr",
    "SequenceKey", "DictKey", "GetAttrKey", "FlattenedIndexKey", "Partial", "broadcast_prefix",
    "register_dataclass", "tree_transpose",
]

T = TypeVar("T", bound=type)

# cls -> (flatten_fn, unflatten_fn, flatten_with_keys_fn or None)
_REGISTRY: dict[type, tuple[Callable, Callable, Callable | None]] = {}


def register_pytree_node(cls: type, flatten_fn: Callable[[Any], tuple[Iterable, Hashable]],
                         unflatten_fn: Callable[[Hashable, Iterable], Any]) -> None:
    """Make `cls` a pytree node: flatten_fn(x) -> (children, aux); unflatten_fn(aux, children) -> x.

    `aux` is the static part of the node (compared with == between trees, so it should be
    hashable); the children are themselves pytrees. In key paths, the children of a class
    registered here are named `FlattenedIndexKey(i)`."""
    _REGISTRY[cls] = (flatten_fn, unflatten_fn, None)


def register_pytree_with_keys(cls: type,
                              flatten_with_keys: Callable[[Any], tuple[Iterable[tuple[Any, Any]], Hashable]],
                              unflatten_fn: Callable[[Hashable, Iterable], Any],
                              flatten_fn: Callable[[Any], tuple[Iterable, Hashable]] | None = None) -> None:
    """Like `register_pytree_node`, with keys for key paths: flatten_with_keys(x) returns
    ([(key, child), ...], aux), where each key is e.g. a GetAttrKey or DictKey."""
    if flatten_fn is None:
        def flatten_fn(x):
            pairs, aux = flatten_with_keys(x)
            return [c for _, c in pairs], aux
    _REGISTRY[cls] = (flatten_fn, unflatten_fn, flatten_with_keys)


def register_dataclass(nodetype: T, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None, drop_fields: Sequence[str] = ()) -> T:
    """Register a dataclass-like `nodetype` as a pytree node (JAX's register_dataclass):
    `data_fields` are its children (traced), `meta_fields` its static part (hashable,
    compared between trees); rebuilt as nodetype(**fields). For a dataclass, both may be
    left out: fields with `metadata=dict(static=True)` are meta, the other init fields data
    (minus drop_fields). Returns nodetype, so it is also a decorator."""
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise FgradTypeError(f"register_dataclass: {nodetype.__name__} is not a dataclass, so "
                                 "data_fields and meta_fields must be given")
        fields = [f for f in dataclasses.fields(nodetype) if f.init and f.name not in drop_fields]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise FgradTypeError("register_dataclass: give both data_fields and meta_fields, or neither "
                             "(for a dataclass)")
    data, meta = tuple(data_fields), tuple(meta_fields)
    if dataclasses.is_dataclass(nodetype):
        init = {f.name for f in dataclasses.fields(nodetype) if f.init} - set(drop_fields)
        if set(data) | set(meta) != init:
            raise FgradValueError(
                f"register_dataclass: data_fields {list(data)} and meta_fields {list(meta)} of "
                f"{nodetype.__name__} must list its init fields {sorted(init)} (drop_fields: "
                f"{list(drop_fields)}), each once")

    def flatten_with_keys(x):
        return ([(GetAttrKey(n), getattr(x, n)) for n in data],
                tuple(getattr(x, n) for n in meta))

    def unflatten(aux, children):
        return nodetype(**dict(zip(data, children)), **dict(zip(meta, aux)))
    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten,
                              lambda x: ([getattr(x, n) for n in data], tuple(getattr(x, n) for n in meta)))
    return nodetype


def register_pytree_node_class(cls: T) -> T:
    """Class decorator: register `cls`, which defines `tree_flatten(self) -> (children, aux)` and
    the classmethod `tree_unflatten(cls, aux, children)`, as a pytree node; returns `cls`."""
    if not (callable(getattr(cls, "tree_flatten", None)) and callable(getattr(cls, "tree_unflatten", None))):
        raise FgradTypeError(f"register_pytree_node_class: {cls.__name__} must define a method "
                             "tree_flatten(self) -> (children, aux) and a classmethod "
                             "tree_unflatten(cls, aux, children)", doc="pytree-class-methods")
    register_pytree_node(cls, lambda x: x.tree_flatten(), cls.tree_unflatten)
    return cls


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda t: ((), None), lambda _, c: None)
class _DictOrder(threading.local):
    """How this thread flattens dicts: by sorted key (JAX's pytrees, the default), or in
    insertion order (torch.utils._pytree's, inside the facade's torch.func transforms)."""
    insertion = False


_DICT_ORDER = _DictOrder()


def _flatten_dict(d: dict) -> tuple[list, tuple]:
    if _DICT_ORDER.insertion:
        keys = tuple(d)
    else:
        try:
            keys = tuple(sorted(d))
        except TypeError as e:
            # JAX's pytrees raise ValueError here too: the keys, not their values, are at fault
            raise FgradValueError(
                f"a dict in a pytree flattens by sorted key, and its keys {list(d)!r:.200} do not "
                f"sort ({e}). Use keys of one type (all str, or all int).") from e
    return [d[k] for k in keys], keys


@contextlib.contextmanager
def dicts_in_insertion_order() -> Iterator[None]:
    """Within this block (on this thread), dicts flatten in insertion order and so come back
    from unflattening in their caller's order, as in torch.utils._pytree: what the facade's
    torch.func transforms (fgrad.torch.func) run under, so that code zipping a result's keys with
    another dict's values pairs the right entries. Outside, dicts flatten by sorted key (JAX)."""
    before = _DICT_ORDER.insertion
    _DICT_ORDER.insertion = True
    try:
        yield
    finally:
        _DICT_ORDER.insertion = before


register_pytree_node(dict, _flatten_dict, lambda keys, c: dict(zip(keys, c)))
register_pytree_node(OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: OrderedDict(zip(keys, c)))


def _node_of(x):
    t = type(x)
    if t in _REGISTRY:
        return t, _REGISTRY[t]
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, (lambda nt: (tuple(nt), None), lambda _, c, t=t: t(*c), None)
    return None, None


class PyTreeDef:
    """The structure of a pytree, without its leaves."""

    __slots__ = ("node_type", "aux", "children", "num_leaves")

    def __init__(self, node_type, aux, children) -> None:
        self.node_type = node_type
        self.aux = aux
        self.children = children
        self.num_leaves = 1 if node_type is None else sum(c.num_leaves for c in children)

    def __eq__(self, other) -> bool:
        return (isinstance(other, PyTreeDef) and self.node_type is other.node_type
                and self.aux == other.aux and self.children == other.children)

    def __hash__(self) -> int:
        return hash((self.node_type, repr(self.aux), tuple(self.children)))

    def __repr__(self) -> str:
        if self.node_type is None:
            return "*"
        inner = ", ".join(map(repr, self.children))
        if self.node_type is tuple:
            return f"({inner}{',' if len(self.children) == 1 else ''})"
        if self.node_type is list:
            return f"[{inner}]"
        if self.node_type is dict:
            return "{" + ", ".join(f"{k!r}: {c!r}" for k, c in zip(self.aux, self.children)) + "}"
        if self.node_type is type(None):
            return "None"
        return f"{self.node_type.__name__}({inner})"


LEAF = PyTreeDef(None, None, ())


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list, PyTreeDef]:
    """(leaves, treedef): the leaves of `tree` in order, and its structure. `is_leaf(x)` True
    stops the descent at x (x becomes a leaf)."""
    leaves: list = []
    return leaves, _flatten(tree, is_leaf, leaves)


# Module-level recursion, not nested closures: a closure that calls itself is a reference
# cycle holding every leaf (tracers included) until the garbage collector runs.
def _flatten(x, is_leaf, leaves: list) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        leaves.append(x)
        return LEAF
    t, fns = _node_of(x)
    if t is None:
        leaves.append(x)
        return LEAF
    children, aux = fns[0](x)
    return PyTreeDef(t, aux, tuple(_flatten(c, is_leaf, leaves) for c in children))


def _unflatten(td: PyTreeDef, it) -> Any:
    if td.node_type is None:
        return next(it)
    children = [_unflatten(c, it) for c in td.children]
    t = td.node_type
    if t in _REGISTRY:
        return _REGISTRY[t][1](td.aux, children)
    return t(*children)


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable) -> Any:
    """The pytree of structure `treedef` with `leaves` (an iterable, exactly
    treedef.num_leaves long) in flattening order."""
    if not isinstance(treedef, PyTreeDef):
        raise FgradTypeError(f"tree_unflatten: treedef must be a PyTreeDef (from tree_flatten or "
                        f"tree_structure), got {type(treedef).__name__} {treedef!r:.60}")
    try:
        leaves = list(leaves)
    except TypeError:
        raise FgradTypeError(f"tree_unflatten: leaves must be an iterable (e.g. a list) of "
                        f"{treedef.num_leaves} leaves for structure {treedef}, got "
                        f"{type(leaves).__name__} {leaves!r:.60}") from None
    if len(leaves) != treedef.num_leaves:
        raise FgradValueError(f"tree_unflatten: structure {treedef} has {treedef.num_leaves} leaves but "
                         f"{len(leaves)} were given; pass exactly one value per leaf (tree_leaves of "
                         "a tree of the same structure has the right number)")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The leaves of `tree`, in flattening order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The structure (PyTreeDef) of `tree`, without its leaves."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """A tree of `tree`'s structure with f(leaf, *corresponding leaves of rest) at each leaf;
    every tree in `rest` must have the same structure (ValueError otherwise)."""
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise FgradValueError(f"tree_map: pytree structures differ: {treedef} vs {r_def}", doc="tree-mismatch")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])


_NO_INITIAL = object()


def tree_reduce(function: Callable[[Any, Any], Any], tree: Any, initializer: Any = _NO_INITIAL,
                is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """functools.reduce(function, tree_leaves(tree)[, initializer]): e.g.
    tree_reduce(operator.add, tree) sums the leaves. Without an initializer, a tree with no
    leaves is a TypeError (as functools.reduce)."""
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INITIAL:
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_all(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every leaf of `tree` is truthy (True for a tree without leaves)."""
    return all(tree_leaves(tree, is_leaf))


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef, pytree_to_transpose: Any) -> Any:
    """A tree of structure outer_treedef whose leaves are trees of structure inner_treedef,
    turned into the inner structure of outer ones (a list of pairs into a pair of lists).
    TypeError when the tree is not outer_treedef composed with inner_treedef."""
    leaves, treedef = tree_flatten(pytree_to_transpose)
    n_in = inner_treedef.num_leaves
    chunks = [leaves[k * n_in:(k + 1) * n_in] for k in range(outer_treedef.num_leaves)]
    if len(leaves) != outer_treedef.num_leaves * n_in or treedef != tree_structure(
            tree_unflatten(outer_treedef, [tree_unflatten(inner_treedef, c) for c in chunks])):
        raise FgradTypeError(f"tree_transpose: tree structure mismatch: the tree is {treedef}, not "
                             f"{outer_treedef} with {inner_treedef} at each leaf")
    return tree_unflatten(inner_treedef, [tree_unflatten(outer_treedef, [c[j] for c in chunks])
                                          for j in range(n_in)])


# --- key paths ----------------------------------------------------------------------------

class SequenceKey(NamedTuple):
    """The key of a tuple or list element: index `idx`; renders as ``[idx]``."""
    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


class DictKey(NamedTuple):
    """The key of a dict entry; renders as ``['key']``."""
    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


class GetAttrKey(NamedTuple):
    """The key of a namedtuple field (or an attribute of a registered class); renders as ``.name``."""
    name: str

    def __str__(self) -> str:
        return f".{self.name}"


class FlattenedIndexKey(NamedTuple):
    """The key of the i-th child of a class registered without keys; renders as ``[<flat index i>]``."""
    key: int

    def __str__(self) -> str:
        return f"[<flat index {self.key}>]"


KeyPath = tuple


def keystr(path: KeyPath) -> str:
    """A key path as Python indexing, e.g. (SequenceKey(0), DictKey('w')) -> "[0]['w']"."""
    return "".join(str(k) for k in path)


def _keyed_children(x, t, fns):
    """(children with their keys, aux) of node x of type t."""
    if fns[2] is not None:
        pairs, aux = fns[2](x)
        return list(pairs), aux
    children, aux = fns[0](x)
    children = list(children)
    if t is tuple or t is list:
        keys = [SequenceKey(i) for i in range(len(children))]
    elif t is dict or t is OrderedDict:
        keys = [DictKey(k) for k in aux]
    elif t not in _REGISTRY and hasattr(t, "_fields"):
        keys = [GetAttrKey(n) for n in t._fields]
    else:
        keys = [FlattenedIndexKey(i) for i in range(len(children))]
    return list(zip(keys, children)), aux


def _flatten_with_path(x, is_leaf, path: tuple, out: list) -> PyTreeDef:
    if is_leaf is not None and is_leaf(x):
        out.append((path, x))
        return LEAF
    t, fns = _node_of(x)
    if t is None:
        out.append((path, x))
        return LEAF
    pairs, aux = _keyed_children(x, t, fns)
    return PyTreeDef(t, aux, tuple(_flatten_with_path(c, is_leaf, path + (k,), out) for k, c in pairs))


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                           ) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """([(key_path, leaf), ...], treedef): tree_flatten with each leaf's key path."""
    out: list = []
    return out, _flatten_with_path(tree, is_leaf, (), out)


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                          ) -> list[tuple[KeyPath, Any]]:
    """[(key_path, leaf), ...] in flattening order."""
    return tree_flatten_with_path(tree, is_leaf)[0]


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[[Any], bool] | None = None) -> Any:
    """tree_map whose f also receives the key path: f(path, leaf, *corresponding leaves of rest)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise FgradValueError(f"tree_map_with_path: pytree structures differ: {treedef} vs {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


# --- prefix broadcasting (vmap's in_axes/out_axes) ------------------------------------------

def _describe_node(x) -> str:
    t, fns = _node_of(x)
    if t is None:
        return f"a leaf ({type(x).__name__})"
    if t is dict or t is OrderedDict:
        return f"a {t.__name__} with keys {tuple(fns[0](x)[1])!r}"
    n = len(list(fns[0](x)[0]))
    return f"a {t.__name__} of {n} entr{'y' if n == 1 else 'ies'}"


def broadcast_prefix(prefix: Any, full: Any, is_leaf: Callable[[Any], bool] | None = None, *,
                     prefix_name: str = "prefix", full_name: str = "the value") -> list:
    """One entry of `prefix` per leaf of `full`, where `prefix` is a tree prefix of `full`:
    each leaf of `prefix` (None included: here None is a leaf, as in vmap's in_axes) stands
    for every leaf of the matching subtree of `full`. A ValueError names the key path where
    the two structures part (a different container type, other dict keys, another length)."""
    out: list = []
    _broadcast(prefix, full, is_leaf, (), out, prefix_name, full_name)
    return out


def _broadcast(prefix, full, is_leaf, path, out, prefix_name, full_name):
    t, fns = (None, None) if prefix is None else _node_of(prefix)
    if t is None:
        out.extend([prefix] * len(tree_flatten(full, is_leaf)[0]))
        return
    ft, ffns = (None, None) if is_leaf is not None and is_leaf(full) else _node_of(full)
    where = f"{prefix_name}{keystr(path)}"
    fix = (f" {prefix_name} must be a tree prefix of {full_name}: at each position, a leaf "
           "(which then applies to the whole subtree), or a container of the same type with the "
           "same keys or length.")
    if ft is not t:
        raise FgradValueError(f"{where} is {_describe_node(prefix)}, but the matching part of "
                         f"{full_name} is {_describe_node(full)}.{fix}")
    pairs, aux = _keyed_children(prefix, t, fns)
    fpairs, faux = _keyed_children(full, ft, ffns)
    if aux != faux or len(pairs) != len(fpairs):
        raise FgradValueError(f"{where} is {_describe_node(prefix)}, but the matching part of "
                         f"{full_name} is {_describe_node(full)}.{fix}")
    for (k, p), (_, c) in zip(pairs, fpairs):
        _broadcast(p, c, is_leaf, path + (k,), out, prefix_name, full_name)


# --- Partial ------------------------------------------------------------------------------

class Partial(functools.partial):
    """A functools.partial that is a pytree: its positional and keyword arguments are the
    leaves and the function is static, so a partially applied function can be passed to or
    returned from a transform (grad, jit, vmap) with its bound arrays traced, as
    jax.tree_util.Partial. Partial(Partial(f, a), b) is Partial(f, a, b)."""


register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, children: Partial(func, *children[0], **children[1]),
)
