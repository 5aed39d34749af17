from __future__ import annotations

import pyarrow as pa
import pytest

from graphtx.graphs.graph import GRAPH_SCHEMA, InventionGraph


def _graph() -> InventionGraph:
    return InventionGraph(
        doc_id="US-1-B1",
        kind="first_claim",
        text_source="first_claim",
        node_text=("snowthrower", "auger housing", "frame", "frame for connecting auger housing"),
        node_type=("feature", "feature", "feature", "relation"),
        edge_src=(1, 2, 2, 3),
        edge_dst=(0, 0, 3, 1),
        edge_type=("part_of", "part_of", "functional", "functional"),
    )


def test_parquet_round_trip_is_identity():
    g = _graph()
    table = pa.Table.from_pylist([g.to_row()], schema=GRAPH_SCHEMA)
    assert InventionGraph.from_row(table.to_pylist()[0]) == g


def test_to_pyg_keeps_structure_and_codes_types():
    data = _graph().to_pyg()
    assert data.num_nodes == 4
    assert data.edge_index.tolist() == [[1, 2, 2, 3], [0, 0, 3, 1]]
    assert data.edge_type.tolist() == [0, 0, 2, 2]  # part_of, part_of, functional, functional
    assert data.node_type.tolist() == [0, 0, 0, 1]
    assert data.node_text[1] == "auger housing"


def test_empty_graph_converts_to_pyg():
    g = InventionGraph("x", "description", "abstract", (), ())
    assert g.to_pyg().edge_index.shape == (2, 0)


@pytest.mark.parametrize(
    "change,match",
    [
        (dict(edge_dst=(0, 0, 3, 9)), "outside"),
        (dict(node_type=("feature",) * 3), "length"),
        (dict(edge_type=("part_of", "part_of", "functional", "causes")), "unknown"),
        (dict(kind="claims"), "kind"),
    ],
)
def test_invalid_graphs_are_refused(change, match):
    fields = {**_graph().__dict__, **change}
    fields.pop("meta")
    with pytest.raises(ValueError, match=match):
        InventionGraph(**fields)


def test_isolated_features_are_reported():
    g = InventionGraph("x", "first_claim", "first_claim", ("a", "b", "c"), ("feature",) * 3, (0,), (1,), ("part_of",))
    assert g.isolated_features() == ["c"]
