"""Prototype extra features over cached pools: term-set, bigram and invention-graph node matches.
Writes extra-features.pkl: {"names": [...], "fn": per (query row, candidate rows) -> (n, F)} computed for every
(query row, pool) of the cached pools of all seeds."""

import math
import pickle
from collections import Counter, defaultdict

import numpy as np
import pyarrow.parquet as pq

from graphtx.config import load_config
from graphtx.eval.baselines import LexicalTokens
from graphtx.eval.data import EvalCorpus

config = load_config(None)
cfg = config.eval
corpus = EvalCorpus.load("/work/exp/ev/corpus", cfg)
tok = LexicalTokens(cfg.stopwords, cfg.stemmer)
N = len(corpus)
qtok = tok(corpus.query_texts)
ctok = tok(corpus.candidate_texts)


def bigrams(ts):
    return {(a, b) for a, b in zip(ts, ts[1:])}


# unigram sets and IDF over candidate texts
c_uni = [set(t) for t in ctok]
q_uni = [set(t) for t in qtok]
df = Counter(w for s in c_uni for w in s)


def _idf(counts, key):
    return math.log(1 + (N - counts.get(key, 0) + 0.5) / (counts.get(key, 0) + 0.5))


def idf(w):
    return _idf(df, w)


c_bi = [bigrams(t) for t in ctok]
q_bi = [bigrams(t) for t in qtok]
dfb = Counter(b for s in c_bi for b in s)


def idfb(b):
    return _idf(dfb, b)


c_str = [" " + " ".join(t) + " " for t in ctok]

# graph nodes (feature nodes), stemmed phrase keys
g = pq.read_table("/work/exp/ev/graphs/graphs.parquet", columns=["doc_id", "kind", "node_text", "node_type"]).to_pylist()
nodes = {"first_claim": defaultdict(set), "description": defaultdict(set)}
for r in g:
    if r["kind"] not in nodes:
        continue
    texts = [t for t, ty in zip(r["node_text"], r["node_type"]) if ty == "feature"]
    keys = tok(texts) if texts else []
    nodes[r["kind"]][r["doc_id"]] |= {" ".join(k) for k in keys if k}
qn = [nodes[cfg.query_kind].get(d, set()) for d in corpus.ids]
cn = [nodes[cfg.candidate_kind].get(d, set()) for d in corpus.ids]
dfn = Counter(k for s in cn for k in s)


def idfn(k):
    return _idf(dfn, k)


c_heads = [{k.split()[-1] for k in s} for s in cn]

NAMES = [
    "tfidf_cos",
    "cand_terms_in_query_idf_share",
    "bigrams_matched",
    "bigram_idf_share",
    "nodes_matched",
    "node_idf_share",
    "node_phrase_in_text_idf_share",
    "node_multiword_in_text",
    "node_head_share",
]


def feats(qrow, cands):
    out = np.zeros((len(cands), len(NAMES)))
    qs = q_uni[qrow]
    qw = {w: idf(w) for w in qs}
    qnorm = math.sqrt(sum(v * v for v in qw.values())) or 1
    qb = {b: idfb(b) for b in q_bi[qrow]}
    qbsum = sum(qb.values()) or 1
    qk = {k: idfn(k) for k in qn[qrow]}
    qksum = sum(qk.values()) or 1
    multi = [k for k in qk if " " in k]
    multisum = sum(qk[k] for k in multi) or 1
    heads = {k.split()[-1] for k in qk}
    for j, c in enumerate(cands):
        cs = c_uni[c]
        inter = qs & cs
        cw2 = sum(idf(w) ** 2 for w in cs)
        out[j, 0] = sum(qw[w] ** 2 for w in inter) / (qnorm * (math.sqrt(cw2) or 1))
        csum = sum(idf(w) for w in cs) or 1
        out[j, 1] = sum(idf(w) for w in inter) / csum
        mb = [b for b in qb if b in c_bi[c]]
        out[j, 2] = len(mb)
        out[j, 3] = sum(qb[b] for b in mb) / qbsum
        mk = [k for k in qk if k in cn[c]]
        out[j, 4] = len(mk)
        out[j, 5] = sum(qk[k] for k in mk) / qksum
        inside = [k for k in multi if f" {k} " in c_str[c]]
        out[j, 6] = sum(qk[k] for k in inside) / multisum if multi else np.nan
        out[j, 7] = len(inside)
        out[j, 8] = len(heads & c_heads[c]) / len(heads) if heads else np.nan
    return out


res = {"names": NAMES}
for seed in (0, 1, 2):
    pools = pickle.load(open(f"/work/exp/lead/feat/pools-s{seed}.pkl", "rb"))
    for split in ("train", "valid"):
        p = pools[split]
        res[(seed, split)] = [feats(int(r), np.asarray(c)) for r, c in zip(p["rows"], p["pools"])]
    print("seed", seed, "done", flush=True)
pickle.dump(res, open("/work/exp/lead/feat/extra.pkl", "wb"))
