"""`Graph`: a picture of a computation as a Graphviz DOT text, rendered on demand.

The DOT text is written here, not with the `graphviz` package, so that `Graph.source` works
where neither the package nor the Graphviz binaries are installed; rendering (`svg()`,
`png()`, `save()`, Jupyter's inline display) hands that text to the `graphviz` package, which
runs the `dot` binary.
"""
from __future__ import annotations

import os
import shutil

from ..core.errors import FgradRuntimeError, FgradValueError, GraphvizNotFoundError

INSTALL_HINT = ("Install the Graphviz binaries: `apt-get install graphviz` (Debian/Ubuntu), "
                "`conda install graphviz` (conda) or `brew install graphviz` (macOS)")

# What `save` writes for each file extension: a rendered format, or the DOT text itself.
_TEXT_EXTENSIONS = (".dot", ".gv")
_RENDERED_EXTENSIONS = (".svg", ".png", ".pdf", ".jpg", ".jpeg")


def binaries_available() -> bool:
    """Whether Graphviz's `dot` program is on PATH (where the graphviz package looks for it)."""
    return shutil.which("dot") is not None


class Html(str):
    """A label written as a Graphviz HTML-like label (`<...>`), not as a quoted string."""


def quote(text: str) -> str:
    """`text` as a DOT double-quoted string (a newline becomes a centred line break), or as
    an HTML-like label for an `Html` text."""
    if isinstance(text, Html):
        return f"<{text}>"
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attr_list(attrs: dict) -> str:
    return " ".join(f"{k}={quote(v)}" for k, v in attrs.items())


class Graph:
    """A drawn computation: `.source` is its DOT text; `.svg()`, `.png()` and
    `.save(path)` render it with Graphviz; in Jupyter it displays inline.

    `format` ("svg" or "png") is the picture Jupyter shows inline: one is offered, not both,
    so a notebook stores one image per graph. Without the Graphviz binaries Jupyter shows the
    text `repr`, which says how to install them; rendering explicitly raises
    `GraphvizNotFoundError` with the same advice.

    Graphs are built by `fgrad.viz.draw`; `add_node`, `add_edge` and `add_cluster` are the
    builder's methods.
    """

    def __init__(self, title: str, attrs: dict | None = None, format: str = "svg") -> None:
        if format not in ("svg", "png"):
            raise FgradValueError(f"Graph: format={format!r}; Jupyter shows 'svg' or 'png'")
        self.title = title
        self.format = format
        self.attrs = {"rankdir": "TB", "fontname": "Helvetica", "fontsize": "11",
                      "label": title, "labelloc": "t", **(attrs or {})}
        self.node_attrs = {"shape": "box", "style": "rounded,filled", "fillcolor": "white",
                           "fontname": "Helvetica", "fontsize": "10", "height": "0.3"}
        self.edge_attrs = {"arrowsize": "0.6", "color": "#555555", "fontname": "Helvetica"}
        self.nodes: dict[str, dict] = {}            # id -> attributes, in insertion order
        self.edges: list[tuple[str, str, dict]] = []
        self.clusters: dict[str, tuple[dict, list[str]]] = {}  # id -> (attributes, member ids)
        self._source: str | None = None

    # --- building --------------------------------------------------------------------------

    def add_node(self, node_id: str, label: str, cluster: str | None = None, **attrs: str) -> str:
        """Add (or update) node `node_id` with `label`, inside `cluster` if given."""
        self.nodes[node_id] = {"label": label, **attrs}
        if cluster is not None:
            self.clusters[cluster][1].append(node_id)
        self._source = None
        return node_id

    def add_edge(self, src: str, dst: str, **attrs: str) -> None:
        """Add an edge from node `src` to node `dst`."""
        self.edges.append((src, dst, attrs))
        self._source = None

    def add_cluster(self, cluster_id: str, label: str, **attrs: str) -> str:
        """Add a box drawn around the nodes later added with `cluster=cluster_id`. The id
        starts with "cluster", which is how Graphviz knows to draw the box."""
        if not cluster_id.startswith("cluster"):
            raise FgradValueError(f"Graph.add_cluster: {cluster_id!r} must start with 'cluster'")
        self.clusters[cluster_id] = ({"label": label, **attrs}, [])
        self._source = None
        return cluster_id

    # --- DOT text --------------------------------------------------------------------------

    @property
    def source(self) -> str:
        """The graph as Graphviz DOT text (needs neither the graphviz package nor `dot`)."""
        if self._source is None:
            self._source = self._write()
        return self._source

    def _write(self) -> str:
        lines = ["digraph fgrad {",
                 f"  graph [{_attr_list(self.attrs)}];",
                 f"  node [{_attr_list(self.node_attrs)}];",
                 f"  edge [{_attr_list(self.edge_attrs)}];"]
        in_cluster = set()
        for cid, (attrs, members) in self.clusters.items():
            lines.append(f"  subgraph {quote(cid)} {{")
            lines.append(f"    graph [{_attr_list(attrs)}];")
            for nid in members:
                lines.append(f"    {quote(nid)} [{_attr_list(self.nodes[nid])}];")
                in_cluster.add(nid)
            lines.append("  }")
        for nid, attrs in self.nodes.items():
            if nid not in in_cluster:
                lines.append(f"  {quote(nid)} [{_attr_list(attrs)}];")
        for src, dst, attrs in self.edges:
            extra = f" [{_attr_list(attrs)}]" if attrs else ""
            lines.append(f"  {quote(src)} -> {quote(dst)}{extra};")
        lines.append("}")
        return "\n".join(lines) + "\n"

    # --- rendering -------------------------------------------------------------------------

    def render(self, format: str = "svg") -> bytes:
        """The picture in `format` (any format Graphviz's `dot -T` knows: svg, png, pdf...)."""
        try:
            # optional dependency (the viz extra): only rendering needs it, .source does not
            import graphviz
        except ImportError:
            raise GraphvizNotFoundError(
                "fgrad.viz: rendering a graph needs the `graphviz` Python package: "
                "`pip install graphviz` (or `pip install 'fgrad[viz]'`), and the Graphviz "
                f"binaries. {INSTALL_HINT}. The DOT text is in `.source` without either.") from None
        try:
            return graphviz.Source(self.source).pipe(format=format)
        except graphviz.ExecutableNotFound:
            raise GraphvizNotFoundError(
                f"fgrad.viz: Graphviz's `dot` program was not found on PATH, and it draws the "
                f"picture. {INSTALL_HINT}. The DOT text is in `.source` without it.") from None

    def svg(self) -> str:
        """The picture as SVG text."""
        return self.render("svg").decode("utf-8")

    def png(self) -> bytes:
        """The picture as PNG bytes."""
        return self.render("png")

    def save(self, path: str | os.PathLike, format: str | None = None) -> str:
        """Write the picture to `path`, in `format` or the one its extension names (.svg, .png,
        .pdf, .jpg; .dot or .gv write the DOT text, which needs no Graphviz). Returns the path."""
        path = os.fspath(path)
        ext = os.path.splitext(path)[1].lower()
        fmt = format or ext.lstrip(".")
        if format is None and ext not in _TEXT_EXTENSIONS + _RENDERED_EXTENSIONS:
            raise FgradValueError(f"Graph.save: cannot tell the format of {path!r} from its extension; "
                             f"use one of {', '.join(_RENDERED_EXTENSIONS + _TEXT_EXTENSIONS)} "
                             "or pass format='svg' (any `dot -T` format)")
        if fmt in ("dot", "gv"):
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(self.source)
        else:
            data = self.render("jpg" if fmt == "jpeg" else fmt)
            with open(path, "wb") as fh:
                fh.write(data)
        return path

    # --- Jupyter ---------------------------------------------------------------------------

    # IPython calls every _repr_*_ method it finds and keeps each non-None result, so each
    # offers its picture only in the chosen `format` (one image per graph in a notebook), and
    # none without the binaries: Jupyter then falls back to __repr__, which says what to install.
    def _repr_svg_(self) -> str | None:
        if self.format != "svg" or not binaries_available():
            return None
        return self.svg()

    def _repr_png_(self) -> bytes | None:
        if self.format != "png" or not binaries_available():
            return None
        return self.png()

    def __repr__(self) -> str:
        text = (f"<fgrad.viz.Graph {self.title!r}: {len(self.nodes)} nodes, {len(self.edges)} edges, "
                f"{len(self.clusters)} clusters>")
        if not binaries_available():
            text += (f"\n(Graphviz's `dot` program is not installed, so no picture. {INSTALL_HINT}. "
                     "`.source` holds the DOT text.)")
        return text
