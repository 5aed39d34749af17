"""A seeded synthetic corpus with planted citations: documents of three technical fields; each
query cites documents of its own field, so a text system that reads words beats chance."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from graphtx.corpus.schema import Citation, PatentDocument
from graphtx.eval.systems import System
from tests.text import patent_sentence

FIELD_NAMES = ("battery", "snow", "valve")
CPC = {"battery": "H01M 10/44", "snow": "E01H 5/04", "valve": "F16K 1/00"}


def synthetic_corpus(
    per_field: int = 12, seed: int = 0, with_cpc: bool = True
) -> tuple[list[PatentDocument], list[Citation]]:
    """``3 * per_field`` documents D-<field>-<i>; the first 4 of each field cite 6 of the others of their field."""
    rng = random.Random(seed)
    docs, citations = [], []
    for field in FIELD_NAMES:
        ids = [f"D-{field}-{i:02d}" for i in range(per_field)]
        for doc_id in ids:
            text = " ".join(patent_sentence(rng, field) for _ in range(2))
            docs.append(
                PatentDocument(
                    doc_id, "test", "-", title=f"{field} device", abstract=text, cpc=(CPC[field],) if with_cpc else ()
                )
            )
        for q in ids[:4]:
            for cited in rng.sample([d for d in ids if d != q], 6):
                citations.append(Citation(q, cited, "X" if cited.endswith(("0", "5")) else "A", "test"))
    return docs, citations


def write_files(root, docs, citations) -> tuple:
    """docs.jsonl (raw documents) and citations.tsv with a header, as in ../shared/data."""
    root.mkdir(parents=True, exist_ok=True)
    docs_path, cites_path = root / "docs.jsonl", root / "citations.tsv"
    docs_path.write_text(
        "".join(
            json.dumps({"id": d.id, "title": d.title, "abstract": d.abstract, "cpc": list(d.cpc)}) + "\n" for d in docs
        )
    )
    cites_path.write_text(
        "citing_id\tcited_id\tcategory\n" + "".join(f"{c.citing_id}\t{c.cited_id}\t{c.category}\n" for c in citations)
    )
    return docs_path, cites_path


class MatrixSystem(System):
    """Fixed scores: row i = the scores of document i as a query."""

    name = "matrix"

    def __init__(self, scores):
        super().__init__()
        self.matrix = np.asarray(scores, dtype=np.float64)

    def scores(self, rows):
        return self.matrix[rows]


@pytest.fixture(scope="module")
def synthetic():
    return synthetic_corpus()


@pytest.fixture(scope="module")
def synthetic_files(tmp_path_factory, synthetic):
    return write_files(tmp_path_factory.mktemp("synthetic"), *synthetic)
