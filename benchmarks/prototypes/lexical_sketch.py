"""Lexical channel experiment: IDF-weighted bag of stems from invention-graph node texts, exact and count-sketched,
alone and concatenated with the graph model's vector (weight fitted on held-out training queries)."""

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import scipy.sparse as sp

from graphtx.config import load_config
from graphtx.corpus.citations import read_citations
from graphtx.eval.baselines import BM25System, LexicalTokens
from graphtx.eval.data import EvalCorpus, judgements
from graphtx.eval.systems import ModelSystem

RUNS = {0: "/work/exp/ranker/runs/hold-s0", 1: "/work/exp/lead/rk/hold-s1-run", 2: "/work/exp/lead/rk/hold-s2-run"}
V = "/work/shared/data/citations-ev-battery/citations_validation.tsv"
config = load_config(None)
cfg = config.eval
corpus = EvalCorpus.load("/work/exp/ev/corpus", cfg)
N = len(corpus)
tok = LexicalTokens(cfg.stopwords, cfg.stemmer)
SRC = sys.argv[1] if len(sys.argv) > 1 else "graph"
if SRC == "graph":
    g = pq.read_table("/work/exp/ev/graphs/graphs.parquet", columns=["doc_id", "kind", "node_text"]).to_pylist()
    texts = {"first_claim": {}, "description": {}}
    for r in g:
        if r["kind"] in texts:
            texts[r["kind"]][r["doc_id"]] = " . ".join(r["node_text"])
    qtok = tok([texts[cfg.query_kind].get(d, "") for d in corpus.ids])
    ctok = tok([texts[cfg.candidate_kind].get(d, "") for d in corpus.ids])
elif SRC == "bpe":
    from graphtx.text.pretrain import load_tokens

    btok, _ = load_tokens("/work/exp/ev/tokens")
    g = pq.read_table("/work/exp/ev/graphs/graphs.parquet", columns=["doc_id", "kind", "node_text"]).to_pylist()
    bags = {"first_claim": {}, "description": {}}
    for r in g:
        if r["kind"] in bags:
            bags[r["kind"]][r["doc_id"]] = [str(t) for ids in btok.encode_batch(list(r["node_text"])) for t in ids] if r["node_text"] else []
    qtok = [bags[cfg.query_kind].get(d, []) for d in corpus.ids]
    ctok = [bags[cfg.candidate_kind].get(d, []) for d in corpus.ids]
else:
    qtok = tok(corpus.query_texts)
    ctok = tok(corpus.candidate_texts)
vocab = {}
for ts in ctok + qtok:
    for t in ts:
        vocab.setdefault(t, len(vocab))


def mat(toks):
    rows, cols, vals = [], [], []
    for i, ts in enumerate(toks):
        for t, c in Counter(ts).items():
            rows.append(i)
            cols.append(vocab[t])
            vals.append(1 + math.log(c))
    return sp.csr_matrix((vals, (rows, cols)), shape=(len(toks), len(vocab)))


C = mat(ctok)
Q = mat(qtok)
df = np.asarray((C > 0).sum(0)).ravel()
idf = np.log(1 + (N - df + 0.5) / (df + 0.5))


def norm(m):
    m = m @ sp.diags(idf)
    n = np.sqrt(np.asarray(m.multiply(m).sum(1)).ravel())
    n[n == 0] = 1
    return sp.diags(1 / n) @ m


Cn, Qn = norm(C), norm(Q)


def sketch(m, D, seed=0):
    rng = np.random.default_rng(seed)
    V = m.shape[1]
    bucket = rng.integers(0, D, V)
    sign = rng.choice([-1.0, 1.0], V)
    P = sp.csr_matrix((sign, (np.arange(V), bucket)), shape=(V, D))
    x = np.asarray((m @ P).todense())
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def metrics(S, rows, judged):
    """S (q, N) scores; micro R@3, mean nDCG@150; self excluded."""
    hits = pairs = 0
    nds = []
    for i, r in enumerate(rows):
        s = S[i].astype(np.float64).copy()
        s[r] = -np.inf
        top = np.lexsort((np.arange(N), -s))[:150]
        rel = judged.relevant[judged.query_ids[i]]
        relrows = {corpus.position[d] for d in rel}
        g = np.array([1.0 if t in relrows else 0.0 for t in top])
        hits += g[:3].sum()
        pairs += len(rel)
        ideal = sum(1 / math.log2(k + 2) for k in range(min(len(rel), 150)))
        nds.append(sum(x / math.log2(k + 2) for k, x in enumerate(g) if x) / ideal)
    return hits / pairs, float(np.mean(nds))


vj = judgements(read_citations(V), corpus, cfg)
vrows = corpus.rows(vj.query_ids)
bm = BM25System.from_config(cfg).fit(corpus)
b3, bn = metrics(bm.scores(vrows), vrows, vj)
print(f"[{SRC}] BM25 {b3:.4f} {bn:.4f}")
L_exact = np.asarray((Qn[vrows] @ Cn.T).todense())
r3, nd = metrics(L_exact, vrows, vj)
print(f"[{SRC}] lexical exact: {r3:.4f} ({r3 / b3:.2f}x) {nd:.4f} ({nd / bn:.2f}x)", flush=True)
for D in (256, 512, 1024, 2048):
    Cs, Qs = sketch(Cn, D), sketch(Qn, D)
    r3, nd = metrics(Qs[vrows] @ Cs.T, vrows, vj)
    print(f"[{SRC}] lexical sketch D={D}: {r3:.4f} ({r3 / b3:.2f}x) {nd:.4f} ({nd / bn:.2f}x)", flush=True)
seeds = [int(s) for s in sys.argv[2].split(",")] if len(sys.argv) > 2 else [0]
Dk = int(sys.argv[3]) if len(sys.argv) > 3 else 1024
Cs, Qs = sketch(Cn, Dk), sketch(Qn, Dk)
for seed in seeds:
    run = Path(RUNS[seed])
    dense = ModelSystem(run / "model", "/work/exp/ev/graphs", cfg.query_kind, cfg.candidate_kind, cfg.batch_size).fit(corpus)
    tj = judgements(read_citations(run / "ranker_citations.tsv"), corpus, cfg)
    trows = corpus.rows(tj.query_ids)
    Dt, Dv = np.asarray(dense.scores(trows)), np.asarray(dense.scores(vrows))
    Lt, Lv = Qs[trows] @ Cs.T, Qs[vrows] @ Cs.T
    best = max(((metrics((1 - b) * Dt + b * Lt, trows, tj)[1], b) for b in np.linspace(0, 1, 11)))
    b = best[1]
    d3, dn = metrics(Dv, vrows, vj)
    r3, nd = metrics((1 - b) * Dv + b * Lv, vrows, vj)
    print(
        f"[{SRC}] seed {seed}: dense {d3:.4f} ({d3 / b3:.2f}x) {dn:.4f} ({dn / bn:.2f}x); concat D={Dk} beta={b:.1f} (train nDCG {best[0]:.3f}): {r3:.4f} ({r3 / b3:.2f}x) {nd:.4f} ({nd / bn:.2f}x)",
        flush=True,
    )
