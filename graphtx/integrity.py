"""Integrity at load: checksums of an artefact's files, recorded in its manifest, verified when it is opened.

Every stage that writes a directory another stage reads (parse → graphs, init-model / train →
model, index → index) records, in the manifest it writes last, one entry per file::

    "checksums": {"graphs.parquet": {"size": 123456, "sha256": "9f2c…"}, ...}

and the manifest seals itself: ``manifest_sha256`` is the sha256 of its own canonical JSON
without that key, so a byte changed in the manifest is found too.

Opening checks the cheap part always: every file's size, and the sha256 of files up to
``HASH_AT_OPEN_BYTES`` (id maps, tokenizer, model weights of the small configs, manifests).
Bigger files (large FAISS shards) are hashed by ``graphtx index --verify``. A mismatch is an
``IntegrityError`` naming each damaged file and the mend; it is never read as if it were good.
Directories written before checksums existed carry none and are read as before.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from graphtx.errors import IntegrityError

CHECKSUMS_KEY = "checksums"
SEAL_KEY = "manifest_sha256"
HASH_AT_OPEN_BYTES = 64 << 20  # files up to 64 MiB are hashed whenever they are opened

_verified: dict[
    tuple[str, int, int], str
] = {}  # (path, size, mtime_ns) -> sha256 hashed in this process (cached_sha256)


def sha256_file(path: str | Path, block: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(block):
            h.update(chunk)
    return h.hexdigest()


def cached_sha256(path: str | Path) -> str:
    """``sha256_file``, computed once per process for a file whose path, size and modification time are unchanged."""
    st = os.stat(path)
    key = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if key not in _verified:
        _verified[key] = sha256_file(path)
    return _verified[key]


def file_entry(path: str | Path) -> dict:
    """{"size", "sha256"} of one file."""
    return {"size": os.path.getsize(path), "sha256": sha256_file(path)}


def record(directory: str | Path, names: list[str], reuse: dict | None = None) -> dict:
    """Checksums of ``names`` (paths relative to ``directory``, with ``/``), sorted by name.

    ``reuse``: earlier entries of immutable files (named by content, never rewritten): taken
    as they are when the size still matches, so an incremental build does not re-hash them.
    """
    directory = Path(directory)
    out = {}
    for name in sorted(set(names)):
        path = directory / name
        old = (reuse or {}).get(name)
        out[name] = dict(old) if old and old.get("size") == path.stat().st_size else file_entry(path)
    return out


def files_under(directory: str | Path, sub: str) -> list[str]:
    """Relative names (``sub/...``) of the plain files below ``directory / sub``, temporaries left out."""
    base = Path(directory)
    root = base / sub
    if not root.is_dir():
        return []
    names = (p.relative_to(base) for p in root.rglob("*") if p.is_file())
    return sorted(n.as_posix() for n in names if not any(part.endswith((".tmp", ".lock", ".old")) for part in n.parts))


@dataclass(frozen=True)
class Problem:
    name: str  # relative to the directory
    reason: str  # "missing", "truncated or extended: ...", "contents changed: sha256 ..."

    def __str__(self) -> str:
        return f"{self.name}: {self.reason}"


def check(
    directory: str | Path, entries: dict, *, hash_limit: int | None = HASH_AT_OPEN_BYTES, names=None
) -> list[Problem]:
    """Problems of the files ``entries`` records: sizes always, sha256 of files up to ``hash_limit`` bytes (None: all)."""
    directory = Path(directory)
    problems = []
    for name, want in sorted(entries.items()):
        if names is not None and name not in names:
            continue
        path = directory / name
        try:
            st = path.stat()
        except OSError:
            problems.append(Problem(name, "missing"))
            continue
        if st.st_size != want["size"]:
            problems.append(
                Problem(name, f"truncated or extended: {st.st_size} bytes, the manifest records {want['size']}")
            )
            continue
        if hash_limit is not None and st.st_size > hash_limit:
            continue
        got = cached_sha256(path)
        if got != want["sha256"]:
            problems.append(
                Problem(name, f"contents changed: sha256 {got[:12]}…, the manifest records {want['sha256'][:12]}…")
            )
    return problems


def require(
    directory: str | Path,
    entries: dict,
    *,
    what: str,
    mend: str,
    hash_limit: int | None = HASH_AT_OPEN_BYTES,
    names=None,
) -> None:
    """Raise ``IntegrityError`` naming every damaged file of ``directory`` and the mend."""
    problems = check(directory, entries, hash_limit=hash_limit, names=names)
    if problems:
        raise damaged(directory, problems, what=what, mend=mend)


def damaged(directory: str | Path, problems: list[Problem], *, what: str, mend: str) -> IntegrityError:
    directory = Path(directory)
    listed = "; ".join(f"{directory / p.name} ({p.reason})" for p in problems)
    return IntegrityError(
        f"{what} {directory} is damaged: {listed}. {mend}", [str(directory / p.name) for p in problems]
    )


# --- manifests ---------------------------------------------------------------------------------


def _canonical(manifest: dict) -> bytes:
    return json.dumps(
        {k: v for k, v in manifest.items() if k != SEAL_KEY}, sort_keys=True, separators=(",", ":")
    ).encode()


def seal(manifest: dict) -> dict:
    """The manifest with ``manifest_sha256`` (of its own canonical JSON) added."""
    return {
        **{k: v for k, v in manifest.items() if k != SEAL_KEY},
        SEAL_KEY: hashlib.sha256(_canonical(manifest)).hexdigest(),
    }


def read_manifest(path: str | Path, *, what: str, mend: str) -> dict | None:
    """A manifest JSON, its seal checked when it has one; None when the file is not there."""
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        raise IntegrityError(f"{what} manifest {path} is damaged (not UTF-8 text). {mend}", [str(path)]) from None
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError as err:
        raise IntegrityError(
            f"{what} manifest {path} is damaged (not valid JSON: {err.msg} at line {err.lineno}). {mend}", [str(path)]
        ) from None
    if not isinstance(manifest, dict):
        raise IntegrityError(f"{what} manifest {path} is damaged (not a JSON object). {mend}", [str(path)])
    sealed = manifest.get(SEAL_KEY)
    if sealed is not None and sealed != hashlib.sha256(_canonical(manifest)).hexdigest():
        raise IntegrityError(
            f"{what} manifest {path} is damaged (its contents do not match its manifest_sha256). {mend}", [str(path)]
        )
    return manifest


def source_digest(files) -> str:
    """sha256 of Python source files as code, not as text: each file's syntax tree without positions, comments and
    docstrings, so reformatting or rewording a docstring keeps the digest (and the caches keyed by it) while any change
    to what the code does changes it."""
    import ast

    h = hashlib.sha256()
    for f in sorted(Path(p) for p in files):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            body = getattr(node, "body", None)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
                first = body[0]
                if (
                    isinstance(first, ast.Expr)
                    and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)
                ):
                    node.body = body[1:] or [ast.Pass()]
        h.update(f.name.encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return h.hexdigest()
