"""fgrad.tree_util: key paths, reductions, registered classes and Partial, as jax.tree_util."""
import functools
import operator
from collections import OrderedDict, namedtuple

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import tree_util as tu

jax = pytest.importorskip("jax")
jtu = jax.tree_util

P = namedtuple("P", "a b")
TREE = {"a": [1.0, (2.0, 3.0)], "b": None, "c": P(4.0, 5.0), "d": OrderedDict(z=6.0, y=7.0)}


def test_tree_flatten_with_path_and_keystr_match_jax():
    ours = [(tu.keystr(p), x) for p, x in tu.tree_leaves_with_path(TREE)]
    theirs = [(jtu.keystr(p), x) for p, x in jtu.tree_leaves_with_path(TREE)]
    assert ours == theirs
    assert ours[0] == ("['a'][0]", 1.0) and ours[3] == ("['c'].a", 4.0)
    assert tu.keystr((tu.SequenceKey(0), tu.DictKey("w"), tu.GetAttrKey("b"), tu.FlattenedIndexKey(2))) \
        == "[0]['w'].b[<flat index 2>]"


def test_tree_map_with_path():
    out = tu.tree_map_with_path(lambda p, x, y: (tu.keystr(p), x + y), {"a": [1, 2]}, {"a": [10, 20]})
    assert out == {"a": [("['a'][0]", 11), ("['a'][1]", 22)]}
    with pytest.raises(ValueError, match="structures differ"):
        tu.tree_map_with_path(lambda p, x, y: x, {"a": 1}, {"b": 1})


def test_tree_reduce_and_tree_all():
    assert tu.tree_reduce(operator.add, TREE) == jtu.tree_reduce(operator.add, TREE) == 28.0
    assert tu.tree_reduce(operator.add, [], 0) == 0
    with pytest.raises(TypeError):
        tu.tree_reduce(operator.add, [])
    assert tu.tree_all([True, (1, {"a": 2.0})]) and not tu.tree_all([True, 0])


def test_tree_leaves_and_tree_structure():
    assert tu.tree_leaves(TREE) == jtu.tree_leaves(TREE)
    assert tu.tree_structure(TREE).num_leaves == jtu.tree_structure(TREE).num_leaves == 7


def test_register_pytree_node_class_crosses_transforms():
    @tu.register_pytree_node_class
    class Linear:
        def __init__(self, w, b, name="lin"):
            self.w, self.b, self.name = w, b, name

        def tree_flatten(self):
            return (self.w, self.b), self.name

        @classmethod
        def tree_unflatten(cls, aux, children):
            return cls(*children, name=aux)

    lin = Linear(onp.array([1.0, 2.0]), 0.5)
    g = fgrad.grad(lambda m, x: np.sum(m.w * x) + m.b)(lin, onp.array([3.0, 4.0]))
    assert isinstance(g, Linear) and g.name == "lin" and g.w.tolist() == [3.0, 4.0] and g.b == 1.0
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path(lin)] == ["[<flat index 0>]",
                                                                        "[<flat index 1>]"]
    with pytest.raises(TypeError, match="tree_flatten"):
        tu.register_pytree_node_class(type("Bare", (), {}))


def test_register_pytree_with_keys():
    class Pair:
        def __init__(self, x, y):
            self.x, self.y = x, y
    tu.register_pytree_with_keys(Pair, lambda p: (((tu.GetAttrKey("x"), p.x), (tu.GetAttrKey("y"), p.y)), None),
                                 lambda _, c: Pair(*c))
    assert [tu.keystr(p) for p, _ in tu.tree_leaves_with_path([Pair(1, 2)])] == ["[0].x", "[0].y"]
    assert tu.tree_map(lambda v: v * 10, Pair(1, 2)).y == 20


def test_partial_is_a_pytree_whose_leaves_are_its_arguments():
    f = lambda x, y, scale=1.0: (x + y) * scale
    p = tu.Partial(f, onp.array([1.0, 2.0]), scale=3.0)
    assert isinstance(p, functools.partial) and p(1.0).tolist() == [6.0, 9.0]
    leaves = tu.tree_leaves(p)
    assert len(leaves) == 2 and leaves[1] == 3.0
    assert len(jtu.tree_leaves(jtu.Partial(f, onp.array([1.0, 2.0]), scale=3.0))) == 2
    # it crosses transforms: returned from jit, differentiated by grad, mapped by vmap
    q = fgrad.jit(lambda a: tu.Partial(f, a, scale=2.0))(onp.array([1.0, 2.0]))
    assert isinstance(q, tu.Partial) and q(1.0).tolist() == [4.0, 6.0]
    g = fgrad.grad(lambda part: np.sum(part(1.0)))(p)
    assert isinstance(g, tu.Partial) and g.args[0].tolist() == [3.0, 3.0] and g.keywords["scale"] == 5.0
    out = fgrad.vmap(lambda part: part(1.0), in_axes=(tu.Partial(f, 0, scale=None),))(p)
    assert out.tolist() == [6.0, 9.0]
    assert tu.tree_leaves(tu.Partial(tu.Partial(f, 1.0), 2.0)) == [1.0, 2.0]


def test_broadcast_prefix_treats_none_as_a_leaf():
    assert tu.broadcast_prefix(({"w": None, "b": 0}, 1), ({"w": 1, "b": [1, 2]}, (3, None, 4))) == \
        [0, 0, None, 1, 1]
    with pytest.raises(ValueError, match=r"in_axes\[0\]\['w'\] is a tuple of 2 entries"):
        tu.broadcast_prefix(({"w": (0, 0)},), ({"w": [1, 2]},), prefix_name="in_axes")


def test_every_public_function_is_documented_and_typed():
    import inspect
    for name in tu.__all__:
        obj = getattr(tu, name)
        assert obj.__doc__, name
        if inspect.isfunction(obj):
            assert "return" in obj.__annotations__, name


def test_dict_with_keys_that_do_not_sort_is_a_value_error():
    # JAX's pytrees raise ValueError too (its pytrees page shows {1: 7, "y": 42})
    with pytest.raises(ValueError, match=r"keys \[1, 'y'\] do not sort"):
        tu.tree_map(lambda x: x + 1, {1: 7, "y": 42})
