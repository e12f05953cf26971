"""torch.fx's subgraph rewriter: replace every match of a pattern function's graph."""
from __future__ import annotations

from typing import Any, Callable, NamedTuple

from .graph import Graph
from .graph_module import GraphModule
from .node import Node
from ...core.errors import FgradNotImplementedError, FgradValueError


class Match(NamedTuple):
    """One replaced match: the node producing the pattern's output, and pattern node -> graph node."""

    anchor: Node
    nodes_map: dict


def _graph_of(fn: Callable | GraphModule | Graph) -> Graph:
    if isinstance(fn, Graph):
        return fn
    if isinstance(fn, GraphModule):
        return fn.graph
    from ._symbolic_trace import symbolic_trace  # (imported on use: a cycle within fgrad.torch)
    return symbolic_trace(fn).graph


def _match(pn: Node, gn: Node, m: dict, pattern_phs: set) -> bool:
    if pn in m:
        return m[pn] is gn
    if pn in pattern_phs:
        m[pn] = gn
        return True
    if pn.op != gn.op or pn.target != gn.target or set(pn.kwargs) != set(gn.kwargs):
        return False
    m[pn] = gn
    if not _match_arg(pn.args, gn.args, m, pattern_phs):
        del m[pn]
        return False
    for k in pn.kwargs:
        if not _match_arg(pn.kwargs[k], gn.kwargs[k], m, pattern_phs):
            del m[pn]
            return False
    return True


def _match_arg(pa: Any, ga: Any, m: dict, phs: set) -> bool:
    if isinstance(pa, Node):
        return isinstance(ga, Node) and _match(pa, ga, m, phs)
    if isinstance(pa, (list, tuple)):
        return (type(pa) is type(ga) and len(pa) == len(ga)
                and all(_match_arg(a, b, m, phs) for a, b in zip(pa, ga)))
    if isinstance(ga, Node):
        return False
    return type(pa) is type(ga) and pa == ga


def replace_pattern(gm: GraphModule, pattern: Callable | GraphModule | Graph,
                    replacement: Callable | GraphModule | Graph) -> list[Match]:
    """Replace each non-overlapping match of `pattern`'s graph in `gm` by `replacement`'s.

    A match is a set of nodes with the pattern's ops, targets and data flow; the pattern's
    inputs match any value, and no matched node but the last may be used outside the match.
    The replacement's inputs receive the values the pattern's inputs matched, in order.

    Args:
        gm: the GraphModule to rewrite (recompiled afterwards).
        pattern: a function (traced), GraphModule or Graph with a single output value.
        replacement: the same, with as many inputs as the pattern.
    Returns:
        the matches replaced."""
    pg, rg = _graph_of(pattern), _graph_of(replacement)
    p_out = next(n for n in pg.nodes if n.op == "output")
    if not isinstance(p_out.args[0], Node):
        raise FgradNotImplementedError("replace_pattern: the pattern must return one value")
    anchor_p = p_out.args[0]
    p_phs = [n for n in pg.nodes if n.op == "placeholder"]
    r_phs = [n for n in rg.nodes if n.op == "placeholder"]
    if len(p_phs) != len(r_phs):
        raise FgradValueError(f"replace_pattern: pattern takes {len(p_phs)} inputs, replacement {len(r_phs)}")
    phs = set(p_phs)
    graph = gm.graph
    taken: set[Node] = set()
    matches: list[Match] = []
    for gn in list(graph.nodes):
        if gn.op in ("placeholder", "output") or gn in taken:
            continue
        m: dict = {}
        if not _match(anchor_p, gn, m, phs):
            continue
        inner = [g for p, g in m.items() if p not in phs]
        if any(g in taken for g in inner) or len(set(inner)) != len(inner):
            continue
        inner_set = set(inner)
        if any(u not in inner_set for g in inner if g is not gn for u in g.users):
            continue
        taken |= inner_set
        matches.append(Match(gn, m))
    for match in matches:
        gn, m = match
        val_map = {r: m[p] for r, p in zip(r_phs, p_phs) if p in m}
        # (before the anchor's first user, where torch's rewriter puts the replacement)
        first_user = next((n for n in graph.nodes if n in gn.users), None)
        where = graph.inserting_before(first_user) if first_user is not None else graph.inserting_after(gn)
        with where:
            out = graph.graph_copy(rg, val_map)
        if not isinstance(out, Node):
            raise FgradNotImplementedError("replace_pattern: the replacement must return one value")
        gn.replace_all_uses_with(out)
        for node in reversed(list(graph.nodes)):
            if node in m.values() and node not in [m[p] for p in p_phs if p in m] and not node.users:
                graph.erase_node(node)
    gm.recompile()
    return matches
