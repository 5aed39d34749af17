import struct

import pytest

from graphtx.graphs.graph import InventionGraph
from graphtx.graphs.layout import layout as _layout
from graphtx.graphs.render import _caption, render_graph, top_degree_nodes

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def snowthrower() -> InventionGraph:
    return InventionGraph(
        doc_id="US1234567B2",
        kind="first_claim",
        text_source="first_claim",
        node_text=(
            "snowthrower",
            "auger housing",
            "frame",
            "handle device",
            "frame for connecting handle device and auger housing",
        ),
        node_type=("feature", "feature", "feature", "feature", "relation"),
        edge_src=(1, 2, 3, 2, 4),
        edge_dst=(0, 0, 0, 4, 1),
        edge_type=("part_of", "part_of", "part_of", "functional", "functional"),
    )


def star(n_leaves: int, sub_parts: bool = True) -> InventionGraph:
    """One device and its parts; with ``sub_parts`` parts 1 and 2 have parts of their own."""
    texts = ["device"] + [f"part {i}" for i in range(1, n_leaves + 1)]
    src = list(range(1, n_leaves + 1))
    dst = [0] * n_leaves
    if sub_parts:  # the last two parts belong to part 1, the two before to part 2
        dst[-2:], dst[-4:-2] = [1, 1], [2, 2]
    return InventionGraph(
        "EP0000001A1",
        "description",
        "claims+description",
        tuple(texts),
        ("feature",) * len(texts),
        tuple(src),
        tuple(dst),
        ("part_of",) * len(src),
    )


def png_size(path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == PNG_MAGIC
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def test_renders_a_png(tmp_path):
    out = render_graph(snowthrower(), tmp_path / "snow.png", highlight={1: 0.9, 4: 0.3}, title="query match")
    assert out == tmp_path / "snow.png"
    w, h = png_size(out)
    assert 600 <= w <= 4000 and 300 <= h <= 4000
    assert out.stat().st_size > 10_000  # a real drawing, not a blank page


def test_accepts_str_path_and_makes_folders(tmp_path):
    out = render_graph(snowthrower(), str(tmp_path / "a" / "b" / "snow.png"))
    assert out == tmp_path / "a" / "b" / "snow.png"
    png_size(out)


def test_truncates_to_highest_degree_nodes(tmp_path):
    g = star(80)
    keep = top_degree_nodes(g, 10)
    # device (degree 76), parts 1 and 2 (degree 3), then degree-1 ties by lower index
    assert keep == list(range(10))
    assert "showing 10 of 81 nodes" in " ".join(_caption(g, len(keep), None))
    w, h = png_size(render_graph(g, tmp_path / "star.png", max_nodes=10))
    full_w, full_h = png_size(render_graph(g, tmp_path / "star_all.png", max_nodes=100))
    assert h < full_h  # fewer boxes, smaller picture


def test_top_degree_nodes_breaks_ties_by_lower_index():
    g = InventionGraph(
        "X",
        "first_claim",
        "first_claim",
        tuple("abcdef"),
        ("feature",) * 6,
        (5, 5, 4, 3),
        (0, 1, 0, 2),
        ("part_of",) * 4,
    )  # degrees 2, 1, 1, 1, 1, 2
    assert top_degree_nodes(g, 3) == [0, 1, 5]
    assert top_degree_nodes(g, 6) == list(range(6))
    with pytest.raises(ValueError):
        top_degree_nodes(g, 0)


def test_caption_names_doc_kind_and_counts():
    main, detail = _caption(snowthrower(), 5, None)
    assert main == "US1234567B2 · first_claim graph"
    assert "5 nodes (4 features, 1 relation), 5 edges" in detail
    assert "showing" not in detail


def test_empty_graph(tmp_path):
    g = InventionGraph("US0000000A", "all_claims", "claims", (), ())
    w, h = png_size(render_graph(g, tmp_path / "empty.png"))
    assert w > 300 and h > 200


@pytest.mark.parametrize("sub_parts", [True, False])  # False: 30 leaves, staggered in two sub-columns
def test_layout_boxes_do_not_overlap(sub_parts):
    g = star(30, sub_parts)
    nodes = list(range(g.num_nodes))
    size = {v: (1.0 + 0.1 * (v % 3), 0.25 + 0.15 * (v % 2)) for v in nodes}
    lay = _layout(g, nodes, sorted(set(g.edges())), size)
    boxes = [  # (left, top, right, bottom)
        (lay.x[v] - lay.w[v] / 2, lay.y[v] - lay.h[v] / 2, lay.x[v] + lay.w[v] / 2, lay.y[v] + lay.h[v] / 2)
        for v in nodes
    ]
    for i, a in enumerate(boxes):
        assert 0 <= a[0] and a[2] <= lay.width and 0 <= a[1] and a[3] <= lay.height + 1e-9
        for b in boxes[i + 1 :]:
            assert a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
    leaf_columns = {round(lay.x[v], 6) for v in range(3, 27)}  # parts of the device only
    assert len(leaf_columns) == (1 if sub_parts else 2)


def test_no_pyplot_figures_or_backend_change(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    backend, figs = matplotlib.get_backend(), plt.get_fignums()
    render_graph(snowthrower(), tmp_path / "snow.png")
    assert matplotlib.get_backend() == backend
    assert plt.get_fignums() == figs


def test_rejects_bad_highlight(tmp_path):
    with pytest.raises(ValueError):
        render_graph(snowthrower(), tmp_path / "x.png", highlight={9: 0.5})
    with pytest.raises(ValueError):
        render_graph(snowthrower(), tmp_path / "x.png", highlight={0: float("nan")})
