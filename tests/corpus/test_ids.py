"""Typed ids: the forms people write find the indexed id; a miss names the closest ones."""

from graphtx.corpus.ids import IdResolver, compact

IDS = [
    "US-8418590-B2",
    "US-20090301270-A1",
    "EP-1000000-A1",
    "EP-1000000-B1",
    "US-D680087-S1",
    "US-8418591-B2",
    "1974J0644V",
]


def test_compact_forms_agree():
    assert {
        compact(t) for t in ("US8418590B2", "US-8418590-B2", "US 8,418,590 B2", "us-8418590-b2", "US-08418590-B2")
    } == {"US8418590B2"}
    assert compact("US D0680087 S1") == compact("US-D680087-S1")


def test_resolve_and_suggest():
    r = IdResolver(IDS)
    for typed in ("US8418590B2", "US-8418590", "US 8,418,590 B2", "us-8418590-b2"):
        assert r.resolve(typed) == ["US-8418590-B2"], typed
    assert r.resolve("EP1000000") == ["EP-1000000-A1", "EP-1000000-B1"]  # two publications of one number: both named
    assert r.resolve("1974j0644v") == ["1974J0644V"] and r.resolve("  ") == []
    assert (
        r.resolve("US-8418590-B1") == [] and r.suggest("US-8418590-B1")[0] == "US-8418590-B2"
    )  # same number, another kind first
    assert "US-8418591-B2" in r.suggest("US-8418592-B2")
