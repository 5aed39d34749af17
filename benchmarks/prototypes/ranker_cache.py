"""Cache the ranker pools (base features, gains, candidate rows) of train (held-out) and validation queries, per seed."""

import pickle
import sys
from pathlib import Path

from graphtx.config import load_config
from graphtx.corpus.citations import read_citations
from graphtx.eval.baselines import BM25System
from graphtx.eval.data import EvalCorpus, judgements
from graphtx.eval.ranker import PoolSource, training_groups
from graphtx.eval.systems import ModelSystem
from graphtx.rank.features import feature_names

RUNS = {0: "/work/exp/ranker/runs/hold-s0", 1: "/work/exp/lead/rk/hold-s1-run", 2: "/work/exp/lead/rk/hold-s2-run"}
V = "/work/shared/data/citations-ev-battery/citations_validation.tsv"
seed = int(sys.argv[1])
run = Path(RUNS[seed])
MODEL = Path(sys.argv[2]) if len(sys.argv) > 2 else run / "model"
TAG = sys.argv[3] if len(sys.argv) > 3 else ""
config = load_config(None)
cfg = config.eval
corpus = EvalCorpus.load("/work/exp/ev/corpus", cfg)
dense = ModelSystem(MODEL, "/work/exp/ev/graphs", cfg.query_kind, cfg.candidate_kind, cfg.batch_size)
source = PoolSource(corpus, BM25System.from_config(cfg), dense)
names = feature_names(config.rank.groups)
out = {"names": names}
for split, files, dropout in (("train", [run / "ranker_citations.tsv"], config.rank.date_dropout), ("valid", [V], 0.0)):
    judged = judgements([c for f in files for c in read_citations(f)], corpus, cfg)
    # validation: year kept (eval keeps it); train: date dropout with the fit's seed (config.seed)
    groups = training_groups(source, judged, config.rank.depth, names, dropout, config.seed, progress=False)
    # pool rows again (training_groups does not return them): recompute the same pools
    rows = corpus.rows(judged.query_ids)
    pools = []
    for start in range(0, len(rows), 256):
        part = rows[start : start + 256]
        bm25, dn = source.scores(part)
        for i, r in enumerate(part):
            pools.append(source.pool_inputs(int(r), bm25[i], dn[i], config.rank.depth).candidates)
    out[split] = {"queries": judged.query_ids, "rows": rows, "pairs": judged.pairs, "groups": groups, "pools": pools}
    print(seed, split, len(groups), judged.pairs, flush=True)
pickle.dump(out, open(f"/work/exp/lead/feat/pools{TAG}-s{seed}.pkl", "wb"))
