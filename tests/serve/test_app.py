"""The HTTP service: endpoints, limits, 4xx errors, read-only by default, concurrent requests."""

from __future__ import annotations

import shutil
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

from graphtx.config import ServeConfig  # noqa: E402
from graphtx.index.search import Index  # noqa: E402
from graphtx.serve.app import create_app  # noqa: E402
from tests.index.fixtures import N_DOCS  # noqa: E402

CFG = ServeConfig(max_k=50, max_request_bytes=4096, max_text_chars=1000, max_explain_hits=5)


@pytest.fixture(scope="module")
def index(tiny_index, builder):
    index = Index.open(tiny_index)
    index.parser._builder = builder  # the session's spaCy pipeline
    return index


@pytest.fixture(scope="module")
def client(index):
    with TestClient(create_app(index, CFG), base_url="http://localhost") as c:
        yield c


def test_healthz(client):
    r = client.get("/healthz")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "ok" and body["count"] == N_DOCS and body["read_only"] and body["index_type"] == "flat"


def test_explain_pages_as_search_does_and_draws_graphs_when_asked(client):
    text = "1. A zorblat3 device comprising a battery cell, a cooling plate and a charging circuit."
    page = client.post("/search", json={"text": text, "k": 5, "offset": 5}).json()["hits"]
    explained = client.post("/explain", json={"text": text, "k": 5, "offset": 5}).json()["explanations"]
    assert [h["doc_id"] for h in explained] == [h["doc_id"] for h in page] and all(
        h["explanation"]["elements"] for h in explained
    )
    one = client.post("/explain", json={"text": text, "doc_ids": [page[0]["doc_id"]], "svg": True}).json()[
        "explanations"
    ][0]
    assert one["svg"]["query"].startswith("<svg") and one["svg"]["hit"].startswith("<svg")


def test_the_page_is_offered_only_the_rankers_the_index_has(client):
    assert client.get("/healthz").json()["rankers"] == ["dense", "bm25", "hybrid"]  # no fitted ranker in this index
    r = client.post("/search", json={"id": "T-00004", "k": 5, "ranker": "learned"})
    assert r.status_code == 400
    message = r.json()["error"]
    assert (
        "has no learned ranker" in message
        and "the rankers it has: dense, bm25, hybrid" in message
        and "--ranker" not in message
    )


def test_search_by_id_and_by_text(client):
    r = client.post("/search", json={"id": "T-00004", "k": 5})
    assert r.status_code == 200
    hits = r.json()["hits"]
    assert len(hits) == 5 and "T-00004" not in [h["doc_id"] for h in hits] and hits[0]["title"]
    r = client.post(
        "/search",
        json={"text": "1. A zorblat9 device comprising a pump and a nozzle.", "k": 3, "hybrid": True, "explain": True},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["hybrid"] and len(body["hits"]) == 3 and body["hits"][0]["explanation"]["matches"]
    assert {"parse", "encode", "search", "bm25", "explain", "total"} <= set(body["timings_ms"])
    assert "note" not in body and "claims" not in body  # one claim: nothing to say
    two = "1. A zorblat9 device comprising a pump. 2. The device of claim 1 with a nozzle. 3. A zorblat4 device comprising a gear."
    body = client.post("/search", json={"text": two, "k": 3}).json()
    assert (
        body["claims"] == {"searched": [1], "not_searched": [3], "merge": "single"} and "not claim(s) 3" in body["note"]
    )
    merged = client.post("/search", json={"text": two, "k": 3, "all_independent": True}).json()
    assert merged["claims"] == {"searched": [1, 3], "not_searched": [], "merge": "rrf"} and "note" not in merged
    assert len(merged["hits"]) == 3 and all(h["found_by"] for h in merged["hits"])
    page = client.post(
        "/search", json={"text": two, "k": 2, "offset": 1, "all_independent": True, "merge": "max"}
    ).json()
    whole = client.post("/search", json={"text": two, "k": 3, "all_independent": True, "merge": "max"}).json()
    assert [(h["rank"], h["doc_id"]) for h in page["hits"]] == [(h["rank"], h["doc_id"]) for h in whole["hits"][1:3]]


def test_explain_named_documents_or_top_hits(client):
    r = client.post("/explain", json={"id": "T-00002", "doc_ids": ["T-00002", "T-00010"]})
    assert r.status_code == 200 and [e["doc_id"] for e in r.json()["explanations"]] == ["T-00002", "T-00010"]
    r = client.post("/explain", json={"id": "T-00002", "k": 2})
    assert r.status_code == 200 and len(r.json()["explanations"]) == 2
    assert client.post("/explain", json={"id": "T-00002", "doc_ids": ["NOPE"]}).status_code == 404
    assert client.post("/explain", json={"id": "T-00002", "k": 6}).status_code == 400


def test_documents(client):
    r = client.get("/documents/T-00007")
    assert r.status_code == 200 and r.json()["graph"]["node_text"][0] == "zorblat7 device"
    assert "graph" not in client.get("/documents/T-00007", params={"graph": "false"}).json()
    r = client.get("/documents/NOPE")
    assert r.status_code == 404 and "not in the index" in r.json()["error"]


@pytest.mark.parametrize(
    "body,status,message",
    [
        ({"id": "T-00001", "k": 51}, 400, "k must be <= 50"),
        ({"id": "T-00001", "text": "a lamp"}, 400, "exactly one of"),
        ({"k": 3}, 400, "exactly one of"),
        ({"text": "   "}, 400, "empty"),
        ({"id": "NOPE"}, 404, "not in the index"),
        ({"id": "T-00001", "k": 0}, 422, "k must be at least 1"),
        ({"id": "T-00001", "offset": -2}, 422, "offset must be at least 0"),
        ({"id": "T-00001", "k": "ten"}, 422, "k"),
        ({"id": "T-00001", "colour": "red"}, 422, "unknown field 'colour'"),
        ({"text": "x" * 1001}, 413, "1000 characters"),
        ({"id": "T-00001", "explain": True, "k": 6}, 400, "with explain"),
        ({"text": "and or but the."}, 400, "no invention features"),
    ],
)
def test_bad_requests_get_clear_4xx(client, body, status, message):
    r = client.post("/search", json=body)
    assert r.status_code == status and message in r.json()["error"], r.text


def test_malformed_and_oversized_bodies(client):
    r = client.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 422 and "invalid request" in r.json()["error"]
    r = client.post("/search", content=b"{" + b" " * 5000 + b"}", headers={"content-type": "application/json"})
    assert r.status_code == 413
    chunks = (b" " * 1024 for _ in range(8))  # no Content-Length: the limit is counted as the body streams in
    r = client.post("/search", content=chunks, headers={"content-type": "application/json"})
    assert r.status_code == 413 and "4096 bytes" in r.json()["error"]


def test_read_only_by_default_and_writable_on_request(client, tiny_index, tmp_path, index):
    assert client.delete("/documents/T-00001").status_code == 405
    copy = tmp_path / "index"
    shutil.copytree(tiny_index, copy)
    writable = Index.open(copy)
    writable.parser = index.parser
    with TestClient(create_app(writable, ServeConfig(read_only=False)), base_url="http://localhost") as c:
        r = c.delete("/documents/T-00001")
        assert r.status_code == 200 and r.json()["count"] == N_DOCS - 1
        assert c.get("/documents/T-00001").status_code == 404 and c.get("/healthz").json()["count"] == N_DOCS - 1
        assert c.delete("/documents/T-00001").status_code == 404


def test_concurrent_requests(client):
    def one(i: int) -> int:
        body = {"id": f"T-{i:05d}", "k": 5, "hybrid": i % 2 == 0}
        return client.post("/search", json=body).status_code

    with ThreadPoolExecutor(8) as pool:
        assert set(pool.map(one, range(40))) == {200}


def test_search_rerank_late(client, tiny, tmp_path):
    from graphtx.config import IndexConfig
    from graphtx.index.build import build_index
    from tests.index.fixtures import make_model

    # the tiny index's model has no late head: a clear 400
    r = client.post("/search", json={"id": "T-00001", "k": 3, "rerank": "late"})
    assert r.status_code == 400 and "late-interaction head" in r.json()["error"]
    model = make_model(tmp_path, name="late-model", late_dim=8)
    build_index(model, tiny["graphs"], tmp_path / "index", IndexConfig(chunk_size=50), progress=False)
    with TestClient(create_app(Index.open(tmp_path / "index"), CFG), base_url="http://localhost") as late:
        r = late.post("/search", json={"id": "T-00001", "k": 3, "rerank": "late", "rerank_depth": 20, "explain": True})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["rerank"] == "late" and len(body["hits"]) == 3
        for h in body["hits"]:
            assert abs(sum(t["contribution"] for t in h["explanation"]["terms"]) - h["score"]) < 1e-4
        assert late.post("/search", json={"id": "T-00001", "rerank": "colbert"}).status_code == 422


def test_batch_search_is_bounded_and_lists_skipped_topics(client, index):
    from graphtx.index.filters import SearchFilters

    topics = [
        {"id": "Q1", "text": "1. A zorblat5 device comprising a chute. 2. A zorblat9 device comprising a frame."},
        {"id": "T-00003"},
        {"id": "Q3", "doc_id": "NOPE"},
        {"id": "T-00003"},
    ]
    r = client.post("/search/batch", json={"topics": topics, "k": 3, "tag": "web"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert [x["topic"] for x in body["results"]] == ["Q1", "T-00003"] and "only claim 1 was searched" in body[
        "results"
    ][0]["note"]
    assert [h["doc_id"] for h in body["results"][1]["hits"]] == [
        h.doc_id for h in index.search(doc_id="T-00003", k=3, filters=SearchFilters())
    ]  # the searcher's defaults, as /search
    assert [(s["topic"], s["position"]) for s in body["skipped"]] == [
        ("Q3", 3),
        ("T-00003", 4),
    ] and "not in the index" in body["skipped"][0]["reason"]
    lines = [line.split() for line in body["run"].splitlines()]
    assert (
        len(lines) == 6
        and lines[3][:4] == ["T-00003", "Q0", body["results"][1]["hits"][0]["doc_id"], "1"]
        and lines[0][5] == "web"
    )
    filtered = client.post(
        "/search/batch", json={"topics": [{"id": "T-00003"}], "k": 3, "ipc": ["H01M 2"], "before": "none"}
    ).json()["results"][0]["hits"]
    assert len(filtered) == 3 and all(
        int(h["doc_id"][2:]) % 7 == 2 for h in filtered
    )  # the filters of /search, for every topic
    merged = client.post("/search/batch", json={"topics": topics[:1], "k": 3, "all_independent": True}).json()[
        "results"
    ][0]
    assert "note" not in merged and all(h["found_by"] for h in merged["hits"])

    too_many = [{"id": f"T-{i:05d}"} for i in range(25)]
    r = client.post("/search/batch", json={"topics": too_many})
    assert r.status_code == 413 and "at most 20 topics" in r.json()["error"]
    assert client.post("/search/batch", json={"topics": [{"id": "a b"}]}).status_code == 422
    assert (
        client.post("/search/batch", json={"topics": [{"id": "Q", "text": "x", "doc_id": "T-00001"}]}).status_code
        == 400
    )
