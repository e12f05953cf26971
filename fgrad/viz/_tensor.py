"""The Tensor facade's recorded graph as a picture (what torchviz's make_dot draws): a node per
`grad_fn` from the output tensors back to the leaves, whose `AccumulateGrad` nodes are drawn as
the leaf tensors themselves, named after their parameters when given; optionally the values
each node saved for its backward pass, with their shapes."""
from __future__ import annotations

from typing import Mapping, Sequence

from ..core.errors import FgradTypeError, FgradValueError
from ..core.trace import aval_of
from ..interpreters.backward import Leaf, Unsaved, toposort
from ..interpreters.record import SubgraphOut
from ..torch._tensor.tensor import AccumulateGrad, ModifiedValue, Tensor, saved_values
from ..tree_util import tree_flatten
from ._graph import Graph

OUTPUT_COLOR = "#caff70"   # torchviz's darkolivegreen1
LEAF_COLOR = "#add8e6"     # torchviz's lightblue
SAVED_COLOR = "#ffa500"    # torchviz's orange
NODE_COLOR = "#d3d3d3"     # torchviz's lightgrey


def _type_str(x) -> str:
    """'f32[3,4]' for an array, Python number, or a stand-in that keeps only shape and dtype."""
    return aval_of(x).str_short()


def _node_of(t: Tensor):
    """The node `t` stands for in a graph: its grad_fn, or its AccumulateGrad if a recorded op
    used the leaf (else None)."""
    if t.grad_fn is not None:
        return t.grad_fn
    ref = t._acc
    return ref() if ref is not None else None


def _saved_of(node) -> list[tuple[str, object]]:
    """(role, value) for each value `node` keeps for its VJP rule: the inputs and output its
    primitive declares it reads (`Primitive.def_saves`) and the residuals of a vjp_fwd rule."""
    if node.prim is None:
        return []
    # the facade's nodes know which saved values were overwritten in place since
    out, primals = saved_values(node) if getattr(node, "saved", None) is not None else (node.out, node.primals)
    prim = node.prim
    res = node.residuals
    if type(res) is SubgraphOut:  # a function recorded as one node: the inputs its graph reads
        return [(f"input {i}", v) for i, (v, raw) in enumerate(zip(primals, node.primals))
                if res.sub.keeps(raw) and not isinstance(v, Unsaved)]
    unread = set(prim.unread_inputs(len(primals)))
    saved = [(f"input {i}", v) for i, v in enumerate(primals) if i not in unread]
    if prim.saves_output:
        saved.append(("output", out))
    if node.residuals is not None:
        leaves = [r for r in tree_flatten(node.residuals)[0] if hasattr(r, "shape")]
        saved += [(f"residual {k}", r) for k, r in enumerate(leaves)]
    return [(role, v) for role, v in saved if not isinstance(v, Unsaved)]


def tensor_graph(outputs: Tensor | Sequence[Tensor], params: Mapping[str, Tensor] | None = None,
                 show_saved: bool = False, format: str = "svg", rankdir: str = "TB") -> Graph:
    """The recorded graph from `outputs` back to their leaves (see `fgrad.viz.draw`)."""
    outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    for i, t in enumerate(outs):
        if not isinstance(t, Tensor):
            raise FgradTypeError(f"fgrad.viz.draw: output {i} is a {type(t).__name__}, not a Tensor")
    names = {}
    for name, p in (params or {}).items():
        if not isinstance(p, Tensor):
            raise FgradTypeError(f"fgrad.viz.draw: params[{name!r}] is a {type(p).__name__}, not a Tensor; "
                            "pass params=dict(model.named_parameters())")
        names[id(p)] = name
    for i, t in enumerate(outs):
        if not t.requires_grad:
            raise FgradValueError(
                f"fgrad.viz.draw: output {i} ({aval_of(t._value).str_short()}) has no graph: it does not "
                "require grad. Create its leaves with requires_grad=True (parameters do) and compute "
                "it outside `torch.no_grad()`, or draw the function with `fgrad.viz.draw(f, *args)`.")

    title = "grad_fn graph" + (" (with saved tensors)" if show_saved else "")
    g = Graph(title, {"rankdir": rankdir}, format=format)
    g.node_attrs.update(style="filled", fillcolor=NODE_COLOR)
    ids: dict[int, str] = {}  # id(node) -> node id in the picture
    leaf_values: dict[int, str] = {}  # id(leaf value) -> its node (saved values link to it)

    def leaf_node(t: Tensor, key: int) -> str:
        nid = ids.get(key)
        if nid is None:
            name = names.get(id(t))
            label = (f"{name}\n" if name else "") + aval_of(t._value).str_short()
            nid = ids[key] = g.add_node(f"n{len(ids)}", label, fillcolor=LEAF_COLOR,
                                        tooltip=f"leaf tensor{' ' + name if name else ''} (AccumulateGrad)")
            leaf_values[id(t._value)] = nid
        return nid

    roots = [n for n in map(_node_of, outs) if n is not None]
    for node in toposort(roots):
        if isinstance(node, AccumulateGrad):
            leaf_node(node.variable, id(node))
            continue
        label = type(node).__name__
        tooltip = label + (f" (primitive {node.prim.name})" if node.prim is not None else "")
        nid = ids[id(node)] = g.add_node(f"n{len(ids)}", label, tooltip=tooltip)
        for p in node.parents:
            if p is not None:
                g.add_edge(ids[id(p)], nid)
    for i, t in enumerate(outs):
        text = "output" if len(outs) == 1 else f"output {i}"
        oid = g.add_node(f"out{i}", f"{text}\n{aval_of(t._value).str_short()}", fillcolor=OUTPUT_COLOR)
        node = _node_of(t)
        if node is not None and not isinstance(node, Leaf):
            g.add_edge(ids[id(node)], oid)
        elif t.requires_grad:  # a leaf drawn as its own output
            g.add_edge(leaf_node(t, id(node) if node is not None else id(t)), oid)
    if show_saved:
        _draw_saved(g, toposort(roots), ids, leaf_values)
    return g


def _draw_saved(g: Graph, nodes: list, ids: dict, leaf_values: dict) -> None:
    """An orange node per saved value (one per value, however many nodes saved it), with a
    dashed edge to each node that saved it, labelled with its role there. A saved leaf's
    value links from the leaf's own node."""
    saved_ids: dict[int, str] = {}
    for node in nodes:
        if isinstance(node, Leaf):
            continue
        if node.primals is None:  # a backward pass without retain_graph freed them
            prim = node.prim
            if getattr(prim, "saves_output", False) or getattr(prim, "saved_inputs", None) is None \
                    or len(prim.saved_inputs):
                g.nodes[ids[id(node)]]["label"] += "\n(saved values freed)"
            continue
        for role, v in _saved_of(node):
            src = leaf_values.get(id(v)) or saved_ids.get(id(v))
            if src is None:
                modified = isinstance(v, ModifiedValue)
                label = ("saved (modified in place)" if modified else "saved") + f"\n{_type_str(v)}"
                src = saved_ids[id(v)] = g.add_node(
                    f"s{len(saved_ids)}", label, fillcolor=SAVED_COLOR,
                    **({"color": "red", "penwidth": "2"} if modified else {}))
            g.add_edge(src, ids[id(node)], style="dashed", label=role, fontsize="8", arrowhead="none")
