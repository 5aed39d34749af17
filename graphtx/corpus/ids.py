"""Document ids as people type them: ``US8418590B2``, ``US 8,418,590 B2``, ``us-8418590-b2`` and
``US-8418590`` all find ``US-8418590-B2``; an id that matches nothing gets the closest ids.

Matching is on a compact key: upper case, only letters and digits, leading zeros of the number
dropped (``US08418590B2`` -> ``US8418590B2``). An id without a kind code matches the one indexed
publication of that number (several publications: the error lists them). Exact ids never go
through this (``IdMap.position_of`` stays exact).
"""

from __future__ import annotations

import difflib
import re

from graphtx.corpus.codes import id_key

_KIND = re.compile(r"^(.*\d)([A-Z]\d?)$")  # a trailing kind code after the number: "...590B2", "...087S1"


def compact(doc_id: str) -> str:
    """``"US 8,418,590 B2" -> "US8418590B2"``, ``"US-08418590-B2" -> "US8418590B2"``."""
    key = re.sub(r"[^A-Z0-9]", "", doc_id.upper())
    return re.sub(r"^([A-Z]{2}[A-Z]{0,2})0+(?=\d)", r"\1", key)


class IdResolver:
    """Finds indexed ids from typed ones (built lazily from an id list: two dicts)."""

    def __init__(self, doc_ids: list[str]):
        self.full: dict[str, str] = {}
        self.numbers: dict[str, list[str]] = {}  # compact id without kind -> ids
        for d in doc_ids:
            self.full.setdefault(compact(d), d)
            self.numbers.setdefault(compact(id_key(d)), []).append(d)

    def resolve(self, typed: str) -> list[str]:
        """The indexed ids ``typed`` names: one, several (a number without kind, many kinds), or none."""
        key = compact(typed)
        if not key:
            return []
        if key in self.full:
            return [self.full[key]]
        if key in self.numbers:  # no kind given
            return sorted(self.numbers[key])
        return []

    def suggest(self, typed: str, n: int = 3) -> list[str]:
        """Closest indexed ids: the same number with another kind first, then by string similarity."""
        key = compact(typed)
        if not key:
            return []
        m = _KIND.match(key)
        same_number = sorted(self.numbers.get(m.group(1), [])) if m else []
        if len(same_number) >= n:
            return same_number[:n]
        pool = [k for k in self.full if k[:2] == key[:2] and abs(len(k) - len(key)) <= 3] or list(self.full)
        if len(pool) > 200_000:  # keep a miss fast on large indexes: the same leading characters only
            pool = [k for k in pool if k[:4] == key[:4]]
        close = [self.full[k] for k in difflib.get_close_matches(key, pool, n=n, cutoff=0.5)]
        return list(dict.fromkeys(same_number + close))[:n]


def not_found_message(typed: str, suggestions: list[str]) -> str:
    hint = f"; did you mean {', '.join(suggestions)}?" if suggestions else ""
    return f"document {typed!r} is not in the index{hint}"
