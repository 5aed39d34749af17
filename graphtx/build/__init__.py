"""``graphtx build``: a user's own patents to a searchable index in one resumable command (graphtx/build/run.py)."""

# in order; `graphtx build --until STEP` stops after one ("sample" runs only where a label-free adaptation reads a
# sample of a large corpus: graphtx/build/sample.py)
STEPS = ("ingest", "parse", "sample", "tokens", "model", "index")

# Citing documents with a cited document in the corpus from which the model step trains on the citations; fewer, and
# it adapts without labels. Measured on EV (benchmarks/results/transfer.md, "build's own train route"): at 100 the
# ranker fitted on the few held-out queries searched below the fusion the label-free route ships (0.96x nDCG@150 on
# 786 training queries no build was given, 0.95x on validation; seed 0), from 200 level with it (0.98x-1.02x, three
# seeds; the stand-in of citation-budget.yaml agrees).
MIN_TRAINING_QUERIES = 200
