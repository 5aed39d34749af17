"""The ranker directory and the one path that scores a pool with it.

A ranker directory (``MODEL/ranker`` by default, or ``INDEX/ranker``) holds

    ranker.json        model fingerprint, pool depth, convex weight and normalisation, the feature
                       names of each learned model, lightgbm version, the fit report, fingerprint, and the
                       term profile of the fit's corpus (graphtx.text.field; not in the fingerprint: it scores nothing)
    learned.txt        LightGBM models over every feature group (the default ranker): ``rank.bag`` members,
                       their scores averaged (graphtx.rank.learned.BoosterBag; one member = a plain LightGBM file)
    lexical.txt        the same without graph features (BM25 + lexical + meta): ``learned-lexical``, which
                       ``search.ranker: auto`` uses on an index of another field (graphtx.text.field)

``fingerprint`` = sha256 of the model fingerprint, the feature lists, the lightgbm version and the
model files: a ranker is used only with the graph model it was fitted on and the lightgbm that
wrote it (:func:`load_ranker` refuses anything else with a message naming both), since its dense
features mean nothing for another model. Written beside and renamed into place, ``ranker.json`` last.

Example::

    ranker = load_ranker("run/model/ranker", model_fingerprint)
    scores = ranker.score("learned", inputs, stats)   # (n,) for one pool (PoolInputs)
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from graphtx.atomic import replacing
from graphtx.rank.convex import convex_scores
from graphtx.rank.features import LexicalStats, PoolInputs, pool_features
from graphtx.rank.learned import BoosterBag, lightgbm, lightgbm_version

RANKER_DIR = "ranker"
META_FILE = "ranker.json"
MODEL_FILES = {"learned": "learned.txt", "lexical": "lexical.txt"}


def ranker_fingerprint(model_fingerprint: str, features: dict, lgb_version: str, model_texts: dict) -> str:
    h = hashlib.sha256()
    h.update(model_fingerprint.encode())
    h.update(json.dumps(features, sort_keys=True).encode())
    h.update(lgb_version.encode())
    for name in sorted(model_texts):
        h.update(name.encode())
        h.update(model_texts[name].encode())
    return h.hexdigest()


@dataclass
class Ranker:
    model_fingerprint: str
    depth: int  # pool: top ``depth`` of BM25 and of the dense model
    convex: dict  # {"norm", "weight"} (+ the fit's grid summary)
    features: dict = field(default_factory=dict)  # learned model name -> feature names
    boosters: dict = field(default_factory=dict)  # learned model name -> BoosterBag (or a lightgbm.Booster)
    report: dict = field(default_factory=dict)  # fit: citations, queries, cross-validation, importances
    directory: Path | None = None
    plugins: dict = field(default_factory=dict)  # registered ranker name -> what its own fit() learned (JSON)
    corpus_profile: dict = field(default_factory=dict)  # FieldProfile.to_json() of the fit's corpus ({}: not recorded)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The rankers this directory can run: convex, and each fitted learned model."""
        return ("convex", *self.boosters)

    def score(self, kind: str, inputs: PoolInputs, stats: LexicalStats) -> np.ndarray:
        """(n,) scores of one pool, higher = better; features through :func:`pool_features`."""
        if kind == "convex":
            if inputs.dense is None:
                raise ValueError("the convex ranker needs dense scores")
            return convex_scores(inputs.bm25, inputs.dense, self.convex["weight"], self.convex["norm"])
        if kind not in self.boosters:
            raise ValueError(f"ranker {self.directory or ''} has no {kind!r} model; it has: {', '.join(self.kinds)}")
        x = pool_features(inputs, stats, self.features[kind])  # (n, F)
        return self.boosters[kind].predict(x, num_threads=1) if len(x) else np.zeros(0)

    def fingerprint(self) -> str:
        texts = {k: b.model_to_string() for k, b in self.boosters.items()}
        return ranker_fingerprint(
            self.model_fingerprint, self.features, lightgbm_version() if self.boosters else "", texts
        )

    def save(self, directory: str | Path) -> Path:
        """Write into ``directory`` (replaced as a whole: a reader sees the old ranker or the new one)."""
        directory = Path(directory)
        with replacing(directory) as tmp:  # graphtx/atomic.py: fsynced, swapped in whole
            tmp.mkdir()
            texts = {}
            for kind, booster in self.boosters.items():
                texts[kind] = booster.model_to_string()
                (tmp / MODEL_FILES[kind]).write_text(texts[kind])
            version = lightgbm_version() if self.boosters else ""
            meta = {
                "model_fingerprint": self.model_fingerprint,
                "depth": self.depth,
                "convex": self.convex,
                "features": self.features,
                "lightgbm": version,
                "report": self.report,
                "fingerprint": ranker_fingerprint(self.model_fingerprint, self.features, version, texts),
                **({"plugins": self.plugins} if self.plugins else {}),
                **({"corpus_profile": self.corpus_profile} if self.corpus_profile else {}),
            }
            (tmp / META_FILE).write_text(json.dumps(meta, indent=2, default=_plain) + "\n")
        self.directory = directory
        return directory


def _plain(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON: {type(x).__name__}")


def has_ranker(directory: str | Path) -> bool:
    return (Path(directory) / META_FILE).is_file()


def load_ranker(directory: str | Path, model_fingerprint: str) -> Ranker:
    """The ranker of ``directory``; refused (ValueError) unless fitted on the model with ``model_fingerprint``
    by this lightgbm, and its files are the ones it was saved with."""
    directory = Path(directory)
    meta_path = directory / META_FILE
    if not meta_path.is_file():
        raise FileNotFoundError(f"{directory} holds no ranker ({META_FILE}); fit one with `graphtx rank-fit`")
    try:
        meta = json.loads(meta_path.read_text())
        features = {k: tuple(v) for k, v in meta["features"].items()}
    except (json.JSONDecodeError, KeyError, AttributeError) as err:
        raise ValueError(
            f"{meta_path} is not a ranker description ({err}); fit the ranker again with `graphtx rank-fit`"
        ) from None
    if meta["model_fingerprint"] != model_fingerprint:
        raise ValueError(
            f"ranker {directory} was fitted on model {meta['model_fingerprint'][:12]}…, not on this model ({model_fingerprint[:12]}…): "
            "its dense features would mean something else; fit it again with `graphtx rank-fit` on this model, or use --ranker hybrid"
        )
    boosters, texts = {}, {}
    if features:
        lgb = lightgbm()
        if meta["lightgbm"] != lgb.__version__:
            raise ValueError(
                f"ranker {directory} was written by lightgbm {meta['lightgbm']}, this is {lgb.__version__}: fit it again with `graphtx rank-fit`"
            )
        for kind in features:
            path = directory / MODEL_FILES[kind]
            if not path.is_file():
                raise ValueError(f"ranker {directory} lacks {path.name}: fit it again with `graphtx rank-fit`")
            texts[kind] = path.read_text()
            boosters[kind] = BoosterBag.from_string(texts[kind])
    expected = ranker_fingerprint(
        meta["model_fingerprint"], {k: list(v) for k, v in features.items()}, meta["lightgbm"], texts
    )
    if expected != meta["fingerprint"]:
        raise ValueError(
            f"ranker {directory}: its files do not match its fingerprint (changed after `graphtx rank-fit`?); fit it again"
        )
    return Ranker(
        meta["model_fingerprint"],
        int(meta["depth"]),
        meta["convex"],
        features,
        boosters,
        meta.get("report", {}),
        directory,
        meta.get("plugins", {}),
        meta.get("corpus_profile", {}),
    )
