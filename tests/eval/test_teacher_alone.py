"""benchmarks/studies/teacher_alone.py: a teacher's vectors scored by the evaluation's own protocol and cut-off."""

import math
import sys
from pathlib import Path

import numpy as np
import pytest

from graphtx.eval.config import EvalConfig
from graphtx.eval.data import EvalCorpus, Judgements
from graphtx.eval.protocols import evaluate_retrieval

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import teacher_alone  # noqa: E402  (our own script: it imports or the test fails, never skips)

IDS = ("A", "B", "LATE", "Q")
VECTORS = {"Q": [1.0, 0.0], "A": [0.8, 0.6], "B": [0.0, 1.0], "LATE": [1.0, 0.0]}  # LATE is the query's twin


@pytest.fixture
def teacher_dir(monkeypatch):
    """TeacherSystem.fit reads hand-set vectors in place of a `graphtx teacher` directory (ids outside the corpus ignored)."""
    import graphtx.eval.peer_vectors as peer_vectors
    import graphtx.text.teacher as teacher

    def load(directory):
        ids = [d for d in (*IDS, "OUTSIDE") if d not in load.without]
        vectors = np.array([VECTORS.get(d, [0.6, 0.8]) for d in ids], dtype=np.float32)
        return teacher.TeacherVectors(tuple(ids), vectors, {"model": "fixed", "fields": ["title"]})

    load.without = set()
    monkeypatch.setattr(teacher, "load_teacher_vectors", load)
    monkeypatch.setattr(
        peer_vectors, "read_peer_manifest", lambda directory: {"peer": "minilm", "model": "fixed", "fields": ["title"]}
    )
    return load


def scored(policy: str, relevant: dict, load) -> dict:
    cfg = EvalConfig(cutoff=policy)
    corpus = EvalCorpus(
        ids=IDS,
        query_texts=IDS,
        candidate_texts=IDS,
        codes=((),) * 4,
        dates=("2005", "2006", "2012", "2010-01-01"),
        priority=("", "", "", "2009-06-01"),
        cutoff_policy=policy,
    )
    judged = Judgements(relevant, sum(map(len, relevant.values())), {})
    system = teacher_alone.TeacherSystem("unused").fit(corpus)
    assert system.label == "teacher fixed (title)"
    return evaluate_retrieval(system, corpus, judged, cfg).per_query[0]


def test_the_cut_off_removes_later_documents_and_the_query(teacher_dir):
    row = scored("priority", {"Q": {"A": 1.0, "B": 1.0}}, teacher_dir)
    assert row["hits@3"] == 2 and row["nDCG@150"] == pytest.approx(1.0)
    assert "LATE" not in row["top3"].split() and "Q" not in row["top3"].split()


def test_without_the_cut_off_a_later_twin_outranks_the_cited(teacher_dir):
    row = scored("none", {"Q": {"B": 1.0}}, teacher_dir)  # LATE (cosine 1), A (0.8), then B (0)
    assert row["top3"].split() == ["LATE", "A", "B"]
    assert row["nDCG@150"] == pytest.approx(1 / math.log2(4))


def test_a_document_without_a_teacher_vector_ranks_below_every_scored_one(teacher_dir):
    teacher_dir.without = {"LATE"}
    row = scored("none", {"Q": {"B": 1.0}}, teacher_dir)  # the query's twin, but no vector: last
    assert row["top3"].split() == ["A", "B", "LATE"]
    assert row["hits@3"] == 1


def test_headroom_fuses_the_student_with_the_teacher(teacher_dir, monkeypatch):
    """--student: the student alone and RRF(student, teacher). Teacher order for Q (cut-off none): LATE, A, B; a student
    that ranks B, A, LATE; fused by RRF (k 60), each system's favourite (ranks 1 and 3: 1/61 + 1/63) edges out A (ranks 2
    and 2: 2/62), the favourites tie and fall to the smaller id."""
    from graphtx.eval import systems

    class Student(systems.DenseSystem):
        name = "graphtx"

        def __init__(self, model_dir, graphs_dir, *args, label="", **kw):
            super().__init__()
            self.label = label

        def fit(self, corpus):
            super().fit(corpus)
            v = np.array(
                [{"A": [0.8, 0.6], "B": [1.0, 0.0], "LATE": [0.0, 1.0], "Q": [1.0, 0.05]}[d] for d in corpus.ids]
            )
            self.set_vectors(v, v)
            return self

    monkeypatch.setattr(systems, "ModelSystem", Student)
    cfg = EvalConfig(cutoff="none")
    corpus = EvalCorpus(
        ids=IDS,
        query_texts=IDS,
        candidate_texts=IDS,
        codes=((),) * 4,
        dates=("2005", "2006", "2012", "2010-01-01"),
        priority=("", "", "", "2009-06-01"),
        cutoff_policy="none",
    )
    judged = Judgements({"Q": {"A": 1.0}}, 1, {})
    teacher = teacher_alone.TeacherSystem("unused").fit(corpus)
    student, fused = teacher_alone.headroom_systems(teacher, "m", "g", cfg, corpus)
    assert (student.label, fused.label) == ("student", "RRF(student, teacher)")
    rows = [evaluate_retrieval(s, corpus, judged, cfg).per_query[0] for s in (teacher, student, fused)]
    assert [r["top3"].split() for r in rows] == [["LATE", "A", "B"], ["B", "A", "LATE"], ["B", "LATE", "A"]]
    assert rows[2]["hits@3"] == 1 and rows[2]["nDCG@150"] == pytest.approx(1 / math.log2(4))


def test_student_needs_graphs():
    with pytest.raises(SystemExit):
        teacher_alone.main(["c", "t", "x.tsv", "--student", "m"])


def test_bm25_and_its_fusion_with_the_teacher(teacher_dir):
    """--bm25: BM25 alone over the texts (it finds B, the one sharing the query's words) and RRF(BM25, teacher), whose
    top two are each system's favourite: B (BM25's first) and LATE (the teacher's)."""
    texts = ("valve", "rotary pump vane", "spring", "rotary pump vane housing")  # A, B, LATE, Q
    cfg = EvalConfig(cutoff="none")
    corpus = EvalCorpus(
        ids=IDS,
        query_texts=texts,
        candidate_texts=texts,
        codes=((),) * 4,
        dates=("2005", "2006", "2012", "2010-01-01"),
        priority=("", "", "", "2009-06-01"),
        cutoff_policy="none",
    )
    judged = Judgements({"Q": {"B": 1.0}}, 1, {})
    teacher = teacher_alone.TeacherSystem("unused").fit(corpus)
    bm25, fused = teacher_alone.bm25_systems(teacher, cfg, corpus)
    assert fused.label == "RRF(BM25, teacher)"
    rows = [evaluate_retrieval(s, corpus, judged, cfg).per_query[0] for s in (teacher, bm25, fused)]
    assert rows[0]["top3"].split()[0] == "LATE" and rows[1]["top3"].split()[0] == "B"
    assert set(rows[2]["top3"].split()[:2]) == {"B", "LATE"}
    assert rows[2]["top3"].split()[2] == "A"  # ranks 2 and 2 or worse in both: third


def test_fields_need_bm25_and_must_be_fields(capsys):
    with pytest.raises(SystemExit):
        teacher_alone.main(["c", "t", "x.tsv", "--fields", "title"])
    assert "--fields is BM25's" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        teacher_alone.main(["c", "t", "x.tsv", "--bm25", "--fields", "title,summary"])
    assert "--fields: eval.query_fields must be" in capsys.readouterr().err


def test_config_sets_the_fields_and_cutoff_overrides_it(tmp_path, monkeypatch):
    """--config: the YAML's eval section (a full-text set's query and candidate fields, its cut-off); --cutoff overrides."""
    config = tmp_path / "fields.yaml"
    config.write_text("eval:\n  query_fields: [title, abstract]\n  candidate_fields: [title, abstract, description]\n")
    seen = {}

    class Stop(Exception):
        pass

    def load(corpus_dir, cfg):
        seen["cfg"] = cfg
        raise Stop

    monkeypatch.setattr(EvalCorpus, "load", staticmethod(load))
    with pytest.raises(Stop):
        teacher_alone.main(["c", "t", "x.tsv", "--config", str(config), "--cutoff", "none"])
    cfg = seen["cfg"]
    assert cfg.query_fields == ("title", "abstract") and cfg.candidate_fields == ("title", "abstract", "description")
    assert cfg.cutoff == "none"
    with pytest.raises(Stop):
        teacher_alone.main(["c", "t", "x.tsv"])
    assert seen["cfg"].candidate_fields == EvalConfig().candidate_fields and seen["cfg"].cutoff == "priority"
    config.write_text("eval:\n  cutoff: none\n")  # without --cutoff, the config's cut-off holds
    with pytest.raises(Stop):
        teacher_alone.main(["c", "t", "x.tsv", "--config", str(config)])
    assert seen["cfg"].cutoff == "none"


def _write_student_vectors(path, ids, graph, lexical, weight):
    """A `graphtx encode` file: [sqrt(1 - weight) graph ; sqrt(weight) lexical] per document (unit parts)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphtx.model.embed import vectors_schema

    joined = np.hstack([np.asarray(graph) * (1 - weight) ** 0.5, np.asarray(lexical) * weight**0.5]).astype(np.float32)
    schema = vectors_schema(joined.shape[1], "student")
    vector = pa.FixedSizeListArray.from_arrays(pa.array(joined.reshape(-1), pa.float32()), joined.shape[1])
    pq.write_table(
        pa.table({"doc_id": list(ids), "kind": ["description"] * len(ids), "vector": vector}, schema=schema), path
    )


def _uncut_corpus():
    """The four documents, all of one date, no cut-off: every other document is a candidate."""
    return EvalCorpus(
        ids=IDS,
        query_texts=IDS,
        candidate_texts=IDS,
        codes=((),) * 4,
        dates=("2005",) * 4,
        priority=("",) * 4,
        cutoff_policy="none",
    )


def _perfect(tmp_path, graph, lexical, weight, corpus, order=IDS[::-1]):
    """The perfect student over a student file written in ``order`` (not the corpus's: rows are matched by id)."""
    from graphtx.eval.systems import VectorSystem

    rows = [IDS.index(d) for d in order]
    _write_student_vectors(tmp_path / "v.parquet", order, np.array(graph)[rows], np.array(lexical)[rows], weight)
    teacher = teacher_alone.TeacherSystem("unused").fit(corpus)
    student = VectorSystem(tmp_path / "v.parquet").fit(corpus)
    return teacher_alone.PerfectStudent(teacher, student, out_dim=2, student_weight=weight).fit(corpus)


def test_perfect_student_is_the_teacher_beside_the_students_lexical_part(teacher_dir, tmp_path):
    """--perfect-student: the student's graph part is replaced by the teacher's vector, its lexical part kept, joined at
    the model's weight; cosines are then (1 - b) cos(teacher) + b cos(lexical) exactly, whatever the graph part was."""
    weight = 0.25
    graph = [[0.0, 1.0], [1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]  # A, B, LATE, Q: a graph part that prefers B and LATE
    lexical = [[1.0, 0.0], [0.6, 0.8], [0.0, 1.0], [1.0, 0.0]]  # the lexical part: A is the query's twin
    corpus = EvalCorpus(
        ids=IDS,
        query_texts=IDS,
        candidate_texts=IDS,
        codes=((),) * 4,
        dates=("2005", "2006", "2012", "2010-01-01"),
        priority=("", "", "", "2009-06-01"),
        cutoff_policy="none",
    )
    perfect = _perfect(tmp_path, graph, lexical, weight, corpus)
    teacher = np.array([VECTORS[d] for d in IDS])
    lex = np.array(lexical)
    expected = (1 - weight) * teacher[3] @ teacher.T + weight * lex[3] @ lex.T  # query Q against A, B, LATE, Q
    assert np.allclose(perfect.scores(np.array([3]))[0], expected)
    row = evaluate_retrieval(
        perfect, corpus, Judgements({"Q": {"A": 1.0}}, 1, {}), EvalConfig(cutoff="none")
    ).per_query[0]
    assert row["top3"].split() == ["A", "LATE", "B"]  # A: 0.75*0.8 + 0.25*1; LATE: 0.75; B: 0.25*0.6
    assert "weight 0.25" in perfect.label
    other = teacher_alone.PerfectStudent(
        perfect.teacher, perfect.student, out_dim=2, student_weight=weight, weight=0.5
    ).fit(corpus)
    assert np.allclose(other.scores(np.array([3]))[0], 0.5 * teacher[3] @ teacher.T + 0.5 * lex[3] @ lex.T)  # --weight


def test_perfect_student_leaves_out_documents_the_teacher_has_no_vector_for(teacher_dir, tmp_path):
    teacher_dir.without = {"A"}
    corpus = _uncut_corpus()
    perfect = _perfect(tmp_path, [[1.0, 0.0]] * 4, [[1.0, 0.0]] * 4, 0.4, corpus)
    assert perfect.coverage() == {"queries_without_vector": 1, "candidates_without_vector": 1}
    scores = perfect.scores(np.array([3]))[0]  # Q against A, B, LATE, Q
    assert scores[0] == -np.inf and np.isfinite(scores[1:]).all()


def test_perfect_student_needs_the_model(capsys):
    with pytest.raises(SystemExit):
        teacher_alone.main(["c", "t", "x.tsv", "--perfect-student", "v.parquet"])
    assert "--perfect-student and --model go together" in capsys.readouterr().err


def test_perfect_student_reads_each_query_through_its_own_vectors(teacher_dir, tmp_path):
    """--perfect-student-queries: the queries' lexical part comes from their own file (a full-text set's queries are
    title + abstract graphs, its candidates whole texts), the candidates' from --perfect-student's; one model's."""
    from graphtx.eval.systems import VectorSystem

    weight = 0.5
    graph = [[1.0, 0.0]] * 4
    candidate_lexical = [[1.0, 0.0], [0.0, 1.0], [0.0, 1.0], [0.0, 1.0]]  # A, B, LATE, Q as candidates
    query_lexical = [[0.0, 1.0], [0.0, 1.0], [0.0, 1.0], [1.0, 0.0]]  # Q as a query reads like A
    corpus = _uncut_corpus()
    _write_student_vectors(tmp_path / "cand.parquet", IDS, graph, candidate_lexical, weight)
    _write_student_vectors(tmp_path / "query.parquet", IDS, graph, query_lexical, weight)
    teacher = teacher_alone.TeacherSystem("unused").fit(corpus)
    student = VectorSystem(tmp_path / "query.parquet", tmp_path / "cand.parquet").fit(corpus)
    perfect = teacher_alone.PerfectStudent(teacher, student, out_dim=2, student_weight=weight).fit(corpus)
    t = np.array([VECTORS[d] for d in IDS])
    expected = 0.5 * t[3] @ t.T + 0.5 * np.array(query_lexical[3]) @ np.array(candidate_lexical).T
    assert np.allclose(perfect.scores(np.array([3]))[0], expected)
    same = teacher_alone.PerfectStudent(
        teacher, VectorSystem(tmp_path / "cand.parquet").fit(corpus), out_dim=2, student_weight=weight
    ).fit(corpus)  # one file for both sides: Q's own candidate row, which reads like B, not A
    assert not np.allclose(same.scores(np.array([3]))[0], expected)


def test_perfect_student_queries_need_the_perfect_student(capsys):
    with pytest.raises(SystemExit):
        teacher_alone.main(["c", "t", "x.tsv", "--perfect-student-queries", "q.parquet"])
    assert "--perfect-student-queries goes with --perfect-student" in capsys.readouterr().err
