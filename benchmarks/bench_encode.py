"""Encode speed of graphtx against a BERT-base-sized text encoder, on real US grants.

Backs the claim in benchmarks/results/speed-encode.md "Encode": graphs encoded per second on this CPU for
first-claim and description graphs (small and paper configs) with peak memory, side by side
with a 512-token BERT-base-shaped transformer encoding the same documents' text, chunked as
such a model must be; ratio documents/s graphtx ÷ text encoder (target >= 10x).

    python benchmarks/bench_encode.py --grants ../shared/data/uspto-grants [--limit 100]
    python benchmarks/bench_encode.py --graphs GRAPHS_DIR --corpus CORPUS_DIR [--tokens TOKENS_DIR]

With ``--grants`` the grants are ingested and the selected documents parsed (``ingest`` and
``parse_corpus``, both kinds, one worker per core) into a temporary folder; the parse time is
printed for the end-to-end reading but is not part of the encode rates. Graph rates include
``collate`` (tokenising every node text), not reading the graphs from Parquet.

The text encoder is randomly initialised (speed does not depend on the weights): 12 layers,
hidden 768, 12 heads, FFN 3072, GELU, post-LN, 512 positions, vocabulary 30522, built from
``torch.nn.TransformerEncoder``. Its input is the text each graph was built from
(``plan_texts``): the first claim, or all claims + description. WordPiece is stood in for by a
BPE tokenizer trained on the corpus (lower-cased, punctuation split, like bert-base-uncased)
with BERT's vocabulary size; on the 371 shared grants bert-base-uncased's own WordPiece gives about
10% more tokens than this BPE (first claims 97 vs 88, claims + description 3615 vs 3320 per grant;
measured once, with the tokenizer.json of all-MiniLM-L6-v2), so the text-encoder rates here are, if
anything, slightly flattering. Documents are cut into non-overlapping windows of 510 tokens +
[CLS] + [SEP]; "chunked" encodes every window, "first chunk" only the first (truncation).
Documents/s counts tokenising, chunking and the forward passes.

Every measurement runs in a fresh subprocess so its peak RSS is its own. Run it on an idle
machine: with every core given to torch, one other busy process stalls the many small ops of a
graph batch at each thread barrier (the small model ran 10x slower beside two niced jobs).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import cpu_model
from memory import peak_mib, rss_mib

BERT = dict(vocab=30522, hidden=768, layers=12, heads=12, ffn=3072, positions=512)  # bert-base-uncased shapes
CLS_ID, SEP_ID = 101, 102  # any ids: only the shapes matter
GRAPH_TEXT = {"first_claim": "first claim", "description": "claims + description"}


# --- machine and helpers -----------------------------------------------------------


def machine(threads: int) -> str:
    import tokenizers
    import torch

    cpu = cpu_model()
    return (
        f"{cpu}; {os.cpu_count()} cores; Python {platform.python_version()}; torch {torch.__version__} "
        f"({torch.backends.cpu.get_cpu_capability()}); tokenizers {tokenizers.__version__}; torch threads {threads}; "
        f"load average (1 min) at the start {os.getloadavg()[0]:.2f}"
    )


def select_documents(corpus: Path, limit: int) -> list:
    """The first ``limit`` documents with claims, in corpus (= file) order: utility and design grants."""
    from graphtx.corpus.store import iter_documents

    docs = [d for d in iter_documents(corpus) if d.claims]
    return docs[:limit] if limit else docs


def evenly_spaced(items: list, k: int) -> list:
    """``k`` items spread over the whole list (not the first k: they may be atypically long or short)."""
    if not k or k >= len(items):
        return list(items)
    return [items[i * len(items) // k] for i in range(k)]


# --- the BERT-base-shaped peer -------------------------------------------------------


def bert_base():
    import torch
    from torch import nn

    class BertBaseShaped(nn.Module):
        """Embeddings (word + position + segment, LayerNorm) → 12 post-LN blocks → tanh pooler on [CLS]."""

        def __init__(self, vocab: int, hidden: int, layers: int, heads: int, ffn: int, positions: int):
            super().__init__()
            self.word = nn.Embedding(vocab, hidden, padding_idx=0)
            self.position = nn.Embedding(positions, hidden)
            self.segment = nn.Embedding(2, hidden)
            self.ln = nn.LayerNorm(hidden, eps=1e-12)
            block = nn.TransformerEncoderLayer(
                hidden,
                heads,
                ffn,
                dropout=0.1,
                activation="gelu",
                layer_norm_eps=1e-12,
                batch_first=True,
                norm_first=False,
            )
            self.encoder = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
            self.pooler = nn.Linear(hidden, hidden)

        def forward(self, ids: torch.Tensor, padding: torch.Tensor) -> torch.Tensor:
            """(b, L) ids, (b, L) True at padding → (b, hidden)."""
            positions = torch.arange(ids.size(1), device=ids.device)  # (L,)
            x = self.ln(self.word(ids) + self.position(positions) + self.segment.weight[0])  # (b, L, hidden)
            x = self.encoder(x, src_key_padding_mask=padding)  # (b, L, hidden)
            return torch.tanh(self.pooler(x[:, 0]))  # (b, hidden)

    return BertBaseShaped(**BERT)


def chunk(ids: list[int], first_only: bool) -> list[list[int]]:
    """[CLS] + 510 tokens + [SEP] windows, no overlap; a document without tokens still makes one window."""
    body = BERT["positions"] - 2
    ids = [i % BERT["vocab"] for i in ids]  # a tokenizer larger than BERT's table: same cost
    windows = [ids[i : i + body] for i in range(0, max(len(ids), 1), body)]
    return [[CLS_ID, *w, SEP_ID] for w in (windows[:1] if first_only else windows)]


def bert_pass(model, tokenizer, texts: list[str], batch_size: int, first_only: bool, bf16: bool) -> int:
    """Tokenise, chunk and encode ``texts``; chunks batched across documents, longest first; returns chunks."""
    import torch

    chunks = [c for ids in tokenizer.encode_batch(texts) for c in chunk(ids, first_only)]
    chunks.sort(key=len, reverse=True)  # little padding inside a batch
    with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        for i in range(0, len(chunks), batch_size):
            batch = chunks[i : i + batch_size]
            longest = len(batch[0])
            ids = torch.zeros(len(batch), longest, dtype=torch.long)  # (b, L)
            for row, c in enumerate(batch):
                ids[row, : len(c)] = torch.tensor(c)
            model(ids, ids == 0)
    return len(chunks)


# --- measurement jobs (each in its own process) --------------------------------------


def timed(run, min_seconds: float) -> tuple[float, int]:
    """Repeat ``run()`` until ``min_seconds`` have passed (at least once); (seconds, passes)."""
    passes, start = 0, time.perf_counter()
    while True:
        run()
        passes += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            return elapsed, passes


def job_graph(spec: dict) -> dict:
    import torch

    from graphtx.graphs.parse import iter_graphs
    from graphtx.model import PRESETS, GraphEncoder
    from graphtx.text.bpe import PatentTokenizer

    torch.set_num_threads(spec["threads"])
    tokenizer = PatentTokenizer.load(spec["tokens"])
    order = {doc_id: i for i, doc_id in enumerate(spec["ids"])}
    graphs = sorted(iter_graphs(spec["graphs"], spec["kind"], set(order)), key=lambda g: order[g.doc_id])
    config = PRESETS[spec["config"]](vocab_size=spec["vocab_size"])
    rss_data = rss_mib()
    model = GraphEncoder(config, seed=0).eval()
    rss_model = rss_mib()
    batch_size = spec["batch_size"]
    model.encode(graphs[:8], tokenizer, batch_size)  # warm-up: allocator, kernels
    seconds, passes = timed(lambda: model.encode(graphs, tokenizer, batch_size), spec["min_seconds"])
    return {
        "docs": len(graphs),
        "seconds": seconds,
        "passes": passes,
        "params": model.num_parameters(),
        "mean_nodes": sum(g.num_nodes for g in graphs) / max(len(graphs), 1),
        "mean_edges": sum(g.num_edges for g in graphs) / max(len(graphs), 1),
        "rss_data_mib": rss_data,
        "rss_model_mib": rss_model,
        "peak_mib": peak_mib(),
    }


def job_text(spec: dict) -> dict:
    import torch

    from graphtx.text.bpe import PatentTokenizer

    torch.set_num_threads(spec["threads"])
    tokenizer = PatentTokenizer.load(spec["tokens"])
    texts = spec["texts"]
    rss_data = rss_mib()
    torch.manual_seed(0)
    model = bert_base().eval()
    rss_model = rss_mib()
    tokens = [len(ids) for ids in tokenizer.encode_batch(texts)]
    bert_pass(model, tokenizer, texts[:1], spec["batch_size"], True, spec["bf16"])  # warm-up
    chunks = []
    seconds, passes = timed(
        lambda: chunks.append(bert_pass(model, tokenizer, texts, spec["batch_size"], spec["first_only"], spec["bf16"])),
        spec["min_seconds"],
    )
    return {
        "docs": len(texts),
        "seconds": seconds,
        "passes": passes,
        "params": sum(p.numel() for p in model.parameters()),
        "mean_tokens": sum(tokens) / max(len(tokens), 1),
        "mean_chunks": chunks[0] / max(len(texts), 1),
        "rss_data_mib": rss_data,
        "rss_model_mib": rss_model,
        "peak_mib": peak_mib(),
    }


def job_bf16_probe(spec: dict) -> dict:
    """Seconds per (batch, 512) forward in fp32 and under bf16 autocast, best of 2 after a warm-up."""
    import torch

    torch.set_num_threads(spec["threads"])
    torch.manual_seed(0)
    model = bert_base().eval()
    ids = torch.randint(1000, BERT["vocab"], (spec["batch_size"], BERT["positions"]))  # (b, 512)
    out = {}
    for name, bf16 in (("fp32", False), ("bf16", True)):
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            model(ids, ids == 0)
            best = float("inf")
            for _ in range(2):
                start = time.perf_counter()
                model(ids, ids == 0)
                best = min(best, time.perf_counter() - start)
        out[name] = best
    return out


def job_baseline(spec: dict) -> dict:
    """RSS of a process that imported torch and graphtx's model and loaded a tokenizer, and nothing else."""
    import torch  # noqa: F401

    from graphtx.model import GraphEncoder  # noqa: F401
    from graphtx.text.bpe import PatentTokenizer

    PatentTokenizer.load(spec["tokens"])
    return {"rss_mib": rss_mib(), "peak_mib": peak_mib()}


JOBS = {"graph": job_graph, "text": job_text, "bf16_probe": job_bf16_probe, "baseline": job_baseline}


def run_job(kind: str, spec: dict, tmp: Path) -> dict:
    path = tmp / f"job_{time.monotonic_ns()}.json"
    path.write_text(json.dumps({"job": kind, **spec}))
    threads = str(spec.get("threads", os.cpu_count()))
    env = {**os.environ, "OMP_NUM_THREADS": threads, "RAYON_RS_NUM_CPUS": threads, "RAYON_NUM_THREADS": threads}
    res = subprocess.run([sys.executable, __file__, "--job", str(path)], capture_output=True, text=True, env=env)
    if res.returncode:
        sys.stderr.write(res.stderr)
        raise SystemExit(f"{kind} job failed ({res.returncode})")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --- preparation: corpus, graphs, tokenizers -----------------------------------------


def prepare_grants(grants: str, limit: int, tmp: Path) -> tuple[Path, Path, Path, float]:
    """Ingest all grants; parse the selected ones. Returns (corpus of all, graphs, selected corpus, parse seconds)."""
    from graphtx.config import IngestConfig, ParseConfig
    from graphtx.corpus.ingest import ingest
    from graphtx.corpus.store import CorpusWriter
    from graphtx.graphs.parse import parse_corpus

    workers = os.cpu_count() or 1
    everything = tmp / "corpus-all"
    ingest([grants], everything, IngestConfig(workers=workers), progress=False)
    selected = tmp / "corpus"
    with CorpusWriter(selected) as writer:
        for doc in select_documents(everything, limit):
            writer.add_document(doc, (), doc.source_file, "")
    start = time.perf_counter()
    parse_corpus(
        selected, tmp / "graphs", ParseConfig(kinds=("first_claim", "description"), workers=workers), progress=False
    )
    return everything, tmp / "graphs", selected, time.perf_counter() - start


def train_tokenizer(corpus: Path, vocab_size: int, out: Path) -> int:
    """BPE on the corpus texts (the pretrain stage's texts and settings); saved to ``out``."""
    from graphtx.config import PretrainConfig
    from graphtx.corpus.store import iter_documents
    from graphtx.text.bpe import train_bpe
    from graphtx.text.pretrain import document_texts

    cfg = PretrainConfig()
    texts = (t for d in iter_documents(corpus) for t in document_texts(d, cfg.max_chars_per_document))
    tokenizer = train_bpe(texts, vocab_size, cfg.min_frequency)
    tokenizer.save(out)
    return tokenizer.vocab_size


# --- main ----------------------------------------------------------------------------


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--grants", help="folder of USPTO grant XML files: ingested and parsed into a temporary folder")
    ap.add_argument("--graphs", type=Path, help="graphs directory of an existing parse (with --corpus)")
    ap.add_argument("--corpus", type=Path, help="corpus directory the --graphs were parsed from")
    ap.add_argument("--limit", type=int, default=100, help="first N documents with claims, in file order (0 = all)")
    ap.add_argument(
        "--tokens", type=Path, help="tokens directory (graphtx pretrain); default: train BPE on the corpus here"
    )
    ap.add_argument("--threads", type=int, default=os.cpu_count(), help="torch threads (default: all cores)")
    ap.add_argument("--configs", nargs="+", default=["small", "paper"], choices=["small", "paper"])
    ap.add_argument("--kinds", nargs="+", default=list(GRAPH_TEXT), choices=list(GRAPH_TEXT))
    ap.add_argument("--batch-size", type=int, default=64, help="graphs per encode batch")
    ap.add_argument("--text-batch-size", type=int, default=8, help="512-token chunks per text-encoder batch")
    ap.add_argument(
        "--text-limit",
        type=int,
        default=20,
        help="documents the text encoder reads for the chunked claims + description row, spread over the selection (0 = all)",
    )
    ap.add_argument("--min-seconds", type=float, default=3.0, help="repeat a measurement until it has run this long")
    ap.add_argument(
        "--bf16",
        choices=["auto", "on", "off"],
        default="auto",
        help="text-encoder bf16 rows: auto = only if faster in a probe",
    )
    ap.add_argument("--job", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.job:
        spec = json.loads(Path(args.job).read_text())
        print(json.dumps(JOBS[spec.pop("job")](spec)))
        return 0
    if not args.grants and not (args.graphs and args.corpus):
        ap.error("give --grants, or --graphs with --corpus")

    from graphtx.config import ParseConfig
    from graphtx.graphs.builder import plan_texts
    from graphtx.graphs.parse import iter_graphs
    from graphtx.model import PRESETS

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        parse_seconds = None
        if args.grants:
            everything, graphs_dir, corpus, parse_seconds = prepare_grants(args.grants, args.limit, tmp)
        else:
            everything, graphs_dir, corpus = args.corpus, args.graphs, args.corpus
        docs = select_documents(corpus, args.limit)
        with_graphs = [{g.doc_id for g in iter_graphs(graphs_dir, kind)} for kind in args.kinds]
        without = [d.id for d in docs if not all(d.id in have for have in with_graphs)]
        docs = [
            d for d in docs if d.id not in without
        ]  # a graph without nodes is not written: both sides skip the document
        ids = [d.id for d in docs]

        # tokenizers: one per vocabulary size (the graph model's table, BERT's 30522)
        vocab = {}
        if args.tokens:
            from graphtx.text.bpe import PatentTokenizer

            size = PatentTokenizer.load(args.tokens).vocab_size
            vocab = {name: (args.tokens, size) for name in (*args.configs, "bert")}
        else:
            wanted = {name: PRESETS[name]().vocab_size for name in args.configs} | {"bert": BERT["vocab"]}
            trained = {}
            for name, size in wanted.items():
                if size not in trained:
                    trained[size] = (tmp / f"tokens-{size}", train_tokenizer(everything, size, tmp / f"tokens-{size}"))
                vocab[name] = (trained[size][0], size)  # the table keeps the config's size even when BPE stops short

        print(f"machine: {machine(args.threads)}")
        design = sum(d.id.startswith("US-D") for d in docs)
        left_out = f"; {len(without)} left out, a graph missing" if without else ""
        print(
            f"documents: {len(docs)} with claims, file order ({len(docs) - design} utility, {design} design{left_out}); "
            f"graph batch {args.batch_size}; text batch {args.text_batch_size} chunks of <= {BERT['positions']} tokens"
        )
        if args.tokens:
            print(f"tokenizer: {args.tokens} (vocab {vocab['bert'][1]}) for every model")
        else:
            print(
                "tokenizers: BPE trained here on the corpus texts, "
                + ", ".join(f"{n} vocab {tokenizer_size(p)}" for n, (p, _) in vocab.items())
                + " (embedding tables keep the config's size)"
            )
        if parse_seconds is not None:
            print(
                f"parse (not in the encode rates): {len(docs)} docs, both graph kinds, {os.cpu_count()} workers incl. their start-up: "
                f"{parse_seconds:.1f} s = {len(docs) / parse_seconds:.2f} docs/s"
            )
        print()

        # --- measurements, each in its own process ---
        common = {"threads": args.threads, "min_seconds": args.min_seconds}
        baseline = run_job("baseline", {"tokens": str(vocab["bert"][0])}, tmp)
        graph_rows = {}
        for name in args.configs:
            for kind in args.kinds:
                spec = {
                    **common,
                    "graphs": str(graphs_dir),
                    "kind": kind,
                    "ids": ids,
                    "config": name,
                    "tokens": str(vocab[name][0]),
                    "vocab_size": vocab[name][1],
                    "batch_size": args.batch_size,
                }
                graph_rows[name, kind] = run_job("graph", spec, tmp)
        probe, bf16_modes = None, [False]
        if args.bf16 != "off":
            probe = run_job("bf16_probe", {**common, "batch_size": 1}, tmp)
            if args.bf16 == "on" or probe["bf16"] < probe["fp32"]:
                bf16_modes.append(True)
        text_rows = {}
        plans = [plan_texts(d, ParseConfig()) for d in docs]
        for kind in args.kinds:
            texts = [
                "\n".join(t for t, feeds in zip(plan.texts, plan.feeds) if kind in feeds) for plan in plans
            ]  # what the graph was built from
            for bf16 in bf16_modes:
                for first_only in (False, True):
                    long_run = kind == "description" and not first_only
                    spec = {
                        **common,
                        "tokens": str(vocab["bert"][0]),
                        "texts": evenly_spaced(texts, args.text_limit) if long_run else texts,
                        "batch_size": args.text_batch_size,
                        "first_only": first_only,
                        "bf16": bf16,
                    }
                    text_rows[kind, first_only, bf16] = run_job("text", spec, tmp)

    return report(args, docs, graph_rows, text_rows, bf16_modes, probe, baseline, parse_seconds)


def tokenizer_size(path: Path) -> int:
    from graphtx.text.bpe import PatentTokenizer

    return PatentTokenizer.load(path).vocab_size


def report(args, docs, graph_rows, text_rows, bf16_modes, probe, baseline, parse_seconds) -> int:
    def rate(r: dict) -> float:
        return r["docs"] * r["passes"] / r["seconds"]

    chunked = {kind: rate(text_rows[kind, False, False]) for kind in args.kinds}
    first = {kind: rate(text_rows[kind, True, False]) for kind in args.kinds}
    print(
        "| encoder | config | graph kind / text | docs | mean nodes or tokens | docs/s | peak RSS MiB | ratio vs BERT-base (chunked) | ratio vs BERT-base (first chunk only) |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for (name, kind), r in graph_rows.items():
        print(
            f"| graphtx | {name} | {kind} graph | {r['docs']} | {r['mean_nodes']:.1f} nodes, {r['mean_edges']:.1f} edges | "
            f"{rate(r):.1f} | {r['peak_mib']:.0f} | {rate(r) / chunked[kind]:.1f}× | {rate(r) / first[kind]:.1f}× |"
        )
    for kind in args.kinds:
        for bf16 in bf16_modes:
            for first_only in (False, True):
                r = text_rows[kind, first_only, bf16]
                how = "first chunk only" if first_only else "chunked"
                n = f"{r['docs']}" if r["docs"] == len(docs) else f"{r['docs']} of {len(docs)}, spread"
                print(
                    f"| BERT-base-shaped{' bf16' if bf16 else ''} | 12×768, 512 | {GRAPH_TEXT[kind]} text, {how} | {n} | "
                    f"{r['mean_tokens']:.0f} tokens, {r['mean_chunks']:.2f} chunks | {rate(r):.3f} | {r['peak_mib']:.0f} | "
                    f"{rate(r) / chunked[kind]:.2f}× | {rate(r) / first[kind]:.2f}× |"
                )
    print()
    print("| model | parameters | RSS after loading the data MiB | RSS after building the model MiB |")
    print("|---|---|---|---|")
    for (name, kind), r in graph_rows.items():
        if kind == args.kinds[0]:
            print(f"| graphtx {name} | {r['params']:,} | {r['rss_data_mib']:.0f} | {r['rss_model_mib']:.0f} |")
    r = text_rows[args.kinds[0], False, False]
    print(f"| BERT-base-shaped | {r['params']:,} | {r['rss_data_mib']:.0f} | {r['rss_model_mib']:.0f} |")
    print()
    print(
        f"peak RSS: the measuring process's maximum (imports, data, model, encoding); a process with torch + graphtx imported and "
        f"a tokenizer loaded, nothing else: RSS {baseline['rss_mib']:.0f} MiB, peak {baseline['peak_mib']:.0f} MiB"
    )
    if "description" in args.kinds:
        part, whole = text_rows["description", False, False], text_rows["description", True, False]
        if part["docs"] < whole["docs"]:
            print(
                f"BERT-base-shaped, claims + description chunked: {part['docs']} of {whole['docs']} documents, evenly spread "
                f"(--text-limit), mean {part['mean_tokens']:.0f} tokens vs {whole['mean_tokens']:.0f} over all {whole['docs']}; "
                f"docs/s is what those {part['docs']} took"
            )
    if probe:
        verdict = "bf16 rows shown" if True in bf16_modes else "bf16 rows left out (slower here)"
        print(
            f"bf16 probe (BERT-base-shaped, 1×512 tokens, best of 2): fp32 {probe['fp32']:.2f} s, bf16 autocast {probe['bf16']:.2f} s: {verdict}"
        )
    if parse_seconds is not None and set(args.kinds) == set(GRAPH_TEXT):
        parse_rate = len(docs) / parse_seconds
        bert = 1 / sum(1 / chunked[k] for k in args.kinds)
        for name in args.configs:
            graphtx = 1 / (1 / parse_rate + sum(1 / rate(graph_rows[name, k]) for k in args.kinds))
            print(
                f"end to end, both graphs of a document, {name}: parse + encode {graphtx:.2f} docs/s vs BERT-base-shaped chunked, "
                f"both texts, {bert:.3f} docs/s: {graphtx / bert:.1f}×"
            )
    print(f"load average (1 min) at the end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
