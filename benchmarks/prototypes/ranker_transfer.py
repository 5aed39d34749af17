"""Cross-topic transfer of the learned ranker: the nearest check here of "a ranker fitted on one field must not
fall below BM25 on another" (the EV-battery set is the only citation set we have).

The EV corpus is split into K topics (TF-IDF of title + abstract over 6-letter word prefixes, spherical k-means,
fixed seed; no citation is used). For each topic T and each of the three hold-out seeds the learned ranker is
fitted on the held-out *training* queries outside T and scored on the *validation* queries inside T, against
BM25 on the same queries, the ranker fitted on all held-out training queries (in-domain), and one fitted on a
random in-domain subset of the same size as the cross-topic fit (separates "fewer fit queries" from "another
topic"). Reads the pools cached by ranker_cache.py (TAG=-lex by default: the models with the lexical channel).

    PYTHONPATH=. python benchmarks/prototypes/ranker_transfer.py [K]
"""

import math
import os
import pickle
import re
import sys
from collections import Counter

import faiss
import numpy as np
import pandas as pd

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("TAG", "-lex")
import ranker_exp as rx  # noqa: E402

from graphtx.rank.learned import fit_lambdarank  # noqa: E402

K = int(sys.argv[1]) if len(sys.argv) > 1 else 3
docs = pd.read_parquet("/work/exp/ev/corpus/documents.parquet", columns=["id", "title", "abstract"])
STOP = set("the a an of and or to in for with by on is are be as at from that this which said an its it into first second one least each".split())
toks = [[w[:6] for w in re.findall(r"[a-z]{3,}", (t + " " + a).lower()) if w not in STOP] for t, a in zip(docs.title, docs.abstract)]
df = Counter(w for ts in toks for w in set(ts))
vocab = [w for w, c in df.most_common(4000) if c >= 3]
index = {w: i for i, w in enumerate(vocab)}
N = len(toks)
X = np.zeros((N, len(vocab)), np.float32)
for r, ts in enumerate(toks):
    for w, c in Counter(ts).items():
        if w in index:
            X[r, index[w]] = (1 + math.log(c)) * math.log(N / df[w])
X /= np.linalg.norm(X, axis=1, keepdims=True).clip(1e-9)
km = faiss.Kmeans(X.shape[1], K, niter=30, seed=1234, spherical=True, nredo=3)
km.train(X)
_, lab = km.index.search(X, 1)
topic = dict(zip(docs.id, lab[:, 0].tolist()))
for k in range(K):
    top = np.argsort(-km.centroids[k])[:8]
    print(f"topic {k}: {int((lab[:, 0] == k).sum())} docs; {' '.join(vocab[i] for i in top)}")


def score(seed, fit_filter, eval_filter, pools, names, size=0):
    tr = [g for g in rx.build(seed, "train", names, pools) if fit_filter(topic[g.query])]
    if size:  # a random subset of this many fit queries (size control)
        pick = np.random.default_rng(seed).choice(len(tr), size, replace=False)
        tr = [tr[i] for i in sorted(pick)]
    va_all = rx.build(seed, "valid", names, pools)
    booster, _ = fit_lambdarank(tr, names, rx.config.rank, rx.config.seed)
    rows, npairs = [], 0
    for grp, cands in zip(va_all, pools["valid"]["pools"]):
        if not eval_filter(topic[grp.query]):
            continue
        npairs += int((grp.ideal > 0).sum())
        s = booster.predict(grp.features)
        rows.append(rx.per_query(s, grp.gains, grp.ideal, np.asarray(cands)) + rx.per_query(grp.bm25, grp.gains, grp.ideal, np.asarray(cands)))
    return np.array(rows), npairs, len(tr)


names_all = list(pickle.load(open(f"/work/exp/lead/feat/pools{rx.TAG}-s0.pkl", "rb"))["names"])
print(
    "| topic | seed | fit queries (other topics / all) | val queries | pairs in topic* | BM25 R@3 / nDCG | cross-topic ranker R@3 / nDCG (ratio [95%]) | in-domain ranker R@3 / nDCG (ratio) | in-domain, same fit size R@3 / nDCG (ratio) |"
)
summary = []
for seed in (0, 1, 2):
    pools = pickle.load(open(f"/work/exp/lead/feat/pools{rx.TAG}-s{seed}.pkl", "rb"))
    for T in range(K):
        xr, npairs, nfit = score(seed, lambda t: t != T, lambda t: t == T, pools, names_all)
        ir, _, nall = score(seed, lambda t: True, lambda t: t == T, pools, names_all)
        sr, _, _ = score(seed, lambda t: True, lambda t: t == T, pools, names_all, size=nfit)
        s3, sn = sr[:, 0].sum() / sr[:, 2].sum(), sr[:, 1].mean() / sr[:, 3].mean()
        b3, bn = xr[:, 2].sum(), xr[:, 3].mean()
        x3, xn = xr[:, 0].sum() / b3, xr[:, 1].mean() / bn
        i3, inn = ir[:, 0].sum() / b3, ir[:, 1].mean() / bn
        c3, cn = rx.boot(xr)
        summary.append((T, seed, x3, xn, i3, inn, s3, sn))
        print(
            f"| {T} | {seed} | {nfit} / {nall} | {len(xr)} | {npairs} | {b3 / npairs:.4f} / {bn:.4f} | {xr[:, 0].sum() / npairs:.4f} / {xr[:, 1].mean():.4f} ({x3:.2f}x [{c3[0]:.2f}, {c3[1]:.2f}] / {xn:.2f}x [{cn[0]:.2f}, {cn[1]:.2f}]) | {ir[:, 0].sum() / npairs:.4f} / {ir[:, 1].mean():.4f} ({i3:.2f}x / {inn:.2f}x) | {sr[:, 0].sum() / npairs:.4f} / {sr[:, 1].mean():.4f} ({s3:.2f}x / {sn:.2f}x) |",
            flush=True,
        )
s = np.array(summary)
for T in range(K):
    m = s[s[:, 0] == T]
    print(
        f"topic {T}: cross {m[:, 2].mean():.3f}x / {m[:, 3].mean():.3f}x; in-domain {m[:, 4].mean():.3f}x / {m[:, 5].mean():.3f}x; same-size in-domain {m[:, 6].mean():.3f}x / {m[:, 7].mean():.3f}x"
    )
print(
    f"all topics (mean of topic x seed ratios): cross {s[:, 2].mean():.3f}x / {s[:, 3].mean():.3f}x; in-domain {s[:, 4].mean():.3f}x / {s[:, 5].mean():.3f}x; same-size {s[:, 6].mean():.3f}x / {s[:, 7].mean():.3f}x"
)
