"""Loads the hand-written rules in ``rules/`` (data, not code) and checks them.

``relations.yaml`` holds the relation triggers as spaCy Matcher patterns;
``normalisation.yaml`` says how text and noun phrases are normalised.
See the comments at the top of each file for the format.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

RELATION_TYPES = ("part_of", "example_of", "functional", "clause")


@dataclass(frozen=True)
class RelationRule:
    name: str
    type: str  # one of RELATION_TYPES
    patterns: tuple  # spaCy Matcher patterns (lists of token dicts)
    examples: tuple  # ({"text": str, "edges": [[src, type, dst], ...]}, ...)


@dataclass(frozen=True)
class Normalisation:
    remove_patterns: tuple[re.Pattern, ...]
    replace_phrases: tuple[tuple[re.Pattern, str], ...]
    leading_words: frozenset[str]
    ordinal_words: frozenset[str]
    stop_features: frozenset[str]
    max_feature_words: int

    def clean(self, text: str) -> str:
        """Apply the text-level rules (reference numerals, claim references, quantities)."""
        for pattern in self.remove_patterns:
            text = pattern.sub(" ", text)
        for pattern, replacement in self.replace_phrases:
            text = pattern.sub(replacement, text)
        return re.sub(r"[ \t]+", " ", text)


@dataclass(frozen=True)
class RuleSet:
    relations: tuple[RelationRule, ...]
    normalisation: Normalisation
    source: str  # folder the rules came from

    def rule(self, name: str) -> RelationRule:
        return next(r for r in self.relations if r.name == name)


class RulesError(ValueError):
    pass


def _load_yaml(path: Path):
    if not path.exists():
        raise RulesError(f"rules file {path} is missing (parse.rules_dir points to {path.parent})")
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise RulesError(f"{path}: invalid YAML: {err}") from None


def _words(data: dict, key: str, rules_dir: Path) -> frozenset[str]:
    words = data.get(key) or []
    bad = [w for w in words if not isinstance(w, str)]
    if bad:  # YAML reads no/yes/on as booleans: quote them
        raise RulesError(f"{rules_dir / 'normalisation.yaml'}: {key} has non-text entries {bad}; quote them")
    return frozenset(w.lower() for w in words)


def load_rules(rules_dir: str | Path) -> RuleSet:
    rules_dir = Path(rules_dir)
    raw_relations = _load_yaml(rules_dir / "relations.yaml") or []
    relations, names = [], set()
    for i, item in enumerate(raw_relations):
        where = f"{rules_dir / 'relations.yaml'} rule {i + 1}"
        missing = {"name", "type", "patterns"} - set(item or {})
        if missing:
            raise RulesError(f"{where}: missing {', '.join(sorted(missing))}")
        if item["type"] not in RELATION_TYPES:
            raise RulesError(f"{where}: type {item['type']!r} is not one of {RELATION_TYPES}")
        if item["name"] in names:
            raise RulesError(f"{where}: duplicate rule name {item['name']!r}")
        if not item["patterns"] or not all(isinstance(p, list) and p for p in item["patterns"]):
            raise RulesError(f"{where}: patterns must be a non-empty list of token-pattern lists")
        names.add(item["name"])
        relations.append(
            RelationRule(item["name"], item["type"], tuple(item["patterns"]), tuple(item.get("examples") or ()))
        )

    norm = _load_yaml(rules_dir / "normalisation.yaml") or {}
    try:
        normalisation = Normalisation(
            remove_patterns=tuple(re.compile(p, re.I) for p in norm.get("remove_patterns", [])),
            replace_phrases=tuple(
                (re.compile(r"\b" + re.escape(k) + r"\b", re.I), v)
                for k, v in (norm.get("replace_phrases") or {}).items()
            ),
            leading_words=_words(norm, "leading_words", rules_dir),
            ordinal_words=_words(norm, "ordinal_words", rules_dir),
            stop_features=_words(norm, "stop_features", rules_dir),
            max_feature_words=int(norm.get("max_feature_words", 5)),
        )
    except re.error as err:
        raise RulesError(f"{rules_dir / 'normalisation.yaml'}: bad regular expression: {err}") from None
    return RuleSet(tuple(relations), normalisation, str(rules_dir))


def build_matcher(rules: RuleSet, vocab):
    """A spaCy Matcher with one key per rule; match ids map back via ``vocab.strings``."""
    from spacy.matcher import Matcher

    matcher = Matcher(vocab, validate=True)
    for rule in rules.relations:
        try:
            matcher.add(rule.name, [list(p) for p in rule.patterns])
        except Exception as err:  # spaCy raises a pattern error with a long explanation
            raise RulesError(f"rule {rule.name!r}: invalid pattern: {err}") from None
    return matcher
