"""``graphtx build``: a user's own patents to a searchable index in one resumable command (graphtx/build/run.py)."""
