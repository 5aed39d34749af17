"""Layout of an invention graph drawing: a tidy left-to-right tree, in inches.

Columns by tree depth, each subtree owning a horizontal band of its column (boxes never overlap);
a node with many leaf children staggers them over two sub-columns. :func:`layout` places the boxes
(their sizes come from the renderer, which measures the labels), :func:`edge_path` and
:func:`anchors` route the edges across the gaps between columns. Nothing is random: the same
graph always gets the same layout. The drawing itself is graphtx/graphs/render.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from graphtx.graphs.graph import InventionGraph

COL_GAP = 0.85  # inches between columns: room for the edges
STUB = 0.10  # inches of straight edge between a column and the curve across the gap
ROW_GAP = 0.10  # inches between sibling boxes in a column
TREE_GAP = 0.30  # inches between separate trees (several roots)
STAGGER_MIN = 8  # a node with this many children, all leaves, staggers them in two sub-columns
SUB_GAP = 0.25  # inches between the two staggered sub-columns
EDGE_CLEAR = 0.05  # inches between an edge and a box it passes


@dataclass
class Layout:
    x: dict[int, float]  # box centre, inches
    y: dict[int, float]  # box centre, inches, growing downwards
    w: dict[int, float]  # box width, inches
    h: dict[int, float]  # box height, inches
    col: dict[int, int]  # column (tree depth)
    col_left: list[float]
    col_right: list[float]
    width: float
    height: float


def tree_parents(graph: InventionGraph, nodes: list[int], edges: list[tuple[int, int, str]]) -> dict[int, int]:
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


def layout(
    graph: InventionGraph,
    nodes: list[int],
    edges: list[tuple[int, int, str]],
    size: dict[int, tuple[float, float]],  # (width, height) of each box, inches
) -> Layout:
    """Tidy left-to-right tree: columns by depth, each subtree owns a horizontal band.

    A node with many leaf children (a device and its forty parts) puts them in two staggered
    sub-columns, so the list is half as tall; the edges of the right sub-column pass between
    the boxes of the left one.
    """
    import networkx as nx

    parent = tree_parents(graph, nodes, edges)
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
    return Layout(
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


def edge_path(lay: Layout, s: int, d: int, ys: float, yd: float):
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


def anchors(lay: Layout, edges: list[tuple[int, int, str]]) -> list[tuple[float, float]]:
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
