"""Evaluation protocols and metrics (`graphtx eval ...`): phrase similarity (``phrases``) so far."""
