"""Where a parse keeps its finished shards when the config names no ``parse.cache_dir``: one default for
``graphtx parse`` and ``graphtx build``, so a killed parse resumes and the same documents are parsed once.

``$GRAPHTX_PARSE_CACHE`` moves it (the test suite gives each test its own); set to "" it turns the cache off (a parse
then runs in one piece, and a killed one starts again).
"""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_PARSE_CACHE = "~/.cache/graphtx"
ENV_PARSE_CACHE = "GRAPHTX_PARSE_CACHE"


def parse_cache_dir(configured: str = "") -> str:
    """``parse.cache_dir`` when set, else $GRAPHTX_PARSE_CACHE, else ~/.cache/graphtx (as a path); "" = no cache."""
    if configured:
        return configured
    value = os.environ.get(ENV_PARSE_CACHE)
    if value == "":
        return ""
    return str(Path(value or DEFAULT_PARSE_CACHE).expanduser())
