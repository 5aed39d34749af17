"""Query text → first claim → graph."""

from __future__ import annotations

import pytest

from graphtx.config import ParseConfig
from graphtx.index.query import QueryParser, first_claim_text


def test_a_claim_set_is_cut_to_its_first_independent_claim():
    claims = "1. A snowthrower comprising an auger housing and a chute.\n2. The snowthrower of claim 1, wherein the chute rotates.\n3. A method of clearing snow."
    assert first_claim_text(claims) == "A snowthrower comprising an auger housing and a chute."
    assert first_claim_text("  A lamp with a shade.  ") == "A lamp with a shade."
    assert first_claim_text("1. A lamp with a shade.") == "A lamp with a shade."


def test_parser_builds_a_first_claim_graph_and_refuses_empty_text(builder):
    parser = QueryParser(ParseConfig())
    parser._builder = builder  # the session's spaCy pipeline
    graph = parser.graph("1. A snowthrower comprising: an auger housing; and a chute mounted on the auger housing.")
    assert graph.kind == "first_claim" and {"snowthrower", "auger housing", "chute"} <= set(graph.node_text)
    with pytest.raises(ValueError, match="empty"):
        parser.graph("   ")
    with pytest.raises(ValueError, match="no invention features"):
        parser.graph("and or but the.")


def test_parser_memory_does_not_grow_with_new_words(builder):
    """Each query is parsed in a spaCy memory zone: its new words leave no strings or lexemes behind."""
    parser = QueryParser(ParseConfig())
    parser._builder = builder
    strings = builder.nlp.vocab.strings
    parser.graph("1. A snowthrower comprising an auger housing.")
    before = len(strings)
    for i in range(100):
        graph = parser.graph(
            f"1. A qzx{i}blorf device comprising a vrel{i}quant housing mounted on a plim{i}zot frame."
        )
        text = " ".join(graph.node_text)  # the graph keeps its own strings after the zone is freed
        assert any(w in text for w in (f"qzx{i}blorf", f"vrel{i}quant", f"plim{i}zot")), graph.node_text
    assert len(strings) == before
    assert "qzx7blorf" not in strings and "vrel99quant" not in strings
