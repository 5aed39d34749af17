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
from dataclasses import dataclass
from pathlib import Path

from graphtx.graphs.graph import InventionGraph

__all__ = ["render_graph", "top_degree_nodes"]

# --- style -------------------------------------------------------------------------------
DPI = 120
WRAP = 25  # characters a line for node labels
MAX_LINES = {"feature": 3, "relation": 4}  # longer labels end in " …"
FONT = {"feature": 9.0, "relation": 8.0}  # points
BOX_PAD = 0.07  # inches between text and box border
COL_GAP = 0.85  # inches between columns: room for the edges
STUB = 0.10  # inches of straight edge between a column and the curve across the gap
ROW_GAP = 0.10  # inches between sibling boxes in a column
TREE_GAP = 0.30  # inches between separate trees (several roots)
STAGGER_MIN = 8  # a node with this many children, all leaves, staggers them in two sub-columns
SUB_GAP = 0.25  # inches between the two staggered sub-columns
EDGE_CLEAR = 0.05  # inches between an edge and a box it passes
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


# --- layout ------------------------------------------------------------------------------
@dataclass
class _Layout:
    x: dict[int, float]  # box centre, inches
    y: dict[int, float]  # box centre, inches, growing downwards
    w: dict[int, float]  # box width, inches
    h: dict[int, float]  # box height, inches
    col: dict[int, int]  # column (tree depth)
    col_left: list[float]
    col_right: list[float]
    width: float
    height: float


def _tree_parents(graph: InventionGraph, nodes: list[int], edges: list[tuple[int, int, str]]) -> dict[int, int]:
    """A parent for every non-root node, taken from edges in order of trust, never a cycle.

    part → whole, then example → general; then a relation node goes under the feature it starts
    from (else the one it points to); last, a feature with no parts of its own that hangs only
    on relations goes under one. A whole (a node with parts) never moves under a relation.
    """
    keep = set(nodes)
    out: dict[int, list[tuple[int, str]]] = {v: [] for v in nodes}
    inc: dict[int, list[tuple[int, str]]] = {v: [] for v in nodes}
    for s, d, t in edges:
        if s != d and s in keep and d in keep:
            out[s].append((d, t))
            inc[d].append((s, t))

    def is_relation(v: int) -> bool:
        return graph.node_type[v] == "relation"

    def is_loose_feature(v: int) -> bool:
        return not is_relation(v) and all(t == "functional" for _, t in inc[v])

    passes = [  # (which nodes, parent candidates)
        (lambda v: True, lambda v: [d for d, t in out[v] if t == "part_of"]),
        (lambda v: True, lambda v: [d for d, t in out[v] if t == "example_of"]),
        (is_relation, lambda v: [s for s, t in inc[v] if t == "functional"]),
        (is_relation, lambda v: [d for d, t in out[v] if t == "functional"]),
        (is_loose_feature, lambda v: [s for s, t in inc[v] if t == "functional"]),
        (is_loose_feature, lambda v: [d for d, t in out[v] if t == "functional"]),
    ]
    parent: dict[int, int] = {}

    def is_ancestor(a: int, v: int) -> bool:  # a is v or above v
        while True:
            if v == a:
                return True
            if v not in parent:
                return False
            v = parent[v]

    for applies, candidates in passes:
        for v in nodes:
            if v in parent or not applies(v):
                continue
            for p in sorted(candidates(v)):
                if not is_ancestor(v, p):
                    parent[v] = p
                    break
    return parent


def _layout(
    graph: InventionGraph,
    nodes: list[int],
    edges: list[tuple[int, int, str]],
    size: dict[int, tuple[float, float]],  # (width, height) of each box, inches
) -> _Layout:
    """Tidy left-to-right tree: columns by depth, each subtree owns a horizontal band.

    A node with many leaf children (a device and its forty parts) puts them in two staggered
    sub-columns, so the list is half as tall; the edges of the right sub-column pass between
    the boxes of the left one.
    """
    import networkx as nx

    parent = _tree_parents(graph, nodes, edges)
    tree = nx.DiGraph()
    tree.add_nodes_from(nodes)
    tree.add_edges_from((p, v) for v, p in parent.items())
    children = {v: sorted(tree.successors(v)) for v in nodes}
    subtree_size = {v: len(nx.descendants(tree, v)) + 1 for v in nodes}
    roots = sorted((v for v in nodes if v not in parent), key=lambda v: (subtree_size[v] == 1, v))
    staggered = {v for v in nodes if len(children[v]) >= STAGGER_MIN and all(not children[k] for k in children[v])}
    sub = {k: i % 2 for v in staggered for i, k in enumerate(children[v])}  # 0: left, 1: right

    col: dict[int, int] = {}
    for r in roots:
        for v, depth in nx.single_source_shortest_path_length(tree, r).items():
            col[v] = depth
    n_cols = max(col.values()) + 1
    w0, w1 = [0.0] * n_cols, [0.0] * n_cols  # widest box of each column's left / right sub-column
    for v in nodes:
        widths = w1 if sub.get(v) == 1 else w0
        widths[col[v]] = max(widths[col[v]], size[v][0])
    col_left, col_right, x0 = [], [], 0.0
    for a, b in zip(w0, w1):
        col_left.append(x0)
        col_right.append(x0 + a + (SUB_GAP + b if b else 0.0))
        x0 = col_right[-1] + COL_GAP

    # band height of each subtree, leaves first; offsets of staggered leaves inside their band
    band: dict[int, float] = {}
    offset: dict[int, float] = {}
    for v in reversed(list(nx.topological_sort(tree))):
        kids = children[v]
        if v in staggered:
            h = [size[k][1] for k in kids]
            ys = [h[0] / 2]
            for i in range(1, len(kids)):
                # a right-hand box's edge runs left at its own height, between the left-hand boxes
                left_h = h[i - 1] if sub[kids[i - 1]] == 0 else h[i]
                yi = ys[-1] + left_h / 2 + EDGE_CLEAR
                if i >= 2:  # clear of the box above in the same sub-column
                    yi = max(yi, ys[i - 2] + (h[i - 2] + h[i]) / 2 + ROW_GAP)
                ys.append(yi)
            offset.update(zip(kids, ys))
            stacked = ys[-1] + h[-1] / 2
        else:
            stacked = sum(band[k] for k in kids) + ROW_GAP * max(len(kids) - 1, 0)
        band[v] = max(size[v][1], stacked)

    x, y = {}, {}

    def place(v: int, top: float) -> None:
        kids, h = children[v], size[v][1]
        c = col[v]
        x[v] = col_left[c] + w0[c] / 2 if sub.get(v) != 1 else col_right[c] - w1[c] / 2
        if not kids:
            y[v] = top + band[v] / 2
            return
        if v in staggered:
            stacked = offset[kids[-1]] + size[kids[-1]][1] / 2
            first = top + (band[v] - stacked) / 2
            for k in kids:
                place(k, first + offset[k] - band[k] / 2)
        else:
            stacked = sum(band[k] for k in kids) + ROW_GAP * (len(kids) - 1)
            cur = top + (band[v] - stacked) / 2
            for k in kids:
                place(k, cur)
                cur += band[k] + ROW_GAP
        mid = (y[kids[0]] + y[kids[-1]]) / 2
        y[v] = min(max(mid, top + h / 2), top + band[v] - h / 2)  # keep the box inside its band

    top = 0.0
    for r in roots:
        place(r, top)
        top += band[r] + TREE_GAP
    return _Layout(
        x=x,
        y=y,
        w={v: size[v][0] for v in nodes},
        h={v: size[v][1] for v in nodes},
        col=col,
        col_left=col_left,
        col_right=col_right,
        width=col_right[-1] + COL_GAP * 0.6,  # room on the right for same-column arcs
        height=top - TREE_GAP,
    )


def _edge_path(lay: _Layout, s: int, d: int, ys: float, yd: float):
    """Vertices and codes: out of a box side, across the gap(s) on a smooth curve, into a side."""
    from matplotlib.path import Path as MPath

    cs, cd = lay.col[s], lay.col[d]
    right, left = [c + STUB for c in lay.col_right], [c - STUB for c in lay.col_left]  # leave a stub so
    # the last segment is never empty: an empty one gives the arrow head no direction
    if cs < cd:  # rightwards: right side of s → left side of d
        xs, b1 = lay.x[s] + lay.w[s] / 2, right[cs]
        xd, b2 = lay.x[d] - lay.w[d] / 2, left[cd]
        c1, c2 = b1 + (b2 - b1) / 2, b2 - (b2 - b1) / 2
    elif cs > cd:  # leftwards: left side of s → right side of d
        xs, b1 = lay.x[s] - lay.w[s] / 2, left[cs]
        xd, b2 = lay.x[d] + lay.w[d] / 2, right[cd]
        c1, c2 = b1 + (b2 - b1) / 2, b2 - (b2 - b1) / 2
    else:  # same column: out of the right side, bulge into the gap, back into the right side
        xs, xd = lay.x[s] + lay.w[s] / 2, lay.x[d] + lay.w[d] / 2
        b1 = b2 = right[cs]
        bulge = COL_GAP * (0.25 + 0.3 * min(abs(yd - ys) / 3.0, 1.0))
        c1 = c2 = b1 + bulge
    # an edge that skips columns arches upwards, so it crosses the boxes it passes behind
    # at a slant instead of running along a row as if it joined them
    lift = -0.35 * max(abs(cd - cs) - 1, 0)
    verts = [(xs, ys), (b1, ys), (c1, ys + lift), (c2, yd + lift), (b2, yd), (xd, yd)]
    codes = [MPath.MOVETO, MPath.LINETO, MPath.CURVE4, MPath.CURVE4, MPath.CURVE4, MPath.LINETO]
    return MPath(verts, codes)


def _anchors(lay: _Layout, edges: list[tuple[int, int, str]]) -> list[tuple[float, float]]:
    """Per edge (y at source, y at target). Edges of one type that leave (or enter) the same box
    side share one point, so a fan-in of parts ends in a single arrow head; different groups
    are spread over the side, ordered by where their other ends lie, so they do not cross."""
    groups: dict[tuple[int, str], dict[tuple[str, int], list[tuple[float, int, int]]]] = {}
    for e, (s, d, t) in enumerate(edges):
        cs, cd = lay.col[s], lay.col[d]
        side_s = "R" if cs <= cd else "L"
        side_d = "L" if cs < cd else "R"
        groups.setdefault((s, side_s), {}).setdefault((t, 0), []).append((lay.y[d], e, 0))
        groups.setdefault((d, side_d), {}).setdefault((t, 1), []).append((lay.y[s], e, 1))
    ys = [[0.0, 0.0] for _ in edges]
    for (v, _), side in groups.items():
        ordered = sorted(side.values(), key=lambda items: sum(y for y, _, _ in items) / len(items))
        k = len(ordered)
        step = min(0.7 * lay.h[v] / (k - 1), 0.08) if k > 1 else 0.0
        for i, items in enumerate(ordered):
            for _, e, end in items:
                ys[e][end] = lay.y[v] + (i - (k - 1) / 2) * step
    return [(a, b) for a, b in ys]


# --- drawing -----------------------------------------------------------------------------
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

    lay = _layout(graph, nodes, edges, size)

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
    for (s, d, t), (ys, yd) in zip(edges, _anchors(lay, edges)):
        st = EDGE_STYLE[t]
        ax.add_patch(
            FancyArrowPatch(
                path=_edge_path(lay, s, d, ys, yd),
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
