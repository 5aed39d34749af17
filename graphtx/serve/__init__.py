"""HTTP service over an index directory (``graphtx serve``); see app.py."""
