"""benchmarks/studies/teacher_imitation.py: how closely a vectors file's graph or lexical part follows a teacher."""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "studies"))
import teacher_imitation as imitation  # noqa: E402  (our own script: it imports or the test fails, never skips)


def _docs(n=120, d=8, seed=0):
    from graphtx.eval.systems import l2_normalise

    return l2_normalise(np.random.default_rng(seed).normal(size=(n, d)))


def test_a_copy_of_the_teacher_agrees_fully_and_noise_does_not():
    teacher = _docs()
    rows = list(range(10))
    assert imitation.agreement(teacher.copy(), teacher, rows, top=10, sample=50) == pytest.approx((1.0, 1.0))
    overlap, rho = imitation.agreement(_docs(seed=1), teacher, rows, top=10, sample=50)
    assert overlap < 0.4 and abs(rho) < 0.4
    # a part that keeps the teacher's geometry up to a rotation agrees fully too: cosines are what is compared
    q, _ = np.linalg.qr(np.random.default_rng(2).normal(size=(8, 8)))
    assert imitation.agreement(teacher @ q, teacher, rows, top=10, sample=50) == pytest.approx((1.0, 1.0))


def test_the_cli_reads_the_graph_or_lexical_part(tmp_path, monkeypatch, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    import graphtx.text.teacher as teacher_mod

    teacher = _docs(40, 4)
    ids = [f"D{i}" for i in range(40)]
    monkeypatch.setattr(
        teacher_mod,
        "load_teacher_vectors",
        lambda d: teacher_mod.TeacherVectors(tuple(ids), teacher, {"model": "fixed", "fields": ["title"]}),
    )
    joined = np.hstack([teacher, _docs(40, 6, seed=3)]).astype(np.float32)  # [graph = the teacher ; lexical = noise]
    path = tmp_path / "v.parquet"
    table = pa.table({"doc_id": ids, "vector": pa.FixedSizeListArray.from_arrays(pa.array(joined.reshape(-1)), 10)})
    pq.write_table(table.replace_schema_metadata({"dim": "10"}), path)  # as `graphtx encode` writes it
    (tmp_path / "c.tsv").write_text("citing_id\tcited_id\nD1\tD2\nD3\tD4\nNOPE\tD5\n")
    args = [
        "t",
        str(tmp_path / "c.tsv"),
        f"g={path}",
        f"l={path}:lexical",
        "--graph-dim",
        "4",
        "--top",
        "5",
        "--sample",
        "20",
    ]
    assert imitation.main(args) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| g") or line.startswith("| l")]
    assert rows[0] == "| g | 2 | 1.000 | 1.000 |"
    assert rows[1].startswith("| l:lexical | 2 |") and rows[1] != "| l:lexical | 2 | 1.000 | 1.000 |"
    with pytest.raises(SystemExit):
        imitation.main(["t", str(tmp_path / "c.tsv"), f"g={path}", "--graph-dim", "10"])
    with pytest.raises(SystemExit):  # the width is not guessed
        imitation.main(["t", str(tmp_path / "c.tsv"), f"g={path}"])
    with pytest.raises(SystemExit):  # a top as large as the corpus compares nothing
        imitation.main(["t", str(tmp_path / "c.tsv"), f"g={path}", "--graph-dim", "4", "--top", "39"])
