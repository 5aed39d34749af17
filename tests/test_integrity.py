"""graphtx/integrity.py: checksum records, their checks, sealed manifests."""

from __future__ import annotations

import json

import pytest

from graphtx import integrity
from graphtx.errors import IntegrityError


def test_record_and_check_find_missing_resized_and_changed_files(tmp_path):
    for name, text in (("a.bin", "alpha"), ("sub/b.bin", "beta" * 100), ("c.bin", "gamma")):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    entries = integrity.record(tmp_path, ["a.bin", "sub/b.bin", "c.bin"])
    assert list(entries) == ["a.bin", "c.bin", "sub/b.bin"] and entries["a.bin"]["size"] == 5
    assert integrity.check(tmp_path, entries) == []
    (tmp_path / "a.bin").unlink()
    (tmp_path / "c.bin").write_text("gammA")  # same size, other bytes
    (tmp_path / "sub/b.bin").write_text("beta")
    problems = {p.name: p.reason for p in integrity.check(tmp_path, entries)}
    assert (
        problems["a.bin"] == "missing"
        and problems["c.bin"].startswith("contents changed")
        and problems["sub/b.bin"].startswith("truncated")
    )
    assert [p.name for p in integrity.check(tmp_path, entries, hash_limit=-1)] == ["a.bin", "sub/b.bin"]  # sizes only
    with pytest.raises(IntegrityError, match=r"thing .* is damaged: .*a.bin \(missing\).*Do this.") as err:
        integrity.require(tmp_path, entries, what="thing", mend="Do this.")
    assert len(err.value.files) == 3 and err.value.exit_code == 2


def test_reuse_keeps_the_entry_of_an_immutable_file_of_the_same_size(tmp_path):
    (tmp_path / "p").write_text("one")
    first = integrity.record(tmp_path, ["p"])
    (tmp_path / "p").write_text("two")  # damaged in place, same size: the old record keeps the damage visible
    assert integrity.record(tmp_path, ["p"], reuse=first) == first
    assert integrity.check(tmp_path, first)


def test_a_sealed_manifest_finds_any_change_and_unsealed_ones_still_read(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps(integrity.seal({"count": 3, "files": ["a"]})))
    assert integrity.read_manifest(path, what="x", mend="m")["count"] == 3
    path.write_text(path.read_text().replace('"count": 3', '"count": 4'))
    with pytest.raises(IntegrityError, match="manifest_sha256"):
        integrity.read_manifest(path, what="x", mend="m")
    path.write_text('{"count": 3')
    with pytest.raises(IntegrityError, match="not valid JSON"):
        integrity.read_manifest(path, what="x", mend="m")
    path.write_text('{"count": 3}')
    assert integrity.read_manifest(path, what="x", mend="m") == {"count": 3}
    assert integrity.read_manifest(tmp_path / "none.json", what="x", mend="m") is None


def test_source_digest_reads_code_not_layout(tmp_path):
    from graphtx.integrity import source_digest

    f = tmp_path / "m.py"
    f.write_text('"""A module."""\n\ndef f(x):\n    """Twice x."""\n    return x * 2  # double\n')
    before = source_digest([f])
    f.write_text(
        '"""A module, reworded."""\n\n\ndef f(x):\n    """Twice x, said otherwise."""\n    return (\n        x * 2\n    )\n'
    )
    assert source_digest([f]) == before  # reformatted, docstrings and comments changed: the same code
    f.write_text('"""A module."""\n\ndef f(x):\n    return x * 3\n')
    assert source_digest([f]) != before
