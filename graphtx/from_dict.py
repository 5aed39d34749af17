"""Frozen config dataclasses from plain mappings (YAML, JSON manifests): the one strict reader.

``from_dict(cls, data, where)`` builds ``cls`` from ``data``: an unknown key is an error that names
where it was found, the key, the closest known one and every known one (a typo must not fall back
to a default silently); a key the class lists in ``REMOVED`` (key -> why it went) is named with that
reason instead of a closest one; a field whose default is a dataclass is read the same way from its own
mapping (``where.section``); YAML lists become tuples. ``known_only`` drops the keys a class does
not know, for artefacts written by another graphtx version (manifests), where ignoring a newer
field is right. ``with_overrides`` is ``dataclasses.replace`` without the ``None`` values of unset
command-line flags.

Example::

    from_dict(ParseConfig, {"max_nodes": 5}, "config.parse")
    # ValueError: unknown key(s) in config.parse: max_nodes (did you mean max_feature_nodes?); known: spacy_model, ...
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


def from_dict(cls: type[T], data: Mapping[str, Any] | None, where: str) -> T:
    """``cls(**data)`` with unknown keys refused, nested dataclass sections read the same way, lists as tuples."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise ValueError(f"{where} must be a mapping of key: value, got {type(data).__name__} {data!r:.80}")
    known = {f.name: f for f in dataclasses.fields(cls)}
    unknown = [str(k) for k in data if k not in known]
    if unknown:
        hints = [_hint(cls, k, known) for k in sorted(unknown)]
        raise ValueError(f"unknown key(s) in {where}: {', '.join(hints)}; known: {', '.join(known)}")
    kwargs = {}
    for name, value in data.items():
        nested = known[name].default_factory
        if nested is not dataclasses.MISSING and dataclasses.is_dataclass(nested):
            kwargs[name] = from_dict(nested, value, f"{where}.{name}")
        elif isinstance(value, list):
            kwargs[name] = tuple(value)
        else:
            kwargs[name] = value
    return cls(**kwargs)


def _hint(cls: type, key: str, known: Mapping[str, Any]) -> str:
    """An unknown key as the error names it: with the reason it was removed (``cls.REMOVED``), else the closest known key."""
    removed = getattr(cls, "REMOVED", {})
    if key in removed:
        return f"{key} (removed: {removed[key]})"
    close = difflib.get_close_matches(key, known, n=1)
    return f"{key} (did you mean {close[0]}?)" if close else key


def known_only(cls: type[T], data: Mapping[str, Any] | None) -> T:
    """``cls`` from the keys of ``data`` it knows (lists as tuples): a field another version added is ignored."""
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in (data or {}).items() if k in known})


def with_overrides(cfg: T, **changes: Any) -> T:
    """``dataclasses.replace`` that ignores None values (unset CLI flags)."""
    changes = {k: v for k, v in changes.items() if v is not None}
    return dataclasses.replace(cfg, **changes) if changes else cfg
