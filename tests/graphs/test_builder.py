from __future__ import annotations

import dataclasses

import pytest

from graphtx.config import ParseConfig
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.graphs.builder import GraphBuilder, NoText, plan_texts

CLAIM_1 = "A snowthrower comprising: an auger housing; and a chute mounted on the auger housing."
CLAIM_2 = "The snowthrower of claim 1, wherein the chute is rotatable about a vertical axis."
CLAIM_3 = "A method of clearing snow comprising driving an auger with an engine."


def _doc(**kw) -> PatentDocument:
    return PatentDocument(id="US-1-B1", source="test", source_file="-", **kw)


def _claims():
    return (Claim(1, CLAIM_1, True), Claim(2, CLAIM_2, False, (1,)), Claim(3, CLAIM_3, True))


def test_three_graphs_with_their_text_sources(builder):
    doc = _doc(claims=_claims(), description="The auger is driven by an engine.\nThe engine has a crankshaft.")
    graphs = builder.build(doc)
    assert set(graphs) == {"first_claim", "all_claims", "description"}
    assert graphs["first_claim"].text_source == "first_claim"
    assert graphs["all_claims"].text_source == "claims"
    assert graphs["description"].text_source == "claims+description"
    first, every, desc = (set(graphs[k].node_text) for k in ("first_claim", "all_claims", "description"))
    assert first <= every <= desc
    assert "engine" not in first and "engine" in every and "crankshaft" in desc


def test_first_independent_claim_is_used_even_when_not_first():
    doc = _doc(claims=(Claim(1, CLAIM_2, False, (3,)), Claim(2, CLAIM_1, True)))
    plan = plan_texts(doc, ParseConfig())
    assert plan.texts[0] == CLAIM_1
    assert plan.feeds[0] == ("first_claim", "all_claims", "description")


def test_abstract_only_document_says_which_text_was_used(builder):
    graphs = builder.build(
        _doc(abstract="An electric vehicle has a traction battery and a charger for charging the battery.")
    )
    assert {g.text_source for g in graphs.values()} == {"abstract"}
    assert "traction battery" in graphs["first_claim"].node_text


def test_the_title_is_parsed_first_into_the_graphs_its_lead_text_feeds_when_asked():
    title = "Snowthrower with a rotatable chute"
    bare = _doc(title=title, abstract="An electric vehicle has a traction battery.", description="A charger.")
    assert plan_texts(bare, ParseConfig()).texts[0] == "An electric vehicle has a traction battery."  # off: not read
    asked = ParseConfig(title_text=True)
    plan = plan_texts(bare, asked)
    assert plan.texts[:2] == (title, "An electric vehicle has a traction battery.")
    assert plan.feeds[0] == ("first_claim", "all_claims", "description")  # without claims: every graph, as the abstract
    assert plan.sources == plan_texts(bare, ParseConfig()).sources  # the text sources the evaluation reads, unchanged
    claimed = plan_texts(_doc(title=title, claims=_claims(), description="A charger."), asked)
    assert claimed.texts[0] == title and claimed.feeds[0] == ("description",)  # the claims' graphs stay the claims'
    only_title = plan_texts(_doc(title=title), asked)  # the title is the lead text: read once
    assert only_title.texts == (title,)


def test_a_title_read_first_adds_its_features_to_an_abstract_graph(builder):
    doc = _doc(
        title="Method and system for charging a battery of an electric vehicle",
        abstract="A snowthrower comprises an auger housing and a chute mounted on the auger housing.",
    )
    plain = builder.build(doc)["first_claim"]
    with_title = GraphBuilder(dataclasses.replace(builder.cfg, title_text=True), nlp=builder.nlp, rules=builder.rules)
    titled = with_title.build(doc)["first_claim"]
    assert "electric vehicle" not in plain.node_text and {"electric vehicle", "chute"} <= set(titled.node_text)
    assert titled.node_text.index("electric vehicle") < titled.node_text.index("chute")  # first mention: the title
    assert titled.text_source == plain.text_source == "abstract"


def test_document_without_text_is_refused(builder):
    with pytest.raises(NoText, match="no text"):
        builder.build(_doc())


def test_node_cap_keeps_most_frequent_features(builder):
    small = dataclasses.replace(builder.cfg, max_feature_nodes=3)
    text = (
        "A motor comprising a rotor. The rotor has a shaft. The shaft has a key and a groove. The rotor has a magnet."
    )
    doc = _doc(abstract=text)
    graph = type(builder)(small, nlp=builder.nlp, rules=builder.rules).build(doc)["description"]
    features = [t for t, k in zip(graph.node_text, graph.node_type) if k == "feature"]
    assert graph.truncated
    assert len(features) <= 3 and "rotor" in features and "shaft" in features
    assert graph.isolated_features() == []


def test_description_is_cut_at_paragraph_boundary_within_limit(builder):
    cfg = dataclasses.replace(builder.cfg, max_description_chars=60)
    paragraphs = ["The frame carries a motor.", "The motor drives a pump.", "The pump feeds a nozzle."]
    plan = plan_texts(_doc(claims=_claims()[:1], description="\n".join(paragraphs)), cfg)
    described = [t for t, f in zip(plan.texts, plan.feeds) if f == ("description",)]
    assert described == paragraphs[:2]


def test_features_first_met_at_one_token_are_ordered_by_text_not_by_hash_seed():
    """Ties broke by a set's order, which changes with PYTHONHASHSEED: Ray actors (fresh processes) gave other graphs."""
    from graphtx.config import ParseConfig
    from graphtx.graphs.builder import GraphAccumulator

    acc = GraphAccumulator()
    names = [f"part {c}" for c in "qwertyuiopasdfghjklz"]
    for name in names:
        acc.feature_count[name] += 1
        acc.feature_first[name] = 0  # all first met at the same token
        acc.edges[(("f", name), ("f", "whole"), "part_of")] = None
    acc.feature_count["whole"] += 1
    acc.feature_first["whole"] = 0
    graph = acc.finish("D", "first_claim", "claims", ParseConfig())
    assert list(graph.node_text) == sorted([*names, "whole"])
