"""``graphtx adapt``: label-free adaptation of a model to a corpus, no citation read.

Stage ``pretrain`` on the target corpus's own documents (graphtx/train/pretrain_graph.py): the teacher's document
similarities (``train.pretrain_teacher``, a peer whose vectors of the corpus the run writes once, or a ``graphtx
teacher`` directory) distilled into the graph encoder, starting from a trained model (``--model``) or from a fresh
one over a tokens directory (``--tokens``). With nothing to select on, the last weights ship: the number of steps is
``train.pretrain_steps``, set before the run, never tuned on the corpus, and at most ``train.adapt_max_passes`` passes over
a small corpus (``adapt_steps``: the default's 1,500 steps are 13 passes over the 3,603 EV-battery documents, and
would be 960 over 50).

Run directory, as ``graphtx train``'s::

    RUN/config.yaml, RUN/teacher/ (a named peer's vectors), RUN/pretrain/ (log.jsonl, checkpoint.pt while running,
    best/, done.json), RUN/model/ (what `graphtx index` takes), RUN/summary.json,
    RUN/test_citations.tsv (with ``hold_out_share``: the held-out documents, each citing itself, for a known-item
    `graphtx eval citations --known-item`)

``hold_out_share`` keeps a seeded share of the documents out of the adaptation (neither anchor nor teacher neighbour):
a known-item evaluation (first claim -> own description) of documents the student was distilled on would be
inflated, since the teacher pulls both of a document's graphs towards the same vector. The same seeded rule as
`graphtx train`'s known-item split (``train.split: random``): with ``hold_out_share`` = ``train.test_share`` and the
same seed, the two routes hold out the same test documents.

The source model's learned ranker was fitted on the source model's vectors: it does not describe the adapted
vectors, so the adapted model ships without one (its fingerprint differs, and `search --ranker learned` says so);
search it with the hybrid ranker (reciprocal rank fusion of BM25 and the model), which needs no fit: on EV, an adapted
model with it scored 1.10x / 1.14x BM25, a ranker fitted on another field's citations 1.00x / 1.06x
(benchmarks/results/transfer.md). A killed run resumes with the same command.
"""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import yaml

from graphtx.atomic import atomic_write_json, atomic_write_text, replacing
from graphtx.from_dict import with_overrides
from graphtx.text.field import learned_corpus_profile
from graphtx.train.config import ExperimentConfig

ADAPT_STAGES = ("pretrain",)
ADAPT_MAX_EPOCHS = 15  # train.adapt_max_passes's default: passes over the corpus's documents at most (EV-battery: 1,500 steps of 32 are 13.3 passes)
ADAPT_MIN_STEPS = 50


def steps_for_passes(passes: float, documents: int, batch_docs: int) -> int:
    """Distillation steps of ``batch_docs`` anchors that read the corpus ``passes`` times."""
    return math.ceil(passes * documents / batch_docs)


ADAPT_FEW_PASSES = 5.0  # fewer passes than this: the run says the student is likely short of its teacher
# a build samples no fewer documents (the smallest corpus measured adapting well: 2,000 full texts)
ADAPT_SAMPLE_MIN = 2_000


def adapt_passes(steps: int, documents: int, batch_docs: int) -> float:
    """Passes over the corpus that ``steps`` distillation steps of ``batch_docs`` anchors make."""
    return steps * batch_docs / max(documents, 1)


def adapt_sample_size(steps: int, documents: int, batch_docs: int, max_passes: float = ADAPT_MAX_EPOCHS) -> int:
    """The documents a build adapts on (graphtx/build/sample.py): all of a corpus that ``steps`` read at least
    ADAPT_FEW_PASSES times (adaptation helps most the documents it reads), else as many as they read
    ``max_passes`` times (train.adapt_max_passes; at least ADAPT_SAMPLE_MIN). The default's 1,500 steps of 32
    anchors read 3,200 documents 15 times. Over the 42,356 full texts (benchmarks/results/transfer.md, one seed): 1.1
    passes over all of them left the student 0.94x its untrained self at nDCG@150 (MiniLM); 15 passes over a uniform
    2,000 (mpnet) made a model 1.03x its untrained self, whose fusion with BM25 (search's default) was 1.25x / 1.07x the
    untrained model's fusion (Recall@3 / nDCG@150) and level with BM25, in less than half the build's time. The same
    steps as 5 passes over 6,000 did no better (1.01x the 2,001's model at nDCG@150, one seed: transfer-ft-42k-passes)."""
    if adapt_passes(steps, documents, batch_docs) >= ADAPT_FEW_PASSES:
        return documents
    return min(documents, max(ADAPT_SAMPLE_MIN, int(steps * batch_docs // max_passes)))


def steps_reading_every_document(documents: int, batch_docs: int, max_passes: float = ADAPT_MAX_EPOCHS) -> int:
    """The steps of ``--steps all``: the most adapt_steps runs on ``documents``, ``max_passes`` (train.adapt_max_passes)
    passes over every one (at least ADAPT_MIN_STEPS), so no build samples with them."""
    return max(ADAPT_MIN_STEPS, steps_for_passes(max_passes, documents, batch_docs))


def adapt_steps(configured: int, documents: int, batch_docs: int, max_passes: float = ADAPT_MAX_EPOCHS) -> int:
    """``train.pretrain_steps``, or fewer for a small corpus: at most ``max_passes`` passes (train.adapt_max_passes;
    at least ADAPT_MIN_STEPS)."""
    return min(configured, steps_reading_every_document(documents, batch_docs, max_passes))


def few_passes_warning(steps: int, documents: int, batch_docs: int, max_passes: float = ADAPT_MAX_EPOCHS) -> str:
    """What a user should know when the distillation reads each document only a few times; empty when it does not.

    The floor of ADAPT_FEW_PASSES is a judgement, not a measured threshold. What was measured (benchmarks/results/
    transfer.md): 1,500 steps over 42,356 full texts (1.1 passes, MiniLM, the loss still falling) left the student 0.94x
    its untrained self at nDCG@150; taught to the 15-pass cap on 2,000 of them (mpnet) it was level with its teacher and
    1.13x its untrained self; on EV's abstracts, built the same way (13 passes), 1.08x BM25 where its untrained self is
    0.90x (three seeds each). The teacher and the corpus's size differ between the full-text runs, not only the passes."""
    passes = adapt_passes(steps, documents, batch_docs)
    if passes >= ADAPT_FEW_PASSES:
        return ""
    full = steps_for_passes(max_passes, documents, batch_docs)
    return (
        f"{steps:,} distillation steps are {passes:.1f} passes over {documents:,} documents: the student is likely "
        f"short of its teacher (1.1 passes over 42,356 full texts left it below its untrained self; "
        "15 passes over 2,000 of them brought it level with its teacher: benchmarks/results/transfer.md). "
        f"{max_passes:g} passes (train.adapt_max_passes) here are {full:,} steps "
        f"(build or adapt --steps all, or train.pretrain_steps {full}), best on a GPU"
    )


def adapt(
    config: ExperimentConfig,
    corpus_dir: str,
    graphs_dir: str,
    out_dir: str,
    model_dir: str | None = None,
    tokens_dir: str | None = None,
    device: str = "auto",
    progress: bool | None = None,
    stop_after_steps: int = 0,
    hold_out_share: float = 0.0,
    read_every_document: bool = False,
) -> dict:
    """Adapt (or resume adapting) a model to the corpus; returns the summary written to RUN/summary.json.
    ``read_every_document`` (``--steps all``): the steps that read every document train.adapt_max_passes times, whatever
    train.pretrain_steps says."""
    import torch

    from graphtx.model.chunks import resolve_device
    from graphtx.train.data import GraphStore
    from graphtx.train.distributed import DistContext
    from graphtx.train.run import _config_dict, run_pretrain_stage, starting_model, store_kinds
    from graphtx.train.run_teacher import needs_run_teacher, require_run_teacher

    cfg = config.train
    if not 0.0 <= hold_out_share < 1.0:
        raise ValueError(f"--hold-out-share must be in [0, 1), not {hold_out_share}")
    if cfg.pretrain_teacher_weight <= 0 or not cfg.pretrain_teacher:
        raise ValueError(
            "adapting needs a teacher: set train.pretrain_teacher (minilm, mpnet or a `graphtx teacher` directory) "
            "and train.pretrain_teacher_weight > 0, as configs/small.yaml does, or give --teacher"
        )
    config = with_overrides(config, train=with_overrides(cfg, stages=ADAPT_STAGES, pretrain_evals=1))
    ctx = DistContext(
        device=torch.device(resolve_device(device))
    )  # one process (stage pretrain is not data-parallel); a bad device: said first
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if needs_run_teacher(config) and not (out / "pretrain" / "done.json").is_file():
        require_run_teacher(config)  # said before any data work
    atomic_write_text(out / "config.yaml", yaml.safe_dump(_config_dict(config), sort_keys=False))
    model, tokenizer, tokenizer_file, _ = starting_model(config, model_dir, tokens_dir, config.seed)
    store = GraphStore.load(graphs_dir, store_kinds(cfg))
    if not store.doc_ids:
        raise ValueError(f"{graphs_dir} holds no graph with nodes: nothing to adapt to")
    held_out: list[str] = []
    if hold_out_share > 0:
        store, held_out = hold_out(store, cfg, hold_out_share, config.seed)
        if not held_out:
            raise ValueError(
                f"--hold-out-share {hold_out_share} holds out none of {graphs_dir}'s documents: a known-item judgement "
                "needs a document whose first-claim and description graphs differ, and the seeded draw picked none "
                "(too few documents, or abstract-only ones): adapt without it"
            )
        if len(store.doc_ids) < 2:
            raise ValueError(
                f"--hold-out-share {hold_out_share} leaves {len(store.doc_ids)} document(s) to adapt to: give a smaller share"
            )
    max_passes = cfg.adapt_max_passes
    steps = (
        steps_reading_every_document(len(store.doc_ids), cfg.pretrain_batch_docs, max_passes)
        if read_every_document
        else adapt_steps(cfg.pretrain_steps, len(store.doc_ids), cfg.pretrain_batch_docs, max_passes)
    )
    if steps < cfg.pretrain_steps and not read_every_document:
        print(
            f"adapt: {steps} steps, not {cfg.pretrain_steps}: at most {max_passes:g} passes over {len(store.doc_ids):,} "
            "documents (train.adapt_max_passes)",
            file=sys.stderr,
        )
    warning = few_passes_warning(steps, len(store.doc_ids), cfg.pretrain_batch_docs, max_passes)
    if warning:
        print(f"adapt: {warning}", file=sys.stderr)
    config = with_overrides(config, train=with_overrides(config.train, pretrain_steps=steps))
    job = {
        "from": str(model_dir) if model_dir else f"tokens {tokens_dir}",
        "steps": steps,
        "teacher": str(cfg.pretrain_teacher),
        "seed": config.seed,
    }
    if held_out:
        job["held_out"] = len(held_out)
    job_path = out / "adapt.json"
    earlier = json.loads(job_path.read_text()) if job_path.is_file() else job
    if (out / "pretrain").exists() and earlier != job:
        raise ValueError(
            f"{out} holds an adaptation of another job ({earlier}): give a new --out, or delete {out / 'pretrain'}"
        )
    atomic_write_json(job_path, job)
    if held_out:
        from graphtx.corpus.schema import TRIVIAL, Citation
        from graphtx.train.run import write_citations

        write_citations(out / "test_citations.tsv", [Citation(d, d, TRIVIAL) for d in held_out])
    else:  # an earlier run's held-out list names documents this model is adapted on: it must not be scored
        (out / "test_citations.tsv").unlink(missing_ok=True)
    results, scores = {}, {}
    model = run_pretrain_stage(
        model,
        tokenizer,
        tokenizer_file,
        store,
        graphs_dir,
        None,
        config,
        corpus_dir,
        config.seed,
        out,
        ctx,
        progress,
        results,
        scores,
        stop_after_steps=stop_after_steps,
        exclude=held_out,
    )
    if model is None:  # simulated kill (tests)
        return {"interrupted": "pretrain", "step": results["pretrain"]["steps"]}
    best = out / "pretrain" / "best"
    from graphtx.model.io import record_corpus_profile  # here: model.io loads torch (not for --help)

    with replacing(out / "model") as tmp:  # the adapted weights; no ranker: the source's was fitted on other vectors
        shutil.copytree(best, tmp, ignore=shutil.ignore_patterns("ranker"))
        record_corpus_profile(tmp, learned_corpus_profile(corpus_dir, getattr(config, "index", None)))  # search's auto
    for key in (
        "best_recall",
        "best_ndcg",
        "best_step",
        "evals",
    ):  # nothing was evaluated: no selection scores (no NaN in the JSON)
        results["pretrain"].pop(key, None)
    summary = {
        "mode": "adapt",
        "from": str(model_dir) if model_dir else f"a fresh model over {tokens_dir}",
        "documents_with_graphs": len(store.doc_ids),
        "stages": results,
        "final_stage": "pretrain",
        "teacher": str(config.train.pretrain_teacher),
        "steps": config.train.pretrain_steps,
        "seed": config.seed,
        "held_out": len(held_out),
        "ranker": "none: the source model's ranker was fitted on other vectors; search ranks hybrid by default "
        "(benchmarks/results/transfer.md), or fit one over it with `graphtx rank-fit` on another corpus's citations "
        "(docs/guide/train.md)",
    }
    atomic_write_json(out / "summary.json", summary)
    return summary


def hold_out(store, cfg, share: float, seed: int):
    """(the store without the held-out documents, the held-out ids): ``train.split: random``'s known-item test rule
    (graphtx.train.run.known_item_split), over the documents whose query and candidate graphs differ."""
    from graphtx.train.run import known_item_candidates, known_item_draw

    held = [d for d in known_item_candidates(store, cfg) if known_item_draw(d, seed) < share]
    return store.without(held), held


def summary_lines(summary: dict, out_dir: str | Path) -> list[str]:
    """What ``graphtx adapt`` prints."""
    stage = summary["stages"]["pretrain"]
    lines = [
        f"adapted {summary['from']} to {summary['documents_with_graphs']:,} documents: {stage['steps']} distillation steps "
        f"from teacher {summary['teacher']} (no citation read; the last weights ship)",
        f"model: {Path(out_dir) / 'model'} (no learned ranker: {summary['ranker'].split(': ', 1)[1]})",
    ]
    if summary.get("held_out"):
        lines.append(
            f"held out of the adaptation: {summary['held_out']:,} documents, known-item test judgements in "
            f"{Path(out_dir) / 'test_citations.tsv'} (graphtx eval citations --known-item)"
        )
    return lines
