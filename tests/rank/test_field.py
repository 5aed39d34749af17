"""Which field an index is of (graphtx.text.field): term profiles, their similarity, and search's auto on another field."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from graphtx.text.field import MIN_DOCUMENTS, TOP_TERMS, FieldProfile, check_field


def profile(df: dict, documents: int = 100) -> FieldProfile:
    return FieldProfile(documents, df)


def test_similarity_is_a_cosine_of_document_frequencies():
    a = profile({"battery": 40, "cell": 30, "cool": 10})
    assert a.similarity(a) == pytest.approx(1.0)
    assert a.similarity(profile({"battery": 400, "cell": 300, "cool": 100}, 1000)) == pytest.approx(1.0)  # size-blind
    assert a.similarity(profile({"packet": 40, "network": 30})) == 0.0  # no term in common
    near, far = profile({"battery": 35, "cell": 30, "pump": 5}), profile({"battery": 2, "packet": 40, "network": 30})
    assert 1.0 > a.similarity(near) > a.similarity(far) > 0.0
    assert a.similarity(near) == pytest.approx(near.similarity(a))  # symmetric


def test_profile_keeps_the_most_frequent_terms():
    vocab = {"a": 0, "d": 1, "c": 2, "": 3, "b": 4}
    p = FieldProfile.from_counts(np.array([5, 9, 0, 50, 9]), vocab, documents=60, top=3)
    assert p.df == {"b": 9, "d": 9, "a": 5}  # the empty token and absent terms left out
    assert list(p.df) == ["b", "d", "a"]  # ties by the term, not by column (a vocabulary's order may follow hashing)
    assert FieldProfile.from_counts(np.array([9, 9]), {"y": 0, "x": 1}, documents=9, top=1).df == {"x": 9}
    assert p.documents == 60
    assert FieldProfile.from_json(p.to_json()) == p
    assert FieldProfile.from_json({}) is None and FieldProfile.from_json(None) is None
    assert FieldProfile.from_json({"documents": 3, "df": "oops"}) is None


@pytest.mark.timeout(60)
def test_a_profile_of_token_lists_keeps_the_same_tied_terms_whatever_the_string_hashing():
    code = (
        "import json; from graphtx.text.field import FieldProfile; "
        "docs = [[f'w{i}', f'w{i + 1}', f'w{i + 2}', 'common'] for i in range(0, 3000, 3)]; "
        "print(json.dumps(FieldProfile.from_token_lists(docs, 'x').df))"
    )  # 3,000 terms tied at one document each and 'common' in all 1,000: the cut at TOP_TERMS keeps 1,999 of the tied
    outs = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=50,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": seed},
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert len(outs) == 1  # the same terms in the same order in every process, whatever its string hashing
    df = json.loads(outs.pop())
    assert len(df) == TOP_TERMS and df["common"] == 1000


def test_profile_of_bm25_and_of_token_lists_agree():
    pytest.importorskip("bm25s", reason="BM25 needs bm25s")
    from graphtx.text.bm25 import Bm25, LexicalTokens

    texts = ["a battery pack with cooling plates", "battery cells cooled by a plate", "a network packet router"]
    tokens = LexicalTokens()
    from_index = FieldProfile.from_bm25s(Bm25.build(texts, tokens=tokens).retriever, tokens.describe())
    from_fit = FieldProfile.from_token_lists(iter(tokens(texts)), tokens.describe())
    assert from_index == from_fit
    assert from_index.documents == 3 and from_index.df["batteri"] == 2  # stemmed, one count a document


def test_a_corpus_profile_reads_the_text_an_index_reads(tmp_path):
    """Claims and description count, as in the index's BM25, though rank-fit's pools read title and abstract."""
    from graphtx.corpus.schema import Claim, PatentDocument
    from graphtx.corpus.store import CorpusWriter
    from graphtx.text.field import corpus_profile

    with CorpusWriter(tmp_path / "corpus") as w:
        for i in range(3):
            doc = PatentDocument(
                f"D-{i}",
                "test",
                "-",
                title="Snowthrower",
                abstract="An auger housing.",
                claims=(Claim(1, "A chute mounted on the housing.", True),),
                description="The impeller throws snow." if i else "",
            )
            w.add_document(doc, (), "-", str(i))
    profile = corpus_profile(tmp_path / "corpus")
    assert profile.documents == 3 and profile.df["auger"] == 3 and profile.df["chute"] == 3 and profile.df["impel"] == 2
    assert profile.tokens == "stop words en, stemmer english"
    short = corpus_profile(tmp_path / "corpus", max_chars=12)
    assert "chute" not in short.df  # index.bm25_max_chars cuts as the index's BM25 does


def test_check_needs_enough_documents_and_a_profile():
    fitted, other = profile({"battery": 40}), profile({"packet": 40})
    check = check_field(fitted, other, 0.85)
    assert check.other_field and check.similarity == 0.0 and "below search.same_field 0.85" in check.describe()
    assert not check_field(fitted, fitted, 0.85).other_field
    few = check_field(fitted, profile({"packet": 4}, MIN_DOCUMENTS - 1), 0.85)
    assert few.similarity is None and not few.other_field and "too few documents" in few.describe()
    assert check_field(None, other, 0.85) is None  # a ranker fitted before profiles were recorded
    assert check_field(fitted, other, 0.0) is None  # search.same_field 0: never checked
    stemmed, plain = (
        FieldProfile(100, {"batteri": 9}, "stemmer english"),
        FieldProfile(100, {"battery": 9}, "stemmer none"),
    )
    assert check_field(stemmed, plain, 0.85) is None  # other tokens: not comparable, not "another field"


# --- search's auto, over the rank tests' fitted index ---------------------------------------------

needs_lightgbm = pytest.mark.skipif(
    importlib.util.find_spec("lightgbm") is None,
    reason="the learned ranker needs lightgbm (pip install 'graphtx[rank]')",
)


@pytest.fixture
def foreign_ranker(fitted, tmp_path):
    """The fitted ranker, its recorded corpus swapped for another field's (the profile is not in its fingerprint)."""
    out = tmp_path / "ranker"
    shutil.copytree(fitted / "ranker", out)
    meta = json.loads((out / "ranker.json").read_text())
    meta["corpus_profile"] = {"documents": 500, "df": {"pump": 300, "valv": 250, "impel": 120, "seal": 90}}
    (out / "ranker.json").write_text(json.dumps(meta))
    return out


@needs_lightgbm
@pytest.mark.timeout(240)
def test_rank_fit_records_its_corpus_and_auto_keeps_learned_on_it(fitted):
    from graphtx.index.search import Index
    from tests.index.fixtures import N_DOCS

    meta = json.loads((fitted / "ranker" / "ranker.json").read_text())
    assert meta["corpus_profile"]["documents"] == N_DOCS and len(meta["corpus_profile"]["df"]) > 10
    index = Index.open(fitted)
    check = index.field_check().ranker
    assert check.similarity == pytest.approx(1.0) and not check.other_field  # the index is the fit's corpus
    recorded = FieldProfile.from_json(meta["corpus_profile"])
    assert recorded.df == FieldProfile.from_bm25s(index.bm25().retriever).df  # the same text, the same tokens
    assert index.resolve_ranker() == "learned"
    result = index.search("A zorblat3 device comprising a battery cell and a cooling plate.", k=3)
    assert result.ranker == "learned" and not any("another field" in w for w in result.warnings)


@needs_lightgbm
@pytest.mark.timeout(240)
def test_auto_leaves_the_graph_features_out_on_another_field(fitted, foreign_ranker, tmp_path, capsys):
    from graphtx.cli import main
    from graphtx.config import SearchConfig
    from graphtx.index.search import Index

    index = Index.open(fitted, ranker_dir=foreign_ranker)
    found = index.field_check()
    assert found.ranker.other_field and found.model is None and found.leave_out_graph  # init-model: no corpus recorded
    assert index.resolve_ranker() == "learned-lexical"
    text = "A zorblat3 device comprising a battery cell and a cooling plate."
    auto = index.search(text, k=4)
    assert auto.ranker == "learned-lexical" and len(auto) == 4
    assert any("without its graph features" in w and "--ranker learned keeps them" in w for w in auto.warnings)
    lexical = index.search(text, k=4, ranker="learned-lexical")
    assert [h.doc_id for h in lexical] == [h.doc_id for h in auto]  # auto is that ranker, not a mix
    asked = index.search(text, k=4, ranker="learned")  # asked for by name: kept, with a warning
    assert asked.ranker == "learned" and any("fitted on another field" in w for w in asked.warnings)
    from graphtx.index.batch import run_topics

    topics = tmp_path / "topics.txt"
    topics.write_text("T-00003\nT-00007\n")
    report = run_topics(index, topics, tmp_path / "run.trec", 3, features=False, progress=False)
    assert report.searched == 2 and any(
        "ranked by learned-lexical" in w for w in report.warnings
    )  # said once, not per topic
    assert "graphtx-learned-lexical" in (tmp_path / "run.trec").read_text()  # the run's tag names the ranker
    off = Index.open(fitted, ranker_dir=foreign_ranker, search=SearchConfig(same_field=0.0))
    assert off.resolve_ranker() == "learned" and off.field_check() is None
    capsys.readouterr()
    rc = main(["search", "--index", str(fitted), "--ranker-dir", str(foreign_ranker), "--text", text, "-k", "2"])
    out = capsys.readouterr().out
    assert rc == 0 and "learned ranker without graph features" in out and "warning: ranked by learned-lexical" in out


@needs_lightgbm
@pytest.mark.timeout(240)
def test_a_model_that_learned_on_the_index_keeps_a_foreign_rankers_graph_features(fitted, foreign_ranker, tmp_path):
    """Over a model adapted to the index's corpus, a ranker from another field gained from them (transfer.md)."""
    from graphtx.index.search import Index
    from graphtx.text.field import MODEL_PROFILE_FILE, read_model_profile, write_model_profile

    index_dir = tmp_path / "index"
    shutil.copytree(fitted, index_dir)
    model_copy = index_dir / json.loads((index_dir / "manifest.json").read_text())["model_dir"]
    assert read_model_profile(model_copy) is None  # made by init-model: no corpus learned on
    here = Index.open(index_dir, ranker_dir=foreign_ranker).bm25()
    write_model_profile(model_copy, FieldProfile.from_bm25s(here.retriever, here.engine.tokens.describe()))
    index = Index.open(index_dir, ranker_dir=foreign_ranker)
    found = index.field_check()
    assert found.ranker_elsewhere and found.model.same_field and not found.leave_out_graph
    assert index.resolve_ranker() == "learned"
    kept = index.search("A zorblat3 device comprising a battery cell and a cooling plate.", k=3)
    assert kept.ranker == "learned" and any("its graph features are kept" in w for w in kept.warnings)
    # a model that learned on another field changes nothing: the ranker decides
    write_model_profile(model_copy, FieldProfile(500, {"pump": 300, "valv": 250}, here.engine.tokens.describe()))
    assert Index.open(index_dir, ranker_dir=foreign_ranker).resolve_ranker() == "learned-lexical"
    (model_copy / MODEL_PROFILE_FILE).write_text("{not json")  # damaged: as if none
    assert Index.open(index_dir, ranker_dir=foreign_ranker).resolve_ranker() == "learned-lexical"


def test_same_field_must_be_a_cosine():
    from graphtx.config import SearchConfig

    with pytest.raises(ValueError, match="same_field"):
        SearchConfig(same_field=1.5)


@needs_lightgbm
@pytest.mark.timeout(240)
def test_the_service_says_which_ranker_and_why(fitted, foreign_ranker):
    pytest.importorskip("fastapi", reason="the service needs fastapi (pip install 'graphtx[serve]')")
    from fastapi.testclient import TestClient

    from graphtx.index.search import Index
    from graphtx.serve.app import create_app

    with TestClient(create_app(Index.open(fitted, ranker_dir=foreign_ranker)), base_url="http://localhost") as client:
        health = client.get("/healthz").json()
        assert health["ranker"] == "learned-lexical" and "learned-lexical" in health["rankers"]
        assert any("without its graph features" in w for w in health["ranker_warnings"])
        found = client.post("/search", json={"id": "T-00004", "k": 3}).json()
        assert found["ranker"] == "learned-lexical" and any("learned-lexical" in w for w in found["warnings"])
