"""Invention graphs as small, self-contained SVG for the web page (no JavaScript, no external files).

Layout: layers by breadth-first distance from the graph's first node (the claim's subject), one
column a layer, nodes in first-mention order within a column; nodes a BFS does not reach start
their own tree below. Feature nodes are boxes, relation nodes rounded and italic; edges are drawn
by type (part_of solid, functional dashed, example_of dotted). Matched nodes are filled in
proportion to their similarity; every node has a ``<title>`` with its full text (hover) and
``data-node`` with its index. Text is XML-escaped, so node text from a document cannot inject
markup.

Example::

    svg = graph_svg(graph, highlight={0: 0.9, 3: 0.6}, max_nodes=40, label="query")
"""

from __future__ import annotations

from collections import deque
from html import escape

from graphtx.graphs.graph import InventionGraph
from graphtx.index.explain import focus

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 170, 30, 40, 12, 8
CHARS = 24  # node text shown in a box (the rest in its title)
EDGE_STYLE = {"part_of": "", "functional": ' stroke-dasharray="5 3"', "example_of": ' stroke-dasharray="1 3"'}


def _layers(graph: InventionGraph) -> list[list[int]]:
    """Nodes grouped by BFS distance (undirected) from node 0, then from each unreached node in order."""
    n = graph.num_nodes
    neighbours: list[list[int]] = [[] for _ in range(n)]
    for s, d in zip(graph.edge_src, graph.edge_dst):
        neighbours[s].append(d)
        neighbours[d].append(s)
    depth = [-1] * n
    layers: list[list[int]] = []
    for start in range(n):
        if depth[start] >= 0:
            continue
        depth[start] = 0
        queue = deque([start])
        while queue:
            v = queue.popleft()
            while len(layers) <= depth[v]:
                layers.append([])
            layers[depth[v]].append(v)
            for w in sorted(neighbours[v]):
                if depth[w] < 0:
                    depth[w] = depth[v] + 1
                    queue.append(w)
    return layers


def graph_svg(
    graph: InventionGraph, highlight: dict[int, float] | None = None, max_nodes: int = 40, label: str = ""
) -> str:
    """An SVG document of ``graph`` (at most ``max_nodes`` nodes: the matched ones, then the highest degree)."""
    highlight = highlight or {}
    graph, highlight, note = focus(graph, highlight, max_nodes)
    layers = _layers(graph)
    pos: dict[int, tuple[float, float]] = {}
    for col, layer in enumerate(layers):
        for row, v in enumerate(layer):
            pos[v] = (PAD + col * (BOX_W + GAP_X), PAD + 22 + row * (BOX_H + GAP_Y))
    width = PAD * 2 + max(1, len(layers)) * (BOX_W + GAP_X) - GAP_X
    height = PAD * 2 + 22 + max((len(layer) for layer in layers), default=1) * (BOX_H + GAP_Y)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="graph" width="{width}" height="{height}" viewBox="0 0 {width} {height}" role="img">',
        f"<title>{escape(label or graph.doc_id)}{escape(note)}</title>",
        f'<text x="{PAD}" y="{PAD + 12}" class="graph-label">{escape(label)}{escape(note)}</text>',
    ]
    for s, d, t in graph.edges():
        (x1, y1), (x2, y2) = pos[s], pos[d]
        a, b = (x1 + BOX_W, y1 + BOX_H / 2), (x2, y2 + BOX_H / 2)
        if x1 > x2:
            a, b = (x1, y1 + BOX_H / 2), (x2 + BOX_W, y2 + BOX_H / 2)
        elif x1 == x2:
            a, b = (x1 + BOX_W / 2, y1 + (BOX_H if y1 < y2 else 0)), (x2 + BOX_W / 2, y2 + (0 if y1 < y2 else BOX_H))
        out.append(
            f'<line x1="{a[0]:.0f}" y1="{a[1]:.0f}" x2="{b[0]:.0f}" y2="{b[1]:.0f}" class="edge edge-{escape(t)}"{EDGE_STYLE.get(t, "")}><title>{escape(t)}</title></line>'
        )
    for v in range(graph.num_nodes):
        x, y = pos[v]
        text = " ".join(graph.node_text[v].split())
        shown = text if len(text) <= CHARS else text[: CHARS - 1] + "…"
        kind = graph.node_type[v]
        matched = v in highlight
        fill = f' fill-opacity="{0.25 + 0.75 * min(max(highlight[v], 0.0), 1.0):.2f}"' if matched else ""
        rx = 12 if kind == "relation" else 3
        out.append(
            f'<g class="node node-{escape(kind)}{" matched" if matched else ""}" data-node="{v}"><title>{escape(text)}</title>'
            f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="{rx}"{fill}/>'
            f'<text x="{x + 6:.0f}" y="{y + BOX_H / 2 + 4:.0f}">{escape(shown)}</text></g>'
        )
    out.append("</svg>")
    return "\n".join(out)


def hit_svgs(hit, max_nodes: int = 40) -> dict[str, str]:
    """{"query": svg, "hit": svg} of an explained hit, each graph's matched nodes shaded ({} without an explanation)."""
    e = hit.explanation
    if e is None:
        return {}
    q_high, h_high = e.highlights()
    return {
        "query": graph_svg(e.query_graph, q_high, max_nodes, label="query"),
        "hit": graph_svg(e.hit_graph, h_high, max_nodes, label=f"{hit.doc_id}"),
    }
