"""The rule files: they load, their patterns compile, and every example in them holds."""

from __future__ import annotations

import pytest

from graphtx.config import REPO_ROOT
from graphtx.graphs.rules import RELATION_TYPES, RulesError, load_rules

RULES = load_rules(REPO_ROOT / "rules")
EXAMPLES = [(rule.name, ex) for rule in RULES.relations for ex in rule.examples]


def test_every_rule_has_a_type_patterns_and_an_example():
    assert {r.type for r in RULES.relations} <= set(RELATION_TYPES)
    for rule in RULES.relations:
        assert rule.patterns, rule.name
        assert rule.examples, f"rule {rule.name} has no example"


@pytest.mark.parametrize("name,example", EXAMPLES, ids=[f"{n}-{i}" for i, (n, _) in enumerate(EXAMPLES)])
def test_rule_examples(builder, name, example):
    graph = builder.build_text(example["text"])
    expected = {tuple(edge) for edge in example["edges"]}
    missing = expected - graph.edge_texts()
    assert not missing, f"rule {name}: missing edges {missing}; got {sorted(graph.edge_texts())}"


def test_text_normalisation_removes_numerals_claim_refs_and_quantities():
    clean = RULES.normalisation.clean
    assert "(14)" not in clean("a cover (14) of the compartment (4a)")
    assert "claim" not in clean("The device according to claim 1, wherein")
    assert "claims" not in clean("The method of any one of claims 1 to 4")
    assert clean("a plurality of cells").split() == ["cells"]


def test_unquoted_yaml_boolean_is_reported(tmp_path):
    (tmp_path / "relations.yaml").write_text((REPO_ROOT / "rules" / "relations.yaml").read_text())
    (tmp_path / "normalisation.yaml").write_text("leading_words: [a, no]\n")
    with pytest.raises(RulesError, match="quote them"):
        load_rules(tmp_path)


def test_missing_rules_dir_is_a_clear_error(tmp_path):
    with pytest.raises(RulesError, match="missing"):
        load_rules(tmp_path / "nowhere")


def test_bad_rule_type_is_rejected(tmp_path):
    (tmp_path / "relations.yaml").write_text("- {name: x, type: causes, patterns: [[{LOWER: x}]]}\n")
    (tmp_path / "normalisation.yaml").write_text("{}\n")
    with pytest.raises(RulesError, match="type"):
        load_rules(tmp_path)
