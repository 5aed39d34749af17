"""Where a parse keeps its finished shards when the config names no ``parse.cache_dir``: one default for
``graphtx parse`` and ``graphtx build``, so a killed parse resumes and the same documents are parsed once.

``$GRAPHTX_PARSE_CACHE`` moves it (the test suite gives each test its own); set to "" it turns the cache off (a parse
then runs in one piece, and a killed one starts again).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

DEFAULT_PARSE_CACHE = "~/.cache/graphtx"
ENV_PARSE_CACHE = "GRAPHTX_PARSE_CACHE"


def writable_parse_cache(configured: str, log: Callable[[str], None]) -> str:
    """``parse_cache_dir(configured)``, made; "" (no cache, the parse in one piece), said through ``log``, when it
    cannot be written (a read-only home, a full disk)."""
    cache = parse_cache_dir(configured)
    if not cache:
        return ""
    try:
        Path(cache).expanduser().mkdir(parents=True, exist_ok=True)
    except OSError as err:
        log(
            f"parse: the parse cache {cache} cannot be written ({err.strerror or err}): parsing without it (a killed "
            "parse then starts over)"
        )
        return ""
    return cache


def parse_cache_dir(configured: str = "") -> str:
    """``parse.cache_dir`` when set, else $GRAPHTX_PARSE_CACHE, else ~/.cache/graphtx (as a path); "" = no cache."""
    if configured:
        return configured
    value = os.environ.get(ENV_PARSE_CACHE)
    if value == "":
        return ""
    return str(Path(value or DEFAULT_PARSE_CACHE).expanduser())
