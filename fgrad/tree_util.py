"""Pytrees: nested tuples, lists, dicts, None, namedtuples and registered classes."""
from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable

_REGISTRY: dict[type, tuple[Callable, Callable]] = {}


def register_pytree_node(cls: type, flatten_fn: Callable, unflatten_fn: Callable) -> None:
    """Make `cls` a pytree node: flatten_fn(x) -> (children, aux); unflatten_fn(aux, children) -> x."""
    _REGISTRY[cls] = (flatten_fn, unflatten_fn)


register_pytree_node(tuple, lambda t: (t, None), lambda _, c: tuple(c))
register_pytree_node(list, lambda t: (t, None), lambda _, c: list(c))
register_pytree_node(type(None), lambda t: ((), None), lambda _, c: None)
register_pytree_node(dict, lambda d: ([d[k] for k in sorted(d)], tuple(sorted(d))),
                     lambda keys, c: dict(zip(keys, c)))
register_pytree_node(OrderedDict, lambda d: (list(d.values()), tuple(d)),
                     lambda keys, c: OrderedDict(zip(keys, c)))


def _node_of(x):
    t = type(x)
    if t in _REGISTRY:
        return t, _REGISTRY[t]
    if isinstance(x, tuple) and hasattr(t, "_fields"):
        return t, (lambda nt: (tuple(nt), None), lambda _, c, t=t: t(*c))
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


def tree_flatten(tree: Any, is_leaf: Callable | None = None) -> tuple[list, PyTreeDef]:
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


def tree_unflatten(treedef: PyTreeDef, leaves) -> Any:
    """The pytree of structure `treedef` with `leaves` (an iterable, exactly
    treedef.num_leaves long) in flattening order."""
    if not isinstance(treedef, PyTreeDef):
        raise TypeError(f"tree_unflatten: treedef must be a PyTreeDef (from tree_flatten or "
                        f"tree_structure), got {type(treedef).__name__} {treedef!r:.60}")
    try:
        leaves = list(leaves)
    except TypeError:
        raise TypeError(f"tree_unflatten: leaves must be an iterable (e.g. a list) of "
                        f"{treedef.num_leaves} leaves for structure {treedef}, got "
                        f"{type(leaves).__name__} {leaves!r:.60}") from None
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: structure {treedef} has {treedef.num_leaves} leaves but "
                         f"{len(leaves)} were given; pass exactly one value per leaf (tree_leaves of "
                         "a tree of the same structure has the right number)")
    return _unflatten(treedef, iter(leaves))


def tree_leaves(tree: Any, is_leaf: Callable | None = None) -> list:
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable | None = None) -> PyTreeDef:
    return tree_flatten(tree, is_leaf)[1]


def tree_map(f: Callable, tree: Any, *rest: Any, is_leaf: Callable | None = None) -> Any:
    leaves, treedef = tree_flatten(tree, is_leaf)
    others = []
    for r in rest:
        r_leaves, r_def = tree_flatten(r, is_leaf)
        if r_def != treedef:
            raise ValueError(f"tree_map: pytree structures differ: {treedef} vs {r_def}")
        others.append(r_leaves)
    return tree_unflatten(treedef, [f(*xs) for xs in zip(leaves, *others)])
