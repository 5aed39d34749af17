"""Batch queries: a topics file -> a TREC run file and a CSV/JSONL table of hits; resumable; every skipped topic listed.

Topics (``read_topics``; the format is told by ``fmt`` or from the first line):

* JSONL: ``{"id": "Q1", "text": "1. A battery pack comprising ..."}``, or ``{"id": "US-1-B2"}`` (or
  ``{"id": "Q2", "doc_id": "US-1-B2"}``) for an indexed document;
* TSV: ``id<TAB>claim text`` (the text up to the line's end, tabs in it kept);
* a plain list of indexed document ids, one a line.

Blank lines and lines starting with ``#`` are passed over; a line that cannot be read, a repeated
topic id, a topic without text, or a topic whose search fails (an id not in the index, text
without invention features) is skipped with its reason, never silently.

``run_topics`` searches each topic with ``Index.search``'s keyword arguments (as ``graphtx search``
passes them for one query) through :func:`graphtx.index.claimset.search_claim_set`, and writes:

* ``OUTPUT``: the TREC run, ``qid Q0 docid rank score tag`` (trec_eval, ``graphtx eval run``);
* ``OUTPUT`` with suffix ``.csv`` or ``.jsonl``: one row a hit (topic, rank, doc id, score, the
  dense / BM25 / late scores, title, date, the matched features, the claims that found it);
* ``OUTPUT`` with suffix ``.skipped.jsonl``: every skipped topic with its line and reason.

**Resumable**: each finished topic is appended to a journal beside the output (``OUTPUT.journal``,
one JSON line, flushed and fsynced) before the next starts, under a lock beside it (``.OUTPUT.lock``:
a second run into the same output stops at once); the final files are written from the
journal, each atomically (``graphtx/atomic.py``), and the journal is removed last. A killed run
re-run with the same command continues after its last journalled topic, so no topic is lost or
repeated; a torn last line (kill -9 mid-write) is dropped and that topic searched again. The
journal's first line records the settings (index, topics file, k, search options); a re-run with
other settings is refused unless ``restart=True``.

Example::

    from graphtx.index import Index, run_topics

    report = run_topics(Index.open("index"), "topics.tsv", "runs/graphtx.trec", k=100, ranker="hybrid")
    report.searched, report.skipped          # 49, [SkippedTopic(qid='Q7', line=7, reason='...')]
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from graphtx.atomic import atomic_write_text, fsync_dir
from graphtx.index.claimset import MERGES, search_claim_set
from graphtx.lock import DirectoryLock

TOPIC_FORMATS = ("auto", "jsonl", "tsv", "ids")
TABLE_FORMATS = ("csv", "jsonl")
JOURNAL_VERSION = 1
TABLE_COLUMNS = (
    "topic",
    "rank",
    "doc_id",
    "score",
    "dense_score",
    "bm25_score",
    "late_score",
    "title",
    "date",
    "matched_features",
    "found_by",
)


# --- topics ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Topic:
    qid: str
    line: int  # 1-based line of the topics file
    text: str | None = None  # claim text (or a claim set)
    doc_id: str | None = None  # an indexed document as the query


@dataclass(frozen=True)
class SkippedTopic:
    qid: str  # "" where the line gave none
    line: int
    reason: str


def read_topics(path: str | Path, fmt: str = "auto") -> tuple[list[Topic], list[SkippedTopic]]:
    """(topics in file order, skipped lines with reasons) of a topics file (module docstring)."""
    if fmt not in TOPIC_FORMATS:
        raise ValueError(f"topics format must be one of {', '.join(TOPIC_FORMATS)}, got {fmt!r}")
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"topics file {path} does not exist")
    try:
        lines = path.read_text(encoding="utf-8-sig").splitlines()
    except UnicodeDecodeError as err:
        raise ValueError(
            f"topics file {path} is not UTF-8 text ({err.reason} at byte {err.start}): save it as UTF-8"
        ) from None
    numbered = [(n, line) for n, line in enumerate(lines, 1) if line.strip() and not line.lstrip().startswith("#")]
    if fmt == "auto":
        fmt = _detect(path, numbered[0][1] if numbered else "")
    topics, skipped, seen = [], [], {}
    for n, line in numbered:
        topic = _parse(line, n, fmt)
        if isinstance(topic, SkippedTopic):
            skipped.append(topic)
        elif topic.qid in seen:
            skipped.append(SkippedTopic(topic.qid, n, f"repeated topic id (first on line {seen[topic.qid]})"))
        else:
            seen[topic.qid] = n
            topics.append(topic)
    return topics, skipped


def _detect(path: Path, first: str) -> str:
    if path.suffix.lower() in (".jsonl", ".json") or first.lstrip().startswith("{"):
        return "jsonl"
    return "tsv" if "\t" in first else "ids"


def _parse(line: str, n: int, fmt: str) -> Topic | SkippedTopic:
    if fmt == "jsonl":
        try:
            record = json.loads(line)
        except json.JSONDecodeError as err:
            return SkippedTopic("", n, f"not a JSON object ({err.msg} at column {err.colno})")
        if not isinstance(record, dict):
            return SkippedTopic("", n, "not a JSON object")
        qid = str(record.get("id") or record.get("qid") or "").strip()
        if not qid:
            return SkippedTopic("", n, 'no "id"')
        if any(c.isspace() for c in qid):
            return SkippedTopic(qid, n, "the topic id holds white space, which a TREC run file cannot")
        text, doc_id = record.get("text"), record.get("doc_id")
        if text is not None:
            return Topic(qid, n, text=str(text)) if str(text).strip() else SkippedTopic(qid, n, 'empty "text"')
        return Topic(qid, n, doc_id=str(doc_id or qid).strip())
    if fmt == "tsv":
        qid, tab, text = line.partition("\t")
        qid = qid.strip()
        if not tab:
            return SkippedTopic(qid, n, "no tab: expected id<TAB>claim text")
        if not qid:
            return SkippedTopic("", n, "no topic id before the tab")
        if any(c.isspace() for c in qid):
            return SkippedTopic(qid, n, "the topic id holds white space, which a TREC run file cannot")
        return Topic(qid, n, text=text) if text.strip() else SkippedTopic(qid, n, "no claim text after the tab")
    qid = line.strip()
    if any(c.isspace() for c in qid):
        return SkippedTopic(qid.split()[0], n, "a list of ids holds one id a line (for id<TAB>text use a TSV file)")
    return Topic(qid, n, doc_id=qid)


# --- the run ---------------------------------------------------------------------------


@dataclass
class BatchReport:
    topics: int  # topic lines of the file (those skipped at reading included)
    searched: int  # topics with hits written (resumed ones included)
    resumed: int  # topics taken from the journal of an earlier, killed run
    skipped: list = field(default_factory=list)  # SkippedTopic
    notes: list = field(default_factory=list)  # {"topic", "note"}: independent claims not searched
    warnings: list = field(default_factory=list)  # about the ranker of every topic (a ranker fitted on another field)
    files: dict = field(default_factory=dict)  # run, table, skipped
    seconds: float = 0.0

    def to_json(self) -> dict:
        return asdict(self) | {"files": {k: str(v) for k, v in self.files.items()}}


def output_paths(output: str | Path, table_format: str = "csv") -> dict[str, Path]:
    """The files a batch run writes for ``output`` (the run file): run, table, skipped list, journal."""
    if table_format not in TABLE_FORMATS:
        raise ValueError(f"table format must be csv or jsonl, got {table_format!r}")
    run = Path(output)
    stem = run.with_suffix("") if run.suffix else run
    paths = {
        "run": run,
        "table": stem.with_name(stem.name + "." + table_format),
        "skipped": stem.with_name(stem.name + ".skipped.jsonl"),
        "journal": run.with_name(run.name + ".journal"),
    }
    if paths["table"] == run:
        raise ValueError(
            f"the run file {run} would be overwritten by the {table_format.upper()} table: name the run file *.trec or *.run"
        )
    return paths


def run_topics(
    index,
    topics: str | Path,
    output: str | Path,
    k: int | None = None,
    *,
    table_format: str = "csv",
    tag: str | None = None,
    topics_format: str = "auto",
    all_independent: bool = False,
    merge: str = "rrf",
    features: bool = True,
    restart: bool = False,
    progress: bool | None = None,
    **search_kwargs,
) -> BatchReport:
    """Search every topic of ``topics`` and write the run, table and skipped files of ``output`` (module docstring).

    ``search_kwargs`` go to ``Index.search`` for every topic (hybrid, ranker, rerank, rerank_depth,
    filters, ...); ``features`` asks it for explanations (``explain=True``) to list the matched features.
    """
    if merge not in MERGES:
        raise ValueError(f"merge must be one of {', '.join(MERGES)}, got {merge!r}")
    started = time.time()
    paths = output_paths(output, table_format)
    read, skipped = read_topics(topics, topics_format)
    k = index.config.k if k is None else k
    if k < 1:
        raise ValueError(f"k must be at least 1 (got {k})")
    search_kwargs = {"explain": features, **search_kwargs}
    ranker = index.resolve_ranker(
        search_kwargs.get("ranker"), search_kwargs.get("hybrid")
    )  # a bad ranker fails once, not per topic
    tag = tag or f"graphtx-{ranker}"
    settings = {
        "index": str(Path(index.store.dir).resolve()),
        "index_digest": index.manifest.get("live_digest", ""),
        "topics": str(Path(topics).resolve()),
        "topics_sha256": hashlib.sha256(Path(topics).read_bytes()).hexdigest(),
        "k": k,
        "tag": tag,
        "all_independent": all_independent,
        "merge": merge,
        "search": {name: _plain(v) for name, v in sorted(search_kwargs.items())},
    }
    run_file = paths["run"]
    with DirectoryLock(
        run_file.parent,
        "graphtx search --topics",
        noun="output directory",
        lock_file=run_file.parent / f".{run_file.name}.lock",
    ):
        return _run_locked(
            index,
            read,
            skipped,
            paths,
            settings,
            restart,
            k,
            tag,
            table_format,
            all_independent,
            merge,
            search_kwargs,
            progress,
            started,
        )


def _run_locked(
    index,
    read,
    skipped,
    paths,
    settings,
    restart,
    k,
    tag,
    table_format,
    all_independent,
    merge,
    search_kwargs,
    progress,
    started,
) -> BatchReport:
    """run_topics under the run file's lock (one batch run writes one output at a time)."""
    from graphtx.progress import progress_bar

    lines = len(read) + len(skipped)
    done = _open_journal(paths["journal"], settings, restart)
    resumed = len({t.qid for t in read} & set(done))
    todo = [t for t in read if t.qid not in done]
    with open(paths["journal"], "a", encoding="utf-8") as journal:
        bar = progress_bar(
            total=len(read), initial=len(read) - len(todo), desc="topics", unit="topic", enabled=progress
        )
        for topic in todo:
            entry = search_topic(index, topic, k, all_independent, merge, search_kwargs)
            journal.write(json.dumps(entry) + "\n")
            journal.flush()
            os.fsync(journal.fileno())  # a finished topic survives a kill
            done[topic.qid] = entry
            bar.update(1)
        bar.close()
    entries = one_per_spelling([done[t.qid] for t in read])
    skipped += [SkippedTopic(e["topic"], e["line"], e["skipped"]) for e in entries if e.get("skipped")]
    skipped.sort(key=lambda s: s.line)
    _write_outputs(paths, entries, skipped, tag, table_format)
    os.remove(paths["journal"])  # last: the outputs are complete
    fsync_dir(paths["journal"].parent)
    return BatchReport(
        topics=lines,
        searched=sum(1 for e in entries if not e.get("skipped")),
        resumed=resumed,
        skipped=skipped,
        notes=[{"topic": e["topic"], "note": e["note"]} for e in entries if e.get("note")],
        files={name: p for name, p in paths.items() if name != "journal"},
        seconds=round(time.time() - started, 2),
        warnings=index.ranker_warnings(index.resolve_ranker(search_kwargs.get("ranker"), search_kwargs.get("hybrid"))),
    )


def _plain(value):
    """A search option as JSON for the journal's settings (a filters dataclass as its fields)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(v) for k, v in asdict(value).items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    return str(value)


def search_topic(index, topic: Topic, k: int, all_independent: bool, merge: str, search_kwargs: dict) -> dict:
    """The journal entry of one topic: {"topic", "line", "hits": [row], "note"} or {"topic", "line", "skipped": reason}."""
    entry = {"topic": topic.qid, "line": topic.line}
    try:
        found = search_claim_set(
            index, topic.text, k, doc_id=topic.doc_id, all_independent=all_independent, merge=merge, **search_kwargs
        )
    except (
        KeyError,
        ValueError,
    ) as err:  # this topic's problem (id not indexed, no features): listed, the batch goes on
        message = err.args[0] if isinstance(err, KeyError) and err.args else str(err)
        return entry | {"skipped": str(message)}
    if (
        not found.result.hits
    ):  # listed with its reason (the filters or the cut-off left nothing), not an empty run silently
        from graphtx.index.report import no_hits_reason

        return entry | {"skipped": "no hits: " + no_hits_reason(found.result.filters, index.count)}
    entry["hits"] = [_hit_row(hit, found.found_by.get(hit.doc_id)) for hit in found.result.hits]
    resolved = getattr(found.result.query, "doc_id", None)
    if topic.doc_id and topic.qid == topic.doc_id:
        entry["id_topic"] = True
        if resolved and resolved != topic.qid:
            entry["qid"] = (
                resolved  # an id topic typed US8418590B2 is written as the index spells it (US-8418590-B2), as judgements are
            )
    if found.note:
        entry["note"] = found.note
    return entry


def _hit_row(hit, found_by: dict | None) -> dict:
    return {
        "rank": hit.rank,
        "doc_id": hit.doc_id,
        "score": hit.score,
        "dense_score": hit.dense_score,
        "bm25_score": hit.bm25_score,
        "late_score": hit.late_score,
        "title": hit.title,
        "date": hit.date,
        "matched_features": matched_features(hit.explanation),
        "found_by": {str(c): r for c, r in (found_by or {}).items()},
    }


def matched_features(explanation) -> list[str]:
    """'query feature -> hit feature' of an explanation's matches (dense) or terms (late), best first."""
    if explanation is None:
        return []
    pairs = getattr(explanation, "matches", None)
    if pairs is None:
        pairs = [
            t
            for t in getattr(explanation, "terms", ())[: getattr(explanation, "rows", 8)]
            if getattr(t, "hit_node", 0) >= 0
        ]
    return [f"{' '.join(p.query_text.split())} -> {' '.join(p.hit_text.split())}" for p in pairs]


# --- journal ---------------------------------------------------------------------------


def _open_journal(path: Path, settings: dict, restart: bool) -> dict[str, dict]:
    """{topic: entry} of a killed run's journal (created, with its settings line, when there is none)."""
    header = {"journal": JOURNAL_VERSION, "settings": settings}
    if path.exists() and not restart:
        entries = _read_journal(path)
        if entries is not None:
            old, done = entries
            if old != settings:
                changed = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
                raise ValueError(
                    f"{path} is the journal of an unfinished batch run with other settings ({', '.join(changed)} differ): "
                    "run the same command again to continue it, or give --restart to start over"
                )
            return done
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(header) + "\n")
    return {}


def _read_journal(path: Path) -> tuple[dict, dict[str, dict]] | None:
    """(settings, {topic: entry}); a torn last line is cut off the file. None for an empty journal."""
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # bytes after the last newline: a line torn by a kill
    if end < len(data):
        with open(path, "r+b") as f:
            f.truncate(end)
            os.fsync(f.fileno())
        data = data[:end]
    lines = data.decode("utf-8").splitlines()
    if not lines:
        return None
    try:
        header = json.loads(lines[0])
        entries = [json.loads(line) for line in lines[1:]]
    except json.JSONDecodeError as err:
        raise ValueError(f"{path} is damaged ({err.msg}): give --restart to start the batch run over") from None
    if header.get("journal") != JOURNAL_VERSION:
        raise ValueError(f"{path} is not a graphtx batch journal this version reads: give --restart to start over")
    done: dict[str, dict] = {}
    for entry in entries:
        done.setdefault(entry["topic"], entry)  # a topic twice (never written so, but harmless): the first counts
    return header["settings"], done


# --- outputs ---------------------------------------------------------------------------


def one_per_spelling(entries: list[dict]) -> list[dict]:
    """Id topics naming one document in two spellings (``T00003``, ``T-00003``): the hits once, under the first; the later
    ones become skipped entries saying so (a run file must not repeat a (query, document) pair)."""
    first_line: dict[str, int] = {}
    out = []
    for e in entries:
        if "hits" in e and e.get("id_topic"):
            line = first_line.setdefault(output_qid(e), e["line"])
            if line != e["line"]:
                out.append(
                    {
                        "topic": e["topic"],
                        "line": e["line"],
                        "skipped": f"the same document as the topic on line {line}",
                    }
                )
                continue
        out.append(e)
    return out


CHART_COLUMNS = ("rank", "doc_id", "feature", "query_feature", "hit_feature", "similarity", "found", "confidence")


def write_csv(found, path: str | Path) -> list[Path]:
    """One search's hits as CSV (the batch table's columns, topic "query"), and with explanations each hit's claim chart
    (``CHART_COLUMNS``) beside it as STEM.chart.csv; returns the files written."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"topic": "query", **_hit_row(hit, found.found_by.get(hit.doc_id))} for hit in found.result.hits]
    atomic_write_text(path, _table(rows, "csv"))
    written = [path]
    explained = [h for h in found.result.hits if h.explanation is not None and getattr(h.explanation, "elements", ())]
    if explained:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(CHART_COLUMNS)
        for h in explained:
            for e in h.explanation.elements:
                confidence = "" if e.confidence is None else round(e.confidence, 4)
                writer.writerow(
                    [
                        h.rank,
                        h.doc_id,
                        e.number,
                        spreadsheet_safe(e.text),
                        spreadsheet_safe(e.hit_text),
                        round(e.similarity, 4),
                        e.found or "not found",
                        confidence,
                    ]
                )
        chart = path.with_name(path.stem + ".chart.csv")
        atomic_write_text(chart, out.getvalue())
        written.append(chart)
    else:  # no claim charts this time: none left from an earlier run beside the new hits
        path.with_name(path.stem + ".chart.csv").unlink(missing_ok=True)
    return written


def output_qid(entry: dict) -> str:
    """The query id a topic's hits are written under: the index's spelling of an id topic, else the topic id as given."""
    return entry.get("qid") or entry["topic"]


def _write_outputs(paths: dict, entries: list[dict], skipped: list[SkippedTopic], tag: str, table_format: str) -> None:
    rows = [{"topic": output_qid(e), **h} for e in entries for h in e.get("hits", ())]
    run = trec_lines(entries, tag)
    atomic_write_text(paths["table"], _table(rows, table_format))
    atomic_write_text(paths["skipped"], "".join(json.dumps(asdict(s)) + "\n" for s in skipped))
    atomic_write_text(paths["run"], run)


def trec_lines(entries: Iterable[dict], tag: str) -> str:
    """TREC run lines (qid Q0 docid rank score tag) of topic entries (``search_topic``); scores exact (repr)."""
    return "".join(
        f"{output_qid(e)} Q0 {h['doc_id']} {h['rank']} {float(h['score'])!r} {tag}\n"
        for e in entries
        for h in e.get("hits", ())
    )


def spreadsheet_safe(text: str) -> str:
    """A text cell a spreadsheet will not run as a formula: one starting with = + - @ or a tab / carriage return gets a leading '."""
    return "'" + text if text and text[0] in "=+-@\t\r" else text


def _table(rows: Iterable[dict], table_format: str) -> str:
    out = io.StringIO()
    if table_format == "jsonl":
        for r in rows:
            out.write(json.dumps({c: r.get(c) for c in TABLE_COLUMNS}) + "\n")
        return out.getvalue()
    writer = csv.DictWriter(out, fieldnames=TABLE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for r in rows:
        flat = {c: r.get(c) for c in TABLE_COLUMNS}
        flat["matched_features"] = spreadsheet_safe("; ".join(r["matched_features"]))
        flat["title"] = spreadsheet_safe(flat["title"] or "")
        flat["found_by"] = " ".join(f"{c}:{rank}" for c, rank in r["found_by"].items())
        writer.writerow({c: ("" if v is None else v) for c, v in flat.items()})
    return out.getvalue()
