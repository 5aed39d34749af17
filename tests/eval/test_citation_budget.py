"""benchmarks/studies/citation_budget.py: N citing documents with all their pairs, seeded and nested across N."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import citation_budget  # noqa: E402  (our own script: it imports or the test fails, never skips)

CITING = [f"US-{i}" for i in range(12)]


@pytest.mark.timeout(30)
def test_a_budget_is_seeded_and_a_smaller_one_is_inside_a_larger_one():
    small = citation_budget.budget_citing(CITING, 3, seed=0)
    large = citation_budget.budget_citing(CITING + CITING, 7, seed=0)  # repeats count once
    assert len(small) == 3 and len(large) == 7 and small <= large
    assert citation_budget.budget_citing(CITING, 3, seed=0) == small
    assert any(citation_budget.budget_citing(CITING, 3, seed=s) != small for s in range(1, 6))


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("queries", "message"), [(0, "at least one"), (13, "above the file's 12")])
def test_impossible_budgets_are_refused_with_the_reason(queries, message):
    with pytest.raises(ValueError, match=message):
        citation_budget.budget_citing(CITING, queries, seed=0)


@pytest.mark.timeout(30)
def test_the_budget_file_keeps_every_pair_of_its_citing_documents_and_the_header(tmp_path):
    source = tmp_path / "c.tsv"
    rows = [("US-1", "US-9"), ("US-2", "US-9"), ("US-1", "US-8"), ("US-3", "US-7"), ("US-2", "US-6")]
    source.write_text("citing_id\tcited_id\n" + "".join(f"{a}\t{b}\n" for a, b in rows), encoding="utf-8")
    out = tmp_path / "sub" / "b.tsv"
    assert citation_budget.main([str(source), "--queries", "2", "--seed", "4", "--out", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    assert lines[0] == "citing_id\tcited_id"
    kept = [tuple(x.split("\t")) for x in lines[1:]]
    citing = {a for a, _ in kept}
    assert len(citing) == 2 and kept == [r for r in rows if r[0] in citing]  # whole, in the source's order
    assert citation_budget.main([str(source), "--queries", "4", "--out", str(out)]) == 2  # refused, file kept
    assert out.read_text(encoding="utf-8").splitlines() == lines


@pytest.mark.timeout(30)
def test_the_rest_is_every_other_pair_so_budget_and_rest_split_the_file(tmp_path):
    source = tmp_path / "c.tsv"
    rows = [(f"US-{i % 5}", f"US-{90 + i}") for i in range(11)]
    source.write_text("citing_id\tcited_id\n" + "".join(f"{a}\t{b}\n" for a, b in rows), encoding="utf-8")
    budget, rest = tmp_path / "b.tsv", tmp_path / "r.tsv"
    assert citation_budget.main([str(source), "--queries", "2", "--seed", "1", "--out", str(budget)]) == 0
    assert citation_budget.main([str(source), "--queries", "2", "--seed", "1", "--out", str(rest), "--rest"]) == 0
    kept = [tuple(x.split("\t")) for x in budget.read_text(encoding="utf-8").splitlines()[1:]]
    other = [tuple(x.split("\t")) for x in rest.read_text(encoding="utf-8").splitlines()[1:]]
    assert rest.read_text(encoding="utf-8").startswith("citing_id\tcited_id\n")
    assert not {a for a, _ in kept} & {a for a, _ in other}  # no citing document on both sides
    assert sorted(kept + other) == sorted(rows) and other == [r for r in rows if r not in kept]


@pytest.mark.timeout(30)
def test_the_rest_of_several_seeds_is_outside_each_seeds_budget(tmp_path):
    source = tmp_path / "c.tsv"
    source.write_text("".join(f"US-{i}\tUS-{50 + i}\n" for i in range(12)), encoding="utf-8")  # no header
    rest = tmp_path / "r.tsv"
    assert citation_budget.main([str(source), "--queries", "3", "--out", str(rest), "--rest", "--seeds", "0,1,2"]) == 0
    left = {line.split("\t")[0] for line in rest.read_text(encoding="utf-8").splitlines()}
    budgets = [citation_budget.budget_citing(CITING, 3, seed=s) for s in (0, 1, 2)]
    assert left == set(CITING) - set().union(*budgets) and len(left) < 9  # the seeds' budgets differ
    with pytest.raises(SystemExit):  # a budget has one seed: --seeds without --rest is refused, not ignored
        citation_budget.main([str(source), "--queries", "3", "--out", str(rest), "--seeds", "0,1"])
