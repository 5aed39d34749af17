"""Search filters (date cut-off, CPC/IPC prefixes, country, kind, families) with every first-stage
ranker and late re-ranking, at high selectivity; typed ids; the CLI and HTTP faces of both.

The corpus: 100 documents in 50 two-member families (an A1 and a B2 as in real families), offices US/EP/WO in turn, dates 2000-2019, and a CPC class (B60L 50/64) that only
3 documents (3%) carry, so a filter on it needs far more than k FAISS neighbours.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from graphtx.config import IndexConfig
from graphtx.corpus.schema import Claim, PatentDocument
from graphtx.corpus.store import CorpusWriter, TableWriter
from graphtx.graphs.graph import GRAPH_SCHEMA
from graphtx.graphs.parse import GRAPHS_FILE
from graphtx.index.filters import FilterData, SearchFilters
from graphtx.index.search import Index
from graphtx.index.store import IndexStore
from tests.index.fixtures import make_graph, make_model

N = 100
RARE_CPC = "B60L 50/64"
RARE = (7, 40, 73)  # the 3% that carry it


def did(i: int) -> str:
    """US families: an A1 (application number) and a B2 (patent number); EP and WO: A1 and B2 under one number."""
    country, kind = ("US", "EP", "WO")[(i // 2) % 3], ("A1", "B2")[i % 2]
    number = 20000000 + i // 2 if country == "US" and kind == "A1" else 1000 + i // 2
    return f"{country}-{number}-{kind}"


def meta(i: int) -> dict:
    year = 2000 + (i * 7) % 20
    return {
        "date": f"{year}-06-15",
        "priority_date": f"{year - 1}-03-01",
        "family_id": f"F{i // 2}",
        "cpc": (f"H01M {i % 10}/00",) + ((RARE_CPC,) if i in RARE else ()),
        "ipc": (f"H01M {i % 10}/00",),
    }


@pytest.fixture(scope="module")
def filtered(tmp_path_factory):
    from graphtx import integrity
    from graphtx.index.build import build_index

    root = tmp_path_factory.mktemp("filters")
    with CorpusWriter(root / "corpus") as w:
        for i in range(N):
            g = make_graph(i)
            claim = f"A {g.node_text[0]} comprising " + ", ".join(g.node_text[1:-1]) + "."
            m = meta(i)
            doc = PatentDocument(
                did(i),
                "test",
                "-",
                title=f"Title {g.node_text[1]}",
                abstract=claim,
                claims=(Claim(1, claim, True),),
                ipc=m["ipc"],
                cpc=m["cpc"],
                family_id=m["family_id"],
                date=m["date"],
                priority_date=m["priority_date"],
                kind=did(i)[-2:],
                country=did(i)[:2],
            )
            w.add_document(doc, (), "-", str(i))
    graphs = root / "graphs"
    graphs.mkdir()
    writer = TableWriter(graphs / GRAPHS_FILE, GRAPH_SCHEMA, rows_per_group=64)
    for i in range(N):
        for kind in ("description", "first_claim"):
            writer.add(dataclasses.replace(make_graph(i, kind), doc_id=did(i)).to_row())
    writer.close()
    manifest = {
        "corpus": str(root / "corpus"),
        "documents": N,
        "config": {},
        "checksums": integrity.record(graphs, [GRAPHS_FILE]),
    }
    (graphs / "manifest.json").write_text(json.dumps(integrity.seal(manifest)) + "\n")
    model = make_model(root, late_dim=12)
    build_index(model, graphs, root / "index", IndexConfig(chunk_size=32, late_storage="fp16"), progress=False)
    return {"root": root, "index": root / "index", "graphs": graphs}


@pytest.fixture(scope="module")
def index(filtered):
    return Index.open(filtered["index"])


def brute_force(index: Index, graph, passing) -> list[str]:
    store = IndexStore(index.store.dir)
    live = store.live()
    vectors = np.array(
        [r["vector"] for r in store.read_rows(list(zip(live.part.tolist(), live.row.tolist())), ["vector"])], np.float32
    )
    scores = vectors @ index.embed([graph])[0]
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], live.doc_id[i]))
    return [live.doc_id[i] for i in order if passing(live.doc_id[i])]


RANKERS = ("dense", "bm25", "hybrid")


@pytest.mark.parametrize("ranker", RANKERS)
def test_a_3_percent_filter_still_returns_k_hits(index, ranker):
    rare = {did(i) for i in RARE}
    query = make_graph(0)  # its nearest neighbours are mostly documents without the rare class
    unfiltered = [h.doc_id for h in index.search(graph=query, k=3, ranker=ranker)]
    assert set(unfiltered) != rare  # a filter after the top 3 would leave fewer than 3
    result = index.search(graph=query, k=3, ranker=ranker, filters=SearchFilters(cpc=("B60L",)))
    assert {h.doc_id for h in result} == rare and [h.rank for h in result] == [1, 2, 3]
    assert result.filters["passing"] == 3
    assert (
        len(index.search(graph=query, k=10, ranker=ranker, filters=SearchFilters(cpc=("B60L 50",)))) == 3
    )  # fewer only when fewer exist


def test_filtered_dense_ranking_equals_brute_force_over_the_passing_documents(index):
    query = make_graph(5, seed=3)
    filters = SearchFilters(cpc=("H01M 3", "H01M 4/00"), country=("EP",))
    expected = [
        d
        for d in brute_force(
            index, query, lambda d: d.startswith("EP-") and meta(_num(d))["cpc"][0][:6] in ("H01M 3", "H01M 4")
        )
    ]
    assert 3 <= len(expected) < 10
    result = index.search(graph=query, k=10, ranker="dense", filters=filters)
    assert [h.doc_id for h in result] == expected  # every passing document, in exact order


def _num(doc_id: str) -> int:
    """Inverse of did()."""
    return next(i for i in range(N) if did(i) == doc_id)


def test_late_rerank_under_a_selective_filter(index):
    result = index.search(
        graph=make_graph(0), k=3, ranker="dense", rerank="late", rerank_depth=5, filters=SearchFilters(cpc=("B60L",))
    )
    assert {h.doc_id for h in result} == {did(i) for i in RARE} and all(h.late_score is not None for h in result)


def test_before_is_strict_on_publication_date(index):
    result = index.search(graph=make_graph(11), k=N, ranker="dense", filters=SearchFilters(before="2005-06-15"))
    dates = {h.doc_id: meta(_num(h.doc_id))["date"] for h in result}
    assert dates and all(d < "2005-06-15" for d in dates.values())
    assert len(result) == sum(meta(i)["date"] < "2005-06-15" for i in range(N))  # every one before, none on the day
    assert len(index.search(graph=make_graph(11), k=N, filters=SearchFilters(before="2005"))) == sum(
        meta(i)["date"] < "2005" for i in range(N)
    )


def test_an_id_query_defaults_to_its_priority_date_and_leaves_its_family_out(index):
    q = 21  # priority 2006-03-01, family F10 (with document 20)
    result = index.search(doc_id=did(q), k=N, filters=SearchFilters())
    assert result.filters["before"] == meta(q)["priority_date"] and result.filters["exclude_family"]
    ids = [h.doc_id for h in result]
    assert ids and did(q) not in ids and did(20) not in ids
    assert all(meta(_num(d))["date"] < meta(q)["priority_date"] for d in ids)
    everything = [
        h.doc_id for h in index.search(doc_id=did(q), k=N, filters=SearchFilters(before="none", exclude_family=False))
    ]
    assert len(everything) == N - 1 and did(20) in everything and did(q) not in everything  # the query itself never
    no_cutoff = index.search(doc_id=did(q), k=N, filters=SearchFilters(before="none"))
    assert len(no_cutoff) == N - 2 and no_cutoff.filters["before"] is None


def test_group_by_family_keeps_the_best_member(index):
    query = make_graph(30, seed=5)
    plain = index.search(graph=query, k=N, ranker="dense")
    grouped = index.search(graph=query, k=10, ranker="dense", filters=SearchFilters(group_by_family=True))
    families = [meta(_num(h.doc_id))["family_id"] for h in grouped]
    assert len(grouped) == 10 and len(set(families)) == 10 and [h.rank for h in grouped] == list(range(1, 11))
    first_of_family = list(dict.fromkeys((meta(_num(h.doc_id))["family_id"], h.doc_id) for h in plain))
    best = {}
    for fam, d in first_of_family:
        best.setdefault(fam, d)
    assert [h.doc_id for h in grouped] == list(best.values())[:10]
    assert (
        len(index.search(graph=query, k=N, filters=SearchFilters(group_by_family=True))) == N // 2
    )  # all 50 families, no more


def test_country_and_kind(index):
    result = index.search(
        graph=make_graph(2), k=N, ranker="hybrid", filters=SearchFilters(country=("wo",), kind=("B",))
    )
    assert len(result) == sum(did(i).startswith("WO-") and did(i).endswith("B2") for i in range(N))
    assert all(h.doc_id.startswith("WO-") and h.doc_id.endswith("-B2") for h in result)


def test_bad_filters_say_what_is_wanted():
    with pytest.raises(ValueError, match="before must be a date such as 2010-06-30"):
        SearchFilters(before="June 2010")
    with pytest.raises(ValueError, match="before must be a date"):
        SearchFilters(before="2010-13-01")
    assert SearchFilters(before="20100630").before == "2010-06-30" and SearchFilters(cpc="H01M 10/44, B60L").cpc == (
        "H01M10/44",
        "B60L",
    )


def test_filter_data_of_an_index_without_the_new_columns():
    """Parts written before the filter columns: country and kind from the id, family = the id without kind."""
    data = FilterData(["US-1-B2", "US-1-A1", "EP-2-B1"], [{"date": "2001-01-01"}, {"date": "2002"}, {}])
    f = SearchFilters(country=("US",))
    assert data.mask(f, None, None).tolist() == [True, True, False]
    assert data.mask(SearchFilters(), "2002-06-01", None).tolist() == [
        True,
        False,
        False,
    ]  # "2002" is not surely before June 2002
    assert data.mask(SearchFilters(), None, data.family[0]).tolist() == [False, False, True]
    assert (
        data.unfilled(SearchFilters(cpc=("H01M",), ipc=("H01M",))) == ["cpc", "ipc"]
        and data.unfilled(SearchFilters()) == []
    )
    assert (
        FilterData(["A-1"], [{"cpc": ["H01M 10/44"]}]).unfilled(SearchFilters(cpc=("Y02E",))) == []
    )  # codes there, none matching


# --- typed ids ---------------------------------------------------------------------


def test_typed_ids_find_the_indexed_one(index):
    # did(1) == "US-1000-B2"
    for typed in ("US1000B2", "US-1000", "US 1,000 B2", "us-1000-b2", "US-01000-B2"):
        assert index.search(doc_id=typed, k=2).query.doc_id == did(1), typed
    assert index.document("us1000b2").doc_id == did(1)
    with pytest.raises(KeyError, match=r"did you mean US-1000-B2"):
        index.search(doc_id="US-1000-B1")
    with pytest.raises(KeyError, match=r"names 2 indexed publications"):
        index.search(doc_id="EP-1001")  # A1 and B2 of one number: which?


def test_cli_filters_and_did_you_mean(filtered, capsys):
    from graphtx.cli import main

    rc = main(
        [
            "search",
            "--index",
            str(filtered["index"]),
            "--id",
            "us1000b2",
            "-k",
            "5",
            "--cpc",
            "H01M",
            "--before",
            "2015",
            "--json",
            "--quiet",
        ]
    )
    out = json.loads(capsys.readouterr().out)
    assert (
        rc == 0
        and out["query"]["doc_id"] == did(1)
        and out["filters"]["before"] == "2015"
        and out["filters"]["exclude_family"]
    )
    assert all(h["date"] < "2015" and h["doc_id"] != did(0) for h in out["hits"]) and len(out["hits"]) == 5
    rc = main(["search", "--index", str(filtered["index"]), "--id", "US-1000-B1", "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "did you mean US-1000-B2" in err and "Traceback" not in err
    rc = main(["search", "--index", str(filtered["index"]), "--id", did(1), "--before", "soon", "--quiet"])
    assert rc == 2 and "before must be a date" in capsys.readouterr().err
    rc = main(
        [
            "search",
            "--index",
            str(filtered["index"]),
            "--id",
            did(1),
            "--group-by-family",
            "--before",
            "none",
            "-k",
            "3",
            "--quiet",
        ]
    )
    text = capsys.readouterr().out
    assert rc == 0 and "one hit per family" in text and "family of the query left out" in text
    rc = main(
        [
            "search",
            "--index",
            str(filtered["index"]),
            "--text",
            "A battery cell.",
            "--country",
            "US",
            "--kind",
            "B",
            "--ipc",
            "H01M",
            "-k",
            "2",
            "--quiet",
        ]
    )
    assert rc == 0 and "IPC H01M, country US, kind B:" in capsys.readouterr().out
    rc = main(
        [
            "search",
            "--index",
            str(filtered["index"]),
            "--text",
            "A battery cell.",
            "--cpc",
            "Y02E",
            "-k",
            "2",
            "--quiet",
        ]
    )
    said = capsys.readouterr().out
    assert (
        rc == 0 and "0 of" in said and "no document of the index has" not in said
    )  # the index has CPC codes, none of Y02E


@pytest.mark.timeout(120)
def test_http_filters_and_404_suggestions(index):
    pytest.importorskip("fastapi")
    pytest.importorskip("httpx")
    from fastapi.testclient import TestClient

    from graphtx.serve.app import create_app

    with TestClient(create_app(index), base_url="http://localhost") as client:
        r = client.post(
            "/search", json={"id": "US 1,000 B2", "k": 3, "cpc": ["B60L"], "before": "none", "ranker": "dense"}
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert {h["doc_id"] for h in body["hits"]} == {did(i) for i in RARE} and body["filters"]["passing"] == 3
        r = client.post("/search", json={"id": did(21), "k": 50, "ranker": "bm25"})  # the defaults of an id query
        assert all(h["date"] < meta(21)["priority_date"] for h in r.json()["hits"]) and did(20) not in {
            h["doc_id"] for h in r.json()["hits"]
        }
        r = client.post("/search", json={"id": "US-1000-B1", "k": 3})
        assert r.status_code == 404 and r.json()["suggestions"][0] == did(1) and "did you mean" in r.json()["error"]
        assert client.get("/documents/US1000B2?graph=false").json()["doc_id"] == did(1)
        r = client.post("/search", json={"id": did(1), "before": "someday"})
        assert r.status_code == 400 and "before must be a date" in r.json()["error"]
        r = client.post(
            "/search",
            json={
                "id": did(1),
                "k": 5,
                "group_by_family": True,
                "before": "none",
                "exclude_family": False,
                "ranker": "dense",
            },
        )
        fams = [meta(_num(h["doc_id"]))["family_id"] for h in r.json()["hits"]]
        assert len(fams) == 5 == len(set(fams)) and meta(1)["family_id"] in fams  # its own family may come back, once


def test_an_approximate_index_that_cannot_reach_them_falls_back_to_exact_cosines(filtered, tmp_path):
    """IVF-PQ visiting one cell never returns every document: the passing ones are scored exactly."""
    from graphtx.index.build import build_index

    out = tmp_path / "ivf"
    build_index(
        filtered["root"] / "model",
        filtered["graphs"],
        out,
        IndexConfig(index_type="ivfpq", pq_nbits=4, ivf_nlist=4, bm25=False),
        progress=False,
    )
    ivf = Index.open(out, nprobe=1)
    reached = {h.doc_id for h in ivf.search(graph=make_graph(0), k=N, ranker="dense")}
    assert len(reached) < N and not {did(i) for i in RARE} <= reached  # one cell of four, without all three
    result = ivf.search(graph=make_graph(0), k=3, ranker="dense", filters=SearchFilters(cpc=("B60L",)))
    assert {h.doc_id for h in result} == {did(i) for i in RARE}


def test_an_index_built_before_the_filter_columns_still_filters(filtered, tmp_path, monkeypatch):
    """Parts without family/country/kind/date columns: old indexes open; country, kind and family come from the ids."""
    import pyarrow as pa

    from graphtx.index import build as build_module
    from graphtx.index.build import build_index
    from graphtx.index.store import DISPLAY_FIELDS, part_schema

    def old_schema(dim: int) -> pa.Schema:
        return pa.schema([f for f in part_schema(dim) if f.name not in DISPLAY_FIELDS])

    monkeypatch.setattr(build_module, "part_schema", old_schema)
    monkeypatch.setattr(build_module, "DISPLAY_FIELDS", ())
    out = tmp_path / "old"
    build_index(filtered["root"] / "model", filtered["graphs"], out, IndexConfig(), progress=False)
    monkeypatch.undo()
    old = Index.open(out)
    assert "country" not in IndexStore(out).read_part_columns(0, ["doc_id"]).schema.names
    result = old.search(doc_id="US1000B2", k=N, filters=SearchFilters(country=("US",), before="none"))
    ids = [h.doc_id for h in result]
    assert ids and all(d.startswith("US-") for d in ids) and did(1) not in ids
    assert (
        len(ids) == sum(did(i).startswith("US-") for i in range(N)) - 1
    )  # no family_id stored: only the query itself is its family
    assert all(h.date for h in result)  # the dates were always there
