"""Model directories: save, load, fingerprint.

A model directory is plain files a person can inspect::

    config.yaml       ModelConfig as YAML (sorted keys)
    model.pt          state_dict (torch.save; loaded with weights_only=True)
    tokenizer.json    the tokenizer, when one was given

``load_model(dir)`` returns a :class:`ModelDir`: ``.model``, ``.tokenizer`` and ``.config`` in one object.
    fingerprint.txt   sha256 hex of config + weights + tokenizer (see ``fingerprint``)
    checksums.json    size and sha256 of every other file, written last (``graphtx/integrity.py``)
    corpus_profile.json   the term profile of the corpus ``train`` / ``adapt`` taught it on (graphtx/text/field.py: search's
                      auto); added by :func:`record_corpus_profile`, in checksums.json, outside the fingerprint

The fingerprint ties vectors to the model that made them: an index stores it, and a
model with other weights or another tokenizer (two token ids swapped are enough to make
every vector different) has another fingerprint. Loading checks ``checksums.json`` (which
file is damaged) and then the fingerprint; either mismatch is a clear error. The files are
staged and moved in together with ``fingerprint.txt`` last (graphtx/atomic.py), so a
kill while saving leaves the previous model whole.
"""

from __future__ import annotations

import functools
import hashlib
import json
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import yaml

from graphtx import integrity
from graphtx.atomic import PARTIAL_MARKER, StagedDir
from graphtx.errors import IntegrityError
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder

if TYPE_CHECKING:
    from graphtx.text.bpe import PatentTokenizer

CONFIG_FILE, WEIGHTS_FILE, FINGERPRINT_FILE, CHECKSUMS_FILE = (
    "config.yaml",
    "model.pt",
    "fingerprint.txt",
    "checksums.json",
)
MODEL_MEND = "Copy the model directory again from where it was made, or re-run `graphtx init-model` / `graphtx train`."


# Fields added after models were saved: left out of the YAML (and so of the fingerprint) while they
# hold their default, so model directories written before them keep loading with the same fingerprint.
OMIT_WHEN_DEFAULT = {"late_dim": 0, "lexical_dim": 0}
OMIT_WITHOUT = {"lexical_weight": "lexical_dim"}  # a setting of a part the model does not have: left out with that part


def config_yaml(config: ModelConfig) -> str:
    """Canonical YAML of a config: the same config always gives the same bytes."""
    data = {k: v for k, v in config.to_dict().items() if not (k in OMIT_WHEN_DEFAULT and v == OMIT_WHEN_DEFAULT[k])}
    data = {k: v for k, v in data.items() if k not in OMIT_WITHOUT or OMIT_WITHOUT[k] in data}
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False)


def state_fingerprint(state: dict[str, torch.Tensor], config: ModelConfig) -> str:
    """sha256 over the config YAML, then each tensor (sorted by key): key, dtype, shape, raw bytes."""
    h = hashlib.sha256(config_yaml(config).encode())
    for key in sorted(state):
        t = state[key].detach().to("cpu").contiguous()
        h.update(f"\n{key}|{t.dtype}|{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())  # any dtype, bfloat16 included
    return h.hexdigest()


def _json_digest(text: str) -> str:
    """sha256 of JSON in canonical form (sorted keys, no spaces): a file and the object it was saved from agree."""
    return hashlib.sha256(json.dumps(json.loads(text), sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def tokenizer_digest(tokenizer: Any) -> str | None:
    """sha256 of a tokenizer's canonical JSON (vocabulary, merges, normaliser); None for tokenizers without one."""
    backend = getattr(tokenizer, "backend", None)
    if backend is None or not hasattr(backend, "to_str"):
        return None
    return _json_digest(backend.to_str())


def with_tokenizer(weights_fingerprint: str, digest: str | None) -> str:
    """The model fingerprint: config + weights, and the tokenizer where there is one."""
    if digest is None:
        return weights_fingerprint
    return hashlib.sha256(f"{weights_fingerprint}\ntokenizer {digest}".encode()).hexdigest()


def fingerprint(model: GraphEncoder, config: ModelConfig | None = None, tokenizer: Any = None) -> str:
    """sha256 of config + weights; with ``tokenizer``, of the tokenizer too (what an index and a model directory record)."""
    return with_tokenizer(state_fingerprint(model.state_dict(), config or model.config), tokenizer_digest(tokenizer))


def directory_tokenizer_digest(directory: str | Path) -> str | None:
    """``tokenizer_digest`` of the tokenizer.json a model directory holds (None: it holds none)."""
    from graphtx.text.bpe import TOKENIZER_FILE

    path = Path(directory) / TOKENIZER_FILE
    if not path.exists():
        return None
    try:
        return _json_digest(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise IntegrityError(
            f"model directory {directory}: {path} is damaged (not valid JSON: {err}). {MODEL_MEND}", [str(path)]
        ) from None


def write_checksums(directory: str | Path, fp: str) -> None:
    """checksums.json: size and sha256 of every file of a (staged) model directory, and the fingerprint it must have."""
    directory = Path(directory)
    skip = (CHECKSUMS_FILE, FINGERPRINT_FILE, PARTIAL_MARKER)
    names = [
        p.relative_to(directory).as_posix() for p in sorted(directory.rglob("*")) if p.is_file() and p.name not in skip
    ]
    manifest = integrity.seal(
        {"format": "graphtx-model/1", "fingerprint": fp, integrity.CHECKSUMS_KEY: integrity.record(directory, names)}
    )
    (directory / CHECKSUMS_FILE).write_text(json.dumps(manifest, indent=2) + "\n")


def verify_model_dir(directory: str | Path, mend: str = MODEL_MEND, hash_limit: int | None = None) -> None:
    """Every file checksums.json lists has its size and sha256 (up to ``hash_limit`` bytes; None: all)."""
    directory = Path(directory)
    manifest = integrity.read_manifest(directory / CHECKSUMS_FILE, what="model directory", mend=mend)
    if manifest is None:  # written before checksums existed: the fingerprint check below is what there is
        return
    integrity.require(
        directory, manifest.get(integrity.CHECKSUMS_KEY, {}), what="model directory", mend=mend, hash_limit=hash_limit
    )
    written = (directory / FINGERPRINT_FILE).read_text().strip() if (directory / FINGERPRINT_FILE).exists() else ""
    if manifest.get("fingerprint") and written != manifest["fingerprint"]:
        raise integrity.damaged(
            directory,
            [integrity.Problem(FINGERPRINT_FILE, "does not hold the fingerprint checksums.json records")],
            what="model directory",
            mend=mend,
        )


def save_model(
    directory: str | Path, model: GraphEncoder, config: ModelConfig | None = None, tokenizer: Any = None
) -> Path:
    """Write a model directory; returns its path.

    ``tokenizer``: an object with ``save(directory)`` (called on the model
    directory), or the path of a tokenizer file / directory (its files are
    copied in), or None.
    """
    config = config or model.config
    if config != model.config:
        raise ValueError("config differs from the model's own config")
    directory = Path(directory)
    state = {k: v.detach().cpu() for k, v in model.state_dict().items()}
    with StagedDir(directory, "model save", owned=None, manifest=FINGERPRINT_FILE) as staged:
        staging = staged.partial
        (staging / CONFIG_FILE).write_text(config_yaml(config))
        torch.save(state, staging / WEIGHTS_FILE)
        if tokenizer is not None:
            if hasattr(tokenizer, "save"):
                tokenizer.save(staging)
            elif Path(tokenizer).is_dir():
                shutil.copytree(tokenizer, staging, dirs_exist_ok=True, ignore=shutil.ignore_patterns(".*"))
            else:
                shutil.copy2(tokenizer, staging / Path(tokenizer).name)
        fp = with_tokenizer(state_fingerprint(state, config), directory_tokenizer_digest(staging))
        write_checksums(staging, fp)  # moved in before fingerprint.txt, which comes last
        staged.commit(fp + "\n")
    return directory


def load_config_file(directory: str | Path) -> ModelConfig:
    path = Path(directory) / CONFIG_FILE
    return ModelConfig.from_dict(yaml.safe_load(path.read_text()), f"model config {path}")


class ModelDir:
    """A loaded model directory: ``model`` (eval mode), ``config`` and ``tokenizer``, read when first asked for.

    The tokenizer is loaded lazily so that the training loops, which only need the weights, never pay for it;
    a directory without tokenizer.json raises FileNotFoundError (naming the directory) when it is asked for.
    """

    def __init__(self, path: Path, model: GraphEncoder, config: ModelConfig):
        self.path, self.model, self.config = path, model, config

    @functools.cached_property
    def tokenizer(self) -> PatentTokenizer:
        from graphtx.text.bpe import PatentTokenizer

        return PatentTokenizer.load(self.path)

    def __repr__(self) -> str:
        return f"ModelDir({str(self.path)!r}, out_dim={self.model.out_dim}, parameters={self.model.num_parameters():,})"


def load_model(directory: str | Path, map_location: str | torch.device = "cpu", mend: str = MODEL_MEND) -> ModelDir:
    """Load a model directory: its model in eval mode, its config and (on first use) its tokenizer.

    Raises ``IntegrityError`` (a ValueError) when a file does not match checksums.json or the
    fingerprint of config + weights + tokenizer does not match fingerprint.txt; ``mend`` is
    the advice the message ends with.
    """
    directory = Path(directory)
    for name in (CONFIG_FILE, WEIGHTS_FILE, FINGERPRINT_FILE):
        if not (directory / name).exists():
            raise FileNotFoundError(f"{directory} is not a model directory: {name} is missing")
    verify_model_dir(directory, mend)
    try:
        config = load_config_file(directory)
        state = torch.load(directory / WEIGHTS_FILE, map_location=map_location, weights_only=True)
    except Exception as err:  # a damaged directory written before checksums existed
        raise IntegrityError(
            f"model directory {directory} cannot be read ({type(err).__name__}: {err}). {mend}", [str(directory)]
        ) from None
    expected = (directory / FINGERPRINT_FILE).read_text().strip()
    weights = state_fingerprint(state, config)
    actual = with_tokenizer(weights, directory_tokenizer_digest(directory))
    if expected not in (actual, weights):  # weights alone: a directory saved before the tokenizer was fingerprinted
        raise IntegrityError(
            f"model directory {directory}: fingerprint mismatch (fingerprint.txt {expected[:12]}…, "
            f"config.yaml + model.pt + tokenizer give {actual[:12]}…): the weights, config or tokenizer changed after saving. {mend}",
            [str(directory / FINGERPRINT_FILE)],
        )
    with torch.device("meta"):
        model = GraphEncoder(config)  # no random init: the weights come from the file
    model.load_state_dict(state, strict=True, assign=True)
    return ModelDir(directory, model.eval(), config)


def record_corpus_profile(directory: str | Path, profile) -> None:
    """Write ``corpus_profile.json`` (graphtx.text.field: the corpus the model learned on, for search's auto) into a model
    directory being staged, and seal it into checksums.json with the rest; the fingerprint is unchanged (it changes no
    vector). Before a ranker is put in the directory: checksums.json covers every file there."""
    from graphtx.text.field import write_model_profile

    write_model_profile(directory, profile)
    write_checksums(directory, (Path(directory) / FINGERPRINT_FILE).read_text().strip())
