"""What ``graphtx index`` and ``graphtx search`` print around the hits (the hit blocks are display.py).

Each function returns lines (and, where the command has one, the ``--json`` summary) from the reports
and results the stage already returns: ``BuildReport`` s of adds and removals, the verification and
repair counts, a search result's header and filters, a batch run's ``BatchReport``. Nothing here reads
or writes an index.
"""

from __future__ import annotations

from pathlib import Path

# --- graphtx index -----------------------------------------------------------------


def build_lines(reports: list, kind: str) -> list[str]:
    """One line a report (removed N / indexed N ...), then the index's count and shards and the total time."""
    lines = []
    for r in reports:
        if r.removed or r.not_found:
            lines.append(
                f"removed {r.removed} documents"
                + (
                    f"; not in the index: {', '.join(r.not_found[:10])}" + (" …" if len(r.not_found) > 10 else "")
                    if r.not_found
                    else ""
                )
            )
        else:
            lines.append(
                f"indexed {r.added} documents ({kind} graphs; {r.replaced} replaced, {r.skipped_existing} already indexed"
                + (", continued a killed run" if r.resumed else "")
                + ")"
                + (f" at {r.docs_per_second} documents/s" if r.added else "")
                + (f"; {r.duplicates} repeated ids skipped" if r.duplicates else "")
                + (f"; {r.not_in_corpus} without corpus metadata" if r.not_in_corpus else "")
                + (
                    "; no corpus found (give --corpus): no titles, dates or classes, BM25 over node texts"
                    if r.corpus is None and r.added
                    else ""
                )
            )
    last = reports[-1]
    lines.append(
        f"{last.out_dir}: {last.count} documents in {last.shards} shard(s), {last.rebuilt_shards} rebuilt; {sum(r.seconds for r in reports):.1f} s"
    )
    return lines


def build_summary(reports: list) -> dict:
    last = reports[-1]
    return {
        "out": str(last.out_dir),
        "count": last.count,
        "shards": last.shards,
        "reports": [r.to_json() for r in reports],
    }


def bm25_report(report) -> tuple[dict, list[str]]:
    """``graphtx index --bm25`` alone."""
    summary = {
        "out": str(report.out_dir),
        "count": report.count,
        "shards": report.shards,
        "reports": [report.to_json()],
    }
    return summary, [
        f"{report.out_dir}: BM25 state of {report.count} documents written to {report.out_dir / 'bm25'}; {report.seconds:.1f} s"
    ]


def repair_report(out: str | Path, manifest: dict) -> tuple[dict, list[str]]:
    """``graphtx index --rebuild`` alone (repair from the stored documents)."""
    summary = {"out": str(out), "count": manifest["count"], "shards": len(manifest["shards"])}
    return summary, [
        f"rebuilt the id map, shards, BM25 and manifest of {out} from its stored documents: {manifest['count']} documents"
    ]


def verify_report(out: str | Path, checked: dict) -> tuple[dict, list[str]]:
    """``graphtx index --verify`` when every file matches."""
    return {"out": str(out), "ok": True, **checked}, [
        f"{out}: all {checked['files']} files match their checksums ({checked['bytes']:,} bytes hashed)"
    ]


# --- graphtx search ----------------------------------------------------------------


def search_header(found, count: int, index_dir: str | Path, offset: int = 0) -> list[str]:
    """The lines above the hits: the index, the query as a graph and its timings, the ranker, the filters, the column heads."""
    result = found.result
    q = result.query
    what = f"document {q.doc_id}" if q.source == "id" else "the query text"
    t = result.timings_ms
    lines = [
        f"{count} documents in {index_dir}; {what} as a {q.graph.num_nodes}-node graph"
        + f" ({', '.join(f'{name} {ms:.0f} ms' for name, ms in t.items())})"
        + {
            "hybrid": " (hybrid: dense + BM25, RRF)",
            "convex": " (convex: dense + BM25)",
            "learned": " (learned ranker: dense + BM25 + features)",
            "learned-lexical": " (learned ranker without graph features: BM25, query terms, length, dates and classes)",
            "bm25": " (BM25)",
        }.get(result.ranker, "")
        + (" (re-ranked by late interaction; score = late score)" if result.rerank == "late" else "")
        + (
            f"; claims {', '.join(map(str, found.searched))} merged by {found.merge} (score = merged)"
            if found.merge != "single"
            else ""
        ),
    ]
    if result.filters.get("passing") is not None or result.filters.get("group_by_family"):
        lines.append("filters: " + filters_line(result.filters, count))
    lines += [f"warning: {w}" for w in getattr(result, "warnings", ())]
    if not result.hits:  # no empty table: say why there is nothing
        lines.append("no hits: " + no_hits_reason(result.filters, count, offset))
        return lines
    lines.append(f"{'rank':>4}  {'score':>7}  {'doc id':<18} {'date':<10}  title")
    return lines


def no_hits_reason(applied: dict, count: int, offset: int = 0) -> str:
    """Why a search found nothing, in words: the filters left no document, the page is past the end, or nothing matched."""
    if applied.get("passing") == 0:
        return f"no document passes the filters ({filters_line(applied, count)})"
    if offset:
        return f"the ranking ends before rank {offset + 1}"
    return "no indexed document matched the query"


def filters_line(applied: dict, count: int) -> str:
    """``published before 2008-06-04, CPC E01H, family of the query left out: 112 of 371 documents pass``."""
    parts = [f"published before {applied['before']}"] if applied.get("before") else []
    parts += [
        f"{label} {' '.join(applied[name])}"
        for name, label in (("cpc", "CPC"), ("ipc", "IPC"), ("country", "country"), ("kind", "kind"))
        if applied.get(name)
    ]
    parts += ["family of the query left out"] if applied.get("exclude_family") else []
    parts += ["one hit per family"] if applied.get("group_by_family") else []
    passing = applied.get("passing")
    unfilled = " and ".join(name.upper() for name in applied.get("unfilled", ()))
    return (
        ", ".join(parts)
        + (f": {passing:,} of {count:,} documents pass" if passing is not None else "")
        + (f" (no document of the index has {unfilled} codes)" if unfilled else "")
    )


def topics_lines(report) -> list[str]:
    """``graphtx search --topics``: what was searched into which files, topics with several independent claims, skipped topics."""
    lines = [
        f"{report.searched} of {report.topics} topics searched into {report.files['run']} ({report.files['table']})"
        + (f"; {report.resumed} of them taken from the journal of an earlier, unfinished run" if report.resumed else "")
        + f"; {report.seconds} s",
    ]
    if report.notes:
        lines.append(
            f"{len(report.notes)} topic(s) have several independent claims of which only the first was searched (--all-independent searches all):"
        )
        lines += [f"  {n['topic']}: {n['note']}" for n in report.notes[:20]] + (
            [f"  ... {len(report.notes) - 20} more"] if len(report.notes) > 20 else []
        )
    lines += [f"warning: {w}" for w in getattr(report, "warnings", ())]
    if report.skipped:
        lines.append(f"{len(report.skipped)} topic(s) skipped (listed in {report.files['skipped']}):")
        lines += [f"  line {s.line} {s.qid or '(no id)'}: {s.reason}" for s in report.skipped]
    return lines
