"""``graphtx build``: a user's own patents to a searchable index in one resumable command (graphtx/build/run.py)."""

STEPS = ("ingest", "parse", "tokens", "model", "index")  # in order; `graphtx build --until STEP` stops after one
