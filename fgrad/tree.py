"""fgrad.tree: JAX's `jax.tree` (short names for fgrad.tree_util's functions).

`fgrad.tree.map(f, tree, *rest, is_leaf=None)` is `tree_util.tree_map`, and so on for
leaves, structure, flatten, unflatten, reduce, all, transpose and the `_with_path` forms.
"""
from .tree_util import tree_all as all  # noqa: A004 (JAX's names shadow builtins here)
from .tree_util import tree_flatten as flatten
from .tree_util import tree_flatten_with_path as flatten_with_path
from .tree_util import tree_leaves as leaves
from .tree_util import tree_leaves_with_path as leaves_with_path
from .tree_util import tree_map as map  # noqa: A004
from .tree_util import tree_map_with_path as map_with_path
from .tree_util import tree_reduce as reduce
from .tree_util import tree_structure as structure
from .tree_util import tree_transpose as transpose
from .tree_util import tree_unflatten as unflatten

__all__ = ["all", "flatten", "flatten_with_path", "leaves", "leaves_with_path", "map",
           "map_with_path", "reduce", "structure", "transpose", "unflatten"]
