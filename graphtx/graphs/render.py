"""Draw an InventionGraph as a PNG a patent searcher can read.

The picture is a left-to-right tree: each whole sits left of its parts, so a claim's main
feature ("snowthrower") is the leftmost box and its parts stack to its right. Every node owns a
horizontal band of its column, so boxes never overlap; a long list of leaf parts (one device,
forty parts) is staggered over two sub-columns so the picture stays about half as tall.

* feature nodes  — rounded blue boxes;
* relation nodes — smaller italic amber boxes, wrapped at ~25 characters a line;
* ``part_of`` solid grey arrows, ``example_of`` dashed purple, ``functional`` dotted green;
* ``highlight`` shades matched nodes red, darker for higher scores, and prints the score.

The layout tree is taken from the edges in order of trust: part → whole and example → general
first, then functional links (feature → relation node → feature). Edges not used by the tree
are drawn as well, curving across the gaps between columns. Nothing is random, so the same
graph always gives the same picture.

Example::

    render_graph(graph, "/tmp/US1234567.png", highlight={2: 0.9, 5: 0.4})
"""

from __future__ import annotations

import math
import os
import textwrap
from pathlib import Path

from graphtx.graphs.graph import InventionGraph
from graphtx.graphs.layout import anchors, edge_path, layout

__all__ = ["render_graph", "top_degree_nodes"]

# --- style -------------------------------------------------------------------------------
DPI = 120
WRAP = 25  # characters a line for node labels
MAX_LINES = {"feature": 3, "relation": 4}  # longer labels end in " …"
FONT = {"feature": 9.0, "relation": 8.0}  # points
BOX_PAD = 0.07  # inches between text and box border
MAX_FIG = (30.0, 36.0)  # inches (width, height); larger drawings are scaled down
MIN_FIG = (6.5, 3.2)  # inches; room for the title and the legend
SIDE_IN = 0.25  # inches of margin left and right

NODE_STYLE = {
    "feature": dict(face="#e3eefa", edge="#2b5c8a", text="#10263d", style="normal", box="round"),
    "relation": dict(face="#fff4d1", edge="#b8860b", text="#4a3500", style="italic", box="square"),
}
EDGE_STYLE = {
    "part_of": dict(color="#4d4d4d", linestyle="-", label="part_of (part → whole)"),
    "example_of": dict(color="#7b3fa0", linestyle=(0, (5, 3)), label="example_of (example → general)"),
    "functional": dict(color="#2e8b57", linestyle=(0, (1.2, 2.2)), label="functional (feature → relation → feature)"),
}
HIGHLIGHT_CMAP = "Reds"


# --- node selection ----------------------------------------------------------------------
def top_degree_nodes(graph: InventionGraph, max_nodes: int) -> list[int]:
    """The ``max_nodes`` nodes of highest degree (in + out, ties: lower index), in index order."""
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be >= 1, got {max_nodes}")
    n = graph.num_nodes
    if n <= max_nodes:
        return list(range(n))
    degree = [0] * n
    for s, d in zip(graph.edge_src, graph.edge_dst):
        degree[s] += 1
        degree[d] += 1
    return sorted(sorted(range(n), key=lambda i: (-degree[i], i))[:max_nodes])


def _caption(graph: InventionGraph, shown: int, title: str | None) -> tuple[str, str]:
    """(main title, detail line)."""
    n_feat = len(graph.feature_indices)
    head = f"{graph.doc_id} · {graph.kind} graph"
    stats = (
        f"{_count(graph.num_nodes, 'node')} ({_count(n_feat, 'feature')}, "
        f"{_count(graph.num_nodes - n_feat, 'relation')}), {_count(graph.num_edges, 'edge')}"
        f" · text: {graph.text_source}"
    )
    if shown < graph.num_nodes:
        stats += f" · showing {shown} of {graph.num_nodes} nodes (highest degree)"
    if graph.truncated:
        stats += " · builder hit its node cap"
    return (title, f"{head} · {stats}") if title else (head, stats)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _label(text: str, node_type: str) -> str:
    text = " ".join(text.split()) or "∅"
    lines = textwrap.wrap(text, WRAP, max_lines=MAX_LINES[node_type], placeholder=" …")
    return "\n".join(lines) or text[:WRAP]


def render_graph(
    graph: InventionGraph,
    out_path: str | os.PathLike,
    *,
    highlight: dict[int, float] | None = None,
    max_nodes: int = 60,
    title: str | None = None,
) -> Path:
    """Draw ``graph`` to the PNG ``out_path`` and return its path.

    ``highlight`` maps node index → score in [0, 1]; those nodes are shaded red, darker for
    higher scores. Graphs over ``max_nodes`` nodes show only their ``max_nodes`` nodes of
    highest degree (the title says so). Uses matplotlib's Agg canvas directly: no pyplot, no
    global backend switch, no figure left open.
    """
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    out = Path(out_path)
    highlight = dict(highlight or {})
    for i, score in highlight.items():
        if not 0 <= i < graph.num_nodes:
            raise ValueError(f"highlight node {i} outside {graph.num_nodes} nodes")
        if not math.isfinite(score):
            raise ValueError(f"highlight score for node {i} is {score}")
        highlight[i] = min(max(float(score), 0.0), 1.0)

    nodes = top_degree_nodes(graph, max_nodes) if graph.num_nodes else []
    main, detail = _caption(graph, len(nodes), title)

    fig = Figure(dpi=DPI)
    FigureCanvasAgg(fig)
    if not nodes:
        fig.set_size_inches(*MIN_FIG)
        fig.text(0.5, 0.93, main, ha="center", va="top", fontsize=12, weight="bold", parse_math=False)
        fig.text(0.5, 0.84, detail, ha="center", va="top", fontsize=8.5, color="#555555", wrap=True, parse_math=False)
        fig.text(0.5, 0.45, "empty graph", ha="center", va="center", fontsize=16, color="#888888", style="italic")
        return _save(fig, out)

    keep = set(nodes)
    edges = sorted({(s, d, t) for s, d, t in graph.edges() if s in keep and d in keep and s != d})
    cmap = matplotlib.colormaps[HIGHLIGHT_CMAP]

    # measure every label at its final font so the layout is exact
    ax = fig.add_axes((0, 0, 1, 1))
    ax.set_axis_off()
    renderer = fig.canvas.get_renderer()
    texts, size = {}, {}
    for v in nodes:
        kind = graph.node_type[v]
        label = _label(graph.node_text[v], kind)
        if v in highlight:
            label += f"\n[{highlight[v]:.2f}]"
        t = ax.text(
            0,
            0,
            label,
            ha="center",
            va="center",
            fontsize=FONT[kind],
            style=NODE_STYLE[kind]["style"],
            linespacing=1.15,
            zorder=4,
            parse_math=False,
        )
        bb = t.get_window_extent(renderer)
        texts[v] = t
        size[v] = (bb.width / DPI + 2 * BOX_PAD, bb.height / DPI + 2 * BOX_PAD)

    lay = layout(graph, nodes, edges, size)

    # figure size: the drawing at true size plus margins for title and legend, scaled down
    # when too large
    scale = min(1.0, MAX_FIG[0] / (lay.width + 2 * SIDE_IN), MAX_FIG[1] / (lay.height + 2.0))
    fig_w = max((lay.width + 2 * SIDE_IN) * scale, MIN_FIG[0])
    wrap_chars = max(40, int(fig_w * 72 / (0.62 * 8.5)))
    main_lines = textwrap.wrap(main, max(30, int(fig_w * 72 / (0.62 * 12)))) or [""]
    detail_lines = textwrap.wrap(detail, wrap_chars)
    handles = _legend_handles(cmap, bool(highlight))
    ncol = len(handles) if fig_w >= 13 else 3 if fig_w >= 8.5 else 2
    top_in = 0.15 + 0.24 * len(main_lines) + 0.17 * len(detail_lines) + 0.15
    bottom_in = 0.3 + 0.19 * math.ceil(len(handles) / ncol) + 0.1
    fig_h = max(lay.height * scale + top_in + bottom_in, MIN_FIG[1])
    fig.set_size_inches(fig_w, fig_h)
    draw_w, draw_h = lay.width * scale, lay.height * scale
    left = (fig_w - draw_w) / 2
    bottom = bottom_in + (fig_h - top_in - bottom_in - draw_h) / 2
    ax.set_position((left / fig_w, bottom / fig_h, draw_w / fig_w, draw_h / fig_h))
    ax.set_xlim(0, lay.width)
    ax.set_ylim(lay.height, 0)  # y grows downwards

    # boxes and labels
    for v in nodes:
        kind = graph.node_type[v]
        st = NODE_STYLE[kind]
        face, edge, color, lw = st["face"], st["edge"], st["text"], 1.0
        if v in highlight:
            score = highlight[v]
            face, edge, lw = cmap(0.15 + 0.75 * score), cmap(0.95), 1.8
            color = "white" if score > 0.55 else "#3b0000"
        w, h = lay.w[v], lay.h[v]
        rounding = min(0.08, h / 3) if st["box"] == "round" else 0.0
        ax.add_patch(
            FancyBboxPatch(
                (lay.x[v] - w / 2, lay.y[v] - h / 2),
                w,
                h,
                boxstyle=f"round,pad=0,rounding_size={rounding}",
                facecolor=face,
                edgecolor=edge,
                linewidth=lw * scale,
                zorder=3,
                clip_on=False,
            )
        )
        texts[v].set_position((lay.x[v], lay.y[v]))
        texts[v].set_color(color)
        texts[v].set_fontsize(FONT[kind] * scale)

    # edges
    for (s, d, t), (ys, yd) in zip(edges, anchors(lay, edges)):
        st = EDGE_STYLE[t]
        ax.add_patch(
            FancyArrowPatch(
                path=edge_path(lay, s, d, ys, yd),
                arrowstyle="-|>,head_length=0.45,head_width=0.22",
                mutation_scale=12 * scale,
                color=st["color"],
                linestyle=st["linestyle"],
                linewidth=1.1 * scale,
                zorder=2,
                clip_on=False,
            )
        )

    # title and legend live in the margins, never over the drawing
    fig.text(
        0.5,
        1 - 0.15 / fig_h,
        "\n".join(main_lines),
        ha="center",
        va="top",
        fontsize=12,
        weight="bold",
        parse_math=False,
    )
    fig.text(
        0.5,
        1 - (0.15 + 0.24 * len(main_lines) + 0.04) / fig_h,
        "\n".join(detail_lines),
        ha="center",
        va="top",
        fontsize=8.5,
        color="#555555",
        parse_math=False,
    )
    fig.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 0.08 / fig_h),
        ncol=ncol,
        fontsize=7.5,
        frameon=False,
        handlelength=2.6,
        columnspacing=1.4,
    )
    return _save(fig, out)


def _legend_handles(cmap, highlighted: bool) -> list:
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    feat, rel = NODE_STYLE["feature"], NODE_STYLE["relation"]
    handles = [
        Patch(facecolor=feat["face"], edgecolor=feat["edge"], label="feature"),
        Patch(facecolor=rel["face"], edgecolor=rel["edge"], label="relation snippet"),
    ]
    if highlighted:
        handles.append(Patch(facecolor=cmap(0.7), edgecolor=cmap(0.95), label="matched [score]"))
    for st in EDGE_STYLE.values():
        handles.append(Line2D([], [], color=st["color"], linestyle=st["linestyle"], linewidth=1.4, label=st["label"]))
    return handles


def _save(fig, out: Path) -> Path:
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="png", dpi=DPI, facecolor="white")
    fig.clear()  # Figure objects outside pyplot are freed with their last reference
    return out
