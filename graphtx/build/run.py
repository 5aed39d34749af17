"""``graphtx build SOURCES... --out DIR``: ingest, parse, pretrain, train (or adapt), index, in one resumable command.

Layout (each a plain output of its stage's own command, which the six commands still make one at a time)::

    DIR/corpus   graphtx ingest      DIR/graphs  graphtx parse (the parse cache in ~/.cache/graphtx)
    DIR/tokens   graphtx pretrain    DIR/run     graphtx train, or graphtx adapt without citations (DIR/run/model)
    DIR/index    graphtx index       DIR/build.json  each step's fingerprint, projection and measured time
    DIR/sample   a large corpus's seeded uniform sample that tokens and adapt read (graphtx/build/sample.py)

A step is up to date when ``build.json`` holds its fingerprint (a hash of its settings, its seed and the
fingerprints of the steps it reads) and it finished: running the same command again skips it. A step whose inputs
or settings changed runs again from scratch, and so does every step after it; a step that was killed resumes (parse
from its cache, training from its checkpoints, the index from its finished parts). ``until`` stops after a step.

Route: with citations between documents of the corpus (in the XML, or a ``--citations`` file) the model trains on
them as the config says (selection on held-out training queries, the learned ranker fitted at the end); without,
the label-free route: the config's teacher distilled on the corpus's own documents (graphtx/train/adapt.py). When the
steps would read them fewer than ADAPT_FEW_PASSES times, the default reads every one train.adapt_max_passes times if the
plan projects that model step within READ_ALL_WITHIN_S on this machine (with the teacher a sample would get), else a
seeded uniform sample of them; every document is indexed.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import pyarrow.parquet as pq

from graphtx.atomic import atomic_write_json
from graphtx.build import MIN_TRAINING_QUERIES, STEPS
from graphtx.build.plan import (
    CPU_STEP_SHARE,
    GPU_STEP_SHARE,
    PRETRAIN_S_PER_STEP,
    READ_ALL_WITHIN_S,
    TEACHER_MIN_WORDS,
    TEACHER_REFERENCE_WORDS,
    TOKENS_FIXED_S,
    TOKENS_WORDS_PER_S,
    BuildPlan,
    PlannedStep,
    choose_teacher,
    core_scale,
    document_graph_nodes,
    duration,
    index_seconds,
    parse_seconds,
    step_factor,
    teacher_document_words,
    teacher_seconds,
)
from graphtx.cache_home import parse_cache_dir
from graphtx.config import GraphtxConfig
from graphtx.errors import LockedError
from graphtx.from_dict import with_overrides
from graphtx.hardware import trains_in_bf16

STATE_FILE = "build.json"
# settings that change how a step runs, not what it writes: left out of the fingerprints
NOT_OUTPUT = {
    "ingest": ("workers", "chunk_size", "rows_per_group"),
    "parse": ("workers", "cache_dir", "shard_size"),
    "train": ("checkpoint_every_steps", "log_every_steps", "encode_batch_size", "amp", "pretrain_batch_workers"),
    "index": ("batch_size", "use_gpu", "copy_model", "chunk_size"),
}


# settings added after builds were made, at the value that writes what those builds wrote: left out of the fingerprints
# at that value, so a build made before the setting existed stays up to date (a new option, off, redoes nothing)
UNCHANGED_AT = {"parse": {"title_text": False}, "train": {"adapt_max_passes": 15.0}}


def settings(section, step: str) -> dict:
    unchanged = UNCHANGED_AT.get(step, {})
    return {
        k: v
        for k, v in asdict(section).items()
        if k not in NOT_OUTPUT.get(step, ()) and not (k in unchanged and v == unchanged[k])
    }


@dataclass(frozen=True)
class ModelChoice:
    """What the model step reads and runs under one choice of its steps: the configured ones (a sample of a large
    corpus when adapting) or those that read every document train.adapt_max_passes times."""

    config: GraphtxConfig  # its steps, teacher and teacher weight set
    documents: int  # the documents tokens, teacher and distillation read
    sampled: bool  # fewer than the corpus's
    sample_key: str  # the sample step's fingerprint ("" without a sample)
    tokens_key: str
    teacher: str
    teacher_note: str  # why a CPU took MiniLM for mpnet ("" otherwise)
    teacher_s: float  # the teacher's projected seconds (0 when its vectors are all cached)
    cached: int  # of its documents' teacher vectors, those the peer vector cache holds
    steps: int  # the distillation's (or pre-training's) steps


@dataclass(frozen=True)
class Layout:
    out: Path

    def __getattr__(self, name: str) -> Path:
        if name in ("corpus", "graphs", "tokens", "run", "index", "sample"):
            return self.out / name
        raise AttributeError(name)

    def output(self, step: str) -> Path:
        """The file whose presence says a step's output is whole."""
        return {
            "ingest": self.out / "corpus" / "manifest.json",
            "parse": self.out / "graphs" / "manifest.json",
            "sample": self.out / "sample" / "graphs" / "manifest.json",
            "tokens": self.out / "tokens" / "manifest.json",
            "model": self.out / "run" / "model" / "fingerprint.txt",
            "index": self.out / "index" / "manifest.json",
        }[step]

    def directory(self, step: str) -> Path:
        return {
            "ingest": self.corpus,
            "parse": self.graphs,
            "sample": self.sample,
            "tokens": self.tokens,
            "model": self.run,
            "index": self.index,
        }[step]


def fingerprint(*parts) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def source_files(paths: list[str]) -> list[Path]:
    """Each source file (a folder: every file below it), resolved and sorted within its folder."""
    out = []
    for p in (Path(x).resolve() for x in paths):
        out += sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p] if p.exists() else []
    return out


def sources_fingerprint(paths: list[str]) -> list:
    """Each source file's path, size and sha256: what it holds, not when it was touched, so a copied or touched
    export is still up to date (hashing reads about 1 GB/s, far faster than the ingest that would run again)."""
    from graphtx.integrity import cached_sha256

    return [(str(f), f.stat().st_size, cached_sha256(f)) for f in source_files(paths)]


@dataclass(frozen=True)
class CorpusSize:
    """What the projections read off the corpus before the parse: counts, and the expected graph sizes."""

    documents: int
    words: int  # title, abstract, claims, description, cut as the parse cuts
    text_bytes: int
    teacher_words: dict[str, float]  # teacher (mpnet, minilm) -> mean words a document it reads (its fields, its cut)
    nodes: dict[str, float]  # graph kind -> mean expected nodes (first_claim, all_claims, description)


def corpus_counts(corpus: Path, config: GraphtxConfig) -> CorpusSize:
    """Counts of the texts the parse will read, and each graph kind's expected mean size: a graph from each
    document's own text (a mean of per-document estimates, not an estimate of the mean words: a few long texts
    would make a corpus of short ones look long)."""
    cfg, train = config.parse, config.train
    cuts = {"mpnet": config.eval.mpnet_max_tokens, "minilm": config.eval.minilm_max_tokens}
    docs = words = size = 0
    teacher_words = dict.fromkeys(cuts, 0.0)
    nodes = {"first_claim": 0.0, "all_claims": 0.0, "description": 0.0}
    columns = ["title", "abstract", "claims", "first_claim_index", "description"]
    for batch in pq.ParquetFile(corpus / "documents.parquet").iter_batches(batch_size=2048, columns=columns):
        for r in batch.to_pylist():
            claims = " ".join(c["text"] or "" for c in r["claims"] or ())[: cfg.max_claims_chars]
            text = " ".join(
                x
                for x in (r["title"], r["abstract"], claims, (r["description"] or "")[: cfg.max_description_chars])
                if x
            )
            for kind, n in document_graph_nodes(r, cfg).items():
                nodes[kind] += n
            for peer, cut in cuts.items():
                read = teacher_document_words(r, train.pretrain_teacher_fields, cut, train.pretrain_teacher_passages)
                teacher_words[peer] += max(TEACHER_MIN_WORDS, read)
            docs, words, size = docs + 1, words + text.count(" ") + 1, size + len(text)
    n = max(docs, 1)
    return CorpusSize(
        docs, words, size, {k: v / n for k, v in teacher_words.items()}, {k: v / n for k, v in nodes.items()}
    )


def build(sources: list[str], out_dir: str | Path, config: GraphtxConfig, **kwargs) -> dict:
    """Run (or resume) the build under the build directory's lock (a second build of the same DIR stops at once);
    keyword arguments: see ``_build``."""
    from graphtx.lock import DirectoryLock

    Path(out_dir).mkdir(parents=True, exist_ok=True)
    try:
        with DirectoryLock(out_dir, "graphtx build", "build directory"):
            return _build(sources, out_dir, config, **kwargs)
    except LockedError as locked:
        if not kwargs.get("plan_only"):
            raise
        # --plan beside a running build: it only reads, once that build's ingest is done (else it would ingest)
        return _build(sources, out_dir, config, **kwargs, beside=str(locked))


def _build(
    sources: list[str],
    out_dir: str | Path,
    config: GraphtxConfig,
    citations: str | None = None,
    until: str = "index",
    plan_only: bool = False,
    beside: str = "",
    teacher: str | None = None,
    device: str = "auto",
    read_every_document: bool | None = None,
    progress: bool | None = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr),
) -> dict:
    """Run (or resume) the build; returns its summary (also DIR/build.json). ``plan_only``: ingest (to count what
    follows), print the plan, stop. ``beside``: another build holds the directory (its lock message); the plan only
    reads, and only when the ingest is up to date. ``read_every_document``: True (``--steps all``), the distillation
    steps are those that read every document train.adapt_max_passes times, counted once the corpus is ingested; False
    (``--steps N``), the configured steps, on a sample of a corpus larger than they read that often; None (the
    default), as False unless that would sample and reading every document is projected within READ_ALL_WITHIN_S on
    this machine with the same teacher (a build begun either way goes on so)."""
    from graphtx.model.chunks import resolve_device
    from graphtx.train.run import citing_documents_within

    if until not in STEPS:
        raise ValueError(f"--until must be one of {', '.join(STEPS)}")
    out_resolved = Path(out_dir).resolve()
    inside = [s for s in sources if Path(s).is_dir() and out_resolved.is_relative_to(Path(s).resolve())]
    if inside:
        raise ValueError(
            f"--out {out_dir} lies inside the source folder {inside[0]}: the build would read its own outputs; give another --out"
        )
    device = resolve_device(device)  # a bad device in words, before any work
    gpu = device.startswith("cuda")
    layout = Layout(Path(out_dir))
    layout.out.mkdir(parents=True, exist_ok=True)
    state_path = layout.out / STATE_FILE
    state = json.loads(state_path.read_text()) if state_path.is_file() else {"steps": {}}
    inputs = [*sources, *([citations] if citations else [])]
    keys: dict[str, str] = {}
    keys["ingest"] = fingerprint("ingest", sources_fingerprint(inputs), settings(config.ingest, "ingest"))
    summary: dict = {"out": str(layout.out), "steps": {}}
    planned_s: dict[str, float] = {}  # each step's projection as the plan printed it

    def up_to_date(name: str) -> bool:
        entry = state["steps"].get(name, {})
        return (
            entry.get("fingerprint") == keys.get(name) and bool(entry.get("finished")) and layout.output(name).is_file()
        )

    def step(name: str, projected: float, work: Callable[[], object]) -> None:
        entry = state["steps"].get(name, {})
        if up_to_date(name):
            log(f"{name}: up to date ({layout.directory(name)})")
            summary["steps"][name] = {**entry, "skipped": True}
            return
        if (
            entry.get("fingerprint") != keys[name] and layout.directory(name).exists()
        ):  # other inputs: start this step afresh
            shutil.rmtree(layout.directory(name))
        planned = planned_s.get(name, projected)  # what --plan said before the graphs were parsed
        state["steps"][name] = {
            "fingerprint": keys[name],
            "projected_s": round(projected, 1),
            "planned_s": round(planned, 1),
            "finished": False,
            **({"teacher": chosen} if name == "model" else {}),
        }
        atomic_write_json(state_path, state)
        said = f" (the plan said {duration(planned)})" if duration(planned) != duration(projected) else ""
        log(f"{name}: projected {duration(projected)} on this machine{said}")
        started, load_at_start = time.time(), machine_load()
        result = work()
        seconds = round(time.time() - started, 1)
        load = [load_at_start, machine_load()]  # 1-minute load average as the step began and ended: beside each time
        state["steps"][name] = {
            "fingerprint": keys[name],
            "projected_s": round(projected, 1),
            "planned_s": round(planned, 1),
            "seconds": seconds,
            "load": load,
            "finished": True,
            **({"teacher": chosen} if name == "model" else {}),
            **({"result": result} if result else {}),
        }
        atomic_write_json(state_path, state)
        log(f"{name}: {duration(seconds)} (projected {duration(projected)}; load {load[0]:.1f}-{load[1]:.1f})")
        summary["steps"][name] = state["steps"][name]

    # 1. ingest: cheap, and what every projection needs
    def do_ingest():
        from graphtx.corpus.ingest import ingest

        report = ingest(inputs, layout.corpus, config.ingest, progress=progress)
        for line in report.lines():
            log(f"ingest: {line}")
        if not report.complete:
            log(
                f"ingest: {report.skipped - report.not_patents} patent records could not be read (listed in {layout.corpus / 'errors.jsonl'}); "
                "the build goes on with the others"
            )
        return {"documents": report.documents, "skipped": report.skipped, "not_patents": report.not_patents}

    if beside and not up_to_date("ingest"):
        raise LockedError(
            f"{beside}; --plan reads beside a running build only once its ingest of these sources is done"
        )
    step("ingest", 1.0 + sum(f.stat().st_size for f in source_files(inputs)) / 20e6, do_ingest)
    size = corpus_counts(layout.corpus, config)
    keys["parse"] = fingerprint("parse", keys["ingest"], settings(config.parse, "parse"))
    documents, words, text_bytes = size.documents, size.words, size.text_bytes
    queries = citing_documents_within(layout.corpus)
    route = "train" if queries >= MIN_TRAINING_QUERIES else "adapt"
    from graphtx.train.adapt import (
        adapt_passes,
        adapt_sample_size,
        adapt_steps,
        few_passes_warning,
        steps_reading_every_document,
    )
    from graphtx.train.prefetch import batch_workers
    from graphtx.train.run_teacher import teacher_precision

    graphs_known = False  # the plan's graph sizes are the parsed graphs' (parse up to date), not a guess from words
    if up_to_date("parse"):
        parsed = parsed_graph_nodes(layout.graphs)
        if parsed:
            size = dataclasses.replace(size, nodes={**size.nodes, **parsed})
            graphs_known = True
    teacher_device = "cuda" if gpu else "cpu"
    teacher_precision_here = teacher_precision(config, teacher_device)  # the peer's precision (fp32 on a GPU)
    scale = core_scale()
    max_passes = config.train.adapt_max_passes  # the most passes adapting makes over the documents it reads
    every_steps = steps_reading_every_document(
        documents, config.train.pretrain_batch_docs, max_passes
    )  # what --steps all runs
    counted: dict = {}  # the peer vector cache's share of a corpus, counted once (both choices below read it)

    def model_choice(read_all: bool) -> ModelChoice:
        """What the model step reads and runs with the configured steps (``read_all`` False: a sample of a large
        corpus when adapting) or with the steps that read every document train.adapt_max_passes times (no sample; the same
        fingerprint as ``--steps N`` for that N)."""
        cfg = (
            with_overrides(config, train=with_overrides(config.train, pretrain_steps=every_steps))
            if read_all
            else config
        )
        read = (  # the documents tokens, teacher and distillation read: a sample of a large corpus when adapting
            adapt_sample_size(cfg.train.pretrain_steps, documents, cfg.train.pretrain_batch_docs, max_passes)
            if route == "adapt"
            else documents
        )
        sampled = read < documents
        sample_key = fingerprint("sample", keys["parse"], read, cfg.seed) if sampled else ""
        tokens_key = fingerprint(
            "tokens", sample_key if sampled else keys["ingest"], settings(cfg.pretrain, "tokens"), cfg.seed
        )
        before = (  # a model begun over these tokens keeps its teacher (another machine would choose anew); over
            # others (another sample, seed or corpus) the teacher is chosen again for the documents it will read
            state["steps"].get("model", {}).get("teacher")
            if state["steps"].get("tokens", {}).get("fingerprint") == tokens_key
            else None
        )
        asked = teacher is not None or before is not None
        weighed = (  # (documents mpnet reads, how many of their vectors are cached): what a CPU's choice weighs
            teacher_cached_share(cfg, layout, read, sampled, up_to_date, counted=counted)  # on a CPU only
            if cfg.train.pretrain_teacher == "mpnet" and not (asked or gpu)
            else None
        )
        chosen, note = choose_teacher(
            cfg.train.pretrain_teacher,
            read,
            gpu,
            asked=asked,
            words=size.teacher_words,
            mpnet_cached=weighed[1] if weighed else 0,
            precision=teacher_precision_here,
        )
        chosen = teacher or before or chosen
        # naming a teacher turns distillation on
        weight = cfg.train.pretrain_teacher_weight or (1.0 if teacher else 0.0)
        if route == "adapt" and (not chosen or weight <= 0):
            raise ValueError(
                f"{queries} documents of the corpus cite another of them (training needs {MIN_TRAINING_QUERIES}), and the config has "
                "no teacher to adapt with: give --teacher minilm or mpnet, or a config with train.pretrain_teacher (configs/small.yaml)"
            )
        train_cfg = with_overrides(cfg.train, pretrain_teacher=chosen, pretrain_teacher_weight=weight, split="files")
        cfg = with_overrides(cfg, train=train_cfg)
        teach, cached = 0.0, 0
        if chosen and "pretrain" in train_cfg.stages:
            encoded, cached = (
                weighed
                if weighed and chosen == "mpnet"
                else teacher_cached_share(cfg, layout, read, sampled, up_to_date, teacher_device, counted)
            )
            uncached = max(0, (encoded or read) - cached)
            teach = (
                teacher_seconds(
                    uncached,
                    chosen,
                    gpu,
                    size.teacher_words.get(chosen, TEACHER_REFERENCE_WORDS),
                    teacher_precision_here,
                )
                if uncached
                else 0.0
            )  # all cached: the peer is not even loaded
        steps = (
            adapt_steps(train_cfg.pretrain_steps, read, train_cfg.pretrain_batch_docs, max_passes)
            if route == "adapt"
            else train_cfg.pretrain_steps
        )
        return ModelChoice(cfg, read, sampled, sample_key, tokens_key, chosen, note, teach, cached, steps)

    def model_seconds(choice: ModelChoice, nodes: dict[str, float]) -> float:
        train_cfg = choice.config.train
        batch_documents = min(
            float(choice.documents), train_cfg.pretrain_batch_docs * (1.0 + train_cfg.pretrain_teacher_neighbours)
        )  # the documents a distillation step encodes
        kinds = (train_cfg.query_kind, train_cfg.candidate_kind)
        reference_s = (
            choice.steps * PRETRAIN_S_PER_STEP * step_factor(*(nodes.get(k, 0.0) for k in kinds), batch_documents)
        )  # the distillation's steps as calibrated (fp32, the older code, 2 cores)
        if gpu:  # one H200 (plan.py GPU_STEP_SHARE); the distillation's batches built ahead where workers run
            ahead = batch_workers(train_cfg.pretrain_batch_workers, "cuda") > 0
            pretrain_s = reference_s * GPU_STEP_SHARE["ahead" if ahead else "in line"]
            base_s = reference_s * GPU_STEP_SHARE["in line"]
        else:  # the citation stage stays fp32 on a CPU
            pretrain_s, base_s = (reference_s * scale * CPU_STEP_SHARE[p] for p in (precision, "fp32"))
        return choice.teacher_s + pretrain_s + (0.4 * base_s + 120 * scale if route == "train" else 0)

    precision = (  # the distillation's, on a CPU
        "bf16" if trains_in_bf16("cpu", config.train.amp, on_cpu=True) else "fp32"
    )
    choice = model_choice(bool(read_every_document))
    whole = model_choice(True) if choice.sampled else choice  # every document read: the default's other choice
    whole_s = model_seconds(whole, size.nodes)
    read_all_note = ""
    begun = state["steps"].get("tokens", {}).get("fingerprint")  # a build goes on the way its tokens began
    kept_sample = read_every_document is None and choice.sampled and begun == choice.tokens_key
    if read_every_document is None and choice.sampled:  # the default: every document when it fits the hour
        if begun == whole.tokens_key or (
            begun != choice.tokens_key and whole.teacher == choice.teacher and whole_s <= READ_ALL_WITHIN_S
        ):
            read_all_note = (
                f"the model reads every one of the {documents:,} documents {max_passes:g} times: "
                + (
                    "the build began so"
                    if begun == whole.tokens_key
                    else f"projected {duration(whole_s)}, within the {duration(READ_ALL_WITHIN_S)} the default allows"
                )
                + f" (--steps {choice.steps} would sample {choice.documents:,} of them)"
            )
            choice = whole
    config, model_documents, sampled = choice.config, choice.documents, choice.sampled
    if sampled:
        keys["sample"] = choice.sample_key
    keys["tokens"] = choice.tokens_key
    chosen, note, steps = choice.teacher, choice.teacher_note, choice.steps
    teach, cached = choice.teacher_s, choice.cached
    train_cfg = config.train
    passes = adapt_passes(steps, model_documents, train_cfg.pretrain_batch_docs)
    kinds = (train_cfg.query_kind, train_cfg.candidate_kind)
    model_s = model_seconds(choice, size.nodes)
    plan = BuildPlan(
        documents,
        words,
        text_bytes,
        f"train ({queries:,} documents cite others of the corpus)"
        if route == "train"
        else f"adapt (label-free: {queries:,} documents cite others of the corpus; training needs {MIN_TRAINING_QUERIES})"
        + (
            f" on a seeded uniform {model_documents:,} of the {documents:,} documents; all are indexed"
            if sampled
            else ""
        ),
        chosen or "none",
        note,
    )
    parse_cached, parse_shards = 0, 1
    if not up_to_date("parse"):
        parse_cached, parse_shards = cached_shards(
            layout.corpus, with_overrides(config.parse, cache_dir=parse_cache_dir(config.parse.cache_dir))
        )
        parse_shards = max(parse_shards, 1)
    projections = {
        "parse": parse_seconds(round(words * (1 - parse_cached / parse_shards)), config.parse.workers)
        + min(
            parse_seconds(words, config.parse.workers), 1.0 + documents * parse_cached / parse_shards / 4000
        ),  # the cached shards read back (42,356 full texts' 83 shards: 12 s), never slower than parsing them
        "sample": 5.0 + text_bytes / 100e6,  # one pass over the corpus's and the graphs' Parquet files
        "tokens": TOKENS_FIXED_S
        + words
        * (model_documents / max(documents, 1))
        / TOKENS_WORDS_PER_S
        * scale,  # FastText reads every word it learns from (a full text: 80x an abstract)
        "model": model_s,
        "index": index_seconds(documents, size.nodes["description"], scale),
    }
    teacher_reads = {k: getattr(config.eval, k) for k in ("minilm_max_tokens", "mpnet_max_tokens", "minilm_dtype")}
    keys["model"] = fingerprint(
        "model",
        keys["parse"],
        keys["tokens"],
        route,
        settings(config.model, "model"),
        settings(
            with_overrides(config.train, pretrain_steps=steps), "train"
        ),  # the steps run: a --steps above the cap of passes changes nothing, so it redoes nothing
        teacher_reads,
        settings(config.rank, "rank"),
        config.eval.cutoff,
        config.seed,
    )
    keys["index"] = fingerprint("index", keys["model"], keys["parse"], settings(config.index, "index"))
    for name in (s for s in STEPS if s != "sample" or sampled):
        what = {
            "ingest": f"{documents:,} documents into {layout.corpus}",
            "parse": f"three invention graphs a document into {layout.graphs}"
            + (f" ({parse_cached:,} of its {parse_shards:,} shards in the parse cache)" if parse_cached else ""),
            "sample": f"a seeded uniform {model_documents:,} of the documents, for tokens and model, into {layout.sample} "
            f"(--steps all would read all {documents:,} {max_passes:g} times: {every_steps:,} steps, the model "
            f"step about {duration(whole_s)} here"
            + (
                "; the build began on the sample"
                if kept_sample
                else f" with {whole.teacher} as the teacher"
                if whole.teacher != chosen
                else f", more than the {duration(READ_ALL_WITHIN_S)} the default spends"
                if whole_s > READ_ALL_WITHIN_S
                else ""
            )
            + "; best on a GPU)",
            "tokens": f"BPE + FastText over the {'sample' if sampled else 'corpus'} into {layout.tokens}",
            "model": (
                f"teacher {chosen} over {model_documents:,} documents ({duration(teach)}"
                + (f"; {cached:,} of their vectors cached" if cached else "")
                + ("; bf16 autocast" if teacher_precision_here != "float32" and teach else "")
                + f"), {steps:,} distillation steps ({passes:.1f} passes{'' if gpu else f', {precision} on the CPU'})"
                + (", then the citations and the ranker" if route == "train" else ", no citation")
                + f" into {layout.run}"
            ),
            "index": f"description graphs encoded into {layout.index}",
        }[name]
        plan.steps.append(PlannedStep(name, what, projections.get(name, 0.0), up_to_date(name)))
    for line in plan.lines():
        log(line)
    if read_all_note:
        log(f"  {read_all_note}")
    few = (
        few_passes_warning(steps, model_documents, train_cfg.pretrain_batch_docs, max_passes)
        if route == "adapt"
        else ""
    )
    model_runs_now = not plan_only and STEPS.index(until) >= STEPS.index("model")
    if few and not up_to_date("model") and not model_runs_now:  # when it runs, adapt says it (once, over the graphs)
        log(f"  note: {few}")
    planned_s.update({s.name: s.seconds for s in plan.steps})
    if beside:
        running = next((n for n in STEPS if n in state["steps"] and not state["steps"][n].get("finished")), None)
        log(
            f"  another build is running here ({beside.split(': ', 1)[-1]}){f', now at its {running} step' if running else ''}"
        )
    summary |= {
        "plan": {
            "documents": documents,
            "words": words,
            "route": route,
            "model_documents": model_documents,  # the sample tokens and model read when fewer than documents
            "read_all_by_default": bool(read_all_note),  # a corpus --steps N would sample, read whole by the default
            "distillation_steps": steps,  # the distillation's (or pre-training's), and their passes over model_documents
            "passes": round(passes, 2),
            "citing_documents": queries,
            "teacher": chosen,
            "projected_s": {s.name: round(s.seconds, 1) for s in plan.steps},
        }
    }
    if plan_only or until == "ingest":
        summary["until"] = "plan" if plan_only else until
        return summary

    def do_parse():
        from graphtx.cache_home import writable_parse_cache
        from graphtx.graphs.parse import parse_corpus

        cfg = with_overrides(config.parse, cache_dir=writable_parse_cache(config.parse.cache_dir, log))
        report = parse_corpus(layout.corpus, layout.graphs, cfg, progress=progress)
        return {"graphs": report.graphs, "skipped": report.skipped}

    model_corpus, model_graphs = (  # what tokens and model read
        (layout.sample / "corpus", layout.sample / "graphs") if sampled else (layout.corpus, layout.graphs)
    )

    def do_sample():
        from graphtx.build.sample import draw_sample, graph_document_ids, write_sample

        ids = draw_sample(graph_document_ids(layout.graphs), model_documents, config.seed)
        result = write_sample(layout.corpus, layout.graphs, layout.sample, ids, config.seed)
        log(
            f"sample: {result['documents']:,} of the {result['of']:,} documents (seed {config.seed}) for tokens and model; "
            "every document is indexed"
        )
        return result

    def do_tokens():
        from graphtx.text.pretrain import pretrain

        pretrain([model_corpus], layout.tokens, config.pretrain, seed=config.seed, progress=progress)

    def do_model():
        if route == "adapt":
            from graphtx.train.adapt import adapt

            adapt(
                config,
                str(model_corpus),
                str(model_graphs),
                str(layout.run),
                tokens_dir=str(layout.tokens),
                device=device,
                progress=progress,
            )
            return {"route": "adapt"}
        from graphtx.train.run import train

        result = train(
            config,
            str(layout.corpus),
            str(layout.graphs),
            str(layout.run),
            tokens_dir=str(layout.tokens),
            device=device,
            progress=progress,
        )
        from graphtx.eval.ranker import fit_ranker_after_training
        from graphtx.rank.store import has_ranker

        _, lines = fit_ranker_after_training(
            str(layout.corpus), layout.run, str(layout.graphs), config, progress=progress
        )
        for line in lines:
            log(f"model: {line}")
        return {
            "route": "train",
            "final_stage": result.get("final_stage"),
            "ranker": "learned" if has_ranker(layout.run / "model" / "ranker") else "none",
        }

    def do_index():
        from graphtx.index.build import build_index

        report = build_index(
            layout.run / "model",
            layout.graphs,
            layout.index,
            with_overrides(config.index, bm25=True),
            corpus_dir=layout.corpus,
            seed=config.seed,
            device=device,
            progress=progress,
        )
        return {"documents": report.count}

    for name, work in (
        ("parse", do_parse),
        ("sample", do_sample),
        ("tokens", do_tokens),
        ("model", do_model),
        ("index", do_index),
    ):
        if name == "sample" and not sampled:  # the steps read every document train.adapt_max_passes times: no sample
            if layout.sample.exists():  # an earlier build's sample of other settings is not read again
                shutil.rmtree(layout.sample)
            if state["steps"].pop("sample", None):
                atomic_write_json(state_path, state)
            if until == "sample":
                break
            continue
        step(name, projections[name], work)
        if name == until:
            break
        parsed = parsed_graph_nodes(layout.graphs) if name == "parse" and not graphs_known else {}
        if parsed:  # the graphs are parsed: the model and index steps projected from their sizes, not a guess
            if not up_to_date("model") and STEPS.index(until) >= STEPS.index("model"):
                log(
                    f"model: the parsed graphs average {describe_nodes(parsed, kinds)} nodes "
                    f"(the plan guessed {describe_nodes(size.nodes, kinds)} from the words)"
                )
            nodes = {**size.nodes, **parsed}
            projections["model"] = model_seconds(choice, nodes)
            projections["index"] = index_seconds(documents, nodes["description"], scale)
    if until == "index":
        if sampled and route == "adapt":  # what the sample means for the ranking (benchmarks/results/transfer.md)
            log(
                f"note: the model read {model_documents:,} of the {documents:,} documents and places the others less "
                "well (42,356 software grants adapted on 2,001, three seeds, nDCG@150 against BM25: alone 0.83x over "
                "their full texts, 0.67x over their abstracts; fused with BM25, search's default (hybrid), 0.99x and "
                "0.89x): on that corpus `graphtx search --ranker bm25` searched as well or better. --steps all reads "
                f"every document {max_passes:g} times ({every_steps:,} steps; reading all 42,356 of those abstracts "
                "15 times, taught by mpnet, made graphtx alone 1.54x, 1.23x and 1.63x the sampled build of the same seed, "
                "three seeds, 0.99x, 0.93x and 1.05x BM25, fused 1.13x, 1.06x and 1.12x; on 2 cores with bf16 "
                "1.5-1.6 h of steps at the median step, 2.1-2.7 h as logged), best on a GPU (a distillation step took 0.04 s on one H200, 0.29 s on 2 cores with bf16; the "
                "default reads every document where the plan projects it within an hour); or build the part you "
                "search on its own, which its model reads whole "
                "(2,000 of those abstracts built alone: 1.08x BM25 at nDCG@150, where the large build's model scored "
                "0.82x over the same 2,000, three seeds)"
            )
        # search's default ranker: the learned one when fitted, else RRF of BM25 and the model (search.hybrid)
        log(f"search it:  graphtx search --index {layout.index} --text '1. A ...' --explain")
        log(f"serve it:   graphtx serve --index {layout.index}   (then http://127.0.0.1:{config.serve.port}/)")
    summary["until"] = until
    return summary


def teacher_cached_share(
    config: GraphtxConfig,
    layout: Layout,
    model_documents: int,
    sampled: bool,
    up_to_date: Callable[[str], bool],
    device: str = "cpu",
    counted: dict | None = None,
) -> tuple[int, int]:
    """(documents the teacher ``config.train.pretrain_teacher`` reads, how many of their vectors the peer vector cache
    holds): the sample's once it is drawn; before, the whole corpus's share scaled to the sample. Read only. ``device``:
    where the teacher encodes (its precision decides the namespaces it reads). ``counted``: the counts already made in
    this build, by (teacher, corpus, device) (each reads every text of the corpus and the cache's keys)."""
    from graphtx.train.run_teacher import cached_share

    counted = {} if counted is None else counted

    def share(corpus: Path) -> tuple[int, int]:
        key = (config.train.pretrain_teacher, str(corpus), device)
        if key not in counted:
            counted[key] = cached_share(config, corpus, device)
        return counted[key]

    if sampled and up_to_date("sample"):
        return share(layout.sample / "corpus")
    read, cached = share(layout.corpus)
    if sampled:
        return model_documents, round(cached * model_documents / max(read, 1))
    return read, cached


def cached_shards(corpus_dir: Path, cfg) -> tuple[int, int]:
    """(shards of this parse already in the parse cache, shards in all): what the plan leaves out of the parse's time.
    Read only; (0, shards) without a cache. (Here, not in graphtx/graphs/: the parse's own code is part of its cache key.)"""
    from graphtx.corpus.store import count_documents
    from graphtx.graphs.parse import cache_folder, parse_fingerprint
    from graphtx.shards import ShardJournal, plan_shards

    shards = len(plan_shards(count_documents(corpus_dir), cfg.shard_size))
    folder = cache_folder(corpus_dir, cfg) if cfg.cache_dir else None
    if folder is None or not folder.is_dir():
        return 0, shards
    return len(ShardJournal(folder, parse_fingerprint(corpus_dir, cfg)).peek()), shards


def parsed_graph_nodes(graphs: Path) -> dict[str, float]:
    """Mean nodes of each kind of the parsed graphs, as the parse's manifest records them ({} when it cannot be read:
    a projection only; the model step names a damaged graphs directory itself)."""
    from graphtx import integrity
    from graphtx.atomic import MANIFEST_FILE

    try:
        manifest = integrity.read_manifest(graphs / MANIFEST_FILE, what="graphs directory", mend="") or {}
        return {str(k): float(v) for k, v in (manifest.get("mean_nodes") or {}).items()}
    except (integrity.IntegrityError, OSError, ValueError, AttributeError, TypeError):
        return {}


def describe_nodes(nodes: dict[str, float], kinds: tuple[str, ...]) -> str:
    """ "13 + 83 (first_claim + description)" or "35 (description)": the mean nodes of the graphs a step reads."""
    unique = tuple(dict.fromkeys(kinds))
    return f"{' + '.join(f'{nodes.get(k, 0.0):.0f}' for k in unique)} ({' + '.join(unique)})"


def machine_load() -> float:
    """The 1-minute load average (0.0 where the system has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):  # no getloadavg (Windows), or none available
        return 0.0
