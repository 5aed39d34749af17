"""Fit the learned ranker on cached train pools with a feature subset; score validation pools; R@3, nDCG@150, bootstrap vs BM25."""

import dataclasses
import json
import math
import os
import pickle
import sys

import numpy as np

from graphtx.config import load_config
from graphtx.rank.convex import Group
from graphtx.rank.learned import fit_lambdarank

config = load_config(None)

TAG = os.environ.get("TAG", "")
BAG = int(os.environ.get("BAG", "1"))
EXTRA = pickle.load(open("/work/exp/lead/feat/extra.pkl", "rb")) if not TAG else None


def dcg(g):
    return sum(x / math.log2(i + 2) for i, x in enumerate(g) if x)


def per_query(scores, gains, ideal, cand_ids_tiebreak):
    order = np.lexsort((cand_ids_tiebreak, -scores))
    g = gains[order]
    hits3 = float((g[:3] > 0).sum())
    nd = dcg(g[:150]) / dcg(ideal[:150])
    return hits3, nd


def build(seed, split, names, pools):
    base_names = list(pools["names"])
    xn = EXTRA["names"] if EXTRA else []
    gs = []
    for grp, cands, x in zip(pools[split]["groups"], pools[split]["pools"], EXTRA[(seed, split)] if EXTRA else [None] * len(pools[split]["groups"])):
        cols = []
        for n in names:
            cols.append(grp.features[:, base_names.index(n)] if n in base_names else x[:, xn.index(n)].astype(np.float32))
        gs.append(Group(grp.query, grp.bm25, grp.dense, grp.gains, grp.ideal, np.stack(cols, 1).astype(np.float32)))
    return gs


def run(seed, names, rank_changes=None):
    pools = pickle.load(open(f"/work/exp/lead/feat/pools{TAG}-s{seed}.pkl", "rb"))
    rcfg = dataclasses.replace(config.rank, **(rank_changes or {}))
    tr = build(seed, "train", names, pools)
    va = build(seed, "valid", names, pools)
    boosters = []
    for b in range(BAG):
        booster, rep = fit_lambdarank(tr, names, rcfg, config.seed + b)
        boosters.append(booster)
    rows = []
    for grp, cands in zip(va, pools["valid"]["pools"]):
        s = sum(bst.predict(grp.features) for bst in boosters) / len(boosters)
        rows.append(per_query(s, grp.gains, grp.ideal, np.asarray(cands)) + per_query(grp.bm25, grp.gains, grp.ideal, np.asarray(cands)))
    rows = np.array(rows)  # (Q, 4): sys hits3, sys ndcg, bm25 hits3, bm25 ndcg
    pairs = pools["valid"]["pairs"]
    return rows, pairs, rep


def boot(rows, n=10000, seed=0):
    rng = np.random.default_rng(seed)
    Q = len(rows)
    idx = rng.integers(0, Q, (n, Q))
    r3 = rows[idx, 0].sum(1) / rows[idx, 2].sum(1)
    nd = rows[idx, 1].mean(1) / rows[idx, 3].mean(1)
    return np.percentile(r3, [2.5, 97.5]), np.percentile(nd, [2.5, 97.5])


if __name__ == "__main__":
    label = sys.argv[1]
    names = sys.argv[2].split(",")
    changes = json.loads(sys.argv[3]) if len(sys.argv) > 3 else None
    base = list(pickle.load(open(f"/work/exp/lead/feat/pools{TAG}-s0.pkl", "rb"))["names"])
    names = [
        n
        for part in names
        for n in (base if part == "BASE" else [b for b in base if not b.startswith(("dense", "late"))] if part == "LEX" else [part])
    ]
    out = []
    for seed in (0, 1, 2):
        rows, pairs, rep = run(seed, names, changes)
        r3, nd = rows[:, 0].sum() / pairs, rows[:, 1].mean()
        b3, bn = rows[:, 2].sum() / pairs, rows[:, 3].mean()
        ci3, cin = boot(rows)
        out.append((r3, nd, r3 / b3, nd / bn, ci3, cin))
        top = sorted(rep["gain_importance"].items(), key=lambda kv: -kv[1])[:4]
        print(
            f"{label} s{seed}: R@3 {r3:.4f} ({r3 / b3:.2f}x [{ci3[0]:.2f},{ci3[1]:.2f}]) nDCG {nd:.4f} ({nd / bn:.2f}x [{cin[0]:.2f},{cin[1]:.2f}]) bm25 {b3:.4f}/{bn:.4f} leaves {rep['chosen']['num_leaves']} trees {rep['chosen']['rounds']} top {top}",
            flush=True,
        )
    a = np.array([[o[0], o[1], o[2], o[3]] for o in out])
    print(
        f"== {label}: R@3 {a[:, 0].mean():.4f}±{a[:, 0].std(ddof=1):.4f} ({a[:, 2].mean():.3f}x)  nDCG {a[:, 1].mean():.4f}±{a[:, 1].std(ddof=1):.4f} ({a[:, 3].mean():.3f}x)",
        flush=True,
    )
