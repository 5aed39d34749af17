"""A distillation checkpoint of an adaptation as a model directory, for a learning curve (selects nothing).

A label-free adaptation (`graphtx adapt`, `graphtx build`'s model step) keeps one checkpoint, RUN/pretrain/checkpoint.pt,
replaced every ``train.checkpoint_every_steps`` steps; its model directory, RUN/model, appears only at the end. To draw
how a long adaptation's quality grows with its steps, copies of the checkpoint taken as it ran are turned into model
directories here, each indexed and evaluated as the finished model is. The curve is for reading only: the adaptation
runs its planned steps whatever it shows, and no figure reported as a result is chosen from it.

    python benchmarks/studies/checkpoint_model.py RUN SNAPSHOT.pt --tokens BUILD/tokens --corpus BUILD/corpus --out M
    graphtx index --model M --graphs BUILD/graphs --corpus BUILD/corpus --out M-index --bm25
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="the adaptation's run directory (RUN/config.yaml is the experiment's config)")
    ap.add_argument("checkpoint", help="a copy of RUN/pretrain/checkpoint.pt")
    ap.add_argument("--tokens", required=True, help="the tokens directory the adaptation started from")
    ap.add_argument("--corpus", required=True, help="the corpus it adapted on (for the model's corpus profile)")
    ap.add_argument("--out", required=True, help="model directory to write")
    args = ap.parse_args(argv)

    import torch

    from graphtx.atomic import replacing
    from graphtx.config import load_config
    from graphtx.model.io import record_corpus_profile, save_model
    from graphtx.text.field import learned_corpus_profile
    from graphtx.train.run import starting_model

    config = load_config(Path(args.run) / "config.yaml")
    model, _, tokenizer_file, _ = starting_model(config, None, args.tokens, config.seed)
    payload = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
    model.load_state_dict(payload["model"])  # strict: the checkpoint must be of this architecture and vocabulary
    model.eval()
    with replacing(Path(args.out)) as tmp:
        save_model(tmp, model, tokenizer=tokenizer_file)
        record_corpus_profile(tmp, learned_corpus_profile(args.corpus, config.index))
    print(json.dumps({"out": args.out, "step": payload["state"]["step"]}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
