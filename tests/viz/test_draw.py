"""fgrad.viz.draw: the DOT text of known computations has the expected nodes, edges, labels,
colours and boxes (no Graphviz needed), and rendered pictures are valid images (skipped
where the Graphviz binaries or the graphviz package are missing)."""
from __future__ import annotations

import pathlib
import re
import struct

import numpy as np
import pytest

import fgrad
import fgrad.torch as torch
import fgrad.torch.nn as nn
import fgrad.numpy as fnp
import fgrad.viz as viz
from fgrad.interpreters.compile.regions import plan
from fgrad.viz._jaxpr import phase_color


# --- reading the DOT text back --------------------------------------------------------------

_ATTR = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
_NODE = re.compile(r'^\s*"([^"]+)" \[(.*)\];$')
_EDGE = re.compile(r'^\s*"([^"]+)" -> "([^"]+)"(?: \[(.*)\])?;$')
_CLUSTER = re.compile(r'^\s*subgraph "(cluster[^"]*)" \{$')


def _attrs(text: str | None) -> dict:
    return {k: v.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
            for k, v in _ATTR.findall(text or "")}


def parse(source: str):
    """(nodes {id: attrs}, edges [(src, dst, attrs)], clusters {id: (attrs, [member ids])})."""
    nodes, edges, clusters, current = {}, [], {}, None
    for line in source.splitlines():
        if m := _CLUSTER.match(line):
            current = m.group(1)
            clusters[current] = ({}, [])
        elif line.strip() == "}":
            current = None
        elif current is not None and line.strip().startswith("graph ["):
            clusters[current][0].update(_attrs(line))
        elif m := _EDGE.match(line):
            edges.append((m.group(1), m.group(2), _attrs(m.group(3))))
        elif m := _NODE.match(line):
            nodes[m.group(1)] = _attrs(m.group(2))
            if current is not None:
                clusters[current][1].append(m.group(1))
    return nodes, edges, clusters


def eqn_nodes(nodes: dict) -> list[tuple[str, dict]]:
    """The equation nodes, in program order (ids e0, e1, ...)."""
    eqns = [(k, v) for k, v in nodes.items() if re.fullmatch(r"e\d+", k)]
    return sorted(eqns, key=lambda kv: int(kv[0][1:]))


def prim(attrs: dict) -> str:
    return attrs["label"].split("\n")[0]


def label_of(nodes: dict, text: str) -> list[str]:
    """Ids of the nodes whose label's first line is `text`."""
    return [k for k, v in nodes.items() if v["label"].split("\n")[0] == text]


def legend(source: str) -> list[tuple[str, str]]:
    """(phase, colour) of each entry of the legend (an HTML-like table), in order."""
    return [(name, colour) for colour, name in re.findall(r'<TD BGCOLOR="([^"]+)">([^<]+)</TD>', source)]


def needs_graphviz():
    pytest.importorskip("graphviz")
    if not viz.binaries_available():
        pytest.skip("the Graphviz binaries (dot) are not installed: apt-get install graphviz")


# --- a traced function ------------------------------------------------------------------------

def test_function_ir_nodes_edges_and_labels():
    def f(x, y):
        return fnp.sin(x) * y + 2.0

    x, y = np.ones(3, np.float32), np.ones(3, np.float32)
    g = viz.draw(f, x, y)
    nodes, edges, clusters = parse(g.source)
    closed = fgrad.make_jaxpr(f)(x, y)
    eqns = eqn_nodes(nodes)
    assert [prim(a) for _, a in eqns] == [e.primitive.name for e in closed.eqns] == ["sin", "mul", "add"]
    assert all(a["label"].endswith("\nf32[3]") for _, a in eqns)
    assert nodes["in0"]["label"] == "x\nf32[3]" and nodes["in1"]["label"] == "y\nf32[3]"
    assert nodes["out0"]["label"] == "output\nf32[3]"
    (lit,) = [k for k in nodes if k.startswith("lit")]
    assert nodes[lit]["label"].startswith("2.0 : f32")
    assert {(s, d) for s, d, _ in edges} == {
        ("in0", "e0"), ("e0", "e1"), ("in1", "e1"), ("e1", "e2"), (lit, "e2"), ("e2", "out0")}
    assert len(edges) == 6 and not clusters  # no phases (no legend), no regions


def test_constants_params_and_pytree_input_names():
    c = np.arange(6.0).reshape(2, 3)

    def loss(params, x):
        return fnp.sum(fnp.tanh(x @ params["w"] + c), axis=1)

    p = {"w": np.ones((4, 3))}
    nodes, edges, _ = parse(viz.draw(loss, p, np.ones((2, 4))).source)
    assert nodes["in0"]["label"] == "params['w']\nf64[4,3]"
    assert nodes["in1"]["label"] == "x\nf64[2,4]"
    assert nodes["c0"]["label"] == "const\nf64[2,3]"
    (red,) = [a for _, a in eqn_nodes(nodes) if prim(a) == "reduce_sum"]
    assert red["label"] == "reduce_sum\naxes=(1,)\nf64[2]"
    adds = [k for k, a in eqn_nodes(nodes) if prim(a) == "add"]
    assert ("c0", adds[0]) in {(s, d) for s, d, _ in edges}


def test_grad_colours_forward_and_backward():
    # f = sin(x) * x: grad keeps the forward sin (mul's VJP reads it); sin's VJP (sin_grad:
    # ct cos x, one primitive) and the sum come from the VJP rules
    f = lambda x: fnp.sin(x) * x  # noqa: E731
    g = viz.draw(fgrad.grad(f), 1.0)
    nodes, _, _ = parse(g.source)
    eqns = eqn_nodes(nodes)
    assert [e.primitive.name for e in fgrad.make_jaxpr(fgrad.grad(f))(1.0).eqns] == [prim(a) for _, a in eqns]
    phases = {prim(a): a["class"] for _, a in eqns}
    assert phases == {"sin": "forward", "sin_grad": "backward", "add": "backward"}
    for _, a in eqns:
        assert a["fillcolor"] == phase_color(0 if a["class"] == "forward" else 1)
    assert phase_color(0) != phase_color(1)
    assert legend(g.source) == [("forward", phase_color(0)), ("backward", phase_color(1))]
    assert "forward and backward" in g.title


def test_second_derivative_has_two_backward_passes():
    # d²/dx² (x log x) = 1/x: log's VJP divides in the first derivative's backward pass (its
    # division is kept: the second pass reads it); the second derivative's backward pass makes
    # everything else
    f = lambda x: fnp.log(x) * x  # noqa: E731
    source = viz.draw(fgrad.grad(fgrad.grad(f)), 1.0).source
    nodes, _, _ = parse(source)
    eqns = eqn_nodes(nodes)
    got = sorted((prim(a), a["class"]) for _, a in eqns)
    assert got == sorted([("div", "backward-pass-1"), ("div", "backward-pass-2"), ("neg", "backward-pass-2"),
                          ("mul", "backward-pass-2"), ("add", "backward-pass-2"), ("add", "backward-pass-2")])
    assert sorted(prim(a) for _, a in eqns) == sorted(
        e.primitive.name for e in fgrad.make_jaxpr(fgrad.grad(fgrad.grad(f)))(1.0).eqns)
    assert legend(source) == [("forward", phase_color(0)), ("backward pass 1", phase_color(1)),
                              ("backward pass 2", phase_color(2))]
    assert len({phase_color(k) for k in range(3)}) == 3


def test_a_backward_pass_nested_in_a_rule_belongs_to_its_pass():
    # checkpoint's VJP rule reruns the forward computation and runs a backward pass of its own:
    # all of it is the one backward pass of grad
    f = fgrad.checkpoint(lambda x: fnp.sum(fnp.sin(fnp.sin(x))))
    source = viz.draw(fgrad.grad(f), np.ones(3)).source
    got = sorted((prim(a), a["class"]) for _, a in eqn_nodes(parse(source)[0]))
    assert got == [("sin", "backward"), ("sin_grad", "backward"), ("sin_grad", "backward")]
    assert [name for name, _ in legend(source)] == ["forward", "backward"]


def test_forward_mode_and_plain_functions_have_no_backward():
    for f in (fgrad.jacfwd(fnp.sin), lambda x: fnp.exp(x) * 2.0):
        source = viz.draw(f, np.ones(3)).source
        nodes, _, _ = parse(source)
        assert eqn_nodes(nodes) and "legend" not in nodes and not legend(source)
        assert all("class" not in a and a["fillcolor"] == phase_color(0) for _, a in eqn_nodes(nodes))


def test_backward_inside_the_function_is_backward():
    # vjp called inside the traced function, its pullback applied there too
    def f(x):
        y, pull = fgrad.vjp(fnp.exp, x)
        return pull(y)[0]

    nodes, _, _ = parse(viz.draw(f, np.ones(2)).source)
    phases = [(prim(a), a["class"]) for _, a in eqn_nodes(nodes)]
    assert phases == [("exp", "forward"), ("mul", "backward")]


def test_draw_a_jaxpr_and_tensor_arguments():
    closed = fgrad.make_jaxpr(lambda x: fnp.cos(x) * x)(np.ones(2))
    nodes, _, _ = parse(viz.draw(closed).source)
    assert [prim(a) for _, a in eqn_nodes(nodes)] == ["cos", "mul"]
    t = torch.ones(2, 3)
    nodes, _, _ = parse(viz.draw(lambda x: (x * 2.0).sum(), t).source)
    assert nodes["in0"]["label"] == "x\nf32[2,3]"
    assert [prim(a) for _, a in eqn_nodes(nodes)][-1] == "reduce_sum"


# --- the Tensor facade's graph --------------------------------------------------------------

def test_tensor_graph_of_the_seed_examples():
    x = torch.tensor(4.0, requires_grad=True)
    nodes, edges, _ = parse(viz.draw(x ** 2, params={"x": x}).source)
    (pw,) = label_of(nodes, "PowBackward0")
    (leaf,) = label_of(nodes, "x")
    assert nodes[leaf]["label"] == "x\nf32[]" and (leaf, pw) in {(s, d) for s, d, _ in edges}
    assert {(nodes[s]["label"].split("\n")[0], nodes[d]["label"].split("\n")[0]) for s, d, _ in edges} == {
        ("x", "PowBackward0"), ("PowBackward0", "output")}

    w = torch.tensor([1.0], requires_grad=True)
    x = torch.tensor([2.0], requires_grad=True)
    y = torch.mul(torch.add(w, x), torch.add(w, 1))
    nodes, edges, _ = parse(viz.draw(y, params={"w": w, "x": x}).source)
    first = {k: v["label"].split("\n")[0] for k, v in nodes.items()}
    assert sorted(first.values()) == ["AddBackward0", "AddBackward0", "MulBackward0", "output", "w", "x"]
    named = sorted((first[s], first[d]) for s, d, _ in edges)
    assert named == [("AddBackward0", "MulBackward0"), ("AddBackward0", "MulBackward0"),
                     ("MulBackward0", "output"), ("w", "AddBackward0"), ("w", "AddBackward0"),
                     ("x", "AddBackward0")]
    # w feeds both adds, x only the first: the add that x feeds is w + x
    (wx,) = {d for s, d, _ in edges if s == label_of(nodes, "x")[0]}
    assert {first[s] for s, d, _ in edges if d == wx} == {"w", "x"}


def test_model_leaves_are_named_and_saved_shapes_shown():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    loss = net(torch.randn(16, 4)).pow(2).mean()
    params = dict(net.named_parameters())
    nodes, edges, _ = parse(viz.draw(loss, params=params).source)
    leaves = sorted(v["label"] for v in nodes.values() if v.get("fillcolor") == "#add8e6")
    assert leaves == ["0.bias\nf32[8]", "0.weight\nf32[8,4]", "2.bias\nf32[3]", "2.weight\nf32[3,8]"]
    assert not any(v["label"].startswith("saved") for v in nodes.values())
    assert not any(a.get("style") == "dashed" for _, _, a in edges)

    nodes, edges, _ = parse(viz.draw(loss, params=params, show_saved=True).source)
    saved = {k: v["label"] for k, v in nodes.items() if v["label"].startswith("saved")}
    dashed = [(s, d, a["label"]) for s, d, a in edges if a.get("style") == "dashed"]
    first = {k: v["label"].split("\n")[0] for k, v in nodes.items()}
    # the first layer (PyTorch's addmm(bias, input, weight.t())) saved its input batch and the
    # weight's transposed view, not a copy; ReLU its output
    roles = sorted((nodes[s]["label"], first[d], r) for s, d, r in dashed)
    assert ("saved\nf32[16,4]", "AddmmBackward0", "input 1") in roles
    assert ("saved\nf32[4,8]", "AddmmBackward0", "input 2") in roles
    assert ("saved\nf32[16,8]", "ReluBackward0", "output") in roles
    assert ("saved\nf32[16,8]", "AddmmBackward0", "input 1") in roles  # one value, one node
    assert list(saved.values()).count("saved\nf32[16,8]") == 1
    assert all(s in saved or first[s] in params for s, _, _ in dashed)


def test_saved_values_freed_or_modified_are_marked():
    w = torch.randn(3, requires_grad=True)
    loss = (w * w).sum()
    loss.backward()
    nodes, _, _ = parse(viz.draw(loss, show_saved=True).source)
    assert nodes[label_of(nodes, "MulBackward0")[0]]["label"].endswith("(saved values freed)")

    x = torch.randn(3, requires_grad=True)
    y = x.exp()
    z = y.sum()
    y.add_(1.0)  # exp saved its output, now overwritten
    nodes, _, _ = parse(viz.draw(z, show_saved=True).source)
    (mod,) = [v for v in nodes.values() if v["label"].startswith("saved (modified in place)")]
    assert mod["label"].endswith("f32[3]") and mod["color"] == "red"


def test_tensor_graph_errors():
    with pytest.raises(ValueError, match="requires_grad=True"):
        viz.draw(torch.randn(3))
    t = torch.randn(3, requires_grad=True) * 2
    with pytest.raises(TypeError, match="takes no arguments"):
        viz.draw(t, 1.0)
    with pytest.raises(TypeError, match="apply to a Tensor's graph"):
        viz.draw(fnp.sin, 1.0, show_saved=True)
    with pytest.raises(TypeError, match="named_parameters"):
        viz.draw(t, params={"w": np.ones(3)})
    with pytest.raises(TypeError, match="takes a function"):
        viz.draw(3)


# --- jit: the compiled program's regions ---------------------------------------------------------

def test_jit_fused_region_is_one_box():
    jf = fgrad.jit(lambda x, y: fnp.sum(fnp.tanh(x * y + 1.0) * x - y))
    x = np.ones(100, np.float32)
    nodes, edges, clusters = parse(viz.draw(jf, x, x).source)
    program = jf.lower(x, x)
    steps = plan(fgrad.make_jaxpr(jf)(x, x).jaxpr)
    kernel_steps = [s for s in steps if s.kind == "kernel"]
    assert len(kernel_steps) == 1 and len(clusters) == 1
    ((attrs, members),) = clusters.values()
    assert [prim(nodes[m]) for m in members] == [e.primitive.name for e in kernel_steps[0].eqns] == [
        "mul", "add", "tanh", "mul", "sub"]
    spec, gname = program.kernels[0]
    assert f"fused kernel {gname} = {spec.name}" in attrs["label"]
    assert f"# --- {gname} = {spec.name} ---" in program.as_text()
    outside = [(k, prim(a)) for k, a in eqn_nodes(nodes) if k not in members]
    assert [p for _, p in outside] == ["reduce_sum"]
    assert (members[-1], outside[0][0]) in {(s, d) for s, d, _ in edges}  # the kernel's result is summed
    assert nodes["in0"]["label"] == "x\nf32[100]"
    assert len(eqn_nodes(nodes)) == sum(len(s.eqns) for s in steps)


def test_jit_scalar_region_and_unfused_calls():
    js = fgrad.jit(lambda a, b: fnp.sin(a) * b + a / b)
    nodes, _, clusters = parse(viz.draw(js, 1.0, 2.0).source)
    ((attrs, members),) = clusters.values()
    assert attrs["label"].startswith("scalar region") and len(members) == 4
    # two element-wise equations are fewer than a kernel needs: they run as calls, unboxed
    j2 = fgrad.jit(lambda x: fnp.exp(x) * 2.0)
    nodes, _, clusters = parse(viz.draw(j2, np.ones(5)).source)
    assert not clusters and [prim(a) for _, a in eqn_nodes(nodes)] == ["exp", "mul"]


# --- Graph: DOT text, errors without Graphviz, rendering -------------------------------------------

def test_dot_text_escapes_labels_and_saves_without_graphviz(tmp_path):
    g = viz.Graph("t")
    g.add_node("a", 'say "hi" \\ there\nline 2')
    g.add_node("b", "b")
    g.add_edge("a", "b", style="dashed")
    assert '"a" [label="say \\"hi\\" \\\\ there\\nline 2"];' in g.source
    nodes, edges, _ = parse(g.source)
    assert nodes["a"]["label"] == 'say "hi" \\ there\nline 2' and edges == [("a", "b", {"style": "dashed"})]
    path = g.save(tmp_path / "g.dot")
    assert pathlib.Path(path).read_text() == g.source
    with pytest.raises(ValueError, match="extension"):
        g.save(tmp_path / "g.unknown")


def test_missing_binaries_give_a_clear_error_and_source_still_works(monkeypatch, tmp_path):
    g = viz.draw(fnp.sin, 1.0)
    monkeypatch.setenv("PATH", str(tmp_path))  # no `dot` anywhere on it
    assert not viz.binaries_available()
    assert "sin" in g.source
    assert g._repr_svg_() is None and g._repr_png_() is None  # Jupyter falls back to the repr
    assert "apt-get install graphviz" in repr(g)
    with pytest.raises(viz.GraphvizNotFoundError) as e:
        g.save(tmp_path / "g.png")
    for cmd in ("apt-get install graphviz", "conda install graphviz", "brew install graphviz", ".source"):
        assert cmd in str(e.value)


def test_missing_python_package_names_the_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "graphviz", None)  # import graphviz fails
    with pytest.raises(viz.GraphvizNotFoundError, match="pip install graphviz"):
        viz.draw(fnp.sin, 1.0).svg()


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_rendered_png_and_svg_are_valid(tmp_path):
    needs_graphviz()
    g = viz.draw(fgrad.grad(lambda x: fnp.sin(x) * x), 1.0)
    w, h = _png_size(g.png())
    assert 100 < w < 3000 and 150 < h < 3000  # 4 equations and a legend, a few boxes tall
    path = g.save(tmp_path / "g.png")
    assert _png_size(pathlib.Path(path).read_bytes()) == (w, h)
    svg = pathlib.Path(g.save(tmp_path / "g.svg")).read_text(encoding="utf-8")
    assert svg.lstrip().startswith("<?xml") and "<svg" in svg and "backward" in svg
    assert g._repr_svg_().count("<svg") == 1 and g._repr_png_() is None
    gp = viz.draw(fgrad.grad(fnp.sin), 1.0, format="png")
    assert gp._repr_svg_() is None and _png_size(gp._repr_png_())[0] > 10
    # a bigger graph draws bigger
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    big = viz.draw(net(torch.randn(2, 4)).sum(), params=dict(net.named_parameters()), show_saved=True)
    assert _png_size(big.png())[1] > _png_size(viz.draw(fnp.sin, 1.0).png())[1]
