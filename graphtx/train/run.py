"""``graphtx train``: prepare pairs and splits, run the base stage, then the reduction stage.

Run directory (plain files)::

    RUN_DIR/config.yaml             the full config of the run
    RUN_DIR/data.json               pairs, splits, groups, skipped citations by reason
    RUN_DIR/skipped_citations.jsonl every citation not used for training, with its reason
    RUN_DIR/selection_citations.tsv the selection split: held-out training queries that select checkpoints and stages
    RUN_DIR/valid_citations.tsv     the validation (and test_citations.tsv the test) judgements scored, written at the end
    RUN_DIR/ranker_citations.tsv    training citations held out of training for `graphtx rank-fit` (train.ranker_holdout)
    RUN_DIR/teacher/                train.pretrain_teacher naming a peer: its vectors of the pool (graphtx/train/run_teacher.py)
    RUN_DIR/pretrain/               stage pretrain (self-supervised, graphtx/train/pretrain_graph.py): the same files
    RUN_DIR/base/                   log.jsonl, evals.jsonl, checkpoint.pt (while running), best/, done.json
    RUN_DIR/reduced/                the same for the MoE stage
    RUN_DIR/model/                  the final model directory (best of the last stage; graphtx index takes it)
    RUN_DIR/summary.json            per stage its best selection metrics; the shipped model's validation (and test) metrics

Selection never reads the validation citations: early stopping, the best checkpoint of a stage and the
stage that ships are chosen on the selection split (``train.selection_share``: the latest training
queries by citing date, after the ranker's hold-out). ``--valid-citations`` and ``--test-citations``
are read once, after the model is chosen, and scored (``summary.json``: ``selection`` and ``validation``
entries apart).

Running the same command again resumes: finished stages are skipped, a stage with a
checkpoint continues from it.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pyarrow.parquet as pq
import yaml

from graphtx.atomic import atomic_write_json, atomic_write_text, replacing
from graphtx.corpus.citations import read_citations
from graphtx.corpus.codes import id_key
from graphtx.corpus.schema import TRIVIAL, Citation
from graphtx.corpus.store import documents_path
from graphtx.from_dict import with_overrides
from graphtx.text.field import learned_corpus_profile
from graphtx.train.config import STAGE_ORDER, ExperimentConfig, TrainConfig
from graphtx.train.data import GraphStore, class_groups, cluster_groups
from graphtx.train.distributed import DistContext, init_distributed, shutdown
from graphtx.train.negatives import bm25_negatives, paecter_negatives
from graphtx.train.pairs import (
    Skipped,
    carve_selection,
    make_pairs,
    positives_by_citing,
    split_by_year,
    split_random,
    trivial_pairs,
)
from graphtx.train.run_teacher import needs_run_teacher, require_run_teacher

if TYPE_CHECKING:
    from graphtx.train.loop import StageState


@dataclass
class Documents:
    """The per-document facts training needs, read from the corpus directory."""

    ids: list[str]
    family: dict[str, str]
    year: dict[str, int]
    classes: dict[str, tuple[str, ...]]  # IPC, else CPC
    cpc: dict[str, tuple[str, ...]]
    text: dict[str, str]  # title + abstract (or first claim): for text clusters
    date: dict[str, str] = field(
        default_factory=dict
    )  # publication date (YYYY-MM-DD or shorter; "" unknown): orders the selection split

    @classmethod
    def read(cls, corpus_dir: str | Path) -> Documents:
        cols = ["id", "title", "abstract", "claims", "first_claim_index", "ipc", "cpc", "family_id", "date"]
        t = pq.read_table(documents_path(corpus_dir), columns=cols).to_pylist()
        text = {}
        for r in t:
            claim = r["claims"][r["first_claim_index"]]["text"] if r["claims"] and r["first_claim_index"] >= 0 else ""
            text[r["id"]] = " ".join(x for x in (r["title"], r["abstract"] or claim) if x)[:4000]
        return cls(
            ids=[r["id"] for r in t],
            family={r["id"]: r["family_id"] or "" for r in t},
            year={r["id"]: int(r["date"][:4]) if (r["date"] or "")[:4].isdigit() else 0 for r in t},
            classes={r["id"]: tuple(r["ipc"] or ()) or tuple(r["cpc"] or ()) for r in t},
            cpc={r["id"]: tuple(r["cpc"] or ()) for r in t},
            text=text,
            date={r["id"]: r["date"] or "" for r in t},
        )


@dataclass
class PreparedData:
    train: list[Citation]
    valid: list[Citation]
    test: list[Citation]
    skipped: list[Skipped]
    ranker: list[Citation] = field(
        default_factory=list
    )  # training citations held out for the ranker (train.ranker_holdout)
    selection: list[Citation] = field(
        default_factory=list
    )  # held-out training citations that select checkpoints and stages
    held_out_files: tuple[str | None, str | None] = (
        None,
        None,
    )  # train.split = files: (validation, test) files, read at the end


def hold_out_for_ranker(data: PreparedData, share: float, family: dict, seed: int) -> PreparedData:
    """Move the citations of a seeded ``share`` of the training citing families to ``data.ranker``:
    the model never sees them, so a ranker fitted on them sees the dense scores of new queries."""
    from graphtx.train.pairs import _hash

    if share <= 0:
        return data
    held = lambda c: _hash(family.get(c.citing_id) or c.citing_id, seed + 41) / 2**64 < share  # noqa: E731
    return replace(data, train=[c for c in data.train if not held(c)], ranker=[c for c in data.train if held(c)])


def hold_out_for_selection(data: PreparedData, share: float, docs: Documents, seed: int) -> PreparedData:
    """Move the latest ``share`` of the training queries (by citing date) to ``data.selection`` (graphtx.train.pairs.carve_selection)."""
    train, selection, skipped = carve_selection(data.train, docs.date, docs.family, share, seed)
    return replace(data, train=train, selection=selection, skipped=data.skipped + skipped)


def citing_documents_within(corpus_dir: str | Path, citations: str | Path | None = None) -> int:
    """Distinct citing documents that cite another document of the corpus (what citation training learns from);
    ``citations``: a citations file, else the corpus's own."""
    ids = pq.read_table(documents_path(corpus_dir), columns=["id"]).column("id").to_pylist()
    known = set(ids)
    cites = resolve_ids(read_citations(citations or corpus_dir), ids)
    return len(
        {c.citing_id for c in cites if c.citing_id in known and c.cited_id in known and c.citing_id != c.cited_id}
    )


def resolve_ids(citations: list[Citation], known_ids: list[str]) -> list[Citation]:
    """Map citation ids to corpus ids, matching across kind codes (US-123-A cites US-123-B2)."""
    exact = set(known_ids)
    by_key = {id_key(d): d for d in known_ids}

    def fix(x: str) -> str:
        return x if x in exact else by_key.get(id_key(x), x)

    return [Citation(fix(c.citing_id), fix(c.cited_id), c.category, c.source) for c in citations]


def split_citations(
    cfg: TrainConfig,
    docs: Documents,
    seed: int,
    citations: str | None,
    valid: str | None,
    test: str | None,
    corpus_dir: str,
) -> PreparedData:
    all_train = resolve_ids(read_citations(citations or corpus_dir), docs.ids)
    if (
        cfg.split == "files"
    ):  # validation and test, when given, are read at the end (read_held_out): nothing before may depend on them
        for flag, path in (("--valid-citations", valid), ("--test-citations", test)):
            if path and not Path(path).exists():
                raise FileNotFoundError(f"{flag} {path} does not exist")
        return PreparedData(all_train, [], [], [], held_out_files=(valid, test))
    if cfg.split == "random":
        s = split_random(all_train, docs.family, cfg.valid_share, cfg.test_share, seed)
    else:
        s = split_by_year(all_train, docs.year, docs.family, cfg.valid_from_year, cfg.test_from_year)
    return PreparedData(s.train, s.valid, s.test, s.skipped)


def read_held_out(data: PreparedData, docs: Documents) -> PreparedData:
    """The validation and test citations of ``train.split = files``, read once the model is chosen."""
    valid, test = data.held_out_files
    if valid is None and test is None:
        return data
    v = resolve_ids(read_citations(valid), docs.ids) if valid else []
    te = resolve_ids(read_citations(test), docs.ids) if test else []
    return replace(data, valid=v, test=te, held_out_files=(None, None))


def known_item_candidates(store: GraphStore, cfg: TrainConfig) -> list[str]:
    """The documents a known-item judgement can hold: a query graph and a candidate graph that differ (a document whose
    first claim falls back to its description would find itself trivially)."""
    return [
        d
        for d in store.doc_ids
        if store.has(d, cfg.query_kind)
        and store.has(d, cfg.candidate_kind)
        and store.get(d, cfg.query_kind).node_text != store.get(d, cfg.candidate_kind).node_text
    ]


def known_item_draw(doc_id: str, seed: int) -> float:
    """The seeded uniform draw in [0, 1) that puts a document in the known-item test share (then validation, then
    selection): one rule for `graphtx train`'s known-item split and `graphtx adapt --hold-out-share`."""
    from graphtx.train.pairs import _hash

    return _hash(doc_id, seed + 17) / 2**64


def store_kinds(cfg: TrainConfig) -> set[str]:
    """The graph kinds a run loads: its query, candidate and augmentation kinds (a missing kind falls back in that set)."""
    return {cfg.query_kind, cfg.candidate_kind, cfg.augment_kind}


def known_item_split(cfg: TrainConfig, store: GraphStore, seed: int, unusable: list[Citation] = ()) -> PreparedData:
    """For a corpus without citations: held-out documents (valid_share / test_share, then selection_share of the rest,
    seeded hash) are validation / test / selection queries whose one relevant candidate is their own description graph.
    Their trivial pairs are kept out of training (build_training_set leaves held-out queries out)."""
    valid, test, selection = [], [], []
    held = cfg.test_share + cfg.valid_share
    for d in known_item_candidates(store, cfg):
        u = known_item_draw(d, seed)
        if u < cfg.test_share:
            test.append(Citation(d, d, TRIVIAL))
        elif u < held:
            valid.append(Citation(d, d, TRIVIAL))
        elif u < held + cfg.selection_share * (1 - held):
            selection.append(Citation(d, d, TRIVIAL))
    return PreparedData(
        list(unusable), valid, test, [], selection=selection
    )  # unusable citations go on to be listed as skipped


def build_training_set(
    cfg: TrainConfig, docs: Documents, store: GraphStore, data: PreparedData, seed: int, tokenizer, token_vectors
):
    from graphtx.train.loop import TrainingSet

    pairs, skipped = make_pairs(data.train, store.ids_with(cfg.query_kind), store.ids_with(cfg.candidate_kind), cfg)
    held_out = {c.citing_id for c in data.valid + data.test + data.selection}
    # train.split = files: validation is not known yet; its queries are later than training's, so trivial pairs come from
    # documents no later than the latest training query (a held-out query must not learn its own description)
    latest = max((docs.date.get(c.citing_id, "") for c in data.train), default="") if any(data.held_out_files) else None
    eligible = [
        d
        for d in store.doc_ids
        if d not in held_out
        and (latest is None or docs.date.get(d, "") <= latest)
        and store.has(d, cfg.query_kind)
        and store.has(d, cfg.candidate_kind)
        and (
            cfg.trivial_same_graph
            or store.get(d, cfg.query_kind).node_text != store.get(d, cfg.candidate_kind).node_text
        )
    ]  # two identical graphs teach something only through independent node dropout
    trivial = trivial_pairs(eligible, cfg.trivial_share, len(pairs), seed)
    pairs = pairs + trivial
    if not pairs:
        raise ValueError(
            "no training pairs: no citation has graphs on both sides and no document has distinct query and candidate graphs"
        )
    known = positives_by_citing(pairs)
    if cfg.group_by in ("ipc", "cpc"):
        codes = docs.classes if cfg.group_by == "ipc" else docs.cpc
        doc_group = class_groups(codes)
    elif cfg.group_by == "cluster":
        ids = [d for d in docs.ids if d in set(store.doc_ids)]
        doc_group = cluster_groups(
            ids, [docs.text.get(d, "") for d in ids], tokenizer, token_vectors, cfg.num_clusters, seed
        )
    else:
        doc_group = {}
    groups = [doc_group.get(p.citing, "") for p in pairs]
    nodes = np.array(
        [store.num_nodes(p.citing, cfg.query_kind) + store.num_nodes(p.cited, cfg.candidate_kind) for p in pairs],
        dtype=np.int64,
    )
    candidates = store.ids_with(cfg.candidate_kind)
    extra = paecter_negatives(pairs, doc_group, candidates, seed) if cfg.negatives == "paecter" else {}
    if cfg.bm25_negatives:
        anchors = [p.citing for p in pairs if p.category != "trivial"]
        mined = bm25_negatives(anchors, sorted(candidates), docs.text, known, docs.family, cfg.bm25_negatives)
        extra = {a: extra.get(a, []) + mined.get(a, []) for a in sorted(set(extra) | set(mined))}
    return TrainingSet(store, pairs, known, groups, nodes, extra), skipped, len(trivial)


def train(
    config: ExperimentConfig,
    corpus_dir: str,
    graphs_dir: str,
    out_dir: str,
    tokens_dir: str | None = None,
    init_model_dir: str | None = None,
    citations: str | None = None,
    valid_citations: str | None = None,
    test_citations: str | None = None,
    device: str = "auto",
    progress: bool | None = None,
    stop_after_steps: int = 0,
) -> dict:
    """Run (or resume) every configured stage; returns the summary written to summary.json."""
    from graphtx.model.io import load_model
    from graphtx.train.loop import StageTrainer, selection_score

    cfg, seed = config.train, config.seed
    out = Path(out_dir)
    ctx: DistContext = init_distributed(device)
    clean_exit = True
    try:
        out.mkdir(parents=True, exist_ok=True)
        check_stage_order(out, cfg.stages)  # before anything is written: a refused directory keeps its config
        if "pretrain" in cfg.stages and not (out / "pretrain" / "done.json").is_file():  # said before the data work
            if ctx.enabled:
                raise ValueError(pretrain_first_message(out / "pretrain"))
            if needs_run_teacher(config):
                require_run_teacher(config)
        if ctx.is_main:
            atomic_write_text(out / "config.yaml", yaml.safe_dump(_config_dict(config), sort_keys=False))
        init_model_dir = init_model_dir or cfg.init_from or None
        model, tokenizer, tokenizer_file, token_vectors = starting_model(config, init_model_dir, tokens_dir, seed)

        docs = Documents.read(corpus_dir)
        store = GraphStore.load(graphs_dir, store_kinds(cfg))
        prepared = split_citations(cfg, docs, seed, citations, valid_citations, test_citations, corpus_dir)
        usable = [
            c
            for c in prepared.train + prepared.valid + prepared.test
            if c.citing_id != c.cited_id
            and store.has(c.citing_id, cfg.query_kind)
            and store.has(c.cited_id, cfg.candidate_kind)
        ]
        known_item = cfg.split == "random" and not usable
        if (
            known_item
        ):  # no citation inside the corpus: select and validate on held-out documents finding their own description
            prepared = known_item_split(cfg, store, seed, unusable=prepared.train + prepared.valid + prepared.test)
        else:
            if cfg.ranker_holdout > 0:
                prepared = hold_out_for_ranker(prepared, cfg.ranker_holdout, docs.family, seed)
            prepared = hold_out_for_selection(prepared, cfg.selection_share, docs, seed)
        check_selection(out, prepared.selection, cfg.stages)
        data, skipped_pairs, n_trivial = build_training_set(cfg, docs, store, prepared, seed, tokenizer, token_vectors)
        skipped = prepared.skipped + skipped_pairs
        evaluator = citation_evaluator(prepared.selection, store, cfg, known_item)
        if not evaluator.query_ids:
            raise ValueError(
                f"no selection queries with graphs: the latest {cfg.selection_share:.0%} of the training queries (train.selection_share) "
                "select checkpoints and stages; give more training citations with graphs on both sides"
            )
        data_report = {
            "documents": len(docs.ids),
            "documents_with_graphs": len(store.doc_ids),
            "train_citations": len(prepared.train),
            "ranker_citations": len(prepared.ranker),
            "selection_citations": len(prepared.selection),
            "citation_pairs": len(data.pairs) - n_trivial,
            "trivial_pairs": n_trivial,
            "groups": len(set(data.groups)),
            "group_by": cfg.group_by,
            "judgements": "known-item (first claim -> own description)"
            if known_item
            else "citations",  # of selection, validation, test
            "selection": {
                "rule": selection_rule(cfg, known_item),
                "fingerprint": selection_fingerprint(prepared.selection),
                "queries": len(evaluator.query_ids),
                "pairs": sum(len(v) for v in evaluator.relevant.values()),
                "skipped": evaluator.skipped,
                "dates": _date_range(docs, evaluator.query_ids),
            },
            "candidates": len(evaluator.candidate_ids),
            "skipped_citations": dict(Counter(s.reason for s in skipped)),
        }
        if ctx.is_main:
            atomic_write_json(out / "data.json", data_report)
            atomic_write_text(out / "skipped_citations.jsonl", "".join(json.dumps(asdict(s)) + "\n" for s in skipped))
            for name, cites in (("selection", prepared.selection), ("ranker", prepared.ranker)):
                if cites:
                    write_citations(out / f"{name}_citations.tsv", cites)

        results, scores = {}, {}
        pretrained = bool(init_model_dir)  # the base stage then fine-tunes (train.finetune_lr)
        for stage in cfg.stages:
            if stage == "pretrain":
                model = run_pretrain_stage(
                    model,
                    tokenizer,
                    tokenizer_file,
                    store,
                    graphs_dir,
                    evaluator,
                    config,
                    corpus_dir,
                    seed,
                    out,
                    ctx,
                    progress,
                    results,
                    scores,
                    stop_after_steps=stop_after_steps,
                )
                if model is None:  # simulated kill (tests)
                    return {"interrupted": "pretrain", "step": results["pretrain"]["steps"]}
                pretrained = True
                continue
            if stage == "reduced" and not model.config.reduced_dim:
                if not config.model.reduced_dim:
                    raise ValueError("stage 'reduced' needs model.reduced_dim > 0")
                model = model.with_reduction(config.model.reduced_dim, config.model.num_experts, seed=seed + 1)
            stage_cfg = (
                with_overrides(cfg, lr=cfg.finetune_lr)
                if stage == "base" and pretrained and cfg.finetune_lr > 0
                else cfg
            )
            trainer = StageTrainer(
                stage, model, tokenizer, data, evaluator, stage_cfg, seed, out / stage, ctx, progress, tokenizer_file
            )
            try:
                state = trainer.run(stop_after_steps=stop_after_steps)
            finally:
                trainer.close()
            if not state.stopped:  # simulated kill (tests)
                return {"interrupted": stage, "step": state.step}
            model = trainer.load_best().train()
            scores[stage] = selection_score(state, cfg.select_metric)
            results[stage] = {
                "best_recall": state.best_recall,
                "best_ndcg": state.best_ndcg,
                "best_step": state.best_step,
                "steps": state.step,
                "evals": state.evals,
                "stopped": state.stopped,
            }

        candidates = tuple(cfg.stages)
        start = starting_point(out, cfg, init_model_dir)  # fine-tuning an --init model: it competes with the stages
        if start is not None:
            scores[INIT_STAGE], candidates = selection_score(start, cfg.select_metric), (INIT_STAGE, *candidates)
            results[INIT_STAGE] = {
                "best_recall": start.best_recall,
                "best_ndcg": start.best_ndcg,
                "model": str(init_model_dir),
            }
        final_stage = pick_final_stage(candidates, scores)
        best = Path(init_model_dir) if final_stage == INIT_STAGE else out / final_stage / "best"
        if final_stage != cfg.stages[-1]:
            model = load_model(best).model
        summary = {
            "data": data_report,
            "stages": results,
            "final_stage": final_stage,
            "select_metric": cfg.select_metric,
            "selected_on": "selection",
            "k": cfg.eval_k,
            "ndcg_k": cfg.eval_ndcg_k,
        }
        if ctx.is_main:
            previous = out / "model"
            same = (previous / "fingerprint.txt").is_file() and (previous / "fingerprint.txt").read_text() == (
                best / "fingerprint.txt"
            ).read_text()
            with replacing(out / "model") as tmp:  # the previous RUN/model stays whole until the new one is in
                shutil.copytree(
                    best, tmp, ignore=shutil.ignore_patterns("ranker") if final_stage == INIT_STAGE else None
                )  # its ranker: other data
                if final_stage != INIT_STAGE:  # it learned on this corpus (graphtx.text.field: search's auto); the
                    # init model, when it wins, is unchanged and keeps the profile it came with
                    from graphtx.model.io import record_corpus_profile  # here: model.io loads torch (not for --help)

                    record_corpus_profile(tmp, learned_corpus_profile(corpus_dir, getattr(config, "index", None)))
                if (
                    same and (previous / "ranker").is_dir()
                ):  # a rerun of a finished run: the ranker fitted on this very model stays
                    shutil.copytree(previous / "ranker", tmp / "ranker")
            summary |= report_held_out(
                read_held_out(prepared, docs), data, store, model, tokenizer, cfg, known_item, out
            )
            atomic_write_json(out / "summary.json", summary)
            validation = summary.get("validation", {})
            if validation.get("queries") == 0:
                why = (
                    "every one is also a training, selection or ranker query of this run (does --citations hold the validation citations?)"
                    if validation["trained_queries_left_out"]
                    else "none has graphs on both sides (ids not in the corpus?)"
                )
                raise ValueError(
                    f"no validation queries in {valid_citations or 'the validation split'}: {why}; nothing was scored; "
                    f"the model is trained and saved in {out / 'model'}"
                )
        return summary if ctx.is_main else {}
    except BaseException:
        clean_exit = False
        raise
    finally:
        shutdown(ctx, clean=clean_exit)


def report_held_out(
    prepared: PreparedData, data, store: GraphStore, model, tokenizer, cfg: TrainConfig, known_item: bool, out: Path
) -> dict:
    """The chosen model scored once on the validation and test citations (nothing was selected on them), their
    judgements written beside the run (``valid_citations.tsv``, ``test_citations.tsv``, for graphtx eval).
    A query that training saw as a citing document (a citation or trivial pair), or that was a selection or ranker query,
    is left out, counted and warned about."""
    trained = {p.citing for p in data.pairs} | {
        c.citing_id for c in prepared.selection + prepared.ranker
    }  # seen, or selected on
    entries = {}
    for name, file, cites in (("validation", "valid", prepared.valid), ("test", "test", prepared.test)):
        scored = [c for c in cites if c.citing_id not in trained]
        write_citations(out / f"{file}_citations.tsv", scored)
        if not cites:
            continue
        ev = citation_evaluator(scored, store, cfg, known_item)
        left_out = len({c.citing_id for c in cites} - {c.citing_id for c in scored})
        if left_out:
            print(
                f"warning: {left_out} {name} queries are also training, selection or ranker queries of this run (the training citations "
                f"hold them?): left out of its {name} score",
                file=sys.stderr,
            )
        entries[name] = {
            **(asdict(ev(model, tokenizer)) if ev.query_ids else {"queries": 0}),
            "trained_queries_left_out": left_out,
        }
    return entries


def citation_evaluator(citations: list[Citation], store: GraphStore, cfg: TrainConfig, known_item: bool):
    """Recall@k / nDCG@k of ``citations`` over every candidate, as the run's settings score them (selection, validation, test)."""
    from graphtx.train.evaluate import CitationEvaluator

    return CitationEvaluator(
        citations,
        store,
        cfg.query_kind,
        cfg.candidate_kind,
        cfg.eval_k,
        cfg.eval_ndcg_k,
        cfg.encode_batch_size,
        known_item,
        cfg.select_rerank_depth,
    )


def selection_fingerprint(selection: list[Citation]) -> str:
    """A hash of the selection pairs: the queries every evaluation of the run's stages was scored on."""
    import hashlib

    text = "".join(sorted(f"{c.citing_id}\t{c.cited_id}\n" for c in selection))
    return hashlib.blake2b(text.encode(), digest_size=8).hexdigest()


def check_selection(out: Path, selection: list[Citation], stages) -> None:
    """A run directory whose stages were scored on other queries (an older run, another --citations or selection_share,
    a run from before the selection split) is not resumed: its best checkpoints were chosen on something else."""
    begun = [
        s for s in (*stages, *STAGE_ORDER) if (out / s / "done.json").is_file() or (out / s / "checkpoint.pt").is_file()
    ]
    if not begun:
        return
    try:
        before = json.loads((out / "data.json").read_text())["selection"]["fingerprint"]
    except (OSError, ValueError, KeyError, TypeError):
        before = None
    if before != selection_fingerprint(selection):
        raise ValueError(
            f"{out} holds stage {begun[0]} selected on other queries ({'a run from before the selection split' if before is None else 'another selection split'}): "
            "give a new --out, or delete the stage directories to train again"
        )


def write_citations(path: Path, citations: list[Citation]) -> None:
    atomic_write_text(
        path,
        "citing_id\tcited_id\tcategory\n" + "".join(f"{c.citing_id}\t{c.cited_id}\t{c.category}\n" for c in citations),
    )


def selection_rule(cfg: TrainConfig, known_item: bool) -> str:
    """How the run's selection queries were chosen, in words (summary.json, the printed summary)."""
    if known_item:
        return f"{cfg.selection_share:.0%} of the documents outside validation and test (seeded), each finding its own {cfg.candidate_kind}"
    after = f" left after the ranker's {cfg.ranker_holdout:.0%}" if cfg.ranker_holdout > 0 else ""
    return f"the latest {cfg.selection_share:.0%} of the training queries{after}, by citing date"


def _date_range(docs: Documents, ids: list[str]) -> list[str]:
    dates = sorted(d for d in (docs.date.get(i, "") for i in ids) if d)
    return [dates[0], dates[-1]] if dates else []


def starting_model(config: ExperimentConfig, init_model_dir: str | None, tokens_dir: str | None, seed: int):
    """The model a run starts from: ``init_model_dir`` (a model directory) or a fresh one over ``tokens_dir``.
    ``(model in train mode, tokenizer, tokenizer file, token vectors (vocab, token_dim))``."""
    from graphtx.model.embed import init_model
    from graphtx.model.io import load_model
    from graphtx.text.pretrain import load_tokens

    if init_model_dir:
        if not (Path(init_model_dir) / "config.yaml").exists():
            raise ValueError(
                f"--init / train.init_from {init_model_dir} is not a model directory (no config.yaml): give a run's model/ folder"
            )
        init = load_model(init_model_dir)
        model = init.model.train()
        return (
            model,
            init.tokenizer,
            Path(init_model_dir) / "tokenizer.json",
            model.swem.embedding.weight.detach().cpu().numpy(),
        )
    if tokens_dir:
        base_cfg = config.model.as_base() if config.train.stages[0] in ("pretrain", "base") else config.model
        model, tokenizer = init_model(base_cfg, tokens_dir, seed)
        return model, tokenizer, Path(tokens_dir) / "tokenizer.json", load_tokens(tokens_dir)[1]
    raise ValueError("give --tokens (a graphtx pretrain directory) or --init (a model directory)")


def run_pretrain_stage(
    model,
    tokenizer,
    tokenizer_file,
    store,
    graphs_dir,
    evaluator,
    config,
    corpus_dir,
    seed,
    out,
    ctx,
    progress,
    results,
    scores,
    stop_after_steps=0,
    exclude=(),
):
    """Stage ``pretrain`` on the documents of ``graphs_dir`` and ``train.pretrain_graphs``, less ``exclude`` (documents
    held out of it); returns its best model (None when ``stop_after_steps``, tests, cut it short).
    ``train.pretrain_teacher`` naming a peer: its vectors of the pool's corpora are written first (graphtx/train/run_teacher.py)."""
    from graphtx.train.pretrain_graph import PretrainPool, PretrainTrainer, load_pool_store
    from graphtx.train.run_teacher import note_directory_teacher, run_teacher_dir

    cfg = config.train
    if ctx.enabled or (out / "pretrain" / "done.json").is_file():  # finished (data-parallel: it must be, see below)
        return _finished_pretrain_stage(out / "pretrain", cfg, results, scores)
    kinds = {cfg.query_kind, cfg.candidate_kind}
    extra = [d for d in cfg.pretrain_graphs if Path(d).resolve() != Path(graphs_dir).resolve()]
    for d in extra:
        if not (Path(d) / "graphs.parquet").exists():
            raise ValueError(
                f"train.pretrain_graphs: {d} is not a graphs directory (no graphs.parquet): run `graphtx parse` on its corpus first"
            )
    if needs_run_teacher(config):
        log = (lambda line: None) if progress is False else (lambda line: print(line, file=sys.stderr))  # noqa: E731
        teacher = run_teacher_dir(config, corpus_dir, extra, out, progress, log, device=str(ctx.device))
        cfg = with_overrides(cfg, pretrain_teacher=str(teacher))
    else:
        note_directory_teacher(config, lambda line: print(line, file=sys.stderr))  # a warning: printed even when quiet
    pool_store = load_pool_store([graphs_dir, *extra], kinds) if extra else store
    if exclude:  # held out (graphtx adapt --hold-out-share): neither anchor nor teacher neighbour, whichever directory holds them
        pool_store = pool_store.without(exclude)
    trainer = PretrainTrainer(
        model,
        tokenizer,
        PretrainPool(pool_store, cfg),
        evaluator,
        cfg,
        seed,
        out / "pretrain",
        progress,
        tokenizer_file,
        device=ctx.device,
    )
    state = trainer.run(stop_after_steps)
    _record_pretrain(asdict(state), len(trainer.pool.doc_ids), len(trainer.pool.two_views), cfg, results, scores)
    return trainer.load_best().train() if state.stopped else None


def _finished_pretrain_stage(stage_dir: Path, cfg: TrainConfig, results: dict, scores: dict):
    """The model of a stage pretrain an earlier run finished in this run directory (under torchrun or Ray: an earlier single-process run)."""
    from graphtx.model.io import load_model

    done = stage_dir / "done.json"
    if not done.is_file():
        raise ValueError(pretrain_first_message(stage_dir))
    summary = json.loads(done.read_text())
    _record_pretrain(
        summary["state"], summary.get("documents", 0), summary.get("two_view_documents", 0), cfg, results, scores
    )
    return load_model(stage_dir / "best").model.train()


def _record_pretrain(
    state: dict, documents: int, two_view_documents: int, cfg: TrainConfig, results: dict, scores: dict
) -> None:
    """Stage pretrain's entry in the run summary and its selection score (``state``: a PretrainState as a dict)."""
    from graphtx.train.loop import StageState, selection_score

    scores["pretrain"] = selection_score(
        StageState(best_recall=state["best_recall"], best_ndcg=state["best_ndcg"], best_step=state["best_step"]),
        cfg.select_metric,
    )
    results["pretrain"] = {
        "best_recall": state["best_recall"],
        "best_ndcg": state["best_ndcg"],
        "best_step": state["best_step"],
        "steps": state["step"],
        "evals": state["evals"],
        "stopped": state["stopped"],
        "documents": documents,
        "two_view_documents": two_view_documents,
    }


def pretrain_first_message(stage_dir: Path) -> str:
    return (
        f"stage pretrain runs in one process and {stage_dir} holds no finished one: run the same command once without "
        "torchrun or `--engine ray`, with `--stages pretrain --no-rank-fit`, then this one again (it reuses the "
        "finished stage); or `--stages base`"
    )


def check_stage_order(out: Path, stages) -> None:
    """A stage starts from the one before it: a later stage (of any run: pretrain, base, reduced) begun or finished in
    ``out`` while an earlier one of this run is not (a run directory of another config, say citations alone before
    pre-training) would be reused from the wrong start."""
    for stage in stages:
        if (out / stage / "done.json").is_file():
            continue
        after = STAGE_ORDER[STAGE_ORDER.index(stage) + 1 :]
        later = [s for s in after if (out / s / "done.json").is_file() or (out / s / "checkpoint.pt").is_file()]
        if later:
            raise ValueError(
                f"{out} holds stage {later[0]} from an earlier run that did not start from this run's stage {stage}: "
                f"give a new --out, or delete {out / later[0]} to train it again from stage {stage}"
            )
        return


INIT_STAGE = "init"  # summary.json's name for the --init model when it competes with the run's stages


def starting_point(out: Path, cfg: TrainConfig, init_model_dir: str | None) -> StageState | None:
    """The --init model's validation score, as a stage state, when the run fine-tunes it without stage pretrain: the
    first stage's step-0 reference evaluation (RUN/STAGE/evals.jsonl). None otherwise, or when there is none."""
    from graphtx.train.loop import EVALS_FILE, StageState

    if not init_model_dir or "pretrain" in cfg.stages:
        return None
    path = out / cfg.stages[0] / EVALS_FILE
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("reference"):
            return StageState(best_recall=record["recall"], best_ndcg=record["ndcg"], best_step=0)
    return None


def pick_final_stage(stages, scores: dict[str, float]) -> str:
    """The run's model is its best stage on the selection split (ties: the later, smaller one): a reduction stage that
    ends below the base model does not ship."""
    return max(stages, key=lambda s: (scores[s], list(stages).index(s)))


def summary_lines(summary: dict, out_dir: str | Path) -> list[str]:
    """What ``graphtx train`` prints from its summary: the data, each stage's best checkpoint, the test scores, where the model is."""
    k, nk = summary["k"], summary["ndcg_k"]
    d = summary["data"]
    sel = d["selection"]
    lines = [
        f"training data: {d['citation_pairs']} citation pairs + {d['trivial_pairs']} trivial pairs in {d['groups']} groups ({d['group_by']})",
        f"selection (checkpoints, early stop, stage): {sel['queries']} queries, {sel['pairs']} pairs over {d['candidates']} candidates, {sel['rule']}",
        f"citations not used for training: {sum(d['skipped_citations'].values())} (reasons in {Path(out_dir) / 'skipped_citations.jsonl'})",
    ]
    for stage, r in summary["stages"].items():
        if stage == INIT_STAGE:
            kept = "; no stage beat it: it is the run's model" if summary["final_stage"] == INIT_STAGE else ""
            lines.append(
                f"start (--init {r['model']}): Recall@{k} {r['best_recall']:.4f}, nDCG@{nk} {r['best_ndcg']:.4f}{kept}"
            )
            continue
        lines.append(
            f"{stage}: selection's best Recall@{k} {r['best_recall']:.4f}, nDCG@{nk} {r['best_ndcg']:.4f} at step {r['best_step']} "
            f"of {r['steps']} ({r['evals']} evaluations, {r['stopped']})"
        )
    for name in ("validation", "test"):  # scored once, on the shipped model
        r = summary.get(name)
        if r and r.get("queries"):
            left = (
                f"; {r['trained_queries_left_out']} queries training saw left out"
                if r["trained_queries_left_out"]
                else ""
            )
            lines.append(
                f"{name} (scored once, nothing selected on it): Recall@{k} {r['recall']:.4f}, nDCG@{nk} {r['ndcg']:.4f} "
                f"({r['queries']} queries, {r['pairs']} pairs{left})"
            )
    lines.append(f"model: {Path(out_dir) / 'model'}; curves: graphtx plot {out_dir}")
    return lines


def _config_dict(config: ExperimentConfig) -> dict:
    d = asdict(config)

    def plain(x):
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, (list, tuple)):
            return [plain(v) for v in x]
        return x

    return plain(d)
