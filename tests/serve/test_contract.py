"""The service keeps its OpenAPI contract: every error answer it gives is documented, a body's types are the schema's.

The default suite checks the two gaps a Schemathesis run found (issue 50) by hand; ``make test-slow`` walks every
operation of the schema with Schemathesis (generated requests, each answer checked against the schema).
"""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
from fastapi.testclient import TestClient  # noqa: E402

from graphtx.config import ServeConfig  # noqa: E402
from graphtx.index.search import Index  # noqa: E402
from graphtx.serve.app import create_app  # noqa: E402

UNSAYABLE_IN_A_SCHEMA = (
    "no invention features",
)  # refusals of schema-valid requests that only the text's parse can decide
CFG = ServeConfig(max_k=20, max_request_bytes=1 << 20, max_text_chars=1000, max_explain_hits=3)


@pytest.fixture(scope="module")
def app(tiny_index, builder):
    index = Index.open(tiny_index)
    index.parser._builder = builder  # the session's spaCy pipeline
    return create_app(index, CFG)


@pytest.fixture(scope="module")
def client(app):
    with TestClient(app, base_url="http://localhost") as c:
        yield c


@pytest.mark.timeout(120)
def test_every_error_the_service_answers_is_in_its_schema(client):
    schema = client.get("/openapi.json").json()
    answers = {
        (path, method): set(op["responses"]) for path, ops in schema["paths"].items() for method, op in ops.items()
    }
    for path in ("/search", "/explain", "/search/batch"):
        assert {"400", "404", "413", "422", "503"} <= answers[(path, "post")], path
        assert schema["paths"][path]["post"]["responses"]["400"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/ErrorOut"
        }
    assert {"404", "422", "503"} <= answers[("/documents/{doc_id}", "get")]
    error = schema["components"]["schemas"]["ErrorOut"]
    assert error["required"] == ["error"]
    # the answers themselves: as documented
    bad_json = client.post("/search", content=b"{not json", headers={"content-type": "application/json"})
    neither = client.post("/search", json={"k": 3})
    unknown = client.get("/documents/NO-SUCH-DOC")
    for answer, status in ((bad_json, {400, 422}), (neither, {400}), (unknown, {404})):
        assert (
            answer.status_code in status and set(answer.json()) <= {"error", "suggestions"} and answer.json()["error"]
        )


@pytest.mark.timeout(120)
def test_a_body_is_read_with_the_schemas_types(client):
    topic = {"topics": [{"id": "T1", "text": "A snowthrower comprising an auger housing."}], "k": 3}
    assert client.post("/search/batch", json=topic).status_code == 200
    for field, value in (("all_independent", 0), ("hybrid", 1), ("k", "3"), ("k", 3.5)):
        answer = client.post("/search/batch", json={**topic, field: value})
        assert answer.status_code == 422, (field, value, answer.text)
        assert field in answer.json()["error"]
    assert client.post("/search", json={"text": "an auger housing", "explain": "yes"}).status_code == 422
    assert client.post("/search", json={"text": "an auger housing", "group_by_family": 0}).status_code == 422


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_schemathesis_finds_no_server_error_and_no_answer_outside_the_schema(app):
    schemathesis = pytest.importorskip(
        "schemathesis", reason="the API fuzzer: pip install 'graphtx[fuzz]' (make test-slow installs it)"
    )
    from hypothesis import HealthCheck, given, settings
    from hypothesis.errors import Unsatisfiable
    from schemathesis.specs.openapi.checks import positive_data_acceptance

    schema = schemathesis.openapi.from_asgi(
        "/openapi.json", app, headers={"host": "localhost"}
    )  # the service answers loopback Host names only
    failures = []
    for result in schema.get_all_operations():
        operation = result.ok()
        for mode in (
            schemathesis.GenerationMode
        ):  # positive: schema-valid bodies must run; negative: schema-invalid ones must be refused

            @settings(
                max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None, derandomize=True
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def check(case):
                response = case.call(headers={"host": "localhost"})
                error = response.json().get("error", "") if response.status_code == 400 else ""
                # a schema-valid text with no noun phrase: no JSON Schema can say so; the 400 says it in words
                semantic = error.startswith(UNSAYABLE_IN_A_SCHEMA)
                case.validate_response(
                    response,
                    excluded_checks=[positive_data_acceptance] if semantic else None,
                    headers={"host": "localhost"},
                )

            try:
                check()
            except Unsatisfiable:
                # an operation with neither a parameter nor a body (GET /healthz) has no schema-invalid request to
                # send: schemathesis 4.3 says so as "unable to satisfy assumptions"; anything else is a failure
                if mode.value != "negative" or list(operation.iter_parameters()) or getattr(operation, "body", None):
                    failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): no example generated")
            except Exception as err:  # noqa: BLE001 - every operation is walked; the failures are listed together
                failures.append(f"{operation.method.upper()} {operation.path} ({mode.value}): {str(err)[:2000]}")
    assert not failures, "\n\n".join(failures)
