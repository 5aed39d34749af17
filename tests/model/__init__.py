"""Shared helpers for the model tests: a fake tokenizer, tiny hand-built graphs, a tiny config."""

from __future__ import annotations

import zlib
from pathlib import Path

from graphtx.graphs.graph import InventionGraph
from graphtx.model.config import ModelConfig


class HashTokenizer:
    """Words hashed (crc32, stable across runs) into ``vocab_size - 2`` ids; 0 = pad, 1 = unk (unused)."""

    pad_id = 0

    def __init__(self, vocab_size: int = 64):
        self.vocab_size = vocab_size
        self.calls = 0

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        self.calls += 1
        return [[2 + zlib.crc32(w.encode()) % (self.vocab_size - 2) for w in t.lower().split()] for t in texts]

    def save(self, directory: str | Path) -> Path:
        path = Path(directory) / "hash_tokenizer.txt"
        path.write_text(f"vocab_size={self.vocab_size}\n")
        return path


def tiny_config(**changes) -> ModelConfig:
    """A few thousand parameters; dropouts off so train and eval agree unless a test turns them on."""
    base = dict(
        vocab_size=64,
        token_dim=8,
        node_dim=16,
        heads=2,
        layers=2,
        ffn_mult=2,
        dropout=0.0,
        attention_dropout=0.0,
        embedding_dropout=0.0,
        base_dim=24,
        reduced_dim=6,
        num_experts=3,
        max_tokens_per_node=4,
    )
    base.update(changes)
    return ModelConfig(**base)


def snowthrower() -> InventionGraph:
    """All three edge types, a relation node, and a node with empty text."""
    return InventionGraph(
        doc_id="US1",
        kind="first_claim",
        text_source="first_claim",
        node_text=(
            "snowthrower",
            "auger housing",
            "frame",
            "handle device",
            "frame for connecting handle device and auger housing",
            "battery",
            "lithium battery",
            "",
        ),
        node_type=("feature", "feature", "feature", "feature", "relation", "feature", "feature", "feature"),
        edge_src=(1, 2, 3, 2, 4, 6, 5, 7),
        edge_dst=(0, 0, 0, 4, 1, 5, 0, 0),
        edge_type=("part_of", "part_of", "part_of", "functional", "functional", "example_of", "part_of", "part_of"),
    )


def lamp() -> InventionGraph:
    return InventionGraph(
        doc_id="US2",
        kind="all_claims",
        text_source="claims",
        node_text=("lamp", "led light source", "heat sink", "housing", "heat sink for cooling the led light source"),
        node_type=("feature", "feature", "feature", "feature", "relation"),
        edge_src=(1, 2, 3, 2, 4),
        edge_dst=(0, 0, 0, 4, 1),
        edge_type=("part_of", "part_of", "part_of", "functional", "functional"),
    )


def single_node() -> InventionGraph:
    return InventionGraph(
        doc_id="US3", kind="description", text_source="abstract", node_text=("rotating shaft",), node_type=("feature",)
    )


def no_nodes() -> InventionGraph:
    return InventionGraph(doc_id="US4", kind="description", text_source="abstract", node_text=(), node_type=())


def permuted(graph: InventionGraph, perm: list[int]) -> InventionGraph:
    """The same graph with node ``perm[k]`` placed at position ``k`` (edges remapped)."""
    new_of_old = {old: new for new, old in enumerate(perm)}
    return InventionGraph(
        doc_id=graph.doc_id,
        kind=graph.kind,
        text_source=graph.text_source,
        node_text=tuple(graph.node_text[o] for o in perm),
        node_type=tuple(graph.node_type[o] for o in perm),
        edge_src=tuple(new_of_old[s] for s in graph.edge_src),
        edge_dst=tuple(new_of_old[d] for d in graph.edge_dst),
        edge_type=graph.edge_type,
    )
