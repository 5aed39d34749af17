"""Model directories: save, load, fingerprint.

A model directory is plain files a person can inspect::

    config.yaml       ModelConfig as YAML (sorted keys)
    model.pt          state_dict (torch.save; loaded with weights_only=True)
    tokenizer.json    the tokenizer, when one was given (PatentTokenizer.load(dir) reads it)
    fingerprint.txt   sha256 hex of config + weights (see ``fingerprint``)

The fingerprint ties vectors to the model that made them: an index stores it,
and loading a directory whose weights no longer match it is an error. The files are
staged and moved in together with ``fingerprint.txt`` last (graphtx/atomic.py), so a
kill while saving leaves the previous model whole.
"""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path
from typing import Any

import torch
import yaml

from graphtx.atomic import StagedDir
from graphtx.model.config import ModelConfig
from graphtx.model.encoder import GraphEncoder

CONFIG_FILE, WEIGHTS_FILE, FINGERPRINT_FILE = "config.yaml", "model.pt", "fingerprint.txt"


# Fields added after models were saved: left out of the YAML (and so of the fingerprint) while they
# hold their default, so model directories written before them keep loading with the same fingerprint.
OMIT_WHEN_DEFAULT = {"late_dim": 0}


def config_yaml(config: ModelConfig) -> str:
    """Canonical YAML of a config: the same config always gives the same bytes."""
    data = {k: v for k, v in config.to_dict().items() if not (k in OMIT_WHEN_DEFAULT and v == OMIT_WHEN_DEFAULT[k])}
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False)


def state_fingerprint(state: dict[str, torch.Tensor], config: ModelConfig) -> str:
    """sha256 over the config YAML, then each tensor (sorted by key): key, dtype, shape, raw bytes."""
    h = hashlib.sha256(config_yaml(config).encode())
    for key in sorted(state):
        t = state[key].detach().to("cpu").contiguous()
        h.update(f"\n{key}|{t.dtype}|{tuple(t.shape)}\n".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())  # any dtype, bfloat16 included
    return h.hexdigest()


def fingerprint(model: GraphEncoder, config: ModelConfig | None = None) -> str:
    return state_fingerprint(model.state_dict(), config or model.config)


def save_model(directory: str | Path, model: GraphEncoder, config: ModelConfig | None = None, tokenizer: Any = None) -> Path:
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
        staged.commit(state_fingerprint(state, config) + "\n")
    return directory


def load_config_file(directory: str | Path) -> ModelConfig:
    return ModelConfig.from_dict(yaml.safe_load((Path(directory) / CONFIG_FILE).read_text()))


def load_model(directory: str | Path, map_location: str | torch.device = "cpu") -> tuple[GraphEncoder, ModelConfig]:
    """Load a model directory in eval mode; raises ValueError when its fingerprint does not match."""
    directory = Path(directory)
    for name in (CONFIG_FILE, WEIGHTS_FILE, FINGERPRINT_FILE):
        if not (directory / name).exists():
            raise FileNotFoundError(f"{directory} is not a model directory: {name} is missing")
    config = load_config_file(directory)
    state = torch.load(directory / WEIGHTS_FILE, map_location=map_location, weights_only=True)
    expected = (directory / FINGERPRINT_FILE).read_text().strip()
    actual = state_fingerprint(state, config)
    if actual != expected:
        raise ValueError(
            f"model directory {directory}: fingerprint mismatch (fingerprint.txt {expected[:12]}…, "
            f"config.yaml + model.pt give {actual[:12]}…): the weights or config changed after saving"
        )
    with torch.device("meta"):
        model = GraphEncoder(config)  # no random init: the weights come from the file
    model.load_state_dict(state, strict=True, assign=True)
    return model.eval(), config
