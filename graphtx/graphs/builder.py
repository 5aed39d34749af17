"""Document → three invention graphs (first claim, all claims, claims + description).

Which text feeds which graph:

============  ==========================================  =========================
kind          text                                        when the document has no claims
============  ==========================================  =========================
first_claim   first independent claim                     abstract, else description, else title
all_claims    every claim (up to ``max_claims_chars``)    same
description   all claims + description                    abstract + description, ...
============  ==========================================  =========================

Each graph's ``text_source`` says which text was used.

Size cap (bounded memory and time): the description is read up to
``max_description_chars`` (cut at a paragraph end); of a graph's features the
``max_feature_nodes`` most frequent are kept (ties: first mentioned first); of its
relation nodes those whose subject is kept, earliest first, up to
``max_relation_nodes``. When edges exist, features left without any edge are
dropped (counted in ``meta["isolated_dropped"]``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from graphtx.corpus.schema import PatentDocument
from graphtx.graphs.config import ParseConfig
from graphtx.graphs.extract import Extraction, extract
from graphtx.graphs.graph import InventionGraph
from graphtx.graphs.nlp import load_nlp
from graphtx.graphs.rules import RuleSet, build_matcher, load_rules


@dataclass
class GraphAccumulator:
    """Merges extractions of many texts into one graph (features merged by their text)."""

    feature_count: Counter = field(default_factory=Counter)
    feature_first: dict[str, int] = field(default_factory=dict)
    relation_first: dict[str, int] = field(default_factory=dict)
    edges: dict[tuple[tuple[str, str], tuple[str, str], str], None] = field(default_factory=dict)  # ordered set
    rule_hits: Counter = field(default_factory=Counter)
    position: int = 0

    def add(self, ex: Extraction) -> None:
        for m in ex.mentions:
            self.feature_count[m.text] += 1
            self.feature_first.setdefault(m.text, self.position + m.start)
        base = self.position
        for part, whole in ex.part_of:
            self.edges[(("f", part), ("f", whole), "part_of")] = None
        for example, general in ex.example_of:
            self.edges[(("f", example), ("f", general), "example_of")] = None
        for k, (snippet, subject, objects) in enumerate(ex.relations):
            self.relation_first.setdefault(snippet, base + k)
            self.edges[(("f", subject), ("r", snippet), "functional")] = None
            for obj in objects:
                self.edges[(("r", snippet), ("f", obj), "functional")] = None
        self.rule_hits.update(ex.rule_hits)
        self.position += 100_000  # keeps texts in order without knowing their lengths

    def finish(self, doc_id: str, kind: str, text_source: str, cfg: ParseConfig) -> InventionGraph:
        ranked = sorted(self.feature_count, key=lambda f: (-self.feature_count[f], self.feature_first[f]))
        kept_features = set(ranked[: cfg.max_feature_nodes])
        subject_of = {dst[1]: src[1] for src, dst, t in self.edges if dst[0] == "r"}
        relations = sorted(
            (r for r in self.relation_first if subject_of.get(r) in kept_features), key=self.relation_first.__getitem__
        )
        kept_relations = set(relations[: cfg.max_relation_nodes])
        truncated = len(kept_features) < len(ranked) or len(kept_relations) < len(relations)

        def kept(node: tuple[str, str]) -> bool:
            return node[1] in (kept_features if node[0] == "f" else kept_relations)

        edges = [(s, d, t) for s, d, t in self.edges if kept(s) and kept(d) and s != d]
        # relation nodes must reach at least one feature besides their subject, or carry words of their own
        touched = {n for s, d, _ in edges for n in (s, d)}
        features = [f for f in kept_features if ("f", f) in touched or not edges]
        # ties (two features first met at one token) by text: a set's order changes with PYTHONHASHSEED, i.e. from one process to the next
        features.sort(key=lambda f: (self.feature_first[f], f))
        nodes = [("f", f) for f in features] + [
            ("r", r) for r in sorted(kept_relations, key=self.relation_first.__getitem__) if ("r", r) in touched
        ]
        index = {n: i for i, n in enumerate(nodes)}
        edges = [(s, d, t) for s, d, t in edges if s in index and d in index]
        return InventionGraph(
            doc_id=doc_id,
            kind=kind,
            text_source=text_source,
            node_text=tuple(n[1] for n in nodes),
            node_type=tuple("feature" if n[0] == "f" else "relation" for n in nodes),
            edge_src=tuple(index[s] for s, _, _ in edges),
            edge_dst=tuple(index[d] for _, d, _ in edges),
            edge_type=tuple(t for _, _, t in edges),
            truncated=truncated,
            meta={
                "features_found": len(ranked),
                "isolated_dropped": len(kept_features) - len(features),
                "rule_hits": dict(self.rule_hits),
            },
        )


@dataclass(frozen=True)
class TextPlan:
    """The texts of one document, in parse order, and which graphs each feeds."""

    texts: tuple[str, ...]
    feeds: tuple[tuple[str, ...], ...]  # per text: graph kinds it contributes to
    sources: dict  # kind -> text_source


def _cut(parts: list[str], limit: int) -> list[str]:
    out, used = [], 0
    for p in parts:
        if used + len(p) > limit and out:
            break
        out.append(p[:limit])
        used += len(p)
    return out


def plan_texts(doc: PatentDocument, cfg: ParseConfig) -> TextPlan:
    claim_texts = [(i, c.text) for i, c in enumerate(doc.claims) if c.text.strip()]
    description = _cut([p for p in doc.description.split("\n") if p.strip()], cfg.max_description_chars)
    texts: list[str] = []
    feeds: list[tuple[str, ...]] = []
    if claim_texts:
        first = doc.first_claim_index
        first = first if first >= 0 and doc.claims[first].text.strip() else claim_texts[0][0]
        first_text = doc.claims[first].text
        others = _cut([t for i, t in claim_texts if i != first], cfg.max_claims_chars)
        texts += [first_text] + others
        feeds += [("first_claim", "all_claims", "description")] + [("all_claims", "description")] * len(others)
        texts += description
        feeds += [("description",)] * len(description)
        sources = {
            "first_claim": "first_claim",
            "all_claims": "claims",
            "description": "claims+description" if description else "claims",
        }
    else:
        lead = doc.abstract.strip() or (description[0] if description else "") or doc.title.strip()
        lead_source = "abstract" if doc.abstract.strip() else ("description" if description else "title")
        texts.append(lead)
        feeds.append(("first_claim", "all_claims", "description"))
        rest = description if doc.abstract.strip() else description[1:]
        texts += rest
        feeds += [("description",)] * len(rest)
        sources = {
            "first_claim": lead_source,
            "all_claims": lead_source,
            "description": f"{lead_source}+description" if rest else lead_source,
        }
    title = doc.title.strip()
    if cfg.title_text and title and title not in texts:  # the title first, into the graphs the lead text feeds
        texts.insert(0, title)
        feeds.insert(0, ("description",) if claim_texts else ("first_claim", "all_claims", "description"))
    keep = [i for i, t in enumerate(texts) if t.strip()]
    return TextPlan(tuple(texts[i] for i in keep), tuple(feeds[i] for i in keep), sources)


class NoText(ValueError):
    pass


class GraphBuilder:
    """Builds invention graphs with one spaCy pipeline and one rule set.

    Example::

        builder = GraphBuilder(ParseConfig())
        graphs = builder.build(document)          # {"first_claim": InventionGraph, ...}
        query = builder.build_text("1. A snowthrower comprising ...")
    """

    def __init__(self, cfg: ParseConfig, nlp=None, rules: RuleSet | None = None):
        self.cfg = cfg
        self.rules = rules or load_rules(cfg.rules_path)
        self.nlp = nlp or load_nlp(cfg.spacy_model)
        self.matcher = build_matcher(self.rules, self.nlp.vocab)

    def extract_texts(self, texts: list[str]) -> list[Extraction]:
        cleaned = [self.rules.normalisation.clean(t) for t in texts]
        return [
            extract(doc, self.matcher, self.rules, self.cfg.max_snippet_tokens)
            for doc in self.nlp.pipe(cleaned, batch_size=self.cfg.batch_size)
        ]

    def build(self, doc: PatentDocument) -> dict[str, InventionGraph]:
        plan = plan_texts(doc, self.cfg)
        if not plan.texts:
            raise NoText("no text to build graphs from: no claims, abstract, description or title")
        accumulators = {kind: GraphAccumulator() for kind in self.cfg.kinds}
        wanted = [
            i for i, feeds in enumerate(plan.feeds) if not accumulators.keys().isdisjoint(feeds)
        ]  # parse only what a kind uses
        for extraction, i in zip(self.extract_texts([plan.texts[i] for i in wanted]), wanted):
            for kind in plan.feeds[i]:
                if kind in accumulators:
                    accumulators[kind].add(extraction)
        return {kind: acc.finish(doc.id, kind, plan.sources[kind], self.cfg) for kind, acc in accumulators.items()}

    def build_text(self, text: str, doc_id: str = "query", kind: str = "first_claim") -> InventionGraph:
        """A graph from free text (a query claim): each paragraph parsed, all merged."""
        acc = GraphAccumulator()
        for extraction in self.extract_texts([p for p in text.split("\n") if p.strip()] or [text]):
            acc.add(extraction)
        return acc.finish(doc_id, kind, "text", self.cfg)
