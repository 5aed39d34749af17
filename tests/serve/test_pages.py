"""The web page and /docs: local assets only (no CDN URL in any served HTML), offline Swagger UI, offset pages,
SVG graphs with escaped text, the Host allow-list on the pages too, nothing written into the package."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("fastapi")

from graphtx.config import ServeConfig
from graphtx.serve.pages import STATIC_DIR

# an absolute or protocol-relative URL in an attribute that makes the browser fetch it
FETCHED_URL = re.compile(r"""\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:[a-z][a-z0-9+.\-]*:)?//""", re.I)
EXTERNAL_IN_CODE = re.compile(
    r"""(?:fetch|import|url)\s*\(\s*["'`](?:https?:)?//|@import\s+["']?(?:https?:)?//""", re.I
)


@pytest.fixture(scope="module")
def client(tiny_index):
    from fastapi.testclient import TestClient

    from graphtx.config import SearchConfig
    from graphtx.serve.app import create_app

    app = create_app(
        tiny_index, ServeConfig(), SearchConfig(link_template="https://patents.google.com/patent/{id_compact}")
    )
    return TestClient(app, base_url="http://localhost")


def test_static_assets_are_package_data():
    names = {p.name for p in STATIC_DIR.iterdir()}
    assert {"index.html", "app.js", "style.css", "favicon.svg"} <= names
    from pathlib import Path

    pyproject = (Path(__file__).resolve().parents[2] / "pyproject.toml").read_text()
    assert '"serve/static/*"' in pyproject  # in the wheel
    for path in STATIC_DIR.iterdir():
        text = path.read_text(encoding="utf-8")
        assert not FETCHED_URL.search(text) and not EXTERNAL_IN_CODE.search(text), (
            f"{path.name} loads something from outside"
        )


@pytest.mark.parametrize("path", ["/", "/view/T-00003", "/docs"])
def test_served_html_names_no_external_url(client, path):
    r = client.get(path)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert not FETCHED_URL.search(r.text), FETCHED_URL.findall(r.text)
    assert "cdn" not in r.text.lower() and "jsdelivr" not in r.text and "unpkg" not in r.text
    csp = r.headers["content-security-policy"]
    assert "default-src 'self'" in csp and "http" not in csp  # the browser may load from this origin only
    for ref in re.findall(r"""(?:src|href)=["']([^"']+)["']""", r.text):  # every asset the page names is served here
        if not ref.startswith("#"):
            assert client.get(ref).status_code == 200, ref


def test_docs_work_offline(client):
    html = client.get("/docs").text
    assert "/static/swagger-ui/swagger-ui-bundle.js" in html and "/static/swagger-ui/swagger-ui.css" in html
    assert '"validatorUrl": null' in html  # no validator badge fetched from swagger.io
    assert len(client.get("/static/swagger-ui/swagger-ui-bundle.js").content) > 100_000
    assert client.get("/openapi.json").json()["paths"]["/search"]
    assert client.get("/redoc").status_code == 404  # ReDoc loads only from a CDN: off


def test_page_routes_keep_the_host_allow_list(client):
    assert client.get("/", headers={"Host": "evil.example"}).status_code == 400
    assert client.get("/static/app.js", headers={"Host": "evil.example"}).status_code == 400


def test_static_files_cannot_escape_their_folder(client):
    for path in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py"):
        r = client.get(path)
        assert r.status_code == 404 or "create_app" not in r.text


def test_offset_pages_through_the_ranking(client):
    whole = client.post("/search", json={"id": "T-00003", "k": 9}).json()["hits"]
    page = client.post("/search", json={"id": "T-00003", "k": 3, "offset": 3}).json()
    assert page["offset"] == 3 and [h["rank"] for h in page["hits"]] == [4, 5, 6]
    assert [h["doc_id"] for h in page["hits"]] == [h["doc_id"] for h in whole[3:6]]
    assert client.post("/search", json={"id": "T-00003", "k": 3, "offset": -1}).status_code == 422
    assert client.post("/search", json={"id": "T-00003", "k": 3, "offset": 5000}).status_code == 400


def test_search_svg_and_readable_fields(client):
    body = client.post(
        "/search",
        json={
            "text": "A zorblat3 device comprising a battery cell and a cooling plate.",
            "k": 2,
            "explain": True,
            "svg": True,
        },
    ).json()
    hit = body["hits"][0]
    assert hit["svg"]["query"].startswith("<svg") and hit["svg"]["hit"].startswith("<svg")
    assert 'class="node node-feature matched"' in hit["svg"]["hit"]  # matched nodes are shaded
    assert hit["link"].startswith("https://patents.google.com/patent/T") and hit["abstract"] and hit["first_claim"]
    assert (
        "not_found" in hit["explanation"] and "applicants" not in hit
    )  # the tiny corpus has no applicants: no blank field
    assert (
        "svg" not in client.post("/search", json={"id": "T-00003", "k": 1, "svg": True}).json()["hits"][0]
    )  # svg only with explain
    doc = client.get("/documents/T-00003?svg=true").json()
    assert doc["svg"].startswith("<svg") and doc["abstract"] and doc["link"].endswith("T00003")


def test_svg_escapes_node_text():
    from graphtx.graphs.graph import InventionGraph
    from graphtx.serve.svg import graph_svg

    evil = '<script>alert("x")</script> & "quoted"'
    g = InventionGraph(
        "D-<1>", "first_claim", "claims", (evil, "plain"), ("feature", "relation"), (1,), (0,), ("part_of",)
    )
    svg = graph_svg(g, {0: 0.8}, label="<b>label</b>")
    assert "<script>" not in svg and "<b>" not in svg and "&lt;script&gt;" in svg
    assert svg.count("<g class=") == 2 and 'fill-opacity="0.85"' in svg and "edge-part_of" in svg


def test_docs_without_swagger_files_says_what_to_install(tiny_index, monkeypatch):
    from fastapi.testclient import TestClient

    import graphtx.serve.pages as pages
    from graphtx.serve.app import create_app

    monkeypatch.setattr(pages, "swagger_dir", lambda: None)
    client = TestClient(create_app(tiny_index, ServeConfig()), base_url="http://localhost")
    r = client.get("/docs")
    assert r.status_code == 503 and "graphtx[serve]" in r.json()["error"]
    assert client.get("/").status_code == 200  # the search page does not need them


def test_offset_pages_a_filtered_ranking(client):
    body = {"text": "A zorblat3 device comprising a battery cell and a cooling plate.", "before": "2015-01-01"}
    whole = client.post("/search", json={**body, "k": 8}).json()["hits"]
    page = client.post("/search", json={**body, "k": 4, "offset": 4}).json()["hits"]
    assert [h["doc_id"] for h in page] == [h["doc_id"] for h in whole[4:8]] and [h["rank"] for h in page] == [
        5,
        6,
        7,
        8,
    ]
    assert all(h["date"] < "2015-01-01" for h in whole + page)
