"""InventionGraph: the parse stage's output, and its Parquet / PyG forms.

Nodes are of two types:

* ``feature``  — an invention feature, a normalised noun phrase ("auger housing");
* ``relation`` — a relation snippet that became a node of its own
  ("frame for connecting handle device and auger housing").

Edges are directed and typed:

* ``part_of``    — part → whole      ("auger housing" → "snowthrower");
* ``example_of`` — example → general ("lithium battery" → "battery");
* ``functional`` — feature → relation node → feature, for functional links
  ("frame" → "frame for connecting ..." → "auger housing").

Edge lists are parallel arrays ``edge_src``, ``edge_dst``, ``edge_type`` (COO).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

GRAPH_KINDS = ("first_claim", "all_claims", "description")
NODE_TYPES = ("feature", "relation")
EDGE_TYPES = ("part_of", "example_of", "functional")


@dataclass(frozen=True)
class InventionGraph:
    doc_id: str
    kind: str  # one of GRAPH_KINDS
    text_source: (
        str  # which text the graph was built from: "first_claim", "claims", "claims+description", "abstract", ...
    )
    node_text: tuple[str, ...]
    node_type: tuple[str, ...]  # one of NODE_TYPES per node
    edge_src: tuple[int, ...] = ()
    edge_dst: tuple[int, ...] = ()
    edge_type: tuple[str, ...] = ()  # one of EDGE_TYPES per edge
    truncated: bool = False  # True when the node cap dropped features (see GraphBuilder)
    meta: dict = field(default_factory=dict, compare=False)  # builder statistics, not stored

    def __post_init__(self) -> None:
        if self.kind not in GRAPH_KINDS:
            raise ValueError(f"unknown graph kind {self.kind!r}")
        n = len(self.node_text)
        if len(self.node_type) != n:
            raise ValueError("node_text and node_type differ in length")
        if not (len(self.edge_src) == len(self.edge_dst) == len(self.edge_type)):
            raise ValueError("edge arrays differ in length")
        for s, d in zip(self.edge_src, self.edge_dst):
            if not (0 <= s < n and 0 <= d < n):
                raise ValueError(f"edge ({s}, {d}) points outside {n} nodes")
        bad = set(self.node_type) - set(NODE_TYPES) | set(self.edge_type) - set(EDGE_TYPES)
        if bad:
            raise ValueError(f"unknown node/edge types {sorted(bad)}")

    # --- views -----------------------------------------------------------------
    @property
    def num_nodes(self) -> int:
        return len(self.node_text)

    @property
    def num_edges(self) -> int:
        return len(self.edge_src)

    @property
    def feature_indices(self) -> list[int]:
        return [i for i, t in enumerate(self.node_type) if t == "feature"]

    def edges(self) -> list[tuple[int, int, str]]:
        return list(zip(self.edge_src, self.edge_dst, self.edge_type))

    def edge_texts(self) -> set[tuple[str, str, str]]:
        """Edges as ``(src text, type, dst text)``: convenient for tests and display."""
        return {(self.node_text[s], t, self.node_text[d]) for s, d, t in self.edges()}

    def lines(self) -> list[str]:
        """What ``graphtx show`` prints: a header, then one ``src  --type-->  dst`` line an edge (sorted)."""
        header = (
            f"{self.doc_id} {self.kind} graph from {self.text_source}: {self.num_nodes} nodes, {self.num_edges} edges"
        )
        return [header] + [f"  {s}  --{t}-->  {d}" for s, t, d in sorted(self.edge_texts())]

    def isolated_features(self) -> list[str]:
        touched = set(self.edge_src) | set(self.edge_dst)
        return [self.node_text[i] for i in self.feature_indices if i not in touched]

    # --- Parquet ---------------------------------------------------------------
    def to_row(self) -> dict:
        return {
            "doc_id": self.doc_id,
            "kind": self.kind,
            "text_source": self.text_source,
            "node_text": list(self.node_text),
            "node_type": list(self.node_type),
            "edge_src": list(self.edge_src),
            "edge_dst": list(self.edge_dst),
            "edge_type": list(self.edge_type),
            "truncated": self.truncated,
        }

    @classmethod
    def from_row(cls, row: dict) -> "InventionGraph":
        return cls(
            doc_id=row["doc_id"],
            kind=row["kind"],
            text_source=row["text_source"],
            node_text=tuple(row["node_text"]),
            node_type=tuple(row["node_type"]),
            edge_src=tuple(row["edge_src"]),
            edge_dst=tuple(row["edge_dst"]),
            edge_type=tuple(row["edge_type"]),
            truncated=bool(row["truncated"]),
        )

    # --- PyTorch Geometric -----------------------------------------------------
    def to_pyg(self):
        """A ``torch_geometric.data.Data`` with integer-coded types and the node texts.

        ``edge_index`` (2, edges) long; ``edge_type`` (edges,) long indexing EDGE_TYPES;
        ``node_type`` (nodes,) long indexing NODE_TYPES; ``node_text`` list[str].
        Token ids are added by the encode stage, which owns the tokenizer.
        """
        import torch
        from torch_geometric.data import Data

        edge_index = torch.tensor([self.edge_src, self.edge_dst], dtype=torch.long).reshape(2, -1)
        return Data(
            edge_index=edge_index,  # (2, edges)
            edge_type=torch.tensor([EDGE_TYPES.index(t) for t in self.edge_type], dtype=torch.long),
            node_type=torch.tensor([NODE_TYPES.index(t) for t in self.node_type], dtype=torch.long),
            node_text=list(self.node_text),
            num_nodes=self.num_nodes,
            doc_id=self.doc_id,
            kind=self.kind,
        )


GRAPH_SCHEMA = pa.schema(
    [
        ("doc_id", pa.string()),
        ("kind", pa.string()),
        ("text_source", pa.string()),
        ("node_text", pa.list_(pa.string())),
        ("node_type", pa.list_(pa.string())),
        ("edge_src", pa.list_(pa.int32())),
        ("edge_dst", pa.list_(pa.int32())),
        ("edge_type", pa.list_(pa.string())),
        ("truncated", pa.bool_()),
    ]
)
