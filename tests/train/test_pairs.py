from graphtx.corpus.citations import read_citations
from graphtx.corpus.schema import Citation
from graphtx.train.config import TrainConfig
from graphtx.train.pairs import (
    drop_held_out_targets,
    make_pairs,
    positives_by_citing,
    split_by_year,
    split_random,
    trivial_pairs,
)


def test_read_citations_header_and_category(tmp_path):
    p = tmp_path / "c.tsv"
    p.write_text("citing_id\tcited_id\tcategory\nA\tB\tX\n\nA\tC\n")
    assert read_citations(p) == [Citation("A", "B", "X", "tsv"), Citation("A", "C", "unknown", "tsv")]
    q = tmp_path / "bad.tsv"
    q.write_text("A\n")
    try:
        read_citations(q)
    except ValueError as err:
        assert "bad.tsv: line 1" in str(err) and "'A'" in str(err)
    else:
        raise AssertionError("a one-column line must be an error")


def test_make_pairs_accounts_for_every_citation():
    cfg = TrainConfig(category_map={"I": "X"})
    cites = [
        Citation("A", "B", "I"),
        Citation("A", "A"),
        Citation("Z", "B"),
        Citation("A", "Z"),
        Citation("A", "B", "X"),
    ]
    pairs, skipped = make_pairs(cites, has_query={"A", "B"}, has_candidate={"A", "B"}, cfg=cfg)
    assert [(p.citing, p.cited, p.category) for p in pairs] == [("A", "B", "X")]
    assert [s.reason.split(" ")[0] for s in skipped] == ["self-citation", "citing", "cited", "duplicate"]
    assert len(pairs) + len(skipped) == len(cites)
    assert cfg.margin("I") == cfg.margins["X"] and cfg.margin("weird") == cfg.margins["unknown"]


def test_trivial_pairs_share_and_determinism():
    ids = [f"D{i}" for i in range(50)]
    a = trivial_pairs(ids, 0.2, 100, seed=1)
    assert len(a) == 20 and all(p.citing == p.cited and p.category == "trivial" for p in a)
    assert a == trivial_pairs(reversed(ids), 0.2, 100, seed=1)
    assert a != trivial_pairs(ids, 0.2, 100, seed=2)
    assert len(trivial_pairs(ids, 0.2, 0, seed=1)) == 50  # no citations: every document


def test_random_split_keeps_families_whole_and_no_citation_crosses():
    family = {f"D{i}": f"F{i // 3}" for i in range(300)}
    cites = [Citation(f"D{i}", f"D{(i * 7 + 1) % 300}") for i in range(300)]
    s = split_random(cites, family, valid_share=0.2, test_share=0.1, seed=0)
    sets = {name: {family[c.citing_id] for c in getattr(s, name)} for name in ("train", "valid", "test")}
    assert (
        not (sets["train"] & sets["valid"])
        and not (sets["train"] & sets["test"])
        and not (sets["valid"] & sets["test"])
    )
    assert len(s.train) + len(s.valid) + len(s.test) + len(s.skipped) == len(cites)
    held = {c.citing_id for c in s.valid + s.test} | {family[c.citing_id] for c in s.valid + s.test}
    assert all(c.cited_id not in held and family[c.cited_id] not in held for c in s.train)
    assert 0.1 < len(sets["valid"]) / 100 < 0.3


def test_year_split_and_held_out_filter():
    year = {"A": 2005, "B": 2008, "C": 2009, "D": 2001}
    cites = [Citation("A", "D"), Citation("B", "A"), Citation("C", "B")]
    s = split_by_year(cites, year, {}, valid_from=2008, test_from=2009)
    assert s.train == [Citation("A", "D")] and s.valid == [Citation("B", "A")] and s.test == [Citation("C", "B")]
    keep, skipped = drop_held_out_targets([Citation("B", "D"), Citation("A", "D")], {"B"})
    assert keep == [Citation("A", "D")] and len(skipped) == 1


def test_known_positives_include_self():
    pairs, _ = make_pairs([Citation("A", "B")], {"A"}, {"B"}, TrainConfig())
    assert positives_by_citing(pairs) == {"A": {"A", "B"}}


def test_the_selection_split_takes_the_latest_training_queries_by_family():
    from graphtx.train.pairs import carve_selection

    cites = [
        Citation(q, c) for q, c in (("A", "X"), ("B", "X"), ("C", "Y"), ("D", "Y"), ("D", "Z"), ("E", "C"), ("F", "D"))
    ]
    date = {"A": "2001-01-01", "B": "2002-05-01", "C": "2007-01-01", "D": "2006-03-01", "E": "2003", "F": "2004"}
    family = {"C": "fam", "E": "fam"}  # E's family has a 2007 member: the whole family is late
    train, selection, skipped = carve_selection(cites, date, family, 0.3, seed=0)
    # 6 queries, 30% = 1.8: the latest family (C + E: 2 queries) is enough
    assert {c.citing_id for c in selection} == {"C", "E"}
    assert {c.citing_id for c in train} == {"A", "B", "D", "F"} - {c.citing_id for c in skipped}
    assert [(s.citing, s.cited) for s in skipped] == []  # nothing cites C or E here
    train, selection, skipped = carve_selection(cites, date, family, 0.5, seed=0)
    assert {c.citing_id for c in selection} == {"C", "E", "D"}
    assert [(s.citing, s.cited) for s in skipped] == [("F", "D")]  # a selection query's text is never a training target
    assert len(train) + len(selection) + len(skipped) == len(cites)
    # one family each side at the least; a share near 1 leaves the oldest to train
    train, selection, _ = carve_selection(cites, date, family, 0.99, seed=0)
    assert {c.citing_id for c in train} == {"A"}
    assert carve_selection(cites, date, family, 0.3, seed=0) == carve_selection(cites, date, family, 0.3, seed=0)
