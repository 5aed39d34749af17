"""``graphtx build``: a user's own patents to a searchable index in one resumable command (graphtx/build/run.py)."""

# in order; `graphtx build --until STEP` stops after one ("sample" runs only where a label-free adaptation reads a
# sample of a large corpus: graphtx/build/sample.py)
STEPS = ("ingest", "parse", "sample", "tokens", "model", "index")
