"""The service's OpenAPI schema, tightened to what this service answers.

FastAPI writes the schema from the request models, which know the types but not this service's limits (``serve.max_k``,
``max_text_chars``, ``max_offset``, ``max_explain_hits``, ``max_batch_topics``), the rankers and re-ranking this index
offers, nor the rules that span fields (exactly one of ``text`` and ``id``). A client generated from the bare schema
would send requests the service then refuses; Schemathesis reported them as "schema-valid request rejected". Here
those rules go into the schema the service publishes at ``/openapi.json`` (OpenAPI 3.1, JSON Schema 2020-12), so every
request the schema admits is one the service runs, and every refusal is of a request the schema does not admit
(tests/serve/test_contract.py).
"""

from __future__ import annotations

from typing import Any

# a date as graphtx.index.filters.iso_cutoff reads it (2010, 2010-06, 2010-06-30, 20100630, 2010/06/30), or none
DATE_PATTERN = r"^\s*(?:[Nn][Oo][Nn][Ee]|\d{4}(?:[-/.]?(?:0[1-9]|1[0-2])(?:[-/.]?(?:0[1-9]|[12]\d|3[01]))?)?)\s*$"
NOT_BLANK = r"\S"  # a text with something in it


def exactly_one(*names: str) -> dict:
    """JSON Schema: exactly one of ``names`` given as a string (null counts as not given)."""
    return {"oneOf": [{"required": [n], "properties": {n: {"type": "string"}}} for n in names]}


_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def _json_schema_bounds(node: Any) -> None:
    """pydantic writes a constrained integer inside a union (``Count | None``) with its own keys (``ge``, ``le``);
    JSON Schema's are ``minimum``, ``maximum``: renamed in place, recursively."""
    if isinstance(node, dict):
        for short, name in _BOUNDS.items():
            if short in node and node.get("type") in ("integer", "number"):
                node[name] = node.pop(short)
        for value in node.values():
            _json_schema_bounds(value)
    elif isinstance(node, list):
        for value in node:
            _json_schema_bounds(value)


def tightened_schema(schema: dict, cfg: Any, rankers: list[str], late: bool) -> dict:
    """``schema`` (FastAPI's, changed in place and returned) with this service's limits and the index's options.

    ``cfg``: the ServeConfig; ``rankers``: ``Index.available_rankers()``; ``late``: whether the index holds late vectors."""
    models = schema.get("components", {}).get("schemas", {})
    _json_schema_bounds(models)
    reranks = ["none", "late"] if late else ["none"]

    def prop(model: str, name: str) -> dict:
        return models[model]["properties"][name]

    def choices(model: str, name: str, values: list[str]) -> None:
        prop(model, name)["anyOf"] = [{"type": "string", "enum": list(values)}, {"type": "null"}]

    def text(model: str, name: str) -> None:
        p = prop(model, name)
        p["anyOf"] = [{"type": "string", "maxLength": cfg.max_text_chars, "pattern": NOT_BLANK}, {"type": "null"}]

    for model in ("SearchIn", "ExplainIn", "BatchIn"):
        if model not in models:
            continue
        before = prop(model, "before")
        before["anyOf"] = [{"type": "string", "pattern": DATE_PATTERN}, {"type": "null"}]
        choices(model, "ranker", rankers)
        choices(model, "rerank", reranks)
    for model in ("SearchIn", "ExplainIn"):
        text(model, "text")
        models[model].update(exactly_one("text", "id"))
        prop(model, "offset")["maximum"] = cfg.max_offset
    prop("SearchIn", "k")["maximum"] = cfg.max_k
    models["SearchIn"]["if"] = {"properties": {"explain": {"const": True}}, "required": ["explain"]}
    models["SearchIn"]["then"] = {"properties": {"k": {"maximum": cfg.max_explain_hits}}}
    prop("ExplainIn", "k")["maximum"] = cfg.max_explain_hits
    doc_ids = prop("ExplainIn", "doc_ids")
    doc_ids["anyOf"] = [
        {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": cfg.max_explain_hits},
        {"type": "null"},
    ]
    prop("BatchIn", "k")["maximum"] = cfg.max_k
    prop("BatchIn", "topics")["maxItems"] = cfg.max_batch_topics
    text("TopicIn", "text")
    models["TopicIn"]["not"] = {
        "required": ["text", "doc_id"],
        "properties": {"text": {"type": "string"}, "doc_id": {"type": "string"}},
    }
    return schema
